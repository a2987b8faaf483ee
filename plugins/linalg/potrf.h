// potrf.h: linalg.potrf, the Cholesky factorization of a batch of symmetric positive definite matrices:
// A = L L^T (lower, the default) or A = U^T U ({"lower": false}), read from A's lower (upper) triangle;
// the other triangle of the result is zero. `info` (optional) is LAPACK's: 0, or k when the leading
// minor of order k is not positive definite; that entry's factor then holds its first k - 1 columns
// (rows, upper) and zeros, and the other entries go on.
//
// Plans: one matrix per work-item in registers for n <= 8 (fully unrolled), a team of work-items
// sharing the matrix in local memory for larger n, several matrices side by side per work-group
// (fugue_plan.entry_teams), or a work-group per matrix when the team is large.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> potrf_operation();

}  // namespace fugue::linalg
