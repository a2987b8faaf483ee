// potrf.h: linalg.potrf, the Cholesky factorization of a batch of symmetric positive definite matrices:
// A = L L^T (lower, the default) or A = U^T U ({"lower": false}), read from A's lower (upper) triangle;
// the other triangle of the result is zero. `info` (optional) is LAPACK's: 0, or k when the leading
// minor of order k is not positive definite; that entry's factor then holds its first k - 1 columns
// (rows, upper) and zeros, and the other entries go on.
//
// Plans: one matrix per work-item in registers for n <= 8 (fully unrolled); up to n = 16 a team with a
// row in each work-item's registers, the pivot column shared through local memory; above, a team
// factoring the matrix in local memory (global memory for a work-group per matrix); several matrices side
// by side per work-group where the teams are small (fugue_plan.entry_teams).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> potrf_operation();
// linalg.potrf_vbatched: the same of matrices of different orders (n [...], i32), padded to the largest
// (matrices.h's VariableOrder: the factor of diag(A_e, I), info -1 for an order outside 0..N).
std::unique_ptr<sdk::Operation> potrf_vbatched_operation();

}  // namespace fugue::linalg
