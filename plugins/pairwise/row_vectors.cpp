// row_vectors.cpp: see row_vectors.h.
#include "row_vectors.h"

#include <algorithm>
#include <vector>

namespace fugue::pairwise {

namespace {

// Accumulator a of element (r, c) of a block: a row's own where it reads only x (Measure::x_only), a
// column's where only y; `owns` says whether (r, c) declares and updates it.
std::string acc_of(const Measure& m, int a, int64_t r, int64_t c) {
  return "acc" + std::to_string(a) + "_" + std::to_string(a == m.y_only ? 0 : r) + "_" + std::to_string(a == m.x_only ? 0 : c);
}
bool owns(const Measure& m, int a, int64_t r, int64_t c) { return (a != m.x_only || c == 0) && (a != m.y_only || r == 0); }

// Vector registers a block of rows x cols holds at once: its accumulators, a loaded vector of each
// row and column, and a temporary.
int64_t registers(const Measure& m, int64_t rows, int64_t cols) {
  int64_t count = rows + cols + 1;
  for (int a = 0; a < m.accumulators; ++a)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) count += owns(m, a, r, c);
  return count;
}

// `name`(v) of a vector of `width` lanes of `type`: the lanes combined by + (or fmax) in a tree, halves
// first.
std::string horizontal(const std::string& name, const std::string& type, int64_t width, bool max) {
  std::string code = type + " " + name + "(const " + type + std::to_string(width) + " v) {\n";
  std::string current = "v";
  for (int64_t w = width; w > 2; w /= 2) {
    const std::string half = "h" + std::to_string(w / 2);
    code += "  const " + type + std::to_string(w / 2) + " " + half + " = " +
            (max ? "fmax(" + current + ".lo, " + current + ".hi)" : current + ".lo + " + current + ".hi") + ";\n";
    current = half;
  }
  return code + "  return " + (max ? "fmax(" + current + ".x, " + current + ".y)" : current + ".x + " + current + ".y") + ";\n}\n";
}

// The OpenCL C shared by the kernels: the block of D at rows i0.. and columns j0.. computed into values
// v<r>_<c> (X [N, k] and Y [M, k] the kernel's arguments).
class VectorWriter {
 public:
  VectorWriter(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x) : m_(m), p_(p) {
    const fugue_type& xt = call.operand(x);
    const bool f32 = xt.dtype == FUGUE_DTYPE_F32;
    doubles_ = sdk::supports_fp64(s);
    if (!f32) sdk::require_dtype(s, xt.dtype, "pairwise");
    arithmetic_ = arithmetic_of(m, f32, doubles_);
    t = f32 ? "float" : "double";
    at_ = arithmetic_.in_f32 ? "float" : "double";
    k_ = xt.shape[1];
    block = vector_block(call.device(), m, arithmetic_.in_f32 ? FUGUE_DTYPE_F32 : FUGUE_DTYPE_F64, k_);
    vt_ = at_ + std::to_string(block.width);
  }

  std::string t;  // the data's OpenCL C type
  VectorBlock block;

  // Doubles where the device has them, the guarded pairs' f64 function, the lanes' sums.
  std::string preamble() const {
    std::string code = doubles_ ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
    if (arithmetic_.guarded) code += pair_in_double(m_, p_, k_);
    code += horizontal("lanes_sum", at_, block.width, false);
    return m_.max ? code + horizontal("lanes_max", at_, block.width, true) : code;
  }

  // Row r's and column c's indices (expressions).
  std::string row(int64_t r) const { return "(i0 + " + std::to_string(r) + ")"; }
  std::string col(int64_t c) const { return "(j0 + " + std::to_string(c) + ")"; }

  // Declares `const T v<r>_<c>` for the block at longs i0 and j0 (rows and columns past N and M read the
  // last ones; their values are not to be used).
  std::string values() const {
    const std::string W = std::to_string(block.width), K = std::to_string(k_) + "L";
    auto load = [&](const std::string& address) {
      const std::string v = "vload" + W + "(0, " + address + ")";
      return t == at_ ? v : "convert_" + vt_ + "(" + v + ")";
    };
    std::string code;
    for (int64_t r = 0; r < block.rows; ++r)
      code += "    __global const " + t + "* x" + std::to_string(r) + " = X + min(" + row(r) + ", N - 1) * " + K + ";\n";
    for (int64_t c = 0; c < block.cols; ++c)
      code += "    __global const " + t + "* y" + std::to_string(c) + " = Y + min(" + col(c) + ", M - 1) * " + K + ";\n";
    for (int a = 0; a < m_.accumulators; ++a)
      for (int64_t r = 0; r < block.rows; ++r)
        for (int64_t c = 0; c < block.cols; ++c)
          if (owns(m_, a, r, c)) code += "    " + vt_ + " " + acc_of(m_, a, r, c) + " = (" + vt_ + ")(0);\n";
    // Whole vectors, then the coordinates left over one at a time into the accumulators' first lanes.
    code += "    long s = 0;\n    for (; s + " + W + " <= " + K + "; s += " + W + ") {\n";
    for (int64_t r = 0; r < block.rows; ++r) code += "      const " + vt_ + " xv" + std::to_string(r) + " = " + load("x" + std::to_string(r) + " + s") + ";\n";
    for (int64_t c = 0; c < block.cols; ++c) code += "      const " + vt_ + " yv" + std::to_string(c) + " = " + load("y" + std::to_string(c) + " + s") + ";\n";
    code += updates("", true) + "    }\n";
    if (k_ % block.width != 0) {
      code += "    for (; s < " + K + "; ++s) {\n";
      for (int64_t r = 0; r < block.rows; ++r) code += "      const " + at_ + " xv" + std::to_string(r) + " = x" + std::to_string(r) + "[s];\n";
      for (int64_t c = 0; c < block.cols; ++c) code += "      const " + at_ + " yv" + std::to_string(c) + " = y" + std::to_string(c) + "[s];\n";
      code += updates(".s0", false) + "    }\n";
    }
    // Each element: its accumulators' lanes combined, the measure's value, and where the f32 sums
    // cannot be trusted (elements inside D only), the pair again in f64.
    for (int a = 0; a < m_.accumulators; ++a)
      for (int64_t r = 0; r < block.rows; ++r)
        for (int64_t c = 0; c < block.cols; ++c)
          if (owns(m_, a, r, c)) {
            const std::string acc = acc_of(m_, a, r, c);
            code += "    const " + at_ + " s" + acc.substr(3) + " = " + (a == 0 && m_.max ? "lanes_max(" : "lanes_sum(") + acc + ");\n";
          }
    for (int64_t r = 0; r < block.rows; ++r)
      for (int64_t c = 0; c < block.cols; ++c) {
        std::vector<std::string> sums;
        for (int a = 0; a < m_.accumulators; ++a) sums.push_back("s" + acc_of(m_, a, r, c).substr(3));
        const std::string fast = "(" + t + ")(" + m_.finish(sums, p_, arithmetic_.in_f32) + ")";
        const std::string value = arithmetic_.guarded ? "(" + m_.trusted(sums, fast) + " || " + row(r) + " >= N || " + col(c) + " >= M ? " + fast +
                                                            " : (" + t + ")pair_in_double(X, Y, " + row(r) + ", " + col(c) + "))"
                                                      : fast;
        code += "    const " + t + " v" + std::to_string(r) + "_" + std::to_string(c) + " = " + value + ";\n";
      }
    return code;
  }

 private:
  std::string updates(const std::string& suffix, bool vector) const {
    std::string code;
    for (int64_t r = 0; r < block.rows; ++r)
      for (int64_t c = 0; c < block.cols; ++c)
        for (int a = 0; a < m_.accumulators; ++a) {
          if (!owns(m_, a, r, c)) continue;
          const std::string xv = "xv" + std::to_string(r), yv = "yv" + std::to_string(c), acc = acc_of(m_, a, r, c) + suffix;
          code += "      " + (vector && m_.vector_update ? m_.vector_update(a, xv, yv, acc, p_, vt_) : m_.update(a, xv, yv, acc, p_, arithmetic_.in_f32)) + "\n";
        }
    return code;
  }

  const Measure& m_;
  const Parameters& p_;
  bool doubles_ = false;
  Arithmetic arithmetic_;
  std::string at_, vt_;
  int64_t k_ = 0;
};

// Work-items for `units` blocks: at most 2^20 work-groups of 64 (the rest in turn).
size_t launch_size(int64_t units) { return static_cast<size_t>(std::min<int64_t>(units, int64_t{64} << 20)); }
// Work-groups of 64, or smaller where there are too few bands of rows to give every compute unit one
// (PoCL runs a work-group on one core: 256 query rows in bands of 4 would be one work-group).
size_t band_group(const sdk::Call& call, int64_t bands) {
  const int64_t units = std::max<int64_t>(call.device().compute_units, 1);
  return static_cast<size_t>(std::clamp<int64_t>((bands + units - 1) / units, 1, 64));
}

}  // namespace

VectorBlock vector_block(const fugue_device_desc& device, const Measure& m, fugue_dtype dtype, int64_t k) {
  VectorBlock b;
  const int64_t native = sdk::native_vector_width(&device, dtype);
  b.width = std::clamp<int64_t>(native, 2, 16);  // OpenCL's vectors: 2 to 16 lanes
  while (b.width > 2 && b.width > k) b.width /= 2;
  // AVX-512 (16 floats a register) has 32 vector registers, AVX2 and SSE 16: leave a few to the compiler.
  const int64_t budget = sdk::native_vector_width(&device, FUGUE_DTYPE_F32) >= 16 ? 28 : 14;
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {2, 4}, {4, 2}, {2, 2}, {1, 4}, {1, 2}, {1, 1}})
    if (registers(m, rows, cols) <= budget) {
      b.rows = rows;
      b.cols = cols;
      break;
    }
  return b;
}

fugue_dtype vector_dtype(const sdk::Call& call, const Measure& m) {
  const bool f32 = call.operand(0).dtype == FUGUE_DTYPE_F32;
  return arithmetic_of(m, f32, (call.device().features & FUGUE_DEVICE_FP64) != 0).in_f32 ? FUGUE_DTYPE_F32 : FUGUE_DTYPE_F64;
}

std::string vector_text(const VectorBlock& b, const std::string& why) {
  return "blocks of " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " of D per work-item, " + std::to_string(b.width) +
         " coordinates a vector, no local memory (" + why + ")";
}

void enqueue_row_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x, uint32_t y,
                         uint32_t d) {
  const VectorWriter w(call, s, m, p, x);
  const int64_t n = call.operand(x).shape[0], mm = call.operand(y).shape[0];
  const std::string R = std::to_string(w.block.rows), C = std::to_string(w.block.cols), t = w.t;
  std::string src = w.preamble() + "__kernel void pairwise_vectors(__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global " +
                    t + "* restrict D, const long N, const long M) {\n";
  src += "  const long col_blocks = (M + " + C + " - 1) / " + C + ", blocks = (N + " + R + " - 1) / " + R + " * col_blocks;\n";
  src += "  for (long b = get_global_id(0); b < blocks; b += get_global_size(0)) {\n";
  src += "    const long i0 = b / col_blocks * " + R + ", j0 = b % col_blocks * " + C + ";\n" + w.values();
  for (int64_t r = 0; r < w.block.rows; ++r)
    for (int64_t c = 0; c < w.block.cols; ++c)
      src += "    if (" + w.row(r) + " < N && " + w.col(c) + " < M) D[" + w.row(r) + " * M + " + w.col(c) + "] = v" + std::to_string(r) + "_" + std::to_string(c) + ";\n";
  src += "  }\n}\n";
  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, "pairwise_vectors");
  kernel.args(sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, d), cl_long{n}, cl_long{mm});
  // Work-groups of 64 take neighbouring column blocks of one band of rows, which share its rows of X.
  const int64_t blocks = (n + w.block.rows - 1) / w.block.rows * ((mm + w.block.cols - 1) / w.block.cols);
  kernel.enqueue(s, launch_size(blocks), 64, "pairwise vectors " + R + "x" + C);
}

namespace {

// Enqueues kernel `name`, a band of rows per work-item walking Y's rows in order: `parameters` (its
// buffers' OpenCL C, the launch's `buffers`, before N and M), `start` at each band (i0 its first row),
// `step` after each block of columns' values (v<r>_<c> of the writer, j0 the block's first column),
// `finish` after the last block.
void enqueue_bands(const sdk::Call& call, const fugue_device_services& s, const VectorWriter& w, int64_t n, int64_t mm, const std::string& name,
                   const std::string& parameters, const std::string& start, const std::string& step, const std::string& finish,
                   const std::vector<cl_mem>& buffers, const std::string& label) {
  const std::string R = std::to_string(w.block.rows), C = std::to_string(w.block.cols);
  std::string src = w.preamble() + "__kernel void " + name + "(" + parameters + ", const long N, const long M) {\n";
  src += "  for (long band = get_global_id(0); band * " + R + " < N; band += get_global_size(0)) {\n    const long i0 = band * " + R + ";\n" + start;
  src += "    for (long j0 = 0; j0 < M; j0 += " + C + ") {\n" + w.values() + step + "    }\n" + finish + "  }\n}\n";
  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, name);
  cl_uint a = 0;
  for (cl_mem b : buffers) kernel.arg(a++, b);
  kernel.arg(a++, cl_long{n});
  kernel.arg(a, cl_long{mm});
  const int64_t bands = (n + w.block.rows - 1) / w.block.rows;
  kernel.enqueue(s, launch_size(bands), band_group(call, bands), label + " " + R + "x" + C);
}

}  // namespace

void enqueue_nearest_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, int64_t count, uint32_t x,
                             uint32_t y, uint32_t d, uint32_t index) {
  const VectorWriter w(call, s, m, p, x);
  const std::string t = w.t, Q = std::to_string(count);
  // Each row's list, ascending (value, then index; empty places, index -1, last), in its rows of Dist and
  // Index; its last place in registers. Y's rows come in order, so an equal value never displaces one.
  std::string start, step;
  for (int64_t r = 0; r < w.block.rows; ++r) {
    const std::string e = std::to_string(r);
    start += "    " + t + " last" + e + " = INFINITY;\n    long lasti" + e + " = -1;\n";
    start += "    if (" + w.row(r) + " < N) for (int q = 0; q < " + Q + "; ++q) { Dist[" + w.row(r) + " * " + Q + " + q] = INFINITY; Index[" + w.row(r) + " * " +
             Q + " + q] = -1; }\n";
  }
  for (int64_t r = 0; r < w.block.rows; ++r)
    for (int64_t c = 0; c < w.block.cols; ++c) {
      const std::string e = std::to_string(r), v = "v" + e + "_" + std::to_string(c), j = w.col(c), row = w.row(r) + " * " + Q;
      step += "    if (" + w.row(r) + " < N && " + j + " < M && !isnan(" + v + ") && (lasti" + e + " < 0 || " + v + " < last" + e + ")) {\n";
      step += "      int q = " + Q + " - 1;\n      for (; q > 0; --q) {\n        const " + t + " pv = Dist[" + row + " + q - 1]; const long pi = Index[" + row +
              " + q - 1];\n";
      step += "        if (!(pi < 0 || " + v + " < pv)) break;\n        Dist[" + row + " + q] = pv; Index[" + row + " + q] = pi;\n      }\n";
      step += "      Dist[" + row + " + q] = " + v + "; Index[" + row + " + q] = " + j + ";\n      last" + e + " = Dist[" + row + " + " + Q + " - 1]; lasti" + e +
              " = Index[" + row + " + " + Q + " - 1];\n    }\n";
    }
  enqueue_bands(call, s, w, call.operand(x).shape[0], call.operand(y).shape[0], "nearest_vectors",
                "__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global " + t + "* restrict Dist, __global long* restrict Index",
                start, step, "", {sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, d), sdk::buffer(s, index)}, "pairwise.nearest vectors");
}

void enqueue_kernel_sum_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x, uint32_t y,
                                uint32_t v, uint32_t out) {
  const VectorWriter w(call, s, m, p, x);
  const std::string t = w.t;
  std::string start, step, finish;
  for (int64_t r = 0; r < w.block.rows; ++r) start += "    " + t + " sum" + std::to_string(r) + " = 0;\n";
  // Columns in order, each row's sum one product at a time (as the rows plan adds them).
  for (int64_t c = 0; c < w.block.cols; ++c) {
    step += "    if (" + w.col(c) + " < M) {\n      const " + t + " vj = V[" + w.col(c) + "];\n";
    for (int64_t r = 0; r < w.block.rows; ++r)
      step += "      sum" + std::to_string(r) + " += v" + std::to_string(r) + "_" + std::to_string(c) + " * vj;\n";
    step += "    }\n";
  }
  for (int64_t r = 0; r < w.block.rows; ++r) finish += "    if (" + w.row(r) + " < N) Out[" + w.row(r) + "] = sum" + std::to_string(r) + ";\n";
  enqueue_bands(call, s, w, call.operand(x).shape[0], call.operand(y).shape[0], "kernel_sum_vectors",
                "__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global const " + t + "* restrict V, __global " + t + "* restrict Out",
                start, step, finish, {sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, v), sdk::buffer(s, out)}, "pairwise.kernel_sum vectors");
}

}  // namespace fugue::pairwise
