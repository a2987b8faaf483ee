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

// `name`(v) of a vector of `width` lanes of `type`: the lanes combined by `op` ("+" or "fmax") in a
// tree, halves first.
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

std::string vector_text(const VectorBlock& b, const std::string& why) {
  return "blocks of " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " of D per work-item, " + std::to_string(b.width) +
         " coordinates a vector, no local memory (" + why + ")";
}

void enqueue_row_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x, uint32_t y,
                         uint32_t d) {
  const fugue_type& xt = call.operand(x);
  const bool f32 = xt.dtype == FUGUE_DTYPE_F32, doubles = sdk::supports_fp64(s);
  if (!f32) sdk::require_dtype(s, xt.dtype, "pairwise");
  const Arithmetic arithmetic = arithmetic_of(m, f32, doubles);
  const std::string t = f32 ? "float" : "double", at = arithmetic.in_f32 ? "float" : "double";
  const fugue_dtype at_dtype = arithmetic.in_f32 ? FUGUE_DTYPE_F32 : FUGUE_DTYPE_F64;
  const int64_t n = xt.shape[0], k = xt.shape[1], mm = call.operand(y).shape[0];
  const VectorBlock b = vector_block(call.device(), m, at_dtype, k);
  const std::string W = std::to_string(b.width), vt = at + W, K = std::to_string(k) + "L", R = std::to_string(b.rows), C = std::to_string(b.cols);
  auto load = [&](const std::string& at_address) {
    const std::string v = "vload" + W + "(0, " + at_address + ")";
    return t == at ? v : "convert_" + vt + "(" + v + ")";
  };

  std::string src = doubles ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
  if (arithmetic.guarded) src += pair_in_double(m, p, k);
  src += horizontal("lanes_sum", at, b.width, false);
  if (m.max) src += horizontal("lanes_max", at, b.width, true);
  src += "__kernel void pairwise_vectors(__global const " + t + "* restrict X, __global const " + t + "* restrict Y, __global " + t +
         "* restrict D, const long N, const long M) {\n";
  src += "  const long col_blocks = (M + " + C + " - 1) / " + C + ", blocks = (N + " + R + " - 1) / " + R + " * col_blocks;\n";
  src += "  for (long b = get_global_id(0); b < blocks; b += get_global_size(0)) {\n";
  src += "    const long i0 = b / col_blocks * " + R + ", j0 = b % col_blocks * " + C + ";\n";
  // Rows past the end read the last one (their values are not stored).
  for (int64_t r = 0; r < b.rows; ++r)
    src += "    __global const " + t + "* x" + std::to_string(r) + " = X + min(i0 + " + std::to_string(r) + ", N - 1) * " + K + ";\n";
  for (int64_t c = 0; c < b.cols; ++c)
    src += "    __global const " + t + "* y" + std::to_string(c) + " = Y + min(j0 + " + std::to_string(c) + ", M - 1) * " + K + ";\n";
  for (int a = 0; a < m.accumulators; ++a)
    for (int64_t r = 0; r < b.rows; ++r)
      for (int64_t c = 0; c < b.cols; ++c)
        if (owns(m, a, r, c)) src += "    " + vt + " " + acc_of(m, a, r, c) + " = (" + vt + ")(0);\n";
  // Whole vectors, then the coordinates left over one at a time into the accumulators' first lanes.
  auto updates = [&](const std::string& suffix, bool vector) {
    std::string code;
    for (int64_t r = 0; r < b.rows; ++r)
      for (int64_t c = 0; c < b.cols; ++c)
        for (int a = 0; a < m.accumulators; ++a) {
          if (!owns(m, a, r, c)) continue;
          const std::string xv = "xv" + std::to_string(r), yv = "yv" + std::to_string(c), acc = acc_of(m, a, r, c) + suffix;
          code += "      " + (vector && m.vector_update ? m.vector_update(a, xv, yv, acc, p, vt) : m.update(a, xv, yv, acc, p, arithmetic.in_f32)) + "\n";
        }
    return code;
  };
  src += "    long s = 0;\n    for (; s + " + W + " <= " + K + "; s += " + W + ") {\n";
  for (int64_t r = 0; r < b.rows; ++r) src += "      const " + vt + " xv" + std::to_string(r) + " = " + load("x" + std::to_string(r) + " + s") + ";\n";
  for (int64_t c = 0; c < b.cols; ++c) src += "      const " + vt + " yv" + std::to_string(c) + " = " + load("y" + std::to_string(c) + " + s") + ";\n";
  src += updates("", true) + "    }\n";
  if (k % b.width != 0) {
    src += "    for (; s < " + K + "; ++s) {\n";
    for (int64_t r = 0; r < b.rows; ++r) src += "      const " + at + " xv" + std::to_string(r) + " = x" + std::to_string(r) + "[s];\n";
    for (int64_t c = 0; c < b.cols; ++c) src += "      const " + at + " yv" + std::to_string(c) + " = y" + std::to_string(c) + "[s];\n";
    src += updates(".s0", false) + "    }\n";
  }
  // Each element: its accumulators' lanes combined, the measure's value (the guarded pairs again in
  // f64 where the f32 sums cannot be trusted), stored where it lies inside D.
  for (int a = 0; a < m.accumulators; ++a)
    for (int64_t r = 0; r < b.rows; ++r)
      for (int64_t c = 0; c < b.cols; ++c)
        if (owns(m, a, r, c)) {
          const std::string acc = acc_of(m, a, r, c);
          src += "    const " + at + " s" + acc.substr(3) + " = " + (a == 0 && m.max ? "lanes_max(" : "lanes_sum(") + acc + ");\n";
        }
  for (int64_t r = 0; r < b.rows; ++r)
    for (int64_t c = 0; c < b.cols; ++c) {
      const std::string i = "i0 + " + std::to_string(r), j = "j0 + " + std::to_string(c);
      std::vector<std::string> sums;
      for (int a = 0; a < m.accumulators; ++a) sums.push_back("s" + acc_of(m, a, r, c).substr(3));
      const std::string fast = "(" + t + ")(" + m.finish(sums, p, arithmetic.in_f32) + ")";
      const std::string value = arithmetic.guarded ? "(" + m.trusted(sums, fast) + " ? " + fast + " : (" + t + ")pair_in_double(X, Y, " + i + ", " + j + "))" : fast;
      src += "    if (" + i + " < N && " + j + " < M) D[(" + i + ") * M + " + j + "] = " + value + ";\n";
    }
  src += "  }\n}\n";

  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, "pairwise_vectors");
  kernel.args(sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, d), cl_long{n}, cl_long{mm});
  // A work-item a block, at most 2^20 work-groups' worth (the rest in turn); work-groups of 64 run
  // neighbouring column blocks of one band of rows, which share the band's rows of X.
  const int64_t blocks = (n + b.rows - 1) / b.rows * ((mm + b.cols - 1) / b.cols);
  kernel.enqueue(s, static_cast<size_t>(std::min<int64_t>(blocks, int64_t{64} << 20)), 64, "pairwise vectors " + R + "x" + C);
}

}  // namespace fugue::pairwise
