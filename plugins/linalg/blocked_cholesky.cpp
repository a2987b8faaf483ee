// blocked_cholesky.cpp: see blocked_cholesky.h.
#include "blocked_cholesky.h"

#include <algorithm>

#include "blocked_cholesky_cl.h"
#include "device_kernels.h"
#include "matrices.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kWholeItems = 256;  // start and finish: a work-group per matrix walking it

// Local memory of the solve kernel (the block and `rows` rows padded by one) and of the update kernel (two tiles' rows of the panel, padded by one).
uint64_t solve_bytes(int64_t nb, int64_t rows, uint64_t value) { return static_cast<uint64_t>(nb * nb + rows * (nb + 1)) * value; }
uint64_t update_bytes(int64_t nb, int64_t tile, uint64_t value) { return static_cast<uint64_t>(2 * nb * (tile + 1)) * value; }

// The solve kernel's rows a work-group (a row a work-item): 64, fewer where they do not fit local memory.
int64_t solve_rows(const fugue_device_desc& d, int64_t nb, uint64_t value) {
  int64_t rows = 64;
  while (rows > 16 && solve_bytes(nb, rows, value) > d.local_mem_bytes) rows /= 2;
  return rows;
}

// The update's tiles (TS): 64 x 64, a work-group of 16 x 16, where their rows fit local memory and the
// work-group the device; else 32 x 32, a work-group of 8 x 8. Larger tiles read the panel's rows half
// as often and keep more work in flight (NVIDIA H100, 2,000 f64 matrices of 512: the updates 39.3 -> 12.1
// ms, `fugue run --stats`).
int64_t update_tile(const fugue_device_desc& d, int64_t nb, uint64_t value) {
  return update_bytes(nb, 64, value) <= d.local_mem_bytes && d.max_work_group_size >= 256 ? 64 : 32;
}
int64_t update_items(int64_t tile) { return (tile / 4) * (tile / 4); }

}  // namespace

int64_t panel_columns(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype) {
  const fugue_device_desc& d = call.device();
  const uint64_t value = abi::dtype_size(dtype);
  int64_t nb = t.blocked_panel;
  // The panel's and the solve's rows in registers: at most 128 four-byte values a work-item (64 f64).
  while (nb > 8 && (nb * static_cast<int64_t>(value) / 4 > 128 || solve_bytes(nb, 16, value) > d.local_mem_bytes ||
                    update_bytes(nb, 32, value) > d.local_mem_bytes))
    nb /= 2;
  return std::min(nb, n);
}

sdk::Plan blocked_cholesky_plan(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype) {
  // Within fugue_plan.variant's 255 characters with the table's row names (FUGUE_LINALG_TUNING's text,
  // which explain appends to the row's name, may be cut).
  const int64_t nb = panel_columns(call, t, n, dtype), tile = update_tile(call.device(), nb, abi::dtype_size(dtype));
  return device_plan(call, "blocked: panels of " + std::to_string(nb) +
                               " columns over the whole batch, each factored, the rows below solved, the trailing triangles updated in " +
                               std::to_string(tile) + " x " + std::to_string(tile) + " tiles, in L's storage, kernels of their own (" +
                               blocked_reason(n, t.blocked_order) + "); " + t.row);
}

void blocked_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.potrf");
  const int64_t n = ta.shape[ta.rank - 1], count = batch_count(ta);
  if (count == 0) return;
  const fugue_device_desc& d = call.device();
  const uint64_t value = abi::dtype_size(ta.dtype);
  const int64_t nb = panel_columns(call, tuning_of(call), n, ta.dtype), tile = update_tile(d, nb, value), items = update_items(tile),
                rows = solve_rows(d, nb, value);
  const size_t whole = std::min<size_t>(kWholeItems, sdk::max_work_group_size(s));
  require_work_group(s, std::max({nb, rows, items}), "linalg.potrf", "blocked_order");  // the update's 256 only where the device takes them
  cl_program program = linalg_program(call, s, ta.dtype, kernel_source_blocked_cholesky,
                                      "-DNB=" + std::to_string(nb) + " -DTS=" + std::to_string(tile) + " -DROWS=" + std::to_string(rows));
  sdk::Kernel start(program, "cholesky_start"), panel(program, "cholesky_panel"), solve(program, "cholesky_solve"),
      update(program, "cholesky_update"), finish(program, "cholesky_finish");
  cl_mem in = sdk::buffer(s, a), out = sdk::buffer(s, l), status = sdk::buffer(s, info);
  const cl_int upper = lower ? 0 : 1;
  const size_t matrices = static_cast<size_t>(count);
  start.args(in, out, status, cl_long{n}, upper).enqueue(s, matrices * whole, whole, "linalg.potrf: start");
  for (int64_t j0 = 0; j0 < n; j0 += nb) {
    const cl_int b = static_cast<cl_int>(std::min(nb, n - j0));
    panel.args(out, status, cl_long{n}, cl_long{j0}, b).enqueue(s, matrices * static_cast<size_t>(nb), static_cast<size_t>(nb), "linalg.potrf: panel");
    if (j0 + b >= n) break;  // b < nb only here, in the last panel: the solve and update kernels take NB columns
    const int64_t below = n - j0 - b, chunks = (below + rows - 1) / rows, tiles = (below + tile - 1) / tile;
    solve.args(out, status, cl_long{n}, cl_long{j0}, static_cast<cl_int>(chunks))
        .enqueue(s, matrices * static_cast<size_t>(chunks * rows), static_cast<size_t>(rows), "linalg.potrf: solve");
    const size_t groups = matrices * static_cast<size_t>(tiles * (tiles + 1) / 2);
    update.args(out, status, cl_long{n}, cl_long{j0}, static_cast<cl_int>(tiles))
        .enqueue(s, groups * static_cast<size_t>(items), static_cast<size_t>(items), "linalg.potrf: update");
  }
  finish.args(out, status, cl_long{n}, upper).enqueue(s, matrices * whole, whole, "linalg.potrf: finish");
}

}  // namespace fugue::linalg
