// resample.cpp: stencil.downsample, stencil.upsample and stencil.upsample_to.
#include "resample.h"

#include <algorithm>
#include <cmath>

#include "grid.h"
#include "support.h"

namespace fugue::stencil {

namespace {

enum : uint32_t { kX, kY };

// The binomial filter of the downsample, per axis; its weights sum to 16.
constexpr int64_t kBinomial[5] = {1, 4, 6, 4, 1};

// A local of the element's scope.
std::string declare(const sdk::Emitter& emitter, std::string& code, const std::string& stem,
                    const std::string& type, const std::string& value) {
  const std::string id = emitter.name(stem);
  code += "  const " + type + " " + id + " = " + value + ";\n";
  return id;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Downsample

Downsample::Downsample() {
  name = "stencil.downsample";
  doc =
      "[H, W] -> [ceil(H/2), ceil(W/2)]: smoothed by the binomial filter (1 4 6 4 1)/16 along "
      "both axes (clamped at the border), then every other row and column kept";
  operands = {
      sdk::in("x", kArray, kFloat, "the image, [H, W]"),
      sdk::out("y", kArray, kFloat, "the coarser image, [ceil(H/2), ceil(W/2)], x's dtype"),
  };
  tolerance_f32 = 1e-5;
  tolerance_f64 = 1e-12;
}

void Downsample::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  require_rank(call, kX, 2);
  const fugue_type& x = call.operand(kX);
  types[kY] = array_type(x.dtype, {(x.shape[0] + 1) / 2, (x.shape[1] + 1) / 2});
}

sdk::Plan Downsample::plan(const sdk::Call& call) const {
  sdk::Plan plan = grid_plan(call, sdk::elements(call.operand(kY)));
  // Element i of y reads around element (2r, 2c) of x, not i: no elementwise promise to make.
  plan.partitions[kX] = whole(2);
  plan.partitions[kY] = elementwise(2);
  plan.registers = 12;
  return plan;
}

void Downsample::emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const fugue_type& x = call.operand(kX);
  const fugue_type& y = call.operand(kY);
  if (sdk::elements(y) == 0) return;
  const fugue_dtype dtype = x.dtype;
  const std::string t = ctype(dtype);
  const std::string it = index_ctype(std::max(sdk::elements(x), sdk::elements(y)));
  GridCode out(emitter, shape_of(y), it, "o", static_cast<int>(kY));
  GridCode in(emitter, shape_of(x), it, "x", static_cast<int>(kX));
  std::string code = out.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  code += in.coordinates(
      {out.lit(2) + " * " + out.coordinate(0), out.lit(2) + " * " + out.coordinate(1)});
  std::string rows[5], cols[5];
  for (int k = 0; k < 5; ++k) {
    rows[k] = in.neighbour(0, k - 2, FUGUE_BORDER_CLAMP, code);
    cols[k] = in.neighbour(1, k - 2, FUGUE_BORDER_CLAMP, code);
  }
  // Separable: each row's weighted sum first, then the rows', in integer weights; one exact
  // scaling by 1/256 at the end.
  std::string total;
  for (int r = 0; r < 5; ++r) {
    std::string sum;
    for (int c = 0; c < 5; ++c)
      sum += (c ? " + " : "") + literal(dtype, double(kBinomial[c])) + " * " +
             emitter.read_at(kX, in.flat({rows[r], cols[c]}));
    const std::string row = declare(emitter, code, "row" + std::to_string(r), t, sum);
    total += (r ? " + " : "") + literal(dtype, double(kBinomial[r])) + " * " + row;
  }
  code += "  " + emitter.write(kY) + " = (" + total + ") * " + literal(dtype, 1.0 / 256) + ";\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost Downsample::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  cost.bytes = array_bytes(call.operand(kX)) + array_bytes(call.operand(kY));
  // 25 + 5 + 1 products and 20 + 4 sums per element.
  cost.flops = 55.0 * static_cast<double>(sdk::elements(call.operand(kY)));
  return cost;
}

void Downsample::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& xt = call.operand(kX);
  const fugue_type& yt = call.operand(kY);
  const int64_t rows = xt.shape[0], cols = xt.shape[1];
  const sdk::HostView x(operands[kX]);
  sdk::HostView y(operands[kY]);
  for (int64_t r = 0; r < yt.shape[0]; ++r)
    for (int64_t c = 0; c < yt.shape[1]; ++c) {
      Real acc = 0;
      for (int dr = -2; dr <= 2; ++dr)
        for (int dc = -2; dc <= 2; ++dc) {
          const int64_t rr = std::clamp<int64_t>(2 * r + dr, 0, rows - 1);
          const int64_t cc = std::clamp<int64_t>(2 * c + dc, 0, cols - 1);
          acc += Real(kBinomial[dr + 2] * kBinomial[dc + 2]) * host_value(x, rr * cols + cc);
        }
      y.set(r * yt.shape[1] + c, static_cast<double>(acc / 256));
    }
}

// ---------------------------------------------------------------------------------------------
// Upsample and UpsampleTo

namespace {

constexpr int64_t kLargestExtent = (int64_t{1} << 31) - 1;

// The target extent along one axis: `given` (0: twice the input's), checked.
int64_t target(const std::string& attr, int64_t given, int64_t input, const std::string& axis) {
  if (given == 0) return 2 * input;
  if (given < input || given > kLargestExtent)
    throw rejection("attribute " + attr,
                    "0 (twice the " + axis + " of x) or an extent from " + std::to_string(input) +
                        " (the " + axis + " of operand x: an upsample never shrinks) to " +
                        std::to_string(kLargestExtent),
                    std::to_string(given));
  return given;
}

}  // namespace

Upsample::Upsample() {
  name = "stencil.upsample";
  doc =
      "[H, W] -> [rows, cols] (default [2H, 2W]) by bilinear interpolation: y[r, c] samples x "
      "at ((r + 0.5) H/rows - 0.5, (c + 0.5) W/cols - 0.5), clamped into x";
  operands = {
      sdk::in("x", kArray, kFloat, "the image, [H, W], at least one row and one column"),
      sdk::out("y", kArray, kFloat, "the finer image, [rows, cols], x's dtype"),
  };
  attrs = {
      {"rows", FUGUE_ATTR_INT, false, 0, "", "rows of y, at least H; 0: 2H"},
      {"cols", FUGUE_ATTR_INT, false, 0, "", "columns of y, at least W; 0: 2W"},
  };
  tolerance_f32 = 1e-5;
  tolerance_f64 = 1e-12;
}

void Upsample::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_type& x = image(call);
  const int64_t rows = target("rows", call.integer("rows"), x.shape[0], "rows");
  const int64_t cols = target("cols", call.integer("cols"), x.shape[1], "columns");
  types[call.index("y")] = array_type(x.dtype, {rows, cols});
}

UpsampleTo::UpsampleTo() {
  name = "stencil.upsample_to";
  doc =
      "[H, W] -> like's shape [rows, cols] by the bilinear interpolation of stencil.upsample: "
      "y[r, c] samples x at ((r + 0.5) H/rows - 0.5, (c + 0.5) W/cols - 0.5), clamped into x; "
      "values are not scaled";
  operands = {
      sdk::in("x", kArray, kFloat, "the image, [H, W], at least one row and one column"),
      sdk::in("like", kArray, kAll,
              "lends its shape [rows, cols] (rows >= H, cols >= W); never read"),
      sdk::out("y", kArray, kFloat, "the finer image, like's shape, x's dtype"),
  };
  tolerance_f32 = 1e-5;
  tolerance_f64 = 1e-12;
  // One pyramid step with even and odd sizes, an unchanged axis, and a single cell spread out.
  test_cases = R"([
    {"name": "odd pyramid step", "shape": [7, 5], "inputs": {"like": {"shape": [13, 9]}}},
    {"name": "even pyramid step", "shape": [7, 5], "inputs": {"like": {"shape": [14, 10]}}},
    {"name": "single cell", "shape": [1, 1], "inputs": {"like": {"shape": [3, 2]}}},
    {"name": "same shape", "shape": [1, 1], "inputs": {"like": {"shape": [1, 1]}}},
    {"name": "large", "shape": [129, 65], "inputs": {"like": {"shape": [257, 129], "dtype": "u8"}}},
    {"name": "columns kept", "shape": [100, 129], "inputs": {"like": {"shape": [300, 129]}}}
  ])";
}

void UpsampleTo::infer(const sdk::Call& call, std::vector<sdk::Type>& types) const {
  const fugue_type& x = image(call);
  const uint32_t k = call.index("like");
  require_rank(call, k, 2);
  const fugue_type& like = call.operand(k);
  // The bounds of stencil.upsample's attributes, on like's extents.
  for (uint32_t d = 0; d < 2; ++d)
    if (like.shape[d] < x.shape[d] || like.shape[d] > kLargestExtent)
      throw rejection("operand like",
                      "a shape of at least " + sdk::shape_string(x) +
                          " (operand x's: an upsample never shrinks), extents at most " +
                          std::to_string(kLargestExtent),
                      describe(like));
  types[call.index("y")] = array_type(x.dtype, shape_of(like));
}

// ---------------------------------------------------------------------------------------------
// The bilinear interpolation both share

const fugue_type& BilinearUpsample::image(const sdk::Call& call) const {
  const uint32_t k = call.index("x");
  require_rank(call, k, 2);
  const fugue_type& x = call.operand(k);
  if (x.shape[0] < 1 || x.shape[1] < 1)
    throw rejection("operand x", "at least one row and one column to interpolate between",
                    describe(x));
  return x;
}

sdk::Plan BilinearUpsample::plan(const sdk::Call& call) const {
  sdk::Plan plan = grid_plan(call, sdk::elements(call.operand("y")));
  plan.partitions[call.index("x")] = whole(2);
  plan.partitions[call.index("y")] = elementwise(2);  // like, where there is one, stays NONE
  plan.registers = 14;
  return plan;
}

void BilinearUpsample::emit(const sdk::Call& call, const sdk::Plan&,
                            const sdk::Emitter& emitter) const {
  require_element_phase(name, emitter);
  const uint32_t kx = call.index("x"), ky = call.index("y");
  const fugue_type& x = call.operand(kx);
  const fugue_type& y = call.operand(ky);
  if (sdk::elements(y) == 0) return;
  const fugue_dtype dtype = x.dtype;
  const std::string t = ctype(dtype);
  // (2r + 1) H reaches 2 rows H: int while that stays well inside its range.
  const int64_t reach = std::max(
      {sdk::elements(y), 2 * (y.shape[0] + 1) * x.shape[0], 2 * (y.shape[1] + 1) * x.shape[1]});
  const std::string it = index_ctype(reach);
  GridCode out(emitter, shape_of(y), it, "o", static_cast<int>(ky));
  GridCode in(emitter, shape_of(x), it, "x", static_cast<int>(kx));
  std::string code = out.coordinates(emitter.builtin(FUGUE_BUILTIN_INDEX));
  // Per axis: the sample at (2k + 1) n / (2 m) - 1/2 = num / (2m) with num = (2k + 1) n - m,
  // clamped at 0 below (above, the last cell is its own neighbour): its cell num / (2m) and
  // fraction (num mod 2m) / 2m.
  std::string low[2], high[2], fraction[2];
  for (uint32_t d = 0; d < 2; ++d) {
    const int64_t n = x.shape[d], m = y.shape[d];
    const std::string axis = d == 0 ? "r" : "c";
    // The extents: kernel arguments where the core passes them, else literals folded here.
    const bool symbolic = in.symbolic(d) && out.symbolic(d);
    const std::string n_e = symbolic ? in.extent(d) : out.lit(n), m_e = symbolic ? out.extent(d) : out.lit(m);
    const std::string two_m = symbolic ? "(" + out.lit(2) + " * " + m_e + ")" : out.lit(2 * m);
    const std::string num =
        declare(emitter, code, "num" + axis, it,
                "max((" + out.lit(2) + " * " + out.coordinate(d) + " + " + out.lit(1) + ") * " + n_e + " - " + m_e +
                    ", " + out.lit(0) + ")");
    low[d] = declare(emitter, code, "low" + axis, it, num + " / " + two_m);
    high[d] = declare(emitter, code, "high" + axis, it,
                      "min(" + low[d] + " + " + out.lit(1) + ", " + (symbolic ? in.last(d) : out.lit(n - 1)) + ")");
    fraction[d] = declare(emitter, code, "frac" + axis, t,
                          "(" + t + ")(" + num + " - " + low[d] + " * " + two_m + ") / " +
                              (symbolic ? "(" + t + ")" + two_m : literal(dtype, double(2 * m))));
  }
  auto at = [&](const std::string& r, const std::string& c) {
    return emitter.read_at(kx, in.flat({r, c}));
  };
  const std::string a = declare(emitter, code, "p00", t, at(low[0], low[1]));
  const std::string b = declare(emitter, code, "p01", t, at(low[0], high[1]));
  const std::string c = declare(emitter, code, "p10", t, at(high[0], low[1]));
  const std::string d = declare(emitter, code, "p11", t, at(high[0], high[1]));
  const std::string top =
      declare(emitter, code, "top", t, a + " + " + fraction[1] + " * (" + b + " - " + a + ")");
  const std::string bottom =
      declare(emitter, code, "bottom", t, c + " + " + fraction[1] + " * (" + d + " - " + c + ")");
  code += "  " + emitter.write(ky) + " = " + top + " + " + fraction[0] + " * (" + bottom + " - " +
          top + ");\n";
  emitter.append("{\n" + code + "}\n");
}

fugue_cost BilinearUpsample::cost(const sdk::Call& call) const {
  fugue_cost cost{};
  cost.bytes = array_bytes(call.operand("x")) + array_bytes(call.operand("y"));
  // Per axis a cell and a fraction (about 8 operations), then three lerps.
  cost.flops = 25.0 * static_cast<double>(sdk::elements(call.operand("y")));
  return cost;
}

void BilinearUpsample::reference(const sdk::Call& call, fugue_host_array* operands) const {
  const fugue_type& xt = call.operand("x");
  const fugue_type& yt = call.operand("y");
  const int64_t rows = xt.shape[0], cols = xt.shape[1];
  const sdk::HostView x(operands[call.index("x")]);
  sdk::HostView y(operands[call.index("y")]);
  // The sample point along one axis straight from the definition, in long double.
  struct Sample {
    int64_t low, high;
    Real fraction;
  };
  auto sample = [](int64_t k, int64_t n, int64_t m) {
    const Real s = std::clamp((k + Real(0.5)) * n / m - Real(0.5), Real(0), Real(n - 1));
    const int64_t low = static_cast<int64_t>(std::floor(s));
    return Sample{low, std::min(low + 1, n - 1), s - low};
  };
  auto lerp = [](Real a, Real b, Real t) { return a + t * (b - a); };
  for (int64_t r = 0; r < yt.shape[0]; ++r) {
    const Sample sr = sample(r, rows, yt.shape[0]);
    for (int64_t c = 0; c < yt.shape[1]; ++c) {
      const Sample sc = sample(c, cols, yt.shape[1]);
      auto px = [&](int64_t rr, int64_t cc) { return host_value(x, rr * cols + cc); };
      const Real top = lerp(px(sr.low, sc.low), px(sr.low, sc.high), sc.fraction);
      const Real bottom = lerp(px(sr.high, sc.low), px(sr.high, sc.high), sc.fraction);
      y.set(r * yt.shape[1] + c, static_cast<double>(lerp(top, bottom, sr.fraction)));
    }
  }
}

}  // namespace fugue::stencil
