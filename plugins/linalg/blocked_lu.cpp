// blocked_lu.cpp: see blocked_lu.h.
#include "blocked_lu.h"

#include <algorithm>
#include <string>

#include "blocked_lu_cl.h"
#include "device_kernels.h"
#include "matrices.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kColumns = 256;  // the swap-solve kernel's largest work-group: a column a work-item
constexpr int64_t kStagedRows = 32;  // the panel kernel's rows staged through local memory at a time
constexpr int64_t kFan = 8;          // the candidates each round of the panel's pivot search takes

// How the kernels are laid out for m x n matrices of `dtype` on the call's device.
struct Layout {
  int64_t m, n, k;  // rows, columns, steps
  int64_t team;     // the panel's work-items (a power of two, from 32), each holding `rows` of the panel's rows
  int64_t rows;
  int64_t nb;       // the panel's columns
  int64_t tile;     // the update's tiles (64 or 32)
  int64_t columns;  // the swap-solve kernel's work-group
};

Layout layout_of(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype) {
  const fugue_device_desc& d = call.device();
  const uint64_t value = abi::dtype_size(dtype), largest = std::min<uint64_t>(1024, d.max_work_group_size);
  Layout l{m, n, std::min(m, n), 32, 1, t.blocked_panel, 64, static_cast<int64_t>(std::min<uint64_t>(kColumns, d.max_work_group_size))};
  // A work-item holds two of the panel's rows (more only past the largest work-group).
  while (l.team * 2 < m && static_cast<uint64_t>(l.team * 2) <= largest) l.team *= 2;
  l.rows = (m + l.team - 1) / l.team;
  // The panel's registers: at most 128 four-byte values a work-item (an f64 panel of 32 columns in two
  // rows); the unit triangle (swap-solve) and the update's staged rows and columns within local memory.
  auto staged = [&](int64_t nb, int64_t tile) { return static_cast<uint64_t>(nb * (tile + 1) + nb * tile) * value; };
  auto panel = [&](int64_t nb) { return static_cast<uint64_t>(kStagedRows * (nb + 1) + 4 * nb) * value + static_cast<uint64_t>(2 * l.team) * (value + 4); };
  while (l.nb > 8 && (l.rows * l.nb * static_cast<int64_t>(value) / 4 > 128 || static_cast<uint64_t>(l.nb * l.nb) * value > d.local_mem_bytes ||
                      staged(l.nb, 32) > d.local_mem_bytes || panel(l.nb) > d.local_mem_bytes))
    l.nb /= 2;
  // Values of 8 bytes and more up to order 128: panels of 16 columns at most. The panel kernel's time
  // grows as its width squared, and at these orders the shallower updates cost less than it saves (H100,
  // 2,000 f64 matrices: n = 64 0.548 -> 0.401 ms, 128 2.263 -> 1.902; 256 10.23 -> 10.70, and f32 at 128
  // 1.057 -> 1.194, keep 32).
  if (value >= 8 && std::max(m, n) <= 128) l.nb = std::min<int64_t>(l.nb, 16);
  l.nb = std::min(l.nb, l.k);
  l.tile = staged(l.nb, 64) <= d.local_mem_bytes && d.max_work_group_size >= 256 ? 64 : 32;
  // The swap-solve kernel's columns: no more work-items than the matrix has columns, in whole warps.
  l.columns = std::min(l.columns, std::max<int64_t>(32, (n + 31) / 32 * 32));
  return l;
}

}  // namespace

sdk::Plan blocked_lu_plan(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype) {
  const Layout l = layout_of(call, t, m, n, dtype);
  // Within fugue_plan.variant's 255 characters with the table's row names (FUGUE_LINALG_TUNING's text,
  // which explain appends to the row's name, may be cut).
  return device_plan(call, "blocked: panels of " + std::to_string(l.nb) + " columns over the whole batch, each factored by " + std::to_string(l.team) +
                               " work-items a matrix, swaps and U's rows, then the rest updated in " + std::to_string(l.tile) + " x " +
                               std::to_string(l.tile) + " tiles, kernels of their own (" + blocked_reason(std::max(m, n), t.lu_blocked_order) +
                               "); " + t.row);
}

void blocked_lu(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t lu, uint32_t ipiv, uint32_t info) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.getrf");
  const int64_t count = batch_count(ta);
  if (count == 0) return;
  const Layout l = layout_of(call, tuning_of(call), rows_of(ta), columns_of(ta), ta.dtype);
  require_work_group(s, std::max({l.team, l.columns, (l.tile / 4) * (l.tile / 4)}), "linalg.getrf", "lu_blocked_order");
  cl_program program = linalg_program(call, s, ta.dtype, kernel_source_blocked_lu,
                                      "-DNB=" + std::to_string(l.nb) + " -DTEAM=" + std::to_string(l.team) + " -DQ=" + std::to_string(l.rows) +
                                          " -DSR=" + std::to_string(kStagedRows) + " -DFAN=" + std::to_string(kFan) + " -DTS=" + std::to_string(l.tile) + " -DCHUNK=" + std::to_string(l.columns));
  sdk::Kernel start(program, "lu_start"), panel(program, "lu_panel"), swap_solve(program, "lu_swap_solve"), update(program, "lu_update");
  cl_mem in = sdk::buffer(s, a), out = sdk::buffer(s, lu), pivots = sdk::buffer(s, ipiv), status = sdk::buffer(s, info);
  const size_t matrices = static_cast<size_t>(count), elements = matrices * static_cast<size_t>(l.m * l.n);
  const cl_int copy = in != out;
  start.args(in, out, status, static_cast<cl_long>(elements), static_cast<cl_long>(count), copy)
      .enqueue(s, copy ? std::max(elements, matrices) : matrices, 0, "linalg.getrf: start");
  const int64_t chunks = (l.n + l.columns - 1) / l.columns;
  const cl_int rows = static_cast<cl_int>(l.m), columns = static_cast<cl_int>(l.n), steps = static_cast<cl_int>(l.k);
  for (int64_t j0 = 0; j0 < l.k; j0 += l.nb) {
    const cl_int b = static_cast<cl_int>(std::min(l.nb, l.k - j0)), at = static_cast<cl_int>(j0);
    panel.args(out, pivots, status, rows, columns, steps, at, b).enqueue(s, matrices * static_cast<size_t>(l.team), static_cast<size_t>(l.team), "linalg.getrf: panel");
    swap_solve.args(out, pivots, rows, columns, steps, at, b, static_cast<cl_int>(chunks))
        .enqueue(s, matrices * static_cast<size_t>(chunks * l.columns), static_cast<size_t>(l.columns), "linalg.getrf: swaps and U");
    if (j0 + b >= l.k) break;  // nothing trails the last panel, the only one narrower than NB (the update takes NB)
    const int64_t tiles_r = (l.m - j0 - b + l.tile - 1) / l.tile, tiles_c = (l.n - j0 - b + l.tile - 1) / l.tile;
    const size_t items = static_cast<size_t>((l.tile / 4) * (l.tile / 4));
    update.args(out, rows, columns, at, static_cast<cl_int>(tiles_r), static_cast<cl_int>(tiles_c))
        .enqueue(s, matrices * static_cast<size_t>(tiles_r * tiles_c) * items, items, "linalg.getrf: update");
  }
}

}  // namespace fugue::linalg
