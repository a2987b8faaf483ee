// gemm_spread.cpp: see gemm_spread.h.
#include "gemm_spread.h"

#include <algorithm>

#include "device_kernels.h"
#include "gemm_spread_cl.h"
#include "scalars.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kItems = 256, kDepth = 16;
// Thinner products (a vector's outer product, 1 x 1 by 1 x N) are a pass over memory: they keep the plans
// that join their neighbours' kernels.
constexpr int64_t kMinDepth = 64;

uint64_t stage_bytes(int64_t tile, uint64_t value_bytes) { return static_cast<uint64_t>(2 * kDepth * (tile + 1)) * value_bytes; }

int64_t tiles_of(int64_t m, int64_t n, int64_t tile) { return ((m + tile - 1) / tile) * ((n + tile - 1) / tile); }

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

}  // namespace fugue::linalg
