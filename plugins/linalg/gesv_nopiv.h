// gesv_nopiv.h: linalg.gesv_nopiv, solving A X = B for a batch of matrices by Gauss-Jordan elimination
// without pivoting: each step scales the pivot row and eliminates its column from every other row, so A
// becomes the identity and B the solution, with no triangular solves after. For matrices that need no
// pivoting (symmetric positive definite, diagonally dominant): the seed's STAP solver.
//
// Plans: the augmented matrix [A | B] in one work-item's registers when it has at most 8 columns (fully
// unrolled); else a team owning columns, A's in a local array of the team's where they fit (else in a
// workspace of the core's), B's worked on in X's storage; column k is read by everyone at step k and
// written by no one, so one barrier a step. `info` (optional): 0, or k when the k-th pivot is exactly
// zero; that matrix's X is then NaN, and the others go on.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gesv_nopiv_operation();

}  // namespace fugue::linalg
