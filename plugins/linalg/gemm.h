// gemm.h: linalg.gemm, batched matrix products C = alpha op(A) op(B), op a transpose, a conjugate
// transpose or neither ({"trans_a": "N" | "T" | "C", "trans_b": ..., "alpha": 1}; f32, f64, c64,
// c128): A [..., m, k] ([..., k, m] transposed), B
// [..., k, n] ([..., n, k]), C [..., m, n], the batch axes equal. beta C is element-wise operations
// after it (array.mul, array.add), which join its kernel.
//
// Each work-item computes a block of up to 4 x 4 elements of C in registers (four values of op(A) and
// four of op(B) read per step of k for sixteen products); a matrix's blocks are shared by a team, one
// block per work-item up to 256, several matrices side by side in a work-group where the teams are small.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> gemm_operation();
// linalg.gemm_vbatched: the same of products of different sizes (sizes [..., 3], i32: m, n, k each),
// padded to the largest; C's padding zero, info -1 for sizes outside the padded ones.
std::unique_ptr<sdk::Operation> gemm_vbatched_operation();

}  // namespace fugue::linalg
