// gels.h: linalg.gels, least squares through QR as LAPACK's gels (no transpose, m >= n): X [..., n, k]
// minimizing ||A X - B|| for each matrix A [..., m, n] of full column rank and B [..., m, k].
//
// The factorization (householder.h) runs on [A | B]: B's columns are transformed along with A's, so they
// come out as Q^T B with no second pass, then R X = (Q^T B)(0:n) is solved by the team. The working
// matrix is in a local array of the team's where it fits, else in a workspace of the core's; one matrix per
// work-item in registers when m and n + k are at most 8. `info` (optional) is LAPACK's: 0, or i when
// R(i, i) is exactly zero (A is rank deficient); that matrix's X is then NaN, and the others go on.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gels_operation();

}  // namespace fugue::linalg
