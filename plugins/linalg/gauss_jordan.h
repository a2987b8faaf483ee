// gauss_jordan.h: linalg.gesv and linalg.gesv_nopiv, solving A X = B for a batch of matrices by
// Gauss-Jordan elimination: each step scales the pivot row and eliminates its column from every other
// row, so A becomes the identity and B the solution, in one pass with no triangular solves after.
// gesv pivots by getrf's rule (the first element of largest magnitude in the column, rows at and below
// the step: LAPACK's pivots and info in exact arithmetic; rounding differs from LU's, so a near tie may
// resolve otherwise); gesv_nopiv does not pivot, for matrices that need no
// pivoting (symmetric positive definite, diagonally dominant): the seed's STAP solver.
//
// Plans: the augmented matrix [A | B] in one work-item's registers when it has at most 8 columns (fully
// unrolled; row swaps are selects); else a team owning columns, A's in a local array of the team's where
// they fit (else in a workspace of the core's), B's worked on in X's storage; column k is read by
// everyone at step k (each finds the pivot alike) and written by no one, so one barrier a step. `info` (optional): 0, or k when the k-th pivot is exactly
// zero; that matrix's X is then NaN, and the others go on.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gesv_operation();
std::unique_ptr<sdk::Operation> gesv_nopiv_operation();

}  // namespace fugue::linalg
