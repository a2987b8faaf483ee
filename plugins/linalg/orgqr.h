// orgqr.h: linalg.orgqr, the m x n matrix Q with orthonormal columns of a QR factorization (linalg.geqrf)
// as LAPACK's orgqr: Q = H_0 H_1 ... H_k-1 applied to the first n columns of the identity, from the
// reflectors below QR's diagonal and their scalars tau (k of them, k <= n <= m).
//
// Every column of Q is H_0 ... H_min(j, k-1) e_j on its own (H_i leaves e_j alone for i > j), so each
// work-item of a team builds its columns with no barrier; one matrix per work-item in registers for
// m, n <= 8 (fully unrolled). The teams are geqrf's, so that geqrf then orgqr on the same matrices is one kernel.
// Q may be written over QR only up to 8 x 8 (larger is refused with a message: a team's work-items would
// overwrite reflectors the others still read).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> orgqr_operation();

}  // namespace fugue::linalg
