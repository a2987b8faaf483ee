// potrs.h: linalg.potrs, solving A X = B with Cholesky factors from linalg.potrf: L [..., n, n] (lower,
// the default: A = L L^T; {"lower": false}: U with A = U^T U), B [..., n, k] → X [..., n, k]. Only
// the factor's triangle is read. Teams as potrf's, so that potrf then potrs on the same matrices fuse
// into one kernel with the factor kept in local memory.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> potrs_operation();

}  // namespace fugue::linalg
