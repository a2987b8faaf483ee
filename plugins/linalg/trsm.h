// trsm.h: triangular solves with batches of triangular matrices A [..., n, n] (only the triangle
// `lower` names is read; `unit`: its diagonal is taken as ones and not read):
//   linalg.trsm: op(A) X = alpha B ({"side": "L"}, B [..., n, k]) or X op(A) = alpha B ("R", B [..., m, n]),
//   linalg.trsv: op(A) x = b (b [..., n]),
// op(A) = A or A^T ({"trans": "N" | "T"}), as BLAS's. Teams as potrf's and getrf's, so that a solve after a
// factorization of the same matrices joins its kernel.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> trsm_operation();
std::unique_ptr<sdk::Operation> trsv_operation();

}  // namespace fugue::linalg
