// blocked_cholesky.cpp: see blocked_cholesky.h.
#include "blocked_cholesky.h"

#include <algorithm>

#include "blocked_cholesky_cl.h"
#include "matrices.h"
#include "scalars.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kTile = 32;         // the update's tiles: TS in the kernels
constexpr int64_t kUpdateItems = 64;  // the update's work-group: 8 x 8 work-items of 4 x 4 elements
constexpr int64_t kPanelItems = 64;   // the panel's work-group: TEAM in the kernels
constexpr int64_t kWholeItems = 256;  // start and finish: a work-group per matrix walking it

// Local memory of the panel kernel (the diagonal block), of the solve kernel (`rows` rows, each
// padded by one) and of the update kernel (two tiles' rows of the panel).
uint64_t panel_bytes(int64_t nb, uint64_t value) { return static_cast<uint64_t>(nb * nb) * value; }
uint64_t solve_bytes(int64_t nb, int64_t rows, uint64_t value) { return static_cast<uint64_t>(rows * (nb + 1)) * value; }
uint64_t update_bytes(int64_t nb, uint64_t value) { return static_cast<uint64_t>(2 * nb * kTile) * value; }

// The solve kernel's rows a work-group (a row a work-item): 64, fewer where they do not fit.
int64_t solve_rows(const fugue_device_desc& d, int64_t nb, uint64_t value) {
  int64_t rows = 64;
  while (rows > 16 && (solve_bytes(nb, rows, value) > d.local_mem_bytes || static_cast<uint64_t>(rows) > d.max_work_group_size)) rows /= 2;
  return rows;
}

}  // namespace

int64_t panel_columns(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype) {
  const fugue_device_desc& d = call.device();
  const uint64_t value = abi::dtype_size(dtype);
  int64_t nb = t.blocked_panel;
  while (nb > 8 && (panel_bytes(nb, value) > d.local_mem_bytes || solve_bytes(nb, solve_rows(d, nb, value), value) > d.local_mem_bytes ||
                    update_bytes(nb, value) > d.local_mem_bytes))
    nb /= 2;
  return std::min(nb, n);
}

sdk::Plan blocked_cholesky_plan(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype) {
  sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
  for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
  const std::string why = n > t.blocked_order ? "order " + std::to_string(n) + " > " + std::to_string(t.blocked_order)
                                              : "order " + std::to_string(n) + ": the loop plan's matrix exceeds local memory";
  // Within fugue_plan.variant's 255 characters with the longest row name.
  p.variant = "blocked: panels of " + std::to_string(panel_columns(call, t, n, dtype)) +
              " columns over the whole batch, each factored, the rows below solved, the trailing triangles updated in " + std::to_string(kTile) + " x " +
              std::to_string(kTile) + " tiles, in L's storage, kernels of their own (" + why + "); " + t.row;
  return p;
}

void blocked_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.potrf");
  const int64_t n = ta.shape[ta.rank - 1], count = batch_count(ta);
  if (count == 0) return;
  const fugue_device_desc& d = call.device();
  const Scalars sc(ta.dtype);
  const uint64_t value = abi::dtype_size(ta.dtype);
  const int64_t nb = panel_columns(call, tuning_of(call), n, ta.dtype), rows = solve_rows(d, nb, value);
  const size_t whole = std::min<size_t>(kWholeItems, sdk::max_work_group_size(s));
  if (sdk::max_work_group_size(s) < static_cast<size_t>(std::max(kUpdateItems, kPanelItems)))
    throw sdk::Unsupported("linalg.potrf's blocked plan runs work-groups of 64, more than this device's " +
                           std::to_string(sdk::max_work_group_size(s)) + "; FUGUE_LINALG_TUNING=blocked_order=0 takes a plan of one work-group a matrix");
  const std::string options = "-DT=" + sc.type + " -DR=" + sc.real_type + (sc.complex ? " -DCOMPLEX" : "") + " -DNB=" + std::to_string(nb) +
                              " -DTS=" + std::to_string(kTile) + " -DTEAM=" + std::to_string(kPanelItems) + " -DROWS=" + std::to_string(rows);
  const bool doubles = sc.real_type == "double";
  cl_program program = sdk::build_program(s, std::string(doubles ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kernel_source_blocked_cholesky,
                                          options);
  sdk::Kernel start(program, "cholesky_start"), panel(program, "cholesky_panel"), solve(program, "cholesky_solve"),
      update(program, "cholesky_update"), finish(program, "cholesky_finish");
  cl_mem in = sdk::buffer(s, a), out = sdk::buffer(s, l), status = sdk::buffer(s, info);
  const cl_int upper = lower ? 0 : 1;
  const size_t matrices = static_cast<size_t>(count);
  start.args(in, out, status, cl_long{n}, upper).enqueue(s, matrices * whole, whole, "linalg.potrf: start");
  for (int64_t j0 = 0; j0 < n; j0 += nb) {
    const cl_int b = static_cast<cl_int>(std::min(nb, n - j0));
    panel.args(out, status, cl_long{n}, cl_long{j0}, b).enqueue(s, matrices * kPanelItems, kPanelItems, "linalg.potrf: panel");
    if (j0 + b >= n) break;
    const int64_t below = n - j0 - b, chunks = (below + rows - 1) / rows, tiles = (below + kTile - 1) / kTile;
    solve.args(out, status, cl_long{n}, cl_long{j0}, static_cast<cl_int>(chunks))
        .enqueue(s, matrices * static_cast<size_t>(chunks * rows), static_cast<size_t>(rows), "linalg.potrf: solve");
    const size_t groups = matrices * static_cast<size_t>(tiles * (tiles + 1) / 2);
    update.args(out, status, cl_long{n}, cl_long{j0}, static_cast<cl_int>(tiles))
        .enqueue(s, groups * kUpdateItems, kUpdateItems, "linalg.potrf: update");
  }
  finish.args(out, status, cl_long{n}, upper).enqueue(s, matrices * whole, whole, "linalg.potrf: finish");
}

}  // namespace fugue::linalg
