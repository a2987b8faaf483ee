// gemm_vectors.h: the body of a product C = op(A) op(B) on CPUs, whose cores compute in vectors rather
// than side by side: each work-item takes blocks of C of R rows by V columns, V the device's native
// vector width (ABI 2.10), and walks k in order, multiplying a vector of op(B)'s row k (V consecutive
// values, which the compiler loads at once) by each of R values of op(A)'s column k, into R vectors of
// fused multiply-adds. Reads and writes go through the caller's expressions (TileOperands), so fused
// producers and consumers join as in the tiles.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "fugue/sdk.hpp"
#include "gemm_tiles.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

struct VectorShape {
  int64_t rows;   // R: rows of C a block holds
  int64_t width;  // V: its columns, one vector (2, 4, 8 or 16 values)
  int64_t blocks(int64_t m, int64_t n) const { return ((m + rows - 1) / rows) * ((n + width - 1) / width); }
};

// Whether linalg.gemm multiplies in vectors on this device: the table's vector_rows is set, the values
// are real and the device says how many it computes at once (2 or more).
bool vector_plan(const Tuning& t, fugue_dtype dtype, const fugue_device_desc& device);
// The blocks for a product of m rows and n columns: the native width, narrowed to the smallest power of
// two that covers n (a 4-column product takes vectors of 4, not 16), and the table's rows, at most m (a
// 4-row product computes no clamped rows), or all m rows where m is at most half again as many.
VectorShape vector_shape(const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, const fugue_device_desc& device);

// Fresh names for the kernel's variables (an emitter's, or a kernel of the plugin's own).
using NameOf = std::function<std::string(const std::string& stem)>;

// The statements computing and storing block `block` (a name or an expression, 0 .. blocks - 1: the
// blocks of a row of blocks are consecutive) into C.
std::string vector_block(const NameOf& name, const Scalars& sc, const VectorShape& shape, const TileOperands& ops,
                         const std::string& block);

// The body: the team's work-items take the blocks in turn (`lane` the work-item's place, `team` their
// number, at most the blocks'; no barrier inside).
std::string vector_product(const NameOf& name, const Scalars& sc, const VectorShape& shape, const TileOperands& ops,
                           const std::string& lane, int64_t team);

}  // namespace fugue::linalg
