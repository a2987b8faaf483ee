// blocked_qr.cpp: see blocked_qr.h.
#include "blocked_qr.h"

#include <algorithm>
#include <string>

#include "blocked_qr_cl.h"
#include "device_kernels.h"
#include "matrices.h"
#include "householder.h"

namespace fugue::linalg {

namespace {

constexpr int64_t kApplyColumns = 64;  // the apply kernel's work-group: a column a work-item
constexpr int64_t kStagedRows = 32;    // the rows of V it stages at a time
constexpr int64_t kPanelRows = 16;     // the rows of a column a panel work-item holds, more where the work-group reaches kPanelTeam
// The panel's largest work-group: 1024 work-items holding 16 f64 values each asked the H100 for more
// registers than a compute unit has (CL_OUT_OF_RESOURCES at order 512).
constexpr int64_t kPanelTeam = 256;
constexpr int64_t kPanelRegisters = 256;  // the most four-byte values of a column a GPU's panel work-item holds

// How the kernels are laid out for m x n matrices of `dtype` on the call's device.
struct Layout {
  int64_t m, n, k;  // rows, columns, steps
  int64_t nb;       // the panel's columns
  int64_t groups;   // the panel's row groups (TR): its work-group is groups x nb
  int64_t rows;     // the rows of a column each panel work-item holds (Q), groups apart
  int64_t columns;   // the apply kernel's work-group
  bool fits;         // the panel's local memory and registers within the device's
  int64_t per_item;  // the columns each of its work-items takes: two of four-byte values (H100, f32 n = 512: the
                     // apply kernels 55.7 -> 38.7 ms), one of wider ones (f64: 67.5 -> 76.2 ms with two)
};

Layout layout_of(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype) {
  const fugue_device_desc& d = call.device();
  const uint64_t value = abi::dtype_size(dtype), largest = std::min<uint64_t>(1024, d.max_work_group_size);
  Layout l{m, n, std::min(m, n), t.blocked_panel, 1, 1, static_cast<int64_t>(std::min<uint64_t>(kApplyColumns, d.max_work_group_size)), true,
           value == 4 ? 2 : 1};
  auto shape = [&] {
    l.groups = 1;
    while (l.groups * kPanelRows < m && l.groups * 2 * l.nb <= kPanelTeam && static_cast<uint64_t>(l.groups * 2 * l.nb) <= largest) l.groups *= 2;
    l.rows = (m + l.groups - 1) / l.groups;
  };
  // Local memory: the panel's partial sums, v, the Gram matrix, T, the taus; the apply kernel's staged V and T.
  auto panel_bytes = [&] {
    return static_cast<uint64_t>(l.groups * l.rows + l.groups * l.nb + 2 * l.nb * l.nb + l.nb + 1 + 2 * l.groups) * value;
  };
  auto apply_bytes = [&] { return static_cast<uint64_t>(kStagedRows * l.nb + l.nb * l.nb) * value; };
  // Registers: a column of V^H C a work-item, at most 64 four-byte values (an f64 panel of 32 columns).
  shape();
  while (l.nb > 8 && (l.nb * static_cast<int64_t>(value) / 4 > 64 || panel_bytes() > d.local_mem_bytes || apply_bytes() > d.local_mem_bytes)) {
    l.nb /= 2;
    shape();
  }
  l.nb = std::min(l.nb, l.k);
  shape();
  // The panel holds all of a column's rows: v in local memory, the rows in registers (on GPUs at most
  // 256 four-byte values a work-item; CPUs keep private arrays in memory anyway).
  l.fits = panel_bytes() <= d.local_mem_bytes && apply_bytes() <= d.local_mem_bytes &&
           (d.type == FUGUE_DEVICE_CPU || l.rows * static_cast<int64_t>(value) / 4 <= kPanelRegisters);
  return l;
}

}  // namespace

bool blocked_qr_fits(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype) { return layout_of(call, t, m, n, dtype).fits; }

sdk::Plan blocked_qr_plan(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype) {
  const Layout l = layout_of(call, t, m, n, dtype);
  return device_plan(call, "blocked: panels of " + std::to_string(l.nb) + " columns over the whole batch, each reflected by " +
                               std::to_string(l.groups * l.nb) + " work-items a matrix with its T, then applied to the columns right of it, " +
                               std::to_string(l.columns) + " a work-group, kernels of their own (" +
                               blocked_reason(std::max(m, n), t.qr_blocked_order) + "); " + t.row);
}

void blocked_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.geqrf");
  const int64_t count = batch_count(ta);
  if (count == 0 || rows_of(ta) == 0 || columns_of(ta) == 0) return;
  const Layout l = layout_of(call, tuning_of(call), rows_of(ta), columns_of(ta), ta.dtype);
  require_work_group(s, std::max(l.groups * l.nb, l.columns), "linalg.geqrf", "qr_blocked_order");
  const ReflectorLimits limits = reflector_limits(ta.dtype);
  cl_program program = linalg_program(call, s, ta.dtype, kernel_source_blocked_qr,
                                      "-DNB=" + std::to_string(l.nb) + " -DTR=" + std::to_string(l.groups) + " -DQ=" + std::to_string(l.rows) +
                                          " -DCT=" + std::to_string(l.columns) + " -DCW=" + std::to_string(l.per_item) + " -DRC=" + std::to_string(kStagedRows) +
                                          " -DNORM_LO=" + limits.lo + " -DNORM_HI=" + limits.hi + " -DNORM_TINY=" + limits.tiny +
                                          " -DNORM_BIG=" + limits.big);
  sdk::Kernel start(program, "qr_start"), panel(program, "qr_panel"), apply(program, "qr_apply");
  cl_mem in = sdk::buffer(s, a), out = sdk::buffer(s, qr), taus = sdk::buffer(s, tau);
  const size_t matrices = static_cast<size_t>(count), elements = matrices * static_cast<size_t>(l.m * l.n);
  // T of every entry's current panel (NB x NB), overwritten panel by panel.
  cl_mem tmat = sdk::scratch(s, matrices * static_cast<size_t>(l.nb * l.nb) * abi::dtype_size(ta.dtype));
  if (in != out) start.args(in, out, static_cast<cl_long>(elements)).enqueue(s, elements, 0, "linalg.geqrf: start");
  const cl_int rows = static_cast<cl_int>(l.m), columns = static_cast<cl_int>(l.n), steps = static_cast<cl_int>(l.k);
  const size_t team = static_cast<size_t>(l.groups * l.nb);
  for (int64_t j0 = 0; j0 < l.k; j0 += l.nb) {
    const int64_t b = std::min(l.nb, l.k - j0);
    const cl_int at = static_cast<cl_int>(j0), width = static_cast<cl_int>(b);
    panel.args(out, taus, tmat, rows, columns, steps, at, width).enqueue(s, matrices * team, team, "linalg.geqrf: panel");
    const int64_t right = l.n - j0 - b;  // columns right of the panel
    if (right <= 0) continue;
    const int64_t tiles = (right + l.columns * l.per_item - 1) / (l.columns * l.per_item);
    apply.args(out, tmat, rows, columns, at, width, static_cast<cl_int>(tiles))
        .enqueue(s, matrices * static_cast<size_t>(tiles * l.columns), static_cast<size_t>(l.columns), "linalg.geqrf: apply");
  }
}

}  // namespace fugue::linalg
