// gemv.h: linalg.gemv, batched matrix-vector products y = alpha op(A) x ({"trans": "N" | "T",
// "alpha": 1}): A [..., m, n], x [..., n] ([..., m] transposed), y [..., m] ([..., n]), the batch axes
// equal. Each work-item computes rows of y; a matrix's rows are shared by a team (one work-item up to
// 8 rows), several matrices side by side in a work-group where the teams are small.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gemv_operation();

}  // namespace fugue::linalg
