// posv.h: linalg.posv, solving A X = B for a batch of symmetric positive definite matrices through their
// Cholesky factors (LAPACK's posv), the factor kept inside the kernel: potrf then potrs without L in
// global memory. `info` (optional) is potrf's; a matrix that is not positive definite gets NaN for X,
// and the others go on.
//
// Plans: one matrix per work-item in registers for n <= 8 (fully unrolled); on CPUs above, one per
// work-item with its loops kept (cholesky.h's loop_cholesky, the factor and the solution in local
// memory, where they fit); else a team (cholesky.h, triangular_solve.h) with the factor and the solution in local memory where both fit, else the factor
// in a workspace of the core's and the solution in X's storage.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> posv_operation();

}  // namespace fugue::linalg
