// getrf.h: linalg.getrf, the LU factorization with partial pivoting of a batch of m x n matrices:
// A = P L U as LAPACK's getrf. LU holds L below the diagonal (its unit diagonal not stored) and U on and
// above it; ipiv (i32, [..., min(m, n)], 1-based) says that row i was swapped with row ipiv[i] - 1 at
// step i; the pivot is the first element of largest magnitude in its column, as LAPACK's. `info`
// (optional) is 0, or k when U's k-th diagonal element is exactly zero: the factorization still
// completes (LAPACK's meaning), and the other entries go on.
//
// Plans: one matrix per work-item in registers for m, n <= 8 (fully unrolled; row swaps are selects);
// up to 16 a team with a row in each work-item's registers, where rows do not move: each work-item
// keeps its row's current position and the pivot row is shared through local memory; above, a team
// factoring the matrix in local memory (global memory for a work-group per matrix), right-looking.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> getrf_operation();
// linalg.getrf_vbatched: the same of square matrices of different orders (n [...], i32), padded to the
// largest (matrices.h's VariableOrder: the factors of diag(A_e, I), info -1 for an order outside 0..N).
std::unique_ptr<sdk::Operation> getrf_vbatched_operation();

}  // namespace fugue::linalg
