// gebrd.h: linalg.gebrd, the reduction of a batch of m x n matrices (m >= n) to upper bidiagonal form
// as LAPACK's gebrd (gebd2): Q^T A P = B with B's diagonal d and superdiagonal e, Q = H_0 ... H_n-1 and
// P = G_0 ... G_n-2 Householder reflections (householder.h); QP holds H_i's vectors below the diagonal
// and G_i's right of the superdiagonal, tauq and taup their scalars (taup's last is 0).
//
// One plan for every size: a team of work-items (one for m, n <= 8) works in QP's storage; at step i
// every work-item computes H_i from column i alike and updates the columns it owns, then after a barrier
// G_i from row i and updates the rows it owns (each row's product with G_i's vector read across the
// row), two barriers a step.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gebrd_operation();

}  // namespace fugue::linalg
