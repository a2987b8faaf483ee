// gemm_spread.h: linalg.gemm of a single large product (Lanczos's Ritz vectors, normalized cuts' 9 x
// 1500 x 56,648), which one work-group a product would leave to one compute unit, as a kernel of its
// own over the whole batch with C spread over work-groups. On GPUs C's tiles (kernels/gemm_spread.cl):
// 64 x 64 a work-group of 16 x 16 (32 x 32 where local memory is short), k staged in local memory. On
// CPUs the blocks of the vector plan (gemm_vectors.h), a run of consecutive blocks a work-group of one
// work-item, so that every core takes a share of C's columns. A DEVICE-level plan: no other operation
// joins it (beta C and the like run as kernels of their own).
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// Whether `count` products of m x n x k take spread tiles on the device: one product (count 1), at
// least the table's spread_tiles tiles of 64 x 64 (0: never) and k at least 64, on a device of several
// compute units whose work-groups take 256. (Batches of 2 up to the compute units would gain too; they
// may be split over several devices, whose shares must plan as the whole does, so they keep one
// work-group a product.)
bool spread_plan(const Tuning& t, int64_t count, int64_t m, int64_t n, int64_t k, const fugue_device_desc& device);
// Whether one product of m x n x k in vectors spreads its blocks over work-groups on the device (CPUs):
// the table's spread_vectors set and m n k at least that many times 2^20, k at least 2, at least two
// blocks a compute unit, on a device of several.
bool spread_vectors_plan(const Tuning& t, int64_t count, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device);
// explain's text.
std::string spread_vectors_variant(const Tuning& t, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device);

// The tile side on the device for values of `value_bytes`.
int64_t spread_tile(const fugue_device_desc& device, uint64_t value_bytes);
// explain's text.
std::string spread_variant(const Tuning& t, int64_t m, int64_t n, int64_t tile);

// Enqueues C = alpha op(A) op(B) for operands a, b (op 'N', 'T' or 'C') into c, `count` entries of m x
// n x k. C may be A's or B's buffer (the program names the same array): the product is then formed in
// scratch memory first and copied over.
void spread_gemm(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t b, uint32_t c, char op_a, char op_b,
                 int64_t count, int64_t m, int64_t n, int64_t k, double alpha);
// The same in the vector plan's blocks (spread_vectors_plan; real values, op 'N' or 'T').
void spread_vectors_gemm(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t b, uint32_t c, char op_a, char op_b,
                         int64_t m, int64_t n, int64_t k, double alpha);

}  // namespace fugue::linalg
