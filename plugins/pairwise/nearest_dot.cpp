// nearest_dot.cpp: see nearest_dot.h.
#include "nearest_dot.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace fugue::pairwise {

namespace {

constexpr int64_t kMaxGroups = int64_t{1} << 20;  // beyond, work-items take several rows

// A literal of the data's type with every digit.
std::string literal(double v, bool f32) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  std::string s = text;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return f32 ? s + "f" : s;
}

// OpenCL C inserting value v of Y's row j (declared before) into the sorted list of Q at D[row ..],
// Index[row ..] (pairs ordered by value, then index; empty places, index -1, last), whose last pair is
// (last, lasti); NaN never enters.
std::string insertion(const std::string& t, const std::string& Q) {
  std::string src = "    if (isnan(v) || !(lasti < 0 || v < last || (v == last && j < lasti))) continue;\n    int q = " + Q + " - 1;\n";
  src += "    for (; q > 0; --q) {\n      const " + t + " pv = D[row + q - 1]; const long pi = Index[row + q - 1];\n";
  src += "      if (!(pi < 0 || v < pv || (v == pv && j < pi))) break;\n      D[row + q] = pv; Index[row + q] = pi;\n    }\n";
  return src + "    D[row + q] = v; Index[row + q] = j;\n    last = D[row + " + Q + " - 1]; lasti = Index[row + " + Q + " - 1];\n";
}

// The OpenCL C of the four kernels around the dot-form sweep (X [N, K], Y [M, K]; W candidates and Q
// nearest a row; tf32: the sweep on the tensor cores, its coordinates rounded to tf32).
std::string source(const Measure& m, const Parameters& p, bool f32, int64_t k, int64_t width, int64_t count, bool tf32) {
  const std::string t = f32 ? "float" : "double", K = std::to_string(k) + "L", W = std::to_string(width), Q = std::to_string(count);
  // The bound's factor, x and y here the rows less Y's first row as rounded: the dot form's rounding
  // ((2k + 4) u (|x|^2 + |y|^2): both norms and x.y within k u of theirs, two roundings of the sum), the
  // centring's (each coordinate's difference off by u of |x_s| + |y_s|: within 4 u (|x|^2 + |y|^2) of
  // the distance) and the difference form's ((k + 3) u of a distance at most 2 (|x|^2 + |y|^2)), with
  // room to spare for the norms' own rounding and contracted multiply-adds.
  // The tensor cores multiply tf32 values exactly and add the products in f32, aligned to the largest
  // exponent and truncated (as published for NVIDIA's since Volta; PTX does not say): each step's error
  // taken as two units rather than one, the factor doubled.
  const double u = f32 ? 0x1p-24 : 0x1p-53, factor = (tf32 ? 2 : 1) * (5.0 * static_cast<double>(k) + 40) * u;
  std::string src = f32 ? "" : "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  // As the sweep stages them (tiles.cpp's tf32_rna).
  if (tf32) src += tf32_rounding();
  // A pair's sum of squared differences (the measure's accumulator) and its value.
  src += t + " pair_sum(__global const " + t + "* restrict X, __global const " + t + "* restrict Y, long i, long j) {\n  " + t +
         " a0 = 0;\n  for (long s = 0; s < " + K + "; ++s) {\n    const " + t + " xs = X[i * " + K + " + s], ys = Y[j * " + K + " + s];\n    " +
         m.update(0, "xs", "ys", "a0", p, f32) + "\n  }\n  return a0;\n}\n";
  // 1. Squared norms of the rows less Y's first row (as the sweep stages them): a work-item a row of X,
  // then of Y; tf32, also the squared norms of what rounding to tf32 takes off them (EX, EY).
  const std::string errors = tf32 ? "__global " + t + "* restrict EX, __global " + t + "* restrict EY, " : "";
  src += "__kernel void nearest_norms(__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global " + t + "* restrict NX, __global " +
         t + "* restrict NY, " + errors + "const long N, const long M) {\n";
  src += "  for (long r = get_global_id(0); r < N + M; r += get_global_size(0)) {\n    __global const " + t + "* row = r < N ? X + r * " + K + " : Y + (r - N) * " +
         K + ";\n    " + t + " sum = 0, lost = 0;\n    for (long s = 0; s < " + K + "; ++s) {\n      const " + t + " c = row[s] - Y[s];\n      sum += c * c;\n";
  if (tf32) src += "      const float e = c - tf32_rna(c);\n      lost += e * e;\n";
  src += "    }\n    if (r < N) NX[r] = sum; else NY[r - N] = sum;\n";
  if (tf32) src += "    if (r < N) EX[r] = lost; else EY[r - N] = lost;\n";
  src += "  }\n}\n";
  // The largest of Y's norms (Bound[0]) and, tf32, of their rounding's (Bound[1]), infinity where one is
  // not finite (a work-group of 256); the count of rows left undecided set to 0.
  const int parts = tf32 ? 2 : 1;
  src += "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\nvoid nearest_bound(__global const " + t + "* restrict NY, " +
         (tf32 ? "__global const " + t + "* restrict EY, " : "") + "__global " + t + "* restrict Bound, __global int* restrict Count, const long M) {\n  __local " +
         t + " part[256];\n  const int t = get_local_id(0);\n";
  for (int q = 0; q < parts; ++q) {
    const std::string from = q == 0 ? "NY" : "EY", at = std::to_string(q);
    src += "  {\n  " + t + " most = 0;\n  for (long j = t; j < M; j += 256) { const " + t + " v = " + from +
           "[j]; most = isfinite(v) ? fmax(most, v) : INFINITY; }\n";
    src += "  part[t] = most;\n  barrier(CLK_LOCAL_MEM_FENCE);\n  for (int h = 128; h > 0; h /= 2) {\n    if (t < h) part[t] = fmax(part[t], part[t + h]);\n"
           "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n  if (t == 0) Bound[" + at + "] = part[0];\n  barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  }
  src += "  if (t == 0) Count[0] = 0;\n}\n";
  // 3. A work-item a row: the candidates' distances, the best kept in D and Index (value, then index),
  // then the proof that no row left out enters, else the row listed in Rows.
  src += "__kernel void nearest_candidates(__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global const " + t +
         "* restrict NX, " + (tf32 ? "__global const " + t + "* restrict EX, " : "") + "__global const " + t + "* restrict Bound, __global const " + t + "* restrict G, __global const long* restrict J, __global " + t +
         "* restrict D, __global long* restrict Index, __global long* restrict Rows, __global int* restrict Count, const long N, const long M) {\n";
  src += "  for (long i = get_global_id(0); i < N; i += get_global_size(0)) {\n  const long base = i * " + W + ", row = i * " + Q + ";\n";
  src += "  for (int q = 0; q < " + Q + "; ++q) { D[row + q] = INFINITY; Index[row + q] = -1; }\n  " + t + " last = INFINITY; long lasti = -1;\n";
  src += "  for (int c = 0; c < " + W + "; ++c) {\n    const long j = J[base + c];\n    if (j < 0) break;\n    const " + t + " a0 = pair_sum(X, Y, i, j), v = (" + t +
         ")(" + m.finish({"a0"}, p, f32) + ");\n";
  src += insertion(t, Q) + "  }\n";
  // Decided: finite norms, a full list, and every row of Y a candidate, or the last candidate's g (finite:
  // an overflowed g bounds nothing), less the bound, above the count-th's sum with a margin of 32 u (so
  // that its square root too, within a few units of the last place, stays above). The bound's absolute
  // part, 5k + 40 smallest normals, covers what underflows or is flushed to zero.
  src += "  const " + t + " nx = NX[i], ymax = Bound[0];\n  bool decided = isfinite(nx) && isfinite(ymax) && J[base + " + W + " - 1] >= 0 && lasti >= 0;\n";
  // tf32: x.y of the rounded rows x~, y~ differs from x.y by (x~ - x).y~ + x.(y~ - y), at most
  // |x~ - x| (|y| + |y~ - y|) + |x| |y~ - y| (Cauchy-Schwarz), twice that in the dot form, with room for the
  // rounding of the f32 sums of squares it is made from (each within k u of its own, so their square
  // roots within k u / 2), of this sum and of its square roots.
  const std::string rounded = tf32 ? " + 2 * (sqrt(EX[i]) * (sqrt(ymax) + sqrt(Bound[1])) + sqrt(nx) * sqrt(Bound[1])) * " +
                                         literal(1 + 0x1p-10 + 2 * (static_cast<double>(k) + 4) * u, f32)
                                   : "";
  src += "  if (decided && " + W + " < M) {\n    const " + t + " glast = G[base + " + W + " - 1], delta = " + literal(factor, f32) + " * (nx + ymax) + " +
         literal(5.0 * static_cast<double>(k) + 40, f32) + " * " + (f32 ? "FLT_MIN" : "DBL_MIN") + rounded + ";\n";
  src += "    decided = isfinite(glast) && glast - delta > pair_sum(X, Y, i, lasti) * " + literal(1 + 32 * u, f32) + ";\n  }\n";
  src += "  if (!decided) Rows[atomic_inc(Count)] = i;\n  }\n}\n";
  // 4'. The listed rows' lists of the sweep in slices (S of them a row, Q places each) merged into
  // their rows of D and Index, a work-item a row.
  src += "__kernel void nearest_merge(__global const " + t + "* restrict SD, __global const long* restrict SI, __global const long* restrict Rows, "
         "__global const int* restrict Count, __global " + t + "* restrict D, __global long* restrict Index, const long S) {\n";
  src += "  for (long i = get_global_id(0); i < Count[0]; i += get_global_size(0)) {\n  const long row = Rows[i] * " + Q + ";\n";
  src += "  for (int q = 0; q < " + Q + "; ++q) { D[row + q] = INFINITY; Index[row + q] = -1; }\n  " + t + " last = INFINITY; long lasti = -1;\n";
  src += "  for (long slice = 0; slice < S; ++slice)\n  for (int c = 0; c < " + Q + "; ++c) {\n    const long at = (i * S + slice) * " + Q +
         " + c, j = SI[at];\n    if (j < 0) break;  // the slice's list ends\n    const " + t + " v = SD[at];\n";
  src += insertion(t, Q) + "  }\n  }\n}\n";
  return src;
}

}  // namespace

bool nearest_by_dot(const sdk::Call& call, const Measure& m, const Blocking& b, int64_t count) {
  if (!b.dot_form || b.rows <= 0 || (std::strcmp(m.name, "euclidean") != 0 && std::strcmp(m.name, "sqeuclidean") != 0)) return false;
  const fugue_type &x = call.operand(0), &y = call.operand(1);
  if (x.shape[0] > INT32_MAX) return false;  // the count of rows left undecided is an int
  // The candidates' lists (values and i64 indices) in scratch: within the largest buffer, and a quarter
  // of the device's memory (else the difference form, which needs none).
  const double rows = static_cast<double>(x.shape[0]) * static_cast<double>(nearest_width(count, y.shape[0]));
  const fugue_device_desc& device = call.device();
  return (device.max_alloc_bytes == 0 || rows * 8 <= static_cast<double>(device.max_alloc_bytes)) &&
         (device.global_mem_bytes == 0 || rows * static_cast<double>(8 + sdk::dtype_bytes(x.dtype)) <= static_cast<double>(device.global_mem_bytes) / 4);
}

int64_t nearest_width(int64_t count, int64_t m) { return std::min(m, count + std::max<int64_t>(8, count / 4)); }

void enqueue_nearest(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, int64_t count,
                     uint32_t x, uint32_t y, uint32_t d, uint32_t index) {
  NearestSweep exact;
  exact.d = sdk::buffer(s, d);
  exact.index = sdk::buffer(s, index);
  exact.width = count;
  if (!nearest_by_dot(call, m, b, count)) return enqueue_nearest_sweep(call, s, m, p, b, x, y, exact);

  const fugue_type& xt = call.operand(x);
  const int64_t n = xt.shape[0], k = xt.shape[1], mm = call.operand(y).shape[0], width = nearest_width(count, mm);
  const bool f32 = xt.dtype == FUGUE_DTYPE_F32;
  const size_t bytes = sdk::dtype_bytes(xt.dtype), rows = static_cast<size_t>(n), cols = static_cast<size_t>(mm);
  Blocking deeper = b;
  deeper.depth = b.dot_depth;
  const bool tf32 = tf32_sweep(call, deeper);
  cl_mem nx = sdk::scratch(s, rows * bytes), ny = sdk::scratch(s, cols * bytes), bound = sdk::scratch(s, 2 * bytes), undecided = sdk::scratch(s, sizeof(cl_int));
  cl_mem ex = tf32 ? sdk::scratch(s, rows * bytes) : nullptr, ey = tf32 ? sdk::scratch(s, cols * bytes) : nullptr;
  cl_mem g = sdk::scratch(s, rows * static_cast<size_t>(width) * bytes), j = sdk::scratch(s, rows * static_cast<size_t>(width) * sizeof(cl_long));
  cl_mem listed = sdk::scratch(s, rows * sizeof(cl_long));
  cl_program program = sdk::build_program(s, source(m, p, f32, k, width, count, tf32));
  auto groups = [](int64_t items, int64_t local) { return static_cast<size_t>(std::min((items + local - 1) / local, kMaxGroups) * local); };

  sdk::Kernel norms(program, "nearest_norms");
  if (tf32) norms.args(sdk::buffer(s, x), sdk::buffer(s, y), nx, ny, ex, ey, cl_long{n}, cl_long{mm});
  else norms.args(sdk::buffer(s, x), sdk::buffer(s, y), nx, ny, cl_long{n}, cl_long{mm});
  norms.enqueue(s, groups(n + mm, 64), 64, "pairwise.nearest norms");
  sdk::Kernel largest(program, "nearest_bound");
  if (tf32) largest.args(ny, ey, bound, undecided, cl_long{mm});
  else largest.args(ny, bound, undecided, cl_long{mm});
  largest.enqueue(s, 256, 256, "pairwise.nearest bound");

  NearestSweep candidates;
  candidates.d = g;
  candidates.index = j;
  candidates.width = width;
  candidates.nx = nx;
  candidates.ny = ny;
  enqueue_nearest_sweep(call, s, m, p, deeper, x, y, candidates);

  sdk::Kernel decide(program, "nearest_candidates");
  if (tf32) decide.args(sdk::buffer(s, x), sdk::buffer(s, y), nx, ex, bound, g, j, exact.d, exact.index, listed, undecided, cl_long{n}, cl_long{mm});
  else decide.args(sdk::buffer(s, x), sdk::buffer(s, y), nx, bound, g, j, exact.d, exact.index, listed, undecided, cl_long{n}, cl_long{mm});
  decide.enqueue(s, groups(n, 64), 64, "pairwise.nearest candidates");

  // The rows left undecided, swept again in the measure's own form. Few as they are, a band of them
  // sweeping all of Y on one compute unit would take as long as the whole sweep did on all of them
  // (H200, 10^5 rows of 128: 20 ms for a band), so Y's rows are cut into slices, a work-group each,
  // enough for the bands to fill the device, each slice at least 8 tiles long.
  // (Where Y is too short for two slices, the count stays on the device and the queue is not drained.)
  exact.rows = listed;
  exact.count = undecided;
  const int64_t tiles = (mm + b.cols - 1) / b.cols;
  if (tiles / 8 < 2) return enqueue_nearest_sweep(call, s, m, p, b, x, y, exact);
  cl_int listed_rows = 0;
  sdk::check_cl(clEnqueueReadBuffer(s.queue, undecided, CL_TRUE, 0, sizeof listed_rows, &listed_rows, 0, nullptr, nullptr),
                "pairwise.nearest: reading the count of rows left undecided");
  if (listed_rows <= 0) return;
  exact.listed = listed_rows;
  const int64_t bands = (listed_rows + b.rows - 1) / b.rows;
  const int64_t wanted = (4 * static_cast<int64_t>(std::max<uint32_t>(call.device().compute_units, 1)) + bands - 1) / bands;
  // The slices' lists: within an eighth of the device's memory and its largest buffer.
  const double list_bytes = static_cast<double>(listed_rows) * static_cast<double>(count) * static_cast<double>(bytes + 8);
  const fugue_device_desc& device = call.device();
  const double room = std::min(device.global_mem_bytes ? device.global_mem_bytes / 8.0 : 1e18, device.max_alloc_bytes ? device.max_alloc_bytes * 1.0 : 1e18);
  const int64_t slices = std::max<int64_t>(1, std::min({wanted, tiles / 8, static_cast<int64_t>(room / list_bytes)}));
  if (slices == 1) return enqueue_nearest_sweep(call, s, m, p, b, x, y, exact);
  NearestSweep sliced = exact;
  sliced.slices = slices;
  const size_t places = static_cast<size_t>(listed_rows) * static_cast<size_t>(slices) * static_cast<size_t>(count);
  sliced.d = sdk::scratch(s, places * bytes);
  sliced.index = sdk::scratch(s, places * sizeof(cl_long));
  enqueue_nearest_sweep(call, s, m, p, b, x, y, sliced);
  sdk::Kernel merge(program, "nearest_merge");
  merge.args(sliced.d, sliced.index, listed, undecided, exact.d, exact.index, cl_long{slices});
  merge.enqueue(s, groups(listed_rows, 64), 64, "pairwise.nearest merge");
}

}  // namespace fugue::pairwise
