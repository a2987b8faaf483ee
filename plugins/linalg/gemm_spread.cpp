// gemm_spread.cpp: see gemm_spread.h.
#include "gemm_spread.h"

#include <algorithm>

#include "device_kernels.h"
#include "gemm_spread_cl.h"
#include "gemm_vectors.h"
#include "scalars.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kItems = 256, kDepth = 16;
// Thinner products (a vector's outer product, 1 x 1 by 1 x N) are a pass over memory: they keep the plans
// that join their neighbours' kernels.
constexpr int64_t kMinDepth = 64;

uint64_t stage_bytes(int64_t tile, uint64_t value_bytes) { return static_cast<uint64_t>(2 * kDepth * (tile + 1)) * value_bytes; }

int64_t tiles_of(int64_t m, int64_t n, int64_t tile) { return ((m + tile - 1) / tile) * ((n + tile - 1) / tile); }

// The vector plan's spread: work-groups of one work-item, a few a compute unit, each a run of consecutive
// blocks (the blocks of a row of blocks are consecutive: a run reads the same rows of op(A) and neighbouring
// columns of op(B)); several a compute unit so that a core done early takes another run.
constexpr int64_t kRunsPerComputeUnit = 4;
// A vector's outer product (k 1) is a pass over C, which a fused consumer saves: it keeps the team (PoCL,
// 2 cores, D = 0.5 A B - 2 C of 1024 x 1024 x 1: 1.10 ms in one kernel against 1.58 spread; 1024 x 512 x
// 2: 0.73 against 0.47).
constexpr int64_t kMinVectorDepth = 2;

struct VectorRuns {
  VectorShape shape;
  int64_t blocks, run, groups;
};

VectorRuns vector_runs(const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, const fugue_device_desc& device) {
  VectorRuns r{vector_shape(t, m, n, dtype, device), 0, 0, 0};
  r.blocks = r.shape.blocks(m, n);
  const int64_t wanted = std::min<int64_t>(r.blocks, static_cast<int64_t>(device.compute_units) * kRunsPerComputeUnit);
  r.run = (r.blocks + wanted - 1) / wanted;
  r.groups = (r.blocks + r.run - 1) / r.run;
  return r;
}

}  // namespace

int64_t spread_tile(const fugue_device_desc& device, uint64_t value_bytes) {
  return stage_bytes(64, value_bytes) <= device.local_mem_bytes ? 64 : 32;
}

bool spread_plan(const Tuning& t, int64_t count, int64_t m, int64_t n, int64_t k, const fugue_device_desc& device) {
  // One product alone: a batch of several may be split over devices, each planning its share, and a
  // share below the compute units must not plan differently from the whole (several_devices).
  if (t.spread_tiles == 0 || count != 1 || device.compute_units < 2 || device.max_work_group_size < static_cast<uint64_t>(kItems)) return false;
  return tiles_of(m, n, 64) >= t.spread_tiles && k >= kMinDepth;
}

bool spread_vectors_plan(const Tuning& t, int64_t count, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device) {
  // One product alone, as spread_plan's tiles.
  if (t.spread_vectors == 0 || count != 1 || k < kMinVectorDepth || device.compute_units < 2 || !vector_plan(t, dtype, device)) return false;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return work >= static_cast<double>(t.spread_vectors) * (1 << 20) && vector_runs(t, m, n, dtype, device).blocks >= 2 * static_cast<int64_t>(device.compute_units);
}

std::string spread_vectors_variant(const Tuning& t, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device) {
  const VectorRuns r = vector_runs(t, m, n, dtype, device);
  const std::string vt = Scalars(dtype).type + std::to_string(r.shape.width);
  return "spread vectors: C's " + std::to_string(r.blocks) + " blocks of " + std::to_string(r.shape.rows) + " x " + std::to_string(r.shape.width) +
         " (a " + vt + " a row) in runs of " + std::to_string(r.run) + " over " + std::to_string(r.groups) +
         " work-groups of one work-item, k in order, a kernel of its own (one product, m n k " + std::to_string(m * n * k) + " >= " +
         std::to_string(t.spread_vectors) + " x 2^20, k >= " + std::to_string(kMinVectorDepth) + ", " + std::to_string(device.compute_units) +
         " compute units); " + t.row;
}

std::string spread_variant(const Tuning& t, int64_t m, int64_t n, int64_t tile) {
  return "spread: C's " + std::to_string(tiles_of(m, n, tile)) + " tiles of " + std::to_string(tile) + " x " + std::to_string(tile) +
         " over work-groups of 256, k staged " + std::to_string(kDepth) + " at a time, a kernel of its own (one product, " +
         std::to_string(tiles_of(m, n, 64)) + " tiles of 64 >= " + std::to_string(t.spread_tiles) + ", k >= " + std::to_string(kMinDepth) + "); " + t.row;
}

void spread_gemm(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t b, uint32_t c, char op_a, char op_b,
                 int64_t count, int64_t m, int64_t n, int64_t k, double alpha) {
  if (count == 0 || m == 0 || n == 0) return;
  const fugue_dtype dtype = call.operand(a).dtype;
  sdk::require_dtype(s, dtype, "linalg.gemm");
  const uint64_t value = abi::dtype_size(dtype);
  const int64_t tile = spread_tile(call.device(), value), tiles = tiles_of(m, n, tile);
  require_work_group(s, kItems, "linalg.gemm", "spread_tiles");
  auto op_code = [](char op) { return op == 'N' ? "0" : op == 'T' ? "1" : "2"; };
  cl_program program = linalg_program(call, s, dtype, kernel_source_gemm_spread,
                                      "-DTS=" + std::to_string(tile) + " -DKC=" + std::to_string(kDepth) + " -DOPA=" + op_code(op_a) +
                                          " -DOPB=" + op_code(op_b));
  sdk::Kernel kernel(program, "gemm_spread");
  cl_mem in_a = sdk::buffer(s, a), in_b = sdk::buffer(s, b), out = sdk::buffer(s, c);
  // C over A or B: every tile reads rows the others write.
  const bool over = out == in_a || out == in_b;
  const size_t bytes = static_cast<size_t>(count * m * n) * value;
  cl_mem target = over ? sdk::scratch(s, bytes) : out;
  const bool doubles = part_dtype(dtype) == FUGUE_DTYPE_F64;
  if (doubles)
    kernel.args(in_a, in_b, target, cl_long{m}, cl_long{n}, cl_long{k}, cl_long{(n + tile - 1) / tile}, cl_long{tiles}, cl_double{alpha});
  else
    kernel.args(in_a, in_b, target, cl_long{m}, cl_long{n}, cl_long{k}, cl_long{(n + tile - 1) / tile}, cl_long{tiles},
                cl_float{static_cast<float>(alpha)});
  kernel.enqueue(s, static_cast<size_t>(count * tiles * kItems), static_cast<size_t>(kItems), "linalg.gemm: spread tiles");
  if (over) sdk::check_cl(clEnqueueCopyBuffer(s.queue, target, out, 0, 0, bytes, 0, nullptr, nullptr), "linalg.gemm: copying C over its input");
}

void spread_vectors_gemm(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t b, uint32_t c, char op_a, char op_b,
                         int64_t m, int64_t n, int64_t k, double alpha) {
  if (m == 0 || n == 0) return;
  const fugue_dtype dtype = call.operand(a).dtype;
  sdk::require_dtype(s, dtype, "linalg.gemm");
  const Scalars sc(dtype);
  const VectorRuns r = vector_runs(tuning_of(call), m, n, dtype, call.device());
  // op(A)(i, kk), op(B)(kk, j) and C(i, j) in the buffers as stored (A m x k or k x m, B k x n or n x k),
  // indices in longs: the products this plan takes are the large ones.
  auto at = [](const char* array, const std::string& row, int64_t columns, const std::string& column) {
    return std::string(array) + "[(long)(" + row + ") * " + std::to_string(columns) + " + (" + column + ")]";
  };
  TileOperands ops;
  ops.m = m;
  ops.n = n;
  ops.k = k;
  ops.a_k_contiguous = op_a == 'N';
  ops.b_j_contiguous = op_b == 'N';
  ops.a_at = [&](const std::string& i, const std::string& kk) { return op_a == 'N' ? at("a", i, k, kk) : at("a", kk, m, i); };
  ops.b_at = [&](const std::string& kk, const std::string& j) { return op_b == 'N' ? at("b", kk, n, j) : at("b", j, k, kk); };
  // alpha 0 gives zeros whatever A and B hold (BLAS's rule).
  ops.store = [&](const std::string& i, const std::string& j, const std::string& value) {
    const std::string v = alpha == 0 ? sc.literal(0) : alpha == 1 ? value : sc.real(alpha) + " * " + value;
    return at("c", i, n, j) + " = " + v + ";";
  };
  const std::string body = vector_block([](const std::string& stem) { return stem; }, sc, r.shape, ops, "blk");
  const std::string source = "__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void gemm_spread_vectors(__global const T* restrict a, "
                             "__global const T* restrict b, __global T* restrict c) {\n"
                             "  const int first = (int)get_group_id(0) * " + std::to_string(r.run) + ", last = min(first + " + std::to_string(r.run) +
                             ", " + std::to_string(r.blocks) + ");\n  for (int blk = first; blk < last; ++blk) {\n" + body + "  }\n}\n";
  cl_program program = linalg_program(call, s, dtype, source.c_str(), "");
  sdk::Kernel kernel(program, "gemm_spread_vectors");
  cl_mem in_a = sdk::buffer(s, a), in_b = sdk::buffer(s, b), out = sdk::buffer(s, c);
  // C over A or B: the blocks would read what the others write (and restrict would not hold). The core
  // gives a device-level output named as an input a buffer of its own; this holds without it too.
  const bool over = out == in_a || out == in_b;
  const size_t bytes = static_cast<size_t>(m * n) * abi::dtype_size(dtype);
  cl_mem target = over ? sdk::scratch(s, bytes) : out;
  kernel.args(in_a, in_b, target);
  kernel.enqueue(s, static_cast<size_t>(r.groups), 1, "linalg.gemm: spread vectors");
  if (over) sdk::check_cl(clEnqueueCopyBuffer(s.queue, target, out, 0, 0, bytes, 0, nullptr, nullptr), "linalg.gemm: copying C over its input");
}

}  // namespace fugue::linalg
