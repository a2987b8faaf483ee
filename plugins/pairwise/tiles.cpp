// tiles.cpp: see tiles.h.
#include "tiles.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <tuple>
#include <vector>

namespace fugue::pairwise {

namespace {

constexpr int64_t kSide = 16;
constexpr double kSmallWork = 8388608;  // 2^23 pairs of coordinates  // work-items per side of a work-group, and coordinates per local tile (the seed's z)

struct Row {
  fugue_device_type type;  // 0: any
  const char* vendor;      // a part of the vendor's name, "" for any
  const char* name;        // the row's name
  int64_t cheap[2];        // rows, cols for measures of a multiply-add or two per coordinate
  int64_t dear[2];         // for the others (Measure::dear)
};

// The table, most specific first; the last row matches every device.
const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      // H200 (scripts/gpu_pairwise_sweep.sh, 8192 x 8192 rows of 128 f32, the 36 blockings in both
      // layouts): euclidean best at 96 x 96 strided, 1.058 ms (64 x 64: 1.106; contiguous at best 1.137),
      // manhattan 96 x 96, 1.044 ms; chi2 64 x 64, 4.79 ms; cosine 64 x 48, 2.81 ms (48 x 48: 2.85).
      {FUGUE_DEVICE_GPU, "NVIDIA", "NVIDIA GPU", {96, 96}, {64, 48}},
      {FUGUE_DEVICE_GPU, "", "GPU", {64, 64}, {48, 48}},
      // PoCL, 2 cores, 2000 x 2000 rows of 128 f32, euclidean: 32 x 32 91.7 ms, 64 x 64 116.9 ms, the
      // ELEMENT plan 241 ms (SciPy's cdist 215 ms); loops not unrolled (unrolled: 300 and 197 ms).
      {FUGUE_DEVICE_CPU, "", "CPU", {32, 32}, {32, 32}},
      {0, "", "default", {32, 32}, {32, 32}},
  };
  return rows;
}

bool contains(const char* text, const char* part) { return !*part || (text && std::strstr(text, part)); }

const Row& row_named(const std::string& name) {
  std::string names;
  for (const Row& r : table()) {
    std::string lower = r.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name) return r;
    names += (names.empty() ? "" : ", ") + lower;
  }
  throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: no table row \"" + name + "\" (rows: " + names + ")");
}

Blocking from_row(const Row& r, const Measure& m) {
  const int64_t* b = m.dear ? r.dear : r.cheap;
  return {std::string(r.name) + " row", b[0], b[1]};
}

// FUGUE_PAIRWISE_TUNING's fields applied to `b`.
Blocking overridden(Blocking b, const Measure& m, const char* text) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "row") {
      b = from_row(row_named(value), m);
      continue;
    }
    if (key == "layout") {
      if (value != "strided" && value != "contiguous")
        throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected layout=strided or layout=contiguous");
      b.contiguous = value == "contiguous";
      continue;
    }
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || v < 0 || v > 6 * kSide || v % kSide)
      throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected row=NAME, rows=N or cols=N with N one of 16, 32, 48, 64, 80, 96 "
                                 "(or both 0: no tiles, an element of D per work-item)");
    if (key == "rows") b.rows = v;
    else if (key == "cols") b.cols = v;
    else throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: unknown field \"" + key + "\" (fields: row, rows, cols, layout)");
  }
  if ((b.rows == 0) != (b.cols == 0))
    throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: rows " + std::to_string(b.rows) + " and cols " + std::to_string(b.cols) +
                               ": both 0 (no tiles) or neither");
  b.row += ", FUGUE_PAIRWISE_TUNING=" + std::string(text);
  return b;
}

// Local memory of blocking b: a tile of X and one of Y, each of 16 coordinates, a column of padding each.
uint64_t local_bytes(const Blocking& b, fugue_dtype dtype) {
  const int64_t pad = b.contiguous ? 4 : 1;
  return static_cast<uint64_t>(kSide * (b.rows + pad + b.cols + pad)) * abi::dtype_size(dtype);
}

}  // namespace

Blocking blocking_of(const sdk::Call& call, const Measure& m) {
  const fugue_device_desc& device = call.device();
  Blocking b;
  for (const Row& r : table())  // the first row matching
    if ((r.type == 0 || r.type == device.type) && contains(device.vendor, r.vendor)) {
      b = from_row(r, m);
      break;
    }
  // Small products (n m k below 2^23) keep the ELEMENT plan, which joins the kernels of the operations
  // around it: there a launch saved outweighs the tiles' reuse. FUGUE_PAIRWISE_TUNING still sets tiles.
  const fugue_type &x = call.operand(0), &y = call.operand(1);
  if (static_cast<double>(x.shape[0]) * static_cast<double>(y.shape[0]) * static_cast<double>(x.shape[1]) < kSmallWork) b = {b.row + "; n m k below 2^23, where the ELEMENT plan joins its neighbours' kernels", 0, 0};
  if (const char* text = std::getenv("FUGUE_PAIRWISE_TUNING"); text && *text) b = overridden(b, m, text);
  const fugue_dtype dtype = call.operand(0).dtype;
  while (b.rows > 0 && local_bytes(b, dtype) > device.local_mem_bytes && (b.rows > kSide || b.cols > kSide)) {
    if (b.rows >= b.cols) b.rows = std::max(kSide, b.rows / 2 / kSide * kSide);
    else b.cols = std::max(kSide, b.cols / 2 / kSide * kSide);
  }
  return b;
}

std::string blocking_text(const Blocking& b) {
  return "tiles of " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " elements of D per 16 x 16 work-group, " +
         std::to_string(b.rows / kSide) + " x " + std::to_string(b.cols / kSide) + " in each work-item's registers (" +
         (b.contiguous ? "contiguous runs, vector loads and stores" : "strided by 16") + "), rows staged in local memory " +
         std::to_string(kSide) + " coordinates at a time (" + b.row + ")";
}

void enqueue_tiles(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
                   uint32_t y, uint32_t d) {
  const fugue_type &xt = call.operand(x), &yt = call.operand(y);
  const int64_t n = xt.shape[0], mm = yt.shape[0], k = xt.shape[1];
  const bool f32 = xt.dtype == FUGUE_DTYPE_F32, doubles = sdk::supports_fp64(s);
  if (!f32) sdk::require_dtype(s, xt.dtype, "pairwise");
  const bool in_f32 = f32 && !(m.wide && doubles);
  const std::string t = f32 ? "float" : "double", at = in_f32 ? "float" : "double";
  const int64_t rx = b.rows / kSide, ry = b.cols / kSide;
  // Local rows of the tiles: one column of padding (strided), or four, keeping each work-item's
  // contiguous run 16-byte aligned for vector loads (contiguous).
  const int64_t pad = b.contiguous ? 4 : 1;
  const std::string R = std::to_string(b.rows), C = std::to_string(b.cols), Rp = std::to_string(b.rows + pad), Cp = std::to_string(b.cols + pad);
  // Element r of a work-item's rows (c of its columns) within the tile: strided, ty + 16 r (tx + 16 c);
  // contiguous, ty rx + r (tx ry + c), read from local memory by vector loads and written by vector
  // stores.
  auto row_in_tile = [&](int64_t r) { return b.contiguous ? "ty * " + std::to_string(rx) + " + " + std::to_string(r) : "ty + " + std::to_string(16 * r); };
  auto col_in_tile = [&](int64_t c) { return b.contiguous ? "tx * " + std::to_string(ry) + " + " + std::to_string(c) : "tx + " + std::to_string(16 * c); };
  // Declarations of `stem`0..count-1 (of the arithmetic's type) from local array `tile` at `first` (the
  // element 0 of the run).
  auto loads = [&](const std::string& stem, const std::string& tile, const std::string& row, int64_t count, const std::function<std::string(int64_t)>& at_index) {
    std::string code;
    if (b.contiguous && count >= 2 && count <= 4) {
      const std::string v = stem + "v", vt = t + std::to_string(count);
      code += "      const " + vt + " " + v + " = vload" + std::to_string(count) + "(0, " + tile + " + " + row + " + " + at_index(0) + ");\n";
      for (int64_t q = 0; q < count; ++q) code += "      const " + at + " " + stem + std::to_string(q) + " = " + v + ".s" + std::to_string(q) + ";\n";
      return code;
    }
    for (int64_t q = 0; q < count; ++q) code += "      const " + at + " " + stem + std::to_string(q) + " = " + tile + "[" + row + " + " + at_index(q) + "];\n";
    return code;
  };
  const std::string N = "N", M = "M", K = std::to_string(k);
  // Unrolled on GPUs; a CPU's compiler (PoCL) takes many times longer to build the unrolled loop for
  // no gain.
  const bool unroll = call.device().type != FUGUE_DEVICE_CPU;
  auto acc = [](int a, int64_t r, int64_t c) { return "acc" + std::to_string(a) + "_" + std::to_string(r) + "_" + std::to_string(c); };

  std::string src = doubles ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
  // Work-groups of 256 (16 x 16) take the tiles of D in turn, row-major (a 1-D launch: no limit on the
  // grid's sides).
  // The counts of rows are arguments (N, M), so calls differing only in them share one program.
  const int64_t col_tiles = (mm + b.cols - 1) / b.cols, tiles = (n + b.rows - 1) / b.rows * col_tiles;
  src += "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\nvoid pairwise_tiles(__global const " + t + "* restrict X, __global const " + t +
         "* restrict Y, __global " + t + "* restrict D, const long N, const long M) {\n";
  src += "  const int t = get_local_id(0), tx = t % 16, ty = t / 16;\n";
  src += "  __local " + t + " xs[16 * " + Rp + "], ys[16 * " + Cp + "];\n";
  src += "  const long col_tiles = (M + " + C + " - 1) / " + C + ", tiles = (N + " + R + " - 1) / " + R + " * col_tiles;\n";
  src += "  for (long tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {\n";
  src += "  const long i0 = tile / col_tiles * " + R + ", j0 = tile % col_tiles * " + C + ";\n";
  for (int a = 0; a < m.accumulators; ++a)
    for (int64_t r = 0; r < rx; ++r)
      for (int64_t c = 0; c < ry; ++c) src += "  " + at + " " + acc(a, r, c) + " = 0;\n";
  // One chunk of `z` coordinates from s0: staged (rows past the end as zeros: their results are not
  // written), then every work-item's block updated from local memory.
  auto chunk = [&](const std::string& s0, int64_t z) {
    std::string code;
    const std::string Z = std::to_string(z);
    for (const auto& [tile, rows, P, total, base] : {std::tuple{std::string("xs"), b.rows, Rp, N, std::string("i0")},
                                                     std::tuple{std::string("ys"), b.cols, Cp, M, std::string("j0")}}) {
      const std::string src_array = tile == "xs" ? "X" : "Y";
      code += "    for (int e = t; e < " + std::to_string(rows * z) + "; e += 256) {\n      const int row = e / " + Z + ", z = e - row * " + Z +
              ";\n      const long g = " + base + " + row;\n      " + tile + "[z * " + P + " + row] = g < " + total + " ? " + src_array + "[g * " + K +
              " + " + s0 + " + z] : (" + t + ")0;\n    }\n";
    }
    code += "    barrier(CLK_LOCAL_MEM_FENCE);\n";
    code += std::string(unroll ? "    #pragma unroll\n" : "") + "    for (int z = 0; z < " + Z + "; ++z) {\n";
    code += loads("x", "xs", "z * " + Rp, rx, row_in_tile) + loads("y", "ys", "z * " + Cp, ry, col_in_tile);
    for (int64_t r = 0; r < rx; ++r)
      for (int64_t c = 0; c < ry; ++c)
        for (int a = 0; a < m.accumulators; ++a)
          code += "      " + m.update(a, "x" + std::to_string(r), "y" + std::to_string(c), acc(a, r, c), p, in_f32) + "\n";
    return code + "    }\n    barrier(CLK_LOCAL_MEM_FENCE);\n";
  };
  const int64_t full = k / kSide * kSide, rest = k - full;
  if (full > 0) src += "  for (int s0 = 0; s0 < " + std::to_string(full) + "; s0 += 16) {\n" + chunk("s0", kSide) + "  }\n";
  if (rest > 0) src += "  {\n" + chunk(std::to_string(full), rest) + "  }\n";
  for (int64_t r = 0; r < rx; ++r) {
    src += "  {\n    const long i = i0 + " + row_in_tile(r) + ", j = j0 + " + col_in_tile(0) + ";\n";
    std::string values;
    for (int64_t c = 0; c < ry; ++c) {
      std::vector<std::string> accs;
      for (int a = 0; a < m.accumulators; ++a) accs.push_back(acc(a, r, c));
      src += "    const " + t + " v" + std::to_string(c) + " = (" + t + ")(" + m.finish(accs, p, in_f32) + ");\n";
      values += (c ? ", v" : "v") + std::to_string(c);
    }
    // A whole run inside D: one vector store; else element by element, each checked.
    if (b.contiguous && ry >= 2 && ry <= 4)
      src += "    if (i < N && j + " + std::to_string(ry) + " <= M) vstore" + std::to_string(ry) + "((" + t + std::to_string(ry) + ")(" + values + "), 0, D + i * M + j);\n    else\n";
    src += "    if (i < N) {\n";
    for (int64_t c = 0; c < ry; ++c)
      src += "      if (j0 + " + col_in_tile(c) + " < M) D[i * M + j0 + " + col_in_tile(c) + "] = v" + std::to_string(c) + ";\n";
    src += "    }\n  }\n";
  }
  src += "  }\n}\n";

  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, "pairwise_tiles");
  kernel.args(sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, d), cl_long{n}, cl_long{mm});
  constexpr int64_t kMaxGroups = int64_t{1} << 20;  // beyond, work-groups take several tiles
  kernel.enqueue(s, static_cast<size_t>(std::min(tiles, kMaxGroups) * 256), 256, "pairwise tiles " + R + "x" + C);
}

}  // namespace fugue::pairwise
