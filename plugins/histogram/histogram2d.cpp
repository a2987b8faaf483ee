// histogram2d.cpp: histogram.histogram2d (see histogram2d.h).
#include "histogram2d.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "counting.h"
#include "weights.h"

namespace fugue::histogram {

namespace {

constexpr uint32_t kX = 0, kY = 1, kW = 2, kH = 3;
constexpr uint32_t kDataDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) |
                                 FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32);
constexpr int64_t kMaxBins = int64_t{1} << 26;

// One axis: its bins and range (an empty range widened by 0.5 each way, as NumPy does).
struct Axis {
  int64_t bins;
  double low, high;
  double edge(int64_t j) const { return j == bins ? high : static_cast<double>(j) * ((high - low) / static_cast<double>(bins)) + low; }
  // np.searchsorted(edges, v, side='right') - 1, the last edge in the last bin; -1 outside (NaN too).
  int64_t bin(double v) const {
    if (!(v >= low && v <= high)) return -1;
    if (v == high) return bins - 1;
    int64_t j = static_cast<int64_t>(std::floor((v - low) * (static_cast<double>(bins) / (high - low))));
    j = std::min<int64_t>(std::max<int64_t>(j, 0), bins - 1);
    if (v < edge(j)) --j;
    else if (v >= edge(j + 1)) ++j;
    return j >= 0 && j < bins ? j : -1;
  }
};

Axis axis_of(const sdk::Call& call, const std::string& a) {
  const int64_t bins = call.integer("bins_" + a);
  if (bins < 1 || bins > kMaxBins)
    throw sdk::InvalidArgument("attribute bins_" + a + ": expected 1 to " + std::to_string(kMaxBins) + ", found " + std::to_string(bins));
  const double low = call.number("low_" + a), high = call.number("high_" + a);
  if (!std::isfinite(low) || !std::isfinite(high) || low > high)
    throw sdk::InvalidArgument("attributes low_" + a + " and high_" + a + ": expected finite numbers, low not above high, found " +
                               sdk::number_text(low) + " and " + sdk::number_text(high));
  if (bins * call.integer(a == "x" ? "bins_y" : "bins_x") > kMaxBins)
    throw sdk::InvalidArgument("attributes bins_x and bins_y: at most " + std::to_string(kMaxBins) + " bins in all");
  const Axis axis = low == high ? Axis{bins, low - 0.5, high + 0.5} : Axis{bins, low, high};
  if (!(axis.high - axis.low <= 1.7976931348623157e308))  // NumPy's edges are NaN and inf past it
    throw sdk::InvalidArgument("attributes low_" + a + " and high_" + a + ": the range " + sdk::number_text(low) + " to " + sdk::number_text(high) +
                               " is wider than f64 holds (high - low overflows); narrow it");
  if (!(static_cast<double>(bins) / (axis.high - axis.low) <= 1.7976931348623157e308))
    throw sdk::InvalidArgument("attributes bins_" + a + ", low_" + a + " and high_" + a + ": " + std::to_string(bins) + " bins over a range of " +
                               sdk::number_text(axis.high - axis.low) + " are too narrow (bins / (high - low) overflows)");
  return axis;
}

std::string literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17e", v);
  return buf;
}

double value_of(const sdk::HostView& h, int64_t i) {
  return h.dtype() == FUGUE_DTYPE_F32 || h.dtype() == FUGUE_DTYPE_F64 ? h.get(i) : static_cast<double>(h.get_int(i));
}

class Histogram2d final : public sdk::Operation {
 public:
  Histogram2d() {
    name = "histogram.histogram2d";
    doc = "NumPy's histogram2d of the pairs (x, y) (x and y of one shape) over bins_x x bins_y equal bins: h[i, j] counts the "
          "pairs with x in [edge_x i, edge_x i + 1) and y in [edge_y j, edge_y j + 1), each axis's last bin closed, the edges "
          "np.linspace(low, high, bins + 1) in f64; NaN and pairs outside either range are ignored. With weights w h sums them "
          "(of w's dtype), else counts (i64)";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("x", array, kDataDtypes, "the first values"), sdk::in("y", array, kDataDtypes, "the second values, of x's shape"),
                weights_operand("x"), sdk::out("h", array, kCountDtypes, "the counts or sums [bins_x, bins_y]")};
    attrs = {{"bins_x", FUGUE_ATTR_INT, true, 0, "", "bins along x"},
             {"bins_y", FUGUE_ATTR_INT, true, 0, "", "bins along y"},
             {"low_x", FUGUE_ATTR_NUMBER, true, 0, "", "x's first edge"},
             {"high_x", FUGUE_ATTR_NUMBER, true, 0, "", "x's last edge"},
             {"low_y", FUGUE_ATTR_NUMBER, true, 0, "", "y's first edge"},
             {"high_y", FUGUE_ATTR_NUMBER, true, 0, "", "y's last edge"}};
    traits = FUGUE_OP_UNORDERED;
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    test_cases = R"([
      {"name": "8 x 5 bins", "shape": [4000], "attrs": {"bins_x": 8, "bins_y": 5, "low_x": 0, "high_x": 1, "low_y": -1, "high_y": 1},
       "inputs": {"x": {"from": {"random": {"low": -0.1, "high": 1.1}}}, "y": {"from": {"random": {"low": -1.2, "high": 1.2}}}},
       "dtypes": ["f32", "f64"]},
      {"name": "integers", "shape": [50, 50], "attrs": {"bins_x": 3, "bins_y": 4, "low_x": 0, "high_x": 9, "low_y": 0, "high_y": 9},
       "inputs": {"x": {"from": {"random": {"low": 0, "high": 10}}}, "y": {"from": {"random": {"low": 0, "high": 10}}}}, "dtypes": ["i32", "u8"]},
      {"name": "weighted", "shape": [50, 50], "attrs": {"bins_x": 3, "bins_y": 4, "low_x": 0, "high_x": 9, "low_y": 0, "high_y": 9},
       "inputs": {"x": {"from": {"random": {"low": -1, "high": 10}}}, "y": {"from": {"random": {"low": 0, "high": 10}}},
                  "w": {"from": {"random": {"low": 0, "high": 2}}}}, "dtypes": ["f32", "f64"]},
      {"name": "100 x 100 bins", "shape": [3000], "attrs": {"bins_x": 100, "bins_y": 100, "low_x": 0, "high_x": 1, "low_y": 0, "high_y": 1},
       "inputs": {"x": {"from": {"random": {"low": 0, "high": 1}}}, "y": {"from": {"random": {"low": 0, "high": 1}}}}, "dtypes": ["f64"]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const Axis ax = axis_of(call, "x"), ay = axis_of(call, "y");
    const fugue_type &x = call.operand(kX), &y = call.operand(kY);
    if (sdk::shape_of(x) != sdk::shape_of(y))
      throw sdk::InvalidArgument("operand y: expected x's shape " + sdk::shape_string(sdk::shape_of(x)) + ", found " + sdk::type_string(y));
    types[kH] = sdk::make_type(FUGUE_KIND_ARRAY, counts_dtype(call.operand(kW), sdk::shape_of(x), "x"), {ax.bins, ay.bins});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    return counting_plan(call, counting(call), sdk::elements(call.operand(kX)));
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const Counting c = counting(call);
    if (em.phase() != FUGUE_PHASE_ELEMENT) {
      em.append(counting_code(call, em, c, "", "", ""));
      return;
    }
    const Axis ax = axis_of(call, "x"), ay = axis_of(call, "y");
    const std::string bin = em.name("bin");
    std::string code;
    // The bin along one axis (see Axis::bin), in f64.
    auto axis_bin = [&](const Axis& a, uint32_t operand, const std::string& stem) {
      const std::string v = em.name(stem), j = em.name(stem + "_bin");
      const std::string B = std::to_string(a.bins) + "L", step = literal((a.high - a.low) / static_cast<double>(a.bins)), low = literal(a.low),
                        high = literal(a.high);
      auto edge = [&](const std::string& k) { return "(" + k + " == " + B + " ? " + high + " : (double)(" + k + ") * " + step + " + " + low + ")"; };
      code += "const double " + v + " = (double)(" + em.read(operand) + ");\n";
      code += "long " + j + " = -1;\n";
      code += "if (" + v + " == " + high + ") " + j + " = " + B + " - 1;\n";
      code += "else if (" + v + " >= " + low + " && " + v + " < " + high + ") {\n#pragma OPENCL FP_CONTRACT OFF\n";  // edges as np.linspace rounds them
      code += "  " + j + " = clamp((long)floor((" + v + " - " + low + ") * " + literal(static_cast<double>(a.bins) / (a.high - a.low)) + "), 0L, " + B +
              " - 1);\n";
      code += "  if (" + v + " < " + edge(j) + ") --" + j + ";\n  else if (" + v + " >= " + edge(j + " + 1") + ") ++" + j + ";\n";
      code += "  if (" + j + " < 0 || " + j + " >= " + B + ") " + j + " = -1;\n}\n";
      return j;
    };
    const std::string jx = axis_bin(ax, kX, "x"), jy = axis_bin(ay, kY, "y");
    code += "const long " + bin + " = " + jx + " < 0 || " + jy + " < 0 ? -1L : " + jx + " * " + std::to_string(ay.bins) + "L + " + jy + ";\n";
    em.append(counting_code(call, em, c, code, bin, c.weight.empty() ? weight_of(em, c, kW) : ""));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kX)));
    const fugue_type& w = call.operand(kW);
    return {sizeof(fugue_cost),
            n * static_cast<double>(abi::dtype_size(call.operand(kX).dtype) + abi::dtype_size(call.operand(kY).dtype)) +
                (w.kind == FUGUE_KIND_ARRAY ? n * static_cast<double>(abi::dtype_size(w.dtype)) : 0) +
                static_cast<double>(sdk::elements(call.operand(kH))) * static_cast<double>(abi::dtype_size(call.operand(kH).dtype)),
            n * 16};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView x(arrays[kX]), y(arrays[kY]), w(arrays[kW]);
    sdk::HostView h(arrays[kH]);
    const Axis ax = axis_of(call, "x"), ay = axis_of(call, "y");
    ReferenceCounts counts(ax.bins * ay.bins);
    for (int64_t e = 0; e < x.size(); ++e) {
      const int64_t i = ax.bin(value_of(x, e)), j = ay.bin(value_of(y, e));
      if (i >= 0 && j >= 0) counts.add(i * ay.bins + j, reference_weight(call.operand(kW), w, e));
    }
    counts.store(h);
  }

 private:
  static Counting counting(const sdk::Call& call) {
    return counting_for(call, kH, kW, axis_of(call, "x").bins * axis_of(call, "y").bins);
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> histogram2d_operation() { return std::make_unique<Histogram2d>(); }

}  // namespace fugue::histogram
