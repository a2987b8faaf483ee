// tiles.cpp: see tiles.h.
#include "tiles.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace fugue::pairwise {

namespace {

constexpr int64_t kSide = 16;          // work-items per side of a work-group, and coordinates per local tile (the seed's z)
constexpr double kSmallWork = 8388608;  // 2^23 pairs of coordinates: below, no tiles

struct Row {
  fugue_device_type type;  // 0: any
  const char* vendor;      // a part of the vendor's name, "" for any
  const char* name;        // the row's name
  int64_t cheap[2];        // rows, cols for measures of a multiply-add or two per coordinate
  int64_t dear[2];         // for the others (Measure::dear)
  // Measures that keep each row's own sums beside one multiply-add a pair and coordinate (cosine's
  // norms: Measure::x_only), whose value takes a division and the f32 guard's test a pair.
  int64_t normed[2];
  // pairwise.nearest and kernel_sum: bands of rows sweep Y (row blocks small enough to keep many
  // work-groups busy)
  int64_t per_row[2];
  // pairwise.nearest's sweep in the dot form (nearest_dot.h): the coordinates staged at a time.
  int64_t dot_depth = 16;
  // Blocks of D in vectors (row_vectors.h) rather than tiles, for all four operations.
  bool vectors = false;
  // pairwise.nearest's dot-form sweep on the tensor cores (tf32_sweep).
  bool tensor_cores = false;
  // f32 quotients by NVIDIA's reciprocal instruction (Blocking::division "native").
  bool native_division = false;
  // f32 data of dear measures, where their blocks differ from f64's ({0, 0}: dear's).
  int64_t dear_f32[2] = {0, 0};
};

// The table, most specific first; the last row matches every device.
const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      // H200 (scripts/gpu_pairwise_sweep.sh, 8192 x 8192 rows of 128 f32, the 36 blockings in both
      // layouts): euclidean best at 96 x 96 strided (1.058 ms; contiguous at best 1.137), manhattan too;
      // after the staging was unrolled, 96 x 96 0.869 ms, 64 x 64 0.926; depth 32 or prefetch slower
      // (0.98, 0.94). Dear: 64 x 96 chi2 4.86 ms (64 x 64 4.85), cosine 2.62 (2.77). Nearest
      // (scripts/gpu_nearest_sweep.sh, 10^5 queries, 16 nearest): 32 x 96 295 ms, 32 x 64 323, 16 x 96 348;
      // with int indices in the lists 32 x 96 252 ms, 32 x 64 259, 48 x 96 300, 64 x 96 332. With the lists in d
      // and index, entering values inserted by a work-item a row (H100, Q=100000 SIDES_ROWS="32 64 96"
      // SIDES_COLS="64 96" scripts/gpu_nearest_sweep.sh): 64 x 64 162.6 ms, 96 x 96 169.2, 64 x 96 173.3, 32 x 96 190.5.
      // Euclidean by the dot form (nearest_dot.h), a work-item's waiting values a bit each rather than a
      // flag and an index (H100, one call, SIDES_ROWS="64 96" SIDES_COLS="64 96"): 96 x 96 119.3 ms, 96 x 64
      // 127.0, 64 x 96 128.1, 64 x 64 136.0 (contiguous 117.6 / 147.6 / 128.1 / 168.2; the difference form,
      // TUNING=dot=0, 150.8 / 162.3 / 165.4 / 158.2). kernel_sum, gaussian: 96 x 96 131.0 ms, 64 x 64 141.8.
      // With the rows centred on Y's first row (a subtraction as they are staged), one call, 96 x 96 (64 x
      // 96): depth 16 161.8 ms (189.3), depth 32 110.3 (118.8), depth 16 prefetched 112.6 (192.6), depth
      // 32 prefetched 111.6 (187.4), depth 32 contiguous 113.5 (126.9); the difference form 140.9 in
      // depth 16, 152.2 in 32. The dot form on the tensor cores (tf32_sweep; H200, one call,
      // TUNING=mma=1 scripts/gpu_nearest_sweep.sh): 96 x 96 60.5 ms, 96 x 64 72.4, 64 x 64 83.0, 64 x 96
      // 84.1; in the FP32 units (mma=0) 105.2.
      // Sides of 112 and 128 too (one call, 8192 x 8192 x 128, strided): 128 x 128 euclidean 0.776 ms (96 x
      // 96 0.845), manhattan 0.765 (0.833), chebyshev 0.749 (0.815), sqeuclidean 0.774 (0.843); dear: chi2
      // best 64 x 64 4.67 ms (64 x 96 4.71), cosine 128 x 64 0.895; nearest (tensor cores) 96 x 96 60.1 ms,
      // 128 x 128 77.2.
      // Cosine, its guard's recomputations after the block (one call): 96 x 128 0.711 ms, 128 x 96 0.742, 64 x
      // 96 0.853, against chi2 6.53 ms in 96 x 128 (4.71 in 64 x 96): a class of its own.
      // f32 quotients by the reciprocal instruction (division=native, both denominators then scaled by 1/8
      // after the sum; chi2's unscaled later took 2.527 ms in 128 x 64; H200, one call, strided, chi2 /
      // canberra / minkowski p = 3): 128 x 64 2.759 / 2.546 / 1.259 ms, 64 x 128 2.762 / 2.600 / 1.275, 96 x
      // 96 2.795 / 2.553 / 1.278, 128 x 96 2.834 / 2.532 / 1.246, 64 x 96 2.949 / 2.731 / 1.291, 128 x 128
      // 3.917 / 2.702 / 1.556; by `/` (division=exact) in 64 x 96, chi2 4.527 ms and canberra 4.213. f64
      // data keeps 64 x 96 (a later call, chi2 / canberra / cosine / minkowski: 11.95 / 11.80 / 1.323 /
      // 2.519 ms, against 12.47 / 12.21 / 1.448 / 2.629 in 128 x 64).
      {FUGUE_DEVICE_GPU, "NVIDIA", "NVIDIA GPU", {128, 128}, {64, 96}, {96, 128}, {96, 96}, 32, false, true, true, {128, 64}},
      {FUGUE_DEVICE_GPU, "", "GPU", {64, 64}, {48, 48}, {48, 48}, {32, 64}},
      // PoCL, 2 cores, 2000 x 2000 rows of 128 f32 (scripts/pocl_pairwise_histogram.sh): euclidean 32 x 32
      // 59.6 ms, 48 x 48 66.3, 64 x 64 121.9 (SciPy's cdist 162-175 ms; the ELEMENT plan 241 ms); cosine
      // 64 x 64 99.6 ms, 32 x 32 146 (cdist 125), canberra 254.6 and 260 (cdist 545). Loops not unrolled.
      // Those with AVX-512; on 2 AVX2 cores, the tiles took 268 ms (euclidean, 32 x 32) and 1,131 (cosine,
      // 64 x 64) against SciPy's 352 and 238; distance and kernel now take blocks in vectors there
      // (row_vectors.h), and so do nearest and kernel_sum.
      {FUGUE_DEVICE_CPU, "", "CPU", {32, 32}, {64, 64}, {64, 64}, {32, 32}, 16, true},
      {0, "", "default", {32, 32}, {32, 32}, {32, 32}, {32, 32}},
  };
  return rows;
}

bool contains(const char* text, const char* part) { return !*part || (text && std::strstr(text, part)); }

const Row& row_named(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string names;
  for (const Row& r : table()) {
    std::string lower = r.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name) return r;
    names += (names.empty() ? "" : ", ") + lower;
  }
  throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: no table row \"" + name + "\" (rows: " + names + ")");
}

// The class of measure whose blocking a table holds (kBlockingClasses): per_row for the row reductions;
// normed for f32 data of a measure with each row's own sums (cosine: its f64 blocks, twice the registers,
// were not measured there and keep dear's); dear; cheap.
std::string blocking_class(const Measure& m, bool per_row, bool f32) {
  return per_row ? "per_row" : m.x_only >= 0 && f32 ? "normed" : m.dear ? "dear" : "cheap";
}

// The row's blocking for a class of measure, or (dear_f32) for f32 data of a dear measure.
Blocking from_row(const Row& r, const std::string& cls) {
  const int64_t* b = cls == "per_row" ? r.per_row : cls == "normed" ? r.normed : cls == "dear" ? r.dear : r.cheap;
  if (cls == "dear_f32") b = r.dear_f32[0] > 0 ? r.dear_f32 : r.dear;
  Blocking blocking{std::string(r.name) + " row", b[0], b[1]};
  blocking.dot_depth = r.dot_depth;
  blocking.vectors = r.vectors;
  blocking.tensor_cores = r.tensor_cores;
  blocking.division = r.native_division ? Division::native : Division::exact;
  return blocking;
}

// FUGUE_PAIRWISE_TUNING's fields applied to `b` (the table's blocking; `sized`: the table's blocking
// for the device before a small product dropped the tiles, so that rows or cols alone keep the other
// side). A row=NAME item applies first, whatever its place; empty items are skipped.
Blocking overridden(Blocking b, const Blocking& sized, const std::string& cls, const char* text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  auto split = [](const std::string& item) {
    const size_t eq = item.find('=');
    return std::pair{item.substr(0, eq), eq == std::string::npos ? std::string() : item.substr(eq + 1)};
  };
  bool sides = false;  // rows or cols given
  // vectors=0|1 as given; the first of the tiles' shape fields (rows, cols, layout, depth, prefetch: they
  // ask for tiles) and of any field only tiles read (nearest's candidates, dot and mma too: vectors=1 refuses them).
  std::string vectors, tile, tiles_only;
  for (const std::string& item : items)
    if (const auto [key, value] = split(item); key == "row") b = from_row(row_named(value), cls);
  Blocking base = b.rows > 0 ? b : sized;
  for (const std::string& item : items) {
    const auto [key, value] = split(item);
    if (key == "row") continue;
    if (key != "vectors" && tiles_only.empty()) tiles_only = item;
    if (key != "vectors" && key != "candidates" && key != "dot" && key != "mma" && key != "division" && tile.empty()) tile = item;
    if (key == "prefetch") {
      if (value != "0" && value != "1") throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected prefetch=0 or prefetch=1");
      b.prefetch = value == "1";
    } else if (key == "depth") {
      if (value != "16" && value != "32") throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected depth=16 or depth=32");
      b.depth = b.dot_depth = value == "16" ? 16 : 32;
    } else if (key == "candidates") {
      char* end = nullptr;
      const long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || v < 1 || v > 8 * kSide)
        throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected candidates=N with N in 1..128");
      b.candidates = v;
    } else if (key == "vectors") {
      if (value != "0" && value != "1") throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected vectors=0 or vectors=1");
      vectors = value;
    } else if (key == "dot") {
      if (value != "0" && value != "1") throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected dot=0 or dot=1");
      b.dot_form = value == "1";
    } else if (key == "mma") {
      if (value != "0" && value != "1") throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected mma=0 or mma=1");
      b.tensor_cores = value == "1";
    } else if (key == "division") {
      if (value != "native" && value != "exact" && value != "emulated")
        throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected division=native, division=exact or division=emulated");
      b.division = value == "native" ? Division::native : value == "exact" ? Division::exact : Division::emulated;
    } else if (key == "layout") {
      if (value != "strided" && value != "contiguous")
        throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected layout=strided or layout=contiguous");
      b.contiguous = value == "contiguous";
    } else if (key == "rows" || key == "cols") {
      char* end = nullptr;
      const long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || v < 0 || v > 8 * kSide || v % kSide)
        throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": expected " + key + "=N with N one of 16, 32, 48, 64, 80, 96, 112, 128 "
                                   "(or rows=0,cols=0: no tiles, an element of D per work-item)");
      (key == "rows" ? b.rows : b.cols) = v;
      sides = true;
    } else {
      throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: \"" + item + "\": unknown field \"" + key + "\" (fields: row, rows, cols, layout, depth, prefetch, candidates, dot, mma, division, vectors)");
    }
  }
  if (vectors == "1" && !tiles_only.empty())
    throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: vectors=1 and \"" + tiles_only + "\": blocks in vectors take none of the tiles' fields");
  b.vectors = vectors.empty() ? b.vectors && tile.empty() : vectors == "1";
  // One side given on a product small enough for no tiles: the other from the device's table row.
  if (sides && b.rows == 0 && b.cols > 0) b.rows = base.rows;
  if (sides && b.cols == 0 && b.rows > 0) b.cols = base.cols;
  if ((b.rows == 0) != (b.cols == 0))
    throw sdk::InvalidArgument("FUGUE_PAIRWISE_TUNING: rows " + std::to_string(b.rows) + " and cols " + std::to_string(b.cols) +
                               ": both 0 (no tiles) or neither");
  b.row = "FUGUE_PAIRWISE_TUNING=" + std::string(text);
  return b;
}

// Local memory of blocking b: a tile of X and one of Y, each of `depth` coordinates, with their padding;
// per_row, also kernel_sum's 16 partial sums a row.
uint64_t local_bytes(const Blocking& b, fugue_dtype dtype, bool per_row) {
  const int64_t pad = b.contiguous ? 4 : 1;
  return static_cast<uint64_t>(b.depth * (b.rows + pad + b.cols + pad) + (per_row ? 16 * b.rows : 0)) * abi::dtype_size(dtype);
}

// The tensor cores' stages: a row of `depth` coordinates per row of the tile, padded by 8 so that a half
// warp's 8-byte fragment loads (rows g, coordinates 2 t4 + 0..1) meet 32 different banks; their bytes for
// tiles of rows x cols of values of `bytes`.
int64_t mma_stage_row(int64_t depth) { return depth + 8; }
uint64_t mma_stage_bytes(int64_t rows, int64_t cols, int64_t depth, uint64_t bytes) {
  return static_cast<uint64_t>((rows + cols) * mma_stage_row(depth)) * bytes;
}

// A side of a blocking from text: one of kBlockSides.
bool parse_side(const std::string& text, int64_t& side) {
  for (int64_t s : kBlockSides)
    if (text == std::to_string(s)) return side = s, true;
  return false;
}

// The blocking `fugue tune pairwise` measured for the device and this class of measure, if there is one.
std::optional<Blocking> tuned_blocking(const fugue_device_desc& device, const std::string& cls) {
  const std::string text = sdk::read_tuning_table(&device, "pairwise");
  if (text.empty()) return std::nullopt;  // not tuned: the table built in
  const std::string path = sdk::tuning_table_path(&device, "pairwise");
  auto bad = [&](const std::string& why) {
    return sdk::InvalidArgument("the tuning table " + path + ": " + why + "; run `fugue tune pairwise` again (or delete the file)");
  };
  const nlohmann::json table = nlohmann::json::parse(text, nullptr, false);
  if (table.is_discarded() || !table.is_object()) throw bad("not a JSON object");
  if (table.value("tuner", "") != "pairwise" || table.value("device", "") != (device.name ? device.name : ""))
    throw bad("not the pairwise table of " + std::string(device.name ? device.name : "this device"));
  const nlohmann::json& sides = table.value(cls, nlohmann::json());
  if (sides.is_null() && cls == "normed") return std::nullopt;  // a table tuned before the class came: the row's
  Blocking b;
  if (sides == "vectors") {
    b.vectors = true;
    b.row = "tuned table (" + path + ")";
    return b;
  }
  if (!sides.is_array() || sides.size() != 2 || !sides[0].is_number_integer() || !sides[1].is_number_integer() ||
      !parse_side(std::to_string(sides[0].get<int64_t>()), b.rows) || !parse_side(std::to_string(sides[1].get<int64_t>()), b.cols))
    throw bad("\"" + cls + "\" is not [rows, cols] with each 16, 32, 48, 64, 80, 96, 112 or 128, nor \"vectors\"");
  b.row = "tuned table (" + path + ")";
  return b;
}

}  // namespace

std::optional<Blocking> blocking_attribute(const sdk::Call& call) {
  const std::string text = call.string("blocking");
  if (text.empty()) return std::nullopt;
  if (text == "none") return Blocking{"attribute blocking", 0, 0};
  if (text == "vectors") {
    Blocking b{"attribute blocking", 0, 0};
    b.vectors = true;
    return b;
  }
  const size_t x = text.find('x');
  Blocking b;
  b.row = "attribute blocking";
  if (x == std::string::npos || !parse_side(text.substr(0, x), b.rows) || !parse_side(text.substr(x + 1), b.cols))
    throw sdk::InvalidArgument("attribute blocking: expected \"ROWSxCOLS\" with each 16, 32, 48, 64, 80, 96, 112 or 128 (\"64x96\"), \"none\" or \"vectors\"; found \"" +
                               text + "\"");
  return b;
}

namespace {

// No tiles (an element of D per work-item), `why` added to the reasons; the row's sweep (dot depth,
// tensor cores) kept for tiles asked for later (FUGUE_PAIRWISE_TUNING, the blocking attribute).
Blocking element_plan(Blocking b, const std::string& why) {
  Blocking e{b.row + why, 0, 0};
  e.dot_depth = b.dot_depth;
  e.tensor_cores = b.tensor_cores;
  return e;
}

}  // namespace

Blocking blocking_of(const sdk::Call& call, const Measure& m, bool per_row) {
  const fugue_device_desc& device = call.device();
  const bool f32 = call.operand(0).dtype == FUGUE_DTYPE_F32;
  const std::string cls = blocking_class(m, per_row, f32), row_cls = cls == "dear" && f32 ? "dear_f32" : cls;
  Blocking b;
  for (const Row& r : table())  // the first row matching
    if ((r.type == 0 || r.type == device.type) && contains(device.vendor, r.vendor)) {
      b = from_row(r, row_cls);
      break;
    }
  if (auto tuned = tuned_blocking(device, cls)) {
    if (tuned->vectors) b.row = tuned->row, b.vectors = true;  // the row's tiles stay for vectors=0
    else b.row = tuned->row, b.rows = tuned->rows, b.cols = tuned->cols, b.vectors = false;  // the row's sweep (dot depth, tensor cores) kept
  }
  // Small products (n m k below 2^23) keep the ELEMENT plan, which joins the kernels of the operations
  // around it: there a launch saved outweighs the tiles' reuse. FUGUE_PAIRWISE_TUNING still sets tiles.
  const fugue_type &x = call.operand(0), &y = call.operand(1);
  const int64_t n = x.shape[0], cols = y.shape[0];
  // Blocks no larger than the rows need (rounded up to 16): a narrow side wastes less of each tile.
  auto fit = [](int64_t side, int64_t count) { return std::min(side, (count + kSide - 1) / kSide * kSide); };
  if (b.rows > 0) b = {b.row, fit(b.rows, n), fit(b.cols, cols), b.contiguous, b.depth, b.prefetch, 0, true, b.dot_depth, b.vectors, b.tensor_cores,
                          b.division};
  const Blocking sized = b;
  // The tiles' elements against D's: past 4 times, the padding costs more than the tiles save.
  const double padded = static_cast<double>((n + b.rows - 1) / std::max<int64_t>(b.rows, 1) * b.rows) *
                        static_cast<double>((cols + b.cols - 1) / std::max<int64_t>(b.cols, 1) * b.cols) / (static_cast<double>(n) * static_cast<double>(cols));
  if (static_cast<double>(n) * static_cast<double>(cols) * static_cast<double>(x.shape[1]) < kSmallWork)
    b = element_plan(b, "; n m k < 2^23: an element per work-item, fusing");
  else if (b.rows > 0 && padded > 4 && b.vectors)  // blocks in vectors pad a few rows at most; vectors=0 gives an element a work-item
    b.rows = b.cols = 0;
  else if (b.rows > 0 && padded > 4)
    b = element_plan(b, "; tiles " + std::to_string(static_cast<int>(padded)) + " times D: an element per work-item");
  if (const char* text = std::getenv("FUGUE_PAIRWISE_TUNING"); text && *text) b = overridden(b, sized, row_cls, text);
  if (auto given = blocking_attribute(call)) {  // as given, whatever the sizes (fugue tune times each); the row's sweep
    given->dot_depth = b.dot_depth;
    given->tensor_cores = b.tensor_cores;
    given->division = b.division;
    b = *given;
  }
  const fugue_dtype dtype = call.operand(0).dtype;
  while (b.rows > 0 && local_bytes(b, dtype, per_row) > device.local_mem_bytes && (b.depth > kSide || b.rows > kSide || b.cols > kSide)) {
    if (b.depth > kSide) b.depth = kSide;
    else if (b.rows >= b.cols) b.rows = std::max(kSide, b.rows / 2 / kSide * kSide);
    else b.cols = std::max(kSide, b.cols / 2 / kSide * kSide);
  }
  if (b.dot_depth > b.depth) {
    Blocking deeper = b;
    deeper.depth = b.dot_depth;
    if (local_bytes(deeper, dtype, per_row) > device.local_mem_bytes) b.dot_depth = b.depth;
  }
  if (b.tensor_cores && mma_stage_bytes(b.rows, b.cols, b.dot_depth, abi::dtype_size(dtype)) > device.local_mem_bytes) b.tensor_cores = false;
  if (per_row) b.division = Division::exact;  // measured for D's tiles only
  return b;
}

std::string blocking_text(const Blocking& b) {
  return "tiles of " + std::to_string(b.rows) + " x " + std::to_string(b.cols) + " per 16 x 16 work-group, " + std::to_string(b.rows / kSide) + " x " +
         std::to_string(b.cols / kSide) + " per work-item (" + (b.contiguous ? "contiguous" : "strided") + "), " + std::to_string(b.depth) +
         " coordinates at a time in local memory" + (b.prefetch ? ", the next prefetched" : "") + " (" + b.row + ")";
}

std::string quotient_reciprocal(const sdk::Call& call, const Measure& m, const Blocking& b) {
  const fugue_device_desc& device = call.device();
  if (!m.quotients || b.rows == 0 || b.vectors || call.operand(0).dtype != FUGUE_DTYPE_F32 || !(device.features & FUGUE_DEVICE_FP64)) return "";
  // Other devices' native_recip has a range and an accuracy of their own, which a guard on the values
  // cannot see: they divide.
  if (b.division == Division::native) return sdk::nvidia_compute_capability(&device) > 0 ? "rcp_approx" : "";
  return b.division == Division::emulated ? "rcp_emulated" : "";
}

std::string native_quotients_text(const sdk::Call& call, const Measure& m, const Blocking& b) {
  const std::string r = quotient_reciprocal(call, m, b);
  return r.empty() ? "" : std::string("; quotients by ") + (r == "rcp_approx" ? "rcp.approx.ftz" : "an emulated rcp.approx.ftz") +
                              ", pairs not finite again in f64";
}

std::string tf32_rounding() {
  // Rounded to nearest with ties away from zero (PTX's cvt.rna.tf32.f32): the 13 low bits of the
  // significand cleared after adding half of the last kept place; NaN kept as it is.
  return "float tf32_rna(const float v) { return isnan(v) ? v : as_float((as_uint(v) + 0x1000u) & 0xffffe000u); }\n";
}

bool tf32_sweep(const sdk::Call& call, const Blocking& b) {
  const fugue_device_desc& device = call.device();
  return b.tensor_cores && b.rows > 0 && b.rows % 32 == 0 && b.cols % 32 == 0 && !b.vectors && call.operand(0).dtype == FUGUE_DTYPE_F32 &&
         sdk::nvidia_compute_capability(&device) == 90 && sdk::has_warps_of_32(&device) && device.max_work_group_size >= 256;
}

sdk::Plan tiled_plan(const sdk::Call& call, const std::string& variant) {
  sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, call.operand(0).shape[0]);
  for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
  p.variant = variant;
  return p;
}

namespace {

// The OpenCL C of the tiled loop, shared by the operations built on it: `prelude` at kernel scope (the
// work-item's place, the local tiles), `compute(i0, j0)` the accumulators of the tile of D at row i0 and
// column j0 (declared, then updated over all k coordinates), after which `value(r, c)` is the measure of
// the work-item's element (r, c) of its block, at row `row(r)` and column `col(c)` of the tile.
// With `tensor_cores` (the linear kernel's x.y of f32 rows, tf32_sweep): the 8 warps of the work-group
// each take rows/2 x cols/4 of the tile as tiles of mma.sync m16n8k8 tf32, the coordinates staged
// rounded to tf32, and (r, c) of the work-item's block is its place in PTX's accumulator layout.
class TileWriter {
 public:
  TileWriter(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
             bool tensor_cores = false)
      : m_(m), p_(p), b_(b), k_(call.operand(x).shape[1]), mma_(tensor_cores) {
    const bool f32 = call.operand(x).dtype == FUGUE_DTYPE_F32;
    if (sdk::max_work_group_size(s) < 256)
      throw sdk::Unsupported("the tiled plan runs work-groups of 256 work-items, more than this device's " + std::to_string(sdk::max_work_group_size(s)) +
                             "; FUGUE_PAIRWISE_TUNING=rows=0,cols=0 takes the plan of an element per work-item");
    doubles_ = sdk::supports_fp64(s);
    if (!f32) sdk::require_dtype(s, call.operand(x).dtype, "pairwise");
    // f32 data of a wide measure: in f32, the pairs its `trusted` condition fails again in f64 (H100,
    // cosine 8192^2 x 128: see the NVIDIA row); without that condition, in f64 throughout.
    const Arithmetic arithmetic = arithmetic_of(m, f32, doubles_);
    guarded_ = arithmetic.guarded;
    in_f32_ = arithmetic.in_f32;
    // Quotients by NVIDIA's reciprocal instruction (rcp.approx.ftz.f32, as inline PTX), the pairs whose
    // value is not finite guarded: its compiler makes `/` (div.full.f32) and native_recip
    // (div.approx.f32) several instructions a coordinate more than the reciprocal's one.
    p_.reciprocal = quotient_reciprocal(call, m, b);
    if (!p_.reciprocal.empty()) {
      if (tensor_cores || !in_f32_ || !doubles_) throw std::logic_error("pairwise tiles: quotients by a reciprocal in f32 with doubles only");
      guarded_ = true;
    }
    t = f32 ? "float" : "double";
    at_ = in_f32_ ? "float" : "double";
    rx = b.rows / kSide;
    ry = b.cols / kSide;
    // Local rows of the tiles: one column of padding (strided), or four, keeping each work-item's
    // contiguous run 16-byte aligned for vector loads (contiguous).
    const int64_t pad = b.contiguous ? 4 : 1;
    rp_ = std::to_string(b.rows + pad);
    cp_ = std::to_string(b.cols + pad);
    // Unrolled on GPUs; a CPU's compiler (PoCL) takes many times longer to build the unrolled loop for
    // no gain.
    unroll_ = call.device().type != FUGUE_DEVICE_CPU;
    bytes_ = abi::dtype_size(call.operand(x).dtype);
    if (mma_ && (!f32 || m.accumulators != 1 || !tf32_sweep(call, b)))
      throw sdk::Unsupported("pairwise: the tensor cores' sweep takes the dot form of f32 rows in tiles of multiples of 32 on sm_90");
    ld_ = mma_stage_row(b.depth);
  }

  // The local memory the tiles take.
  uint64_t tile_bytes() const {
    if (mma_) return mma_stage_bytes(b_.rows, b_.cols, b_.depth, bytes_);
    const int64_t pad = b_.contiguous ? 4 : 1;
    return static_cast<uint64_t>(b_.depth * (b_.rows + pad + b_.cols + pad)) * bytes_;
  }

  std::string t;       // the data's OpenCL C type
  int64_t rx, ry;      // the work-item's block
  // The tile's rows of X are rows_map[i0 + r] rather than i0 + r (an OpenCL C array name; "" for none).
  std::string rows_map;
  // Coordinates staged less center[s] (an OpenCL C array of k; "" for none): distances are the same,
  // dot products and norms of rows far from the origin much smaller.
  std::string center;

  // Row `i` of the tile's rows (an expression below N) as X's row.
  std::string x_row(const std::string& i) const { return rows_map.empty() ? "(" + i + ")" : rows_map + "[" + i + "]"; }

  // The kernel's preamble: doubles enabled where the device has them, and (guarded) the function that
  // computes a pair of rows i and j in f64.
  std::string extensions() const {
    std::string code = doubles_ ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
    if (mma_) code += tf32_rounding();
    if (p_.reciprocal == "rcp_approx")
      code += "float rcp_approx(const float v) { float r; asm(\"rcp.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(v)); return r; }\n";
    // The instruction's range as PTX gives it: a subnormal input is a zero (an infinity out), and a
    // result below 2^-126 is flushed to zero.
    if (p_.reciprocal == "rcp_emulated")
      code += "float rcp_emulated(const float v) { return fabs(v) < 0x1p-126f ? copysign(INFINITY, v) : fabs(v) > 0x1p126f ? copysign(0.0f, v) : 1.0f / v; }\n";
    return guarded_ ? code + pair_in_double(m_, p_, k_) : code;
  }
  std::string prelude() const {
    const std::string Dp = std::to_string(b_.depth);
    if (mma_)  // warps of 2 x 4 across the tile; g and t4 the lane's group and place in it (PTX's names)
      return "  const int t = get_local_id(0), lane = t % 32, wr = t / 128, wc = t / 32 % 4, g = lane / 4, t4 = lane % 4;\n  __local float2 xs[" +
             std::to_string(b_.rows * ld_ / 2) + "], ys[" + std::to_string(b_.cols * ld_ / 2) + "];\n";
    return "  const int t = get_local_id(0), tx = t % 16, ty = t / 16;\n  __local " + t + " xs[" + Dp + " * " + rp_ + "], ys[" + Dp + " * " + cp_ + "];\n";
  }
  // Element r of the work-item's rows (c of its columns) within the tile: strided, ty + 16 r (tx + 16 c);
  // contiguous, ty rx + r (tx ry + c), read from local memory by vector loads.
  // Tensor cores: the warp's rows from wr rows/2, its columns from wc cols/4; r = 2 mt + h is tile mt's row
  // g + 8 h, c = 2 nt + e tile nt's column 2 t4 + e.
  std::string row(int64_t r) const {
    if (mma_) return "wr * " + std::to_string(b_.rows / 2) + " + g + " + std::to_string(r / 2 * 16 + 8 * (r % 2));
    return row_at(std::to_string(r));
  }
  std::string col(int64_t c) const {
    if (mma_) return "wc * " + std::to_string(b_.cols / 4) + " + 2 * t4 + " + std::to_string(c / 2 * 8 + c % 2);
    return col_at(std::to_string(c));
  }

  std::string compute(const std::string& i0, const std::string& j0) const {
    std::string code;
    for (int a = 0; a < m_.accumulators; ++a)
      for (int64_t r = 0; r < rx; ++r)
        for (int64_t c = 0; c < ry; ++c)
          if (owns(a, r, c)) code += "  " + at_ + " " + acc_of(a, r, c) + " = 0;\n";
    // One loop over chunks of `depth` coordinates, the last possibly partial (zc). (A partial chunk
    // written after the loop gave wrong distances on PoCL where the loop made one trip, k = 19, for
    // reasons not found; k = 16 and 37 were right.) With prefetch, each work-item holds its share of
    // the next chunk in registers, loaded while the current one is computed.
    const std::string K = std::to_string(k_), Dp = std::to_string(b_.depth);
    if (mma_)  // coordinates past k staged as zeros: every chunk whole
      return code + "  for (long s0 = 0; s0 < " + K + "L; s0 += " + Dp + ") {\n" + staging(i0, j0, "s0", false) + "    barrier(CLK_LOCAL_MEM_FENCE);\n" +
             mma_updates() + "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
    if (b_.prefetch) code += staging(i0, j0, "0", true);
    code += "  for (long s0 = 0; s0 < " + K + "L; s0 += " + Dp + ") {\n    const int zc = (int)min((long)" + Dp + ", " + K + "L - s0);\n";
    code += b_.prefetch ? stores() + "    barrier(CLK_LOCAL_MEM_FENCE);\n    if (s0 + " + Dp + " < " + K + ") {\n" + staging(i0, j0, "s0 + " + Dp, false) + "    }\n"
                        : staging(i0, j0, "s0", false) + "    barrier(CLK_LOCAL_MEM_FENCE);\n";
    return code + updates() + "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  }

  // Element (r, c)'s measure, at row i and column j of D (expressions; N and M its rows and columns).
  std::string value(int64_t r, int64_t c, const std::string& i, const std::string& j) const {
    const std::string v = fast(r, c);
    if (!guarded_) return v;
    // Past D's edge the rows are zeros: no second computation there.
    return "(" + trusted(r, c, v) + " || (" + i + ") >= N || (" + j + ") >= M ? " + v + " : " + in_double(i, j) + ")";
  }

  // The parts of a guarded value (guarded(): f32 sums of a wide measure), for kernels that recompute the
  // pairs that fail the test after the block rather than in its midst: element (r, c)'s value from the f32
  // sums, whether `value` (that value) can be trusted, and the pair at row i and column j of D in f64.
  bool guarded() const { return guarded_; }
  std::string fast(int64_t r, int64_t c) const { return "(" + t + ")(" + m_.finish(accs_of(r, c), p_, in_f32_) + ")"; }
  std::string trusted(int64_t r, int64_t c, const std::string& value) const {
    const std::string finite = p_.reciprocal.empty() ? "" : "isfinite(" + value + ")";
    if (!m_.trusted) return finite;
    return finite.empty() ? m_.trusted(accs_of(r, c), value) : "(" + finite + " && " + m_.trusted(accs_of(r, c), value) + ")";
  }
  std::string in_double(const std::string& i, const std::string& j) const { return "(" + t + ")pair_in_double(X, Y, " + x_row(i) + ", " + j + ")"; }
  // row(r) and col(c) for r and c known only when the kernel runs (expressions; not the tensor cores').
  std::string row_at(const std::string& r) const { return b_.contiguous ? "ty * " + std::to_string(rx) + " + " + r : "ty + 16 * " + r; }
  std::string col_at(const std::string& c) const { return b_.contiguous ? "tx * " + std::to_string(ry) + " + " + c : "tx + 16 * " + c; }

 private:
  std::vector<std::string> accs_of(int64_t r, int64_t c) const {
    std::vector<std::string> accs;
    for (int a = 0; a < m_.accumulators; ++a) accs.push_back(acc_of(a, r, c));
    return accs;
  }
  static std::string acc(int a, int64_t r, int64_t c) { return "acc" + std::to_string(a) + "_" + std::to_string(r) + "_" + std::to_string(c); }
  // Element (r, c)'s accumulator a: a row's own where it reads only x (Measure::x_only), a column's where
  // only y; `owns` says whether (r, c) is the element that declares and updates it.
  std::string acc_of(int a, int64_t r, int64_t c) const { return acc(a, a == m_.y_only ? 0 : r, a == m_.x_only ? 0 : c); }
  bool owns(int a, int64_t r, int64_t c) const { return (a != m_.x_only || c == 0) && (a != m_.y_only || r == 0); }

  // Declarations of `stem`0..count-1 (of the arithmetic's type) from local array `tile`, row `row`,
  // positions at_index(q) of the run.
  std::string loads(const std::string& stem, const std::string& tile, const std::string& row, int64_t count,
                    const std::function<std::string(int64_t)>& at_index) const {
    std::string code;
    // Runs of 2 to 4 in one vector load; longer even runs in vectors of 4 (a multiple of 4) or 2, which
    // their start's alignment allows (the run starts at a multiple of its length).
    const int64_t width = count <= 4 ? count : count % 4 == 0 ? 4 : count % 2 == 0 ? 2 : 1;
    if (b_.contiguous && width >= 2) {
      for (int64_t from = 0; from < count; from += width) {
        const std::string v = stem + "v" + std::to_string(from), vt = t + std::to_string(width);
        code += "      const " + vt + " " + v + " = vload" + std::to_string(width) + "(0, " + tile + " + " + row + " + " + at_index(from) + ");\n";
        for (int64_t q = 0; q < width; ++q)
          code += "      const " + at_ + " " + stem + std::to_string(from + q) + " = " + v + ".s" + std::to_string(q) + ";\n";
      }
      return code;
    }
    for (int64_t q = 0; q < count; ++q) code += "      const " + at_ + " " + stem + std::to_string(q) + " = " + tile + "[" + row + " + " + at_index(q) + "];\n";
    return code;
  }

  // The elements a work-item stages per tile and chunk: rows x depth over 256 work-items (rows and
  // depth are multiples of 16, so the share is whole).
  int64_t share(int64_t rows) const { return rows * b_.depth / 256; }

  // The chunk from coordinate `from`: each work-item's share of X's and Y's tiles (rows past the end and
  // coordinates past k as zeros: their results are not used), into local memory, or (prefetch) into
  // registers px<q>, py<q> (declared when `declare`).
  std::string staging(const std::string& i0, const std::string& j0, const std::string& from, bool declare) const {
    std::string code;
    const std::string K = std::to_string(k_), Dp = std::to_string(b_.depth);
    for (const auto& [tile, rows, P, total, base, source, reg] :
         {std::tuple{"xs", b_.rows, rp_, "N", i0, "X", "px"}, std::tuple{"ys", b_.cols, cp_, "M", j0, "Y", "py"}})
      for (int64_t q = 0; q < share(rows); ++q) {
        // Element t + 256 q of the chunk: 256 is a multiple of the depth, so its coordinate is t's.
        const std::string row = "(t / " + Dp + " + " + std::to_string(256 * q / b_.depth) + ")", z = "(t % " + Dp + ")", g = "(" + base + " + " + row + ")";
        const std::string at = std::string(source) == "X" ? x_row(g) : g;
        std::string element = std::string(source) + "[" + at + " * " + K + " + " + from + " + " + z + "]";
        if (!center.empty()) element = "(" + element + " - " + center + "[" + from + " + " + z + "])";
        const std::string value = g + " < " + total + " && " + from + " + " + z + " < " + K + " ? " + element + " : (" + t + ")0";
        if (mma_) code += std::string("    ((__local float*)") + tile + ")[" + row + " * " + std::to_string(ld_) + " + " + z + "] = tf32_rna(" + value + ");\n";
        else if (b_.prefetch) code += std::string("    ") + (declare ? t + " " : "") + reg + std::to_string(q) + " = " + value + ";\n";
        else code += std::string("    ") + tile + "[" + z + " * " + P + " + " + row + "] = " + value + ";\n";
      }
    return code;
  }

  // Prefetch: the registers of the chunk into local memory.
  std::string stores() const {
    std::string code;
    const std::string Dp = std::to_string(b_.depth);
    for (const auto& [tile, rows, P, reg] : {std::tuple{"xs", b_.rows, rp_, "px"}, std::tuple{"ys", b_.cols, cp_, "py"}})
      for (int64_t q = 0; q < share(rows); ++q) {
        code += std::string("    ") + tile + "[t % " + Dp + " * " + P + " + t / " + Dp + " + " + std::to_string(256 * q / b_.depth) + "] = " + reg + std::to_string(q) + ";\n";
      }
    return code;
  }

  // Every work-item's block updated over the chunk's zc coordinates from local memory (a loop of
  // `depth` known trips, unrolled on GPUs, for every chunk but a partial last one).
  std::string updates() const {
    const std::string Dp = std::to_string(b_.depth);
    std::string body = loads("x", "xs", "z * " + rp_, rx, [&](int64_t r) { return row(r); }) + loads("y", "ys", "z * " + cp_, ry, [&](int64_t c) { return col(c); });
    for (int64_t r = 0; r < rx; ++r)
      for (int64_t c = 0; c < ry; ++c)
        for (int a = 0; a < m_.accumulators; ++a)
          if (owns(a, r, c)) body += "      " + m_.update(a, "x" + std::to_string(r), "y" + std::to_string(c), acc_of(a, r, c), p_, in_f32_) + "\n";
    return "    if (zc == " + Dp + ") {\n" + std::string(unroll_ ? "    #pragma unroll\n" : "") + "    for (int z = 0; z < " + Dp + "; ++z) {\n" + body +
           "    }\n    } else {\n    for (int z = 0; z < zc; ++z) {\n" + body + "    }\n    }\n";
  }

  // Tensor cores: the chunk in steps of 8 coordinates, each lane loading its fragments (PTX's m16n8k8
  // tf32 layout: A's a0..a3 at rows g, g + 8 and coordinates t4, t4 + 4; B's b0, b1 at coordinates t4,
  // t4 + 4 and column g) as pairs, coordinates 2 t4 and 2 t4 + 1 of the step standing for t4 and t4 + 4
  // in both (x.y sums over them alike), then the warp multiplies every pair of its tiles.
  std::string mma_updates() const {
    const int64_t tiles_m = rx / 2, tiles_n = ry / 2, half = ld_ / 2;
    const std::string H = std::to_string(half);
    std::string body;
    for (int64_t mt = 0; mt < tiles_m; ++mt)
      for (int64_t h = 0; h < 2; ++h)
        body += "      const float2 a" + std::to_string(mt) + "_" + std::to_string(h) + " = xs[(wr * " + std::to_string(b_.rows / 2) + " + g + " +
                std::to_string(mt * 16 + 8 * h) + ") * " + H + " + z + t4];\n";
    for (int64_t nt = 0; nt < tiles_n; ++nt)
      body += "      const float2 b" + std::to_string(nt) + " = ys[(wc * " + std::to_string(b_.cols / 4) + " + g + " + std::to_string(nt * 8) + ") * " + H +
              " + z + t4];\n";
    for (int64_t mt = 0; mt < tiles_m; ++mt)
      for (int64_t nt = 0; nt < tiles_n; ++nt) {
        const std::string a = "a" + std::to_string(mt) + "_", b = "b" + std::to_string(nt);
        auto c = [&](int64_t h, int64_t e) { return "\"+f\"(" + acc_of(0, 2 * mt + h, 2 * nt + e) + ")"; };
        body += "      asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\" : " + c(0, 0) +
                ", " + c(0, 1) + ", " + c(1, 0) + ", " + c(1, 1) + " : \"r\"(as_uint(" + a + "0.x)), \"r\"(as_uint(" + a + "1.x)), \"r\"(as_uint(" + a +
                "0.y)), \"r\"(as_uint(" + a + "1.y)), \"r\"(as_uint(" + b + ".x)), \"r\"(as_uint(" + b + ".y)));\n";
      }
    return "    #pragma unroll\n    for (int z = 0; z < " + std::to_string(b_.depth / 2) + "; z += 4) {\n" + body + "    }\n";
  }

  const Measure& m_;
  Parameters p_;  // the call's, with the reciprocal where the tiles' quotients take one
  const Blocking& b_;
  int64_t k_;
  bool mma_ = false;
  bool doubles_ = false, in_f32_ = false, unroll_ = true, guarded_ = false;
  std::string at_, rp_, cp_;
  int64_t ld_ = 0;
  uint64_t bytes_ = 4;
};

constexpr int64_t kMaxGroups = int64_t{1} << 20;  // beyond, work-groups take several tiles

}  // namespace

void enqueue_tiles(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
                   uint32_t y, uint32_t d) {
  const int64_t n = call.operand(x).shape[0], mm = call.operand(y).shape[0];
  const TileWriter w(call, s, m, p, b, x);
  const std::string R = std::to_string(b.rows), C = std::to_string(b.cols), t = w.t;
  // Work-groups of 256 (16 x 16) take the tiles of D in turn, row-major (a 1-D launch: no limit on the
  // grid's sides). The counts of rows are arguments (N, M), so calls differing only in them share one
  // program.
  std::string src = w.extensions() + "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\nvoid pairwise_tiles(__global const " + t +
                    "* restrict X, __global const " + t + "* restrict Y, __global " + t + "* restrict D, const long N, const long M) {\n" + w.prelude();
  src += "  const long col_tiles = (M + " + C + " - 1) / " + C + ", tiles = (N + " + R + " - 1) / " + R + " * col_tiles;\n";
  src += "  for (long tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {\n";
  src += "  const long i0 = tile / col_tiles * " + R + ", j0 = tile % col_tiles * " + C + ";\n" + w.compute("i0", "j0");
  // A wide measure's f32 values that fail its test are computed again in f64 after the block is stored,
  // the pairs marked a bit each and recomputed by one call site: a call per element in the block's midst
  // took registers and code (H200, cosine 8192^2 x 128: 0.896 ms, against 0.685 with no test at all).
  const bool guarded = w.guarded();
  if (guarded && w.rx * w.ry > 64) throw std::logic_error("pairwise tiles: a work-item's block of more than 64 values");
  if (guarded) src += "  ulong untrusted = 0;\n";
  for (int64_t r = 0; r < w.rx; ++r) {
    src += "  {\n    const long i = i0 + " + w.row(r) + ", j = j0 + " + w.col(0) + ";\n";
    std::string values;
    for (int64_t c = 0; c < w.ry; ++c) {
      const std::string v = "v" + std::to_string(c), jc = "j0 + " + w.col(c);
      if (guarded)
        src += "    const " + t + " " + v + " = " + w.fast(r, c) + ";\n    if (!" + w.trusted(r, c, v) + " && i < N && " + jc + " < M) untrusted |= 1UL << " +
               std::to_string(r * w.ry + c) + ";\n";
      else src += "    const " + t + " " + v + " = " + w.value(r, c, "i", jc) + ";\n";
      values += (c ? ", v" : "v") + std::to_string(c);
    }
    // A whole run inside D: one vector store; else element by element, each checked.
    if (b.contiguous && w.ry >= 2 && w.ry <= 4)
      src += "    if (i < N && j + " + std::to_string(w.ry) + " <= M) vstore" + std::to_string(w.ry) + "((" + t + std::to_string(w.ry) + ")(" + values +
             "), 0, D + i * M + j);\n    else\n";
    src += "    if (i < N) {\n";
    for (int64_t c = 0; c < w.ry; ++c) src += "      if (j0 + " + w.col(c) + " < M) D[i * M + j0 + " + w.col(c) + "] = v" + std::to_string(c) + ";\n";
    src += "    }\n  }\n";
  }
  if (guarded)
    src += "  while (untrusted) {\n    const int e = (int)(63 - clz(untrusted)), r = e / " + std::to_string(w.ry) + ", c = e % " + std::to_string(w.ry) +
           ";\n    untrusted ^= 1UL << e;\n    const long i = i0 + " + w.row_at("r") + ", j = j0 + " + w.col_at("c") + ";\n    D[i * M + j] = " +
           w.in_double("i", "j") + ";\n  }\n";
  src += "  }\n}\n";

  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, "pairwise_tiles");
  kernel.args(sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, d), cl_long{n}, cl_long{mm});
  const int64_t tiles = (n + b.rows - 1) / b.rows * ((mm + b.cols - 1) / b.cols);
  kernel.enqueue(s, static_cast<size_t>(std::min(tiles, kMaxGroups) * 256), 256, "pairwise tiles " + R + "x" + C);
}

int64_t slice_tiles(const Blocking& b, int64_t m, int64_t slices) {
  const int64_t tiles = (m + b.cols - 1) / b.cols;
  return (tiles + slices - 1) / std::max<int64_t>(slices, 1);
}

void enqueue_nearest_sweep(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
                           uint32_t y, const NearestSweep& sweep) {
  const int64_t n = call.operand(x).shape[0], mm = call.operand(y).shape[0];
  const bool dot = sweep.nx != nullptr, mapped = sweep.rows != nullptr;
  // The dot form accumulates x.y (the linear kernel's sums) and ranks by |x|^2 + |y|^2 - 2 x.y.
  TileWriter w(call, s, dot ? find(kernels(), "linear", "kind") : m, p, b, x, dot && tf32_sweep(call, b));
  if (mapped) w.rows_map = "Rows";
  if (dot) w.center = "Y";  // Y's first row (nearest_dot.h)
  const std::string R = std::to_string(b.rows), C = std::to_string(b.cols), t = w.t, Q = std::to_string(sweep.width);
  // The candidates' indices as ints where Y's rows allow (half the local memory of longs).
  const std::string it = mm <= INT32_MAX ? "int" : "long";
  const uint64_t value_bytes = sdk::dtype_bytes(call.operand(x).dtype), index_bytes = mm <= INT32_MAX ? 4 : 8;
  // A row's candidates of a tile wait in local memory, `cap` a row: as many as the tile's columns where
  // local memory holds them, else a power of two, at most the blocking's `candidates` (a tile whose row
  // has more takes further rounds).
  const uint64_t fixed = w.tile_bytes() + static_cast<uint64_t>(b.rows) * (value_bytes + 8 + 4) + 64;
  const uint64_t room = call.device().local_mem_bytes > fixed ? call.device().local_mem_bytes - fixed : 0;
  int64_t cap = 1;
  while (cap * 2 <= b.cols && static_cast<uint64_t>(cap * 2 * b.rows) * (value_bytes + index_bytes) <= room) cap *= 2;
  if (static_cast<uint64_t>(b.cols * b.rows) * (value_bytes + index_bytes) <= room) cap = b.cols;
  if (b.candidates > 0) cap = std::min(cap, b.candidates);
  const std::string CAP = std::to_string(cap);
  // A place of the tile's rows (below N) as the row of the lists: X's row, through the row map if any.
  const bool sliced = sweep.slices > 1;
  auto list_row = [&](const std::string& i) { return sliced ? "((" + i + ") * S + slice)" : w.x_row(i); };
  // Each work-group takes bands of `rows` rows of X and sweeps Y tile by tile. A row's `width` best so far
  // are kept sorted in its rows of D and Index (pairs ordered by value, then index: ties to the lower
  // index; empty places, index -1, last), and its worst in local memory (thr, thri). After each tile,
  // every work-item compares its values with their rows' worst; those that enter (rarely, once the
  // lists are full) go to their row's candidates in local memory, and one work-item a row inserts them
  // into its list. A work-item's values stay in its registers, so the tiles are as large as distance's.
  std::string src = w.extensions() + "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\nvoid nearest_tiles(__global const " + t +
                    "* restrict X, __global const " + t + "* restrict Y, __global " + t + "* restrict D, __global long* restrict Index, ";
  src += dot ? "__global const " + t + "* restrict NX, __global const " + t + "* restrict NY, " : "";
  // (The slices are arguments: their count follows the rows listed, which vary from call to call.)
  src += mapped ? "__global const long* restrict Rows, __global const int* restrict Count, const long M, const long S, const long SPAN) {\n  const long N = Count[0];\n"
                : "const long N, const long M, const long S, const long SPAN) {\n";
  src += w.prelude();
  src += "  __local " + t + " thr[" + R + "], cv[" + R + " * " + CAP + "];\n  __local long thri[" + R + "];\n  __local " + it + " ci[" + R + " * " + CAP +
         "];\n  __local int cn[" + R + "], more[2];\n";
  // Whether value v of column j enters row lr's list: at most its worst, and below it, or the list not
  // full, or equal with a lower index; NaN never. (Most values fail the first test.)
  auto enters = [&](const std::string& v, const std::string& j, const std::string& lr) {
    return "(" + v + " <= thr[" + lr + "] && (" + v + " < thr[" + lr + "] || thri[" + lr + "] < 0 || " + j + " < thri[" + lr + "]))";
  };
  // Work-groups take (band, slice) pairs in turn; a slice is SPAN of Y's rows, whole tiles.
  src += "  const long bands = (N + " + R + " - 1) / " + R + ";\n";
  src += "  for (long pair = get_group_id(0); pair < bands * S; pair += get_num_groups(0)) {\n  const long band = pair / S, slice = pair % S, i0 = band * " + R +
         ", jb = slice * SPAN, je = min(M, jb + SPAN);\n";
  src += "  if (t < " + R + ") {\n    if (i0 + t < N) for (int q = 0; q < " + Q + "; ++q) { D[" + list_row("i0 + t") + " * " + Q + " + q] = INFINITY; Index[" +
         list_row("i0 + t") + " * " + Q + " + q] = -1; }\n    thr[t] = INFINITY; thri[t] = -1; cn[t] = 0;\n  }\n  if (t < 2) more[t] = 0;\n  barrier(CLK_LOCAL_MEM_FENCE);\n";
  if (dot)
    for (int64_t r = 0; r < w.rx; ++r)
      src += "  const " + t + " nx" + std::to_string(r) + " = i0 + " + w.row(r) + " < N ? NX[i0 + " + w.row(r) + "] : (" + t + ")0;\n";
  src += "  for (long j0 = jb; j0 < je; j0 += " + C + ") {\n" + w.compute("i0", "j0");
  if (dot)
    for (int64_t c = 0; c < w.ry; ++c)
      src += "  const " + t + " ny" + std::to_string(c) + " = j0 + " + w.col(c) + " < M ? NY[j0 + " + w.col(c) + "] : (" + t + ")0;\n";
  // The work-item's values stay in registers until the round that takes them; a bit each says it waits
  // for a later round (its row had more candidates than local memory holds).
  std::string first, later;
  const int64_t elements = w.rx * w.ry;
  if (elements > 64) throw sdk::InvalidArgument("pairwise.nearest: a work-item's block of " + std::to_string(elements) + " values exceeds 64");
  for (int64_t r = 0; r < w.rx; ++r)
    for (int64_t c = 0; c < w.ry; ++c) {
      const std::string e = std::to_string(r) + "_" + std::to_string(c), v = "v" + e, bit = "(1UL << " + std::to_string(r * w.ry + c) + ")";
      const std::string lr = w.row(r), j = "(j0 + " + w.col(c) + ")";
      const std::string value = w.value(r, c, "i0 + " + lr, j);
      src += "  const " + t + " " + v + " = " + (dot ? "(nx" + std::to_string(r) + " + ny" + std::to_string(c) + ") - (" + t + ")2 * " + value : value) + ";\n";
      const std::string take = "const int at = atomic_inc(&cn[" + lr + "]); if (at < " + CAP + ") { cv[(" + lr + ") * " + CAP + " + at] = " + v + "; ci[(" + lr + ") * " +
                               CAP + " + at] = (" + it + ")" + j + ";";
      first += "      if (i0 + " + lr + " < N && " + j + " < M && " + enters(v, j, lr) + ") { " + take + " } else waiting |= " + bit + "; }\n";
      later += "      if (waiting & " + bit + ") { if (" + enters(v, j, lr) + ") { " + take + " waiting &= ~" + bit + "; } } else waiting &= ~" + bit + "; }\n";
    }
  src += "  ulong waiting = 0;\n  for (int round = 0;; ++round) {\n    if (round == 0) {\n" + first + "    } else {\n" + later + "    }\n    barrier(CLK_LOCAL_MEM_FENCE);\n";
  // The row's owner inserts its candidates; more[round % 2] says a row had more than it holds (read by
  // all after the barrier; the other flag, last read a round ago, is cleared for the next round).
  src += "    if (t < " + R + ") {\n      const int waiting = cn[t], taken = min(waiting, " + CAP + ");\n";
  src += "      if (taken > 0 && i0 + t < N) {\n        const long row = " + list_row("i0 + t") + " * " + Q + ";\n        " + t + " last = thr[t]; long lasti = thri[t];\n";
  src += "        for (int c = 0; c < taken; ++c) {\n          const " + t + " v = cv[t * " + CAP + " + c]; const long j = ci[t * " + CAP + " + c];\n";
  src += "          if (!(lasti < 0 || v < last || (v == last && j < lasti))) continue;\n          int q = " + Q + " - 1;\n";
  src += "          for (; q > 0; --q) {\n            const " + t + " pv = D[row + q - 1]; const long pi = Index[row + q - 1];\n";
  src += "            if (!(pi < 0 || v < pv || (v == pv && j < pi))) break;\n            D[row + q] = pv; Index[row + q] = pi;\n          }\n";
  src += "          D[row + q] = v; Index[row + q] = j;\n          last = D[row + " + Q + " - 1]; lasti = Index[row + " + Q + " - 1];\n        }\n";
  src += "        thr[t] = last; thri[t] = lasti;\n      }\n      if (waiting > " + CAP + ") more[round & 1] = 1;\n      cn[t] = 0;\n    }\n";
  src += "    if (t == 0) more[(round + 1) & 1] = 0;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    if (!more[round & 1]) break;\n  }\n";
  src += "  }\n  }\n}\n";

  cl_program program = sdk::build_program(s, src);
  sdk::Kernel tiles(program, "nearest_tiles");
  const int64_t bands = ((sweep.listed > 0 ? sweep.listed : n) + b.rows - 1) / b.rows;
  tiles.args(sdk::buffer(s, x), sdk::buffer(s, y), sweep.d, sweep.index);
  cl_uint a = 4;
  for (cl_mem extra : {sweep.nx, sweep.ny, sweep.rows, sweep.count})
    if (extra) tiles.arg(a++, extra);
  if (!mapped) tiles.arg(a++, cl_long{n});
  tiles.arg(a++, cl_long{mm});
  tiles.arg(a++, cl_long{sweep.slices});
  tiles.arg(a, cl_long{slice_tiles(b, mm, sweep.slices) * b.cols});
  tiles.enqueue(s, static_cast<size_t>(std::min(bands * sweep.slices, kMaxGroups) * 256), 256,
                std::string("pairwise.nearest tiles ") + (dot ? "(dot form) " : mapped ? "(rows undecided) " : "") + R + "x" + C);
}

void enqueue_kernel_sum_tiles(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b,
                              uint32_t x, uint32_t y, uint32_t v, uint32_t out) {
  const int64_t n = call.operand(x).shape[0], mm = call.operand(y).shape[0];
  const TileWriter w(call, s, m, p, b, x);
  const std::string R = std::to_string(b.rows), C = std::to_string(b.cols), t = w.t;
  // Each work-group takes bands of rows of X and sweeps Y tile by tile, each work-item summing K v over
  // its columns for each of its rows; a row's 16 partial sums then meet in local memory.
  std::string src = w.extensions() + "__kernel __attribute__((reqd_work_group_size(256, 1, 1)))\nvoid kernel_sum_tiles(__global const " + t +
                    "* restrict X, __global const " + t + "* restrict Y, __global const " + t + "* restrict V, __global " + t +
                    "* restrict Out, const long N, const long M) {\n" + w.prelude();
  src += "  __local " + t + " partial[" + R + " * 16];\n  const long bands = (N + " + R + " - 1) / " + R + ";\n";
  src += "  for (long band = get_group_id(0); band < bands; band += get_num_groups(0)) {\n  const long i0 = band * " + R + ";\n";
  for (int64_t r = 0; r < w.rx; ++r) src += "  " + t + " sum" + std::to_string(r) + " = 0;\n";
  src += "  for (long j0 = 0; j0 < M; j0 += " + C + ") {\n" + w.compute("i0", "j0");
  for (int64_t c = 0; c < w.ry; ++c) {
    const std::string cs = std::to_string(c);
    src += "  { const long j = j0 + " + w.col(c) + ";\n    if (j < M) {\n      const " + t + " vj = V[j];\n";
    for (int64_t r = 0; r < w.rx; ++r) src += "      sum" + std::to_string(r) + " += " + w.value(r, c, "i0 + " + w.row(r), "j") + " * vj;\n";
    src += "    }\n  }\n";
  }
  src += "  }\n";
  for (int64_t r = 0; r < w.rx; ++r) src += "  partial[(" + w.row(r) + ") * 16 + tx] = sum" + std::to_string(r) + ";\n";
  src += "  barrier(CLK_LOCAL_MEM_FENCE);\n  if (t < " + R + " && i0 + t < N) {\n    " + t +
         " total = 0;\n    for (int l = 0; l < 16; ++l) total += partial[t * 16 + l];\n    Out[i0 + t] = total;\n  }\n";
  src += "  barrier(CLK_LOCAL_MEM_FENCE);\n  }\n}\n";
  cl_program program = sdk::build_program(s, src);
  sdk::Kernel kernel(program, "kernel_sum_tiles");
  kernel.args(sdk::buffer(s, x), sdk::buffer(s, y), sdk::buffer(s, v), sdk::buffer(s, out), cl_long{n}, cl_long{mm});
  const int64_t bands = (n + b.rows - 1) / b.rows;
  kernel.enqueue(s, static_cast<size_t>(std::min(bands, kMaxGroups) * 256), 256, "pairwise.kernel_sum tiles " + R + "x" + C);
}

}  // namespace fugue::pairwise
