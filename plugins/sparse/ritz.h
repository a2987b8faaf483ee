// ritz.h: sparse.ritz, the Ritz values and vectors of a Lanczos run so far (seed 003 §5.1, lines 11-12
// of its Figure 5.1): the smallest eigenpairs of the tridiagonal T_n the run's alpha and beta make, the
// Cullum-Willoughby filter, and the residual bounds that say which have converged. A device-level
// operation computed on the host (tridiagonal.h): its inputs are a few thousand numbers, and a program
// calls it every few dozen steps.
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Operation> ritz_operation();

}  // namespace fugue::sparse
