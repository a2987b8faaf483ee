// matrices.h: what the linalg operations share: batches of square matrices ([..., n, n], row-major,
// the leading axes number the entries), their BATCH partitions, and OpenCL C literals.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

constexpr uint32_t kRealDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);

// n of a batch of n x n matrices; throws InvalidArgument naming `operand` of `op` otherwise.
int64_t square_order(const fugue_type& t, const std::string& op, const std::string& operand);
// The batch axes of a [..., n, n] array: its shape without the last two.
std::vector<int64_t> batch_shape(const fugue_type& t);
// Matrices in the batch (1 for a single matrix).
int64_t batch_count(const fugue_type& t);
// The BATCH partition of a [..., n, n] operand (a matrix per entry) and of a [...] one (a value per entry).
sdk::Partition matrix_batch(const fugue_type& t);
sdk::Partition value_batch(const fugue_type& t);
// An OpenCL C literal of a real dtype (f32 with its suffix, so an f32 kernel needs no doubles).
std::string real_literal(fugue_dtype dtype, double value);

}  // namespace fugue::linalg
