// even.cpp: histogram.even (see even.h).
#include "even.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "counting.h"
#include "weights.h"

namespace fugue::histogram {

namespace {

constexpr uint32_t kA = 0, kW = 1, kH = 2;
constexpr uint32_t kDataDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) |
                                 FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32);
constexpr int64_t kMaxBins = int64_t{1} << 26;

// The range as NumPy takes it: an empty one (low == high) widened by 0.5 each way.
struct Range {
  double low, high;
};

Range range_of(const sdk::Call& call) {
  const double low = call.number("low"), high = call.number("high");
  if (!std::isfinite(low) || !std::isfinite(high))
    throw sdk::InvalidArgument("attributes low and high: expected finite numbers, found " + sdk::number_text(low) + " and " + sdk::number_text(high));
  if (low > high)
    throw sdk::InvalidArgument("attributes low and high: low (" + sdk::number_text(low) + ") must not exceed high (" + sdk::number_text(high) + ")");
  return low == high ? Range{low - 0.5, high + 0.5} : Range{low, high};
}

// Checks that the numbers the bins are found with are finite in the data's arithmetic (f32 for f32
// data): the range within f32's for f32 data, its width high - low within f64's (NumPy's edges are
// NaN and inf past it), and bins / (high - low) not overflowing.
void require_finite_scale(const Range& r, int64_t bins, bool f32) {
  const double norm = static_cast<double>(bins) / (r.high - r.low), most = f32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
  if (f32 && (std::fabs(r.low) > most || std::fabs(r.high) > most))
    throw sdk::InvalidArgument("attributes low and high: f32 data needs a range within f32's (|value| <= 3.4e38), found " + sdk::number_text(r.low) +
                               " to " + sdk::number_text(r.high));
  if (!(r.high - r.low <= 1.7976931348623157e308))
    throw sdk::InvalidArgument("attributes low and high: the range " + sdk::number_text(r.low) + " to " + sdk::number_text(r.high) +
                               " is wider than f64 holds (high - low overflows); narrow it");
  if (!(norm <= most))
    throw sdk::InvalidArgument("attributes bins, low and high: " + std::to_string(bins) + " bins over a range of " + sdk::number_text(r.high - r.low) +
                               " are too narrow for " + (f32 ? "f32" : "f64") + " (bins / (high - low) overflows)");
}

// f32 data over a range wider than f32's largest value: x - low overflows in f32, so the bin is found
// from x - low in f64, as NumPy 1.x does for bounds that large (its edges stay f32's).
bool wide_f32(const Range& r) { return r.high - r.low > 3.4028234663852886e38; }

int64_t bins_of(const sdk::Call& call) {
  const int64_t bins = call.integer("bins");
  if (bins < 1 || bins > kMaxBins)
    throw sdk::InvalidArgument("attribute bins: expected 1 to " + std::to_string(kMaxBins) + ", found " + std::to_string(bins));
  return bins;
}

std::string literal(double v, bool f32) {
  char buf[48];
  if (f32) std::snprintf(buf, sizeof buf, "%.9ef", static_cast<double>(static_cast<float>(v)));
  else std::snprintf(buf, sizeof buf, "%.17e", v);
  return buf;
}

// NumPy's bin of x (histogram's fast path): f32 data computes in f32 against f32 edges (np.linspace in
// f64, then cast), other data in f64. Returns -1 outside [low, high] (NaN too).
template <class T>
int64_t numpy_bin(T x, const Range& r, int64_t bins) {
  const T low = static_cast<T>(r.low), high = static_cast<T>(r.high);
  if (!(x >= low && x <= high)) return -1;
  const double step = (r.high - r.low) / static_cast<double>(bins);
  auto edge = [&](int64_t i) { return i == bins ? high : static_cast<T>(static_cast<double>(i) * step + r.low); };
  const T norm = static_cast<T>(static_cast<double>(bins) / (r.high - r.low));
  int64_t i = std::is_same_v<T, float> && wide_f32(r) ? static_cast<int64_t>((static_cast<double>(x) - r.low) * (static_cast<double>(bins) / (r.high - r.low)))
                                                      : static_cast<int64_t>((x - low) * norm);
  if (i >= bins) i = bins - 1;
  if (x < edge(i)) --i;
  if (i != bins - 1 && x >= edge(i + 1)) ++i;
  return i;
}

// Whether every edge NumPy makes for f32 data ((float)(j * step + low), in f64) is also what f32
// arithmetic gives ((float)j * step + low, rounded after each step): then the device finds the bins in
// f32 alone, which GPUs run several times faster than conversions to and from f64. Checked up to 2^20 bins.
bool f32_edges_exact(const Range& r, int64_t bins) {
  if (bins > (int64_t{1} << 20)) return false;
  const double step = (r.high - r.low) / static_cast<double>(bins);
  const float step_f = static_cast<float>(step), low_f = static_cast<float>(r.low);
  for (int64_t j = 0; j < bins; ++j) {
    volatile float product = static_cast<float>(j) * step_f;  // rounded apart from the sum, as on the device
    if (static_cast<float>(product + low_f) != static_cast<float>(static_cast<double>(j) * step + r.low)) return false;
  }
  return true;
}

// Whether the bin of every value in [low, high] is exactly (int)((x - low) * norm), clamped to the last
// bin, with no correction against the edges: low is 0 (x - low exact), and norm = bins / (high - low)
// and the step are powers of two, so the product and every edge are exact in the data's type
// (torch.histc's and NumPy's common case: [0, 1) or [0, 2^e) in 2^b bins).
bool exact_scaling(const Range& r, int64_t bins, bool f32) {
  // f32's 24 bits hold every edge j * step only up to 2^24 bins: beyond, NumPy's edges (rounded from
  // f64) merge pairwise and its corrections move values up a bin.
  if (r.low != 0 || (f32 && bins > (int64_t{1} << 24))) return false;
  // Powers of two well inside f32's normal range (no subnormal or overflowing products).
  auto power_of_two = [](double v) {
    int exponent = 0;
    return std::frexp(v, &exponent) == 0.5 && exponent > -100 && exponent < 100;
  };
  return power_of_two(static_cast<double>(bins) / r.high) && power_of_two(r.high / static_cast<double>(bins));
}

class Even final : public sdk::Operation {
 public:
  Even() {
    name = "histogram.even";
    doc = "NumPy's histogram of a (any shape) over `bins` equal bins from `low` to `high`: h[i] counts the values in "
          "[edge i, edge i + 1), the last bin closed, the edges as np.linspace(low, high, bins + 1) (in f32 for f32 data); "
          "NaN and values outside the range are ignored; low == high widens the range by 0.5 each way. With weights w "
          "h sums them (of w's dtype; floats in an unspecified order), else counts (i64)";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("a", array, kDataDtypes, "the values"), weights_operand("a"), sdk::out("h", array, kCountDtypes, "the counts or sums [bins]")};
    attrs = {{"bins", FUGUE_ATTR_INT, true, 0, "", "the number of bins, 1 to 2^26"},
             {"low", FUGUE_ATTR_NUMBER, true, 0, "", "the first edge"},
             {"high", FUGUE_ATTR_NUMBER, true, 0, "", "the last edge (values equal to it count in the last bin)"}};
    traits = FUGUE_OP_UNORDERED;
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    test_cases = R"([
      {"name": "100 bins of uniform values", "shape": [5000], "attrs": {"bins": 100, "low": 0, "high": 1},
       "inputs": {"a": {"from": {"random": {"low": -0.1, "high": 1.1}}}}, "dtypes": ["f32", "f64"]},
      {"name": "signed integers in 7 bins", "shape": [40, 30], "attrs": {"bins": 7, "low": -3, "high": 10},
       "inputs": {"a": {"from": {"random": {"low": -5, "high": 12}}}}, "dtypes": ["i32", "i64"]},
      {"name": "unsigned integers in 7 bins", "shape": [40, 30], "attrs": {"bins": 7, "low": 2, "high": 10},
       "inputs": {"a": {"from": {"random": {"low": 0, "high": 12}}}}, "dtypes": ["u8", "u32"]},
      {"name": "weighted, every value in one bin", "shape": [20000], "attrs": {"bins": 16, "low": 0, "high": 4},
       "inputs": {"a": {"from": {"fill": 1.5}}, "w": {"from": {"random": {"low": 0, "high": 1}}}}, "dtypes": ["f32", "f64"]},
      {"name": "5000 bins, past a work-group's copy", "shape": [3000], "attrs": {"bins": 5000, "low": -1, "high": 1},
       "inputs": {"a": {"from": {"random": {"low": -1, "high": 1}}}}, "dtypes": ["f64"]},
      {"name": "the edges themselves", "attrs": {"bins": 4, "low": 0, "high": 1},
       "inputs": {"a": {"shape": [9], "value": [0, 0.25, 0.5, 0.75, 1, 1.0000001, -0.0000001, 0.2499999, 0.7500001]}}, "dtypes": ["f32", "f64"]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const int64_t bins = bins_of(call);
    require_finite_scale(range_of(call), bins, call.operand(kA).dtype == FUGUE_DTYPE_F32);
    types[kH] = sdk::make_type(FUGUE_KIND_ARRAY, counts_dtype(call.operand(kW), sdk::shape_of(call.operand(kA)), "a"), {bins});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    return counting_plan(call, counting_for(call, kH, kW, bins_of(call)), sdk::elements(call.operand(kA)));
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    Counting c = counting_for(call, kH, kW, bins_of(call));
    c.int_bin = true;
    if (em.phase() != FUGUE_PHASE_ELEMENT) {
      em.append(counting_code(call, em, c, "", "", ""));
      return;
    }
    const Range r = range_of(call);
    const int64_t bins = c.bins;
    const bool f32 = call.operand(kA).dtype == FUGUE_DTYPE_F32;
    // f32 data finds its bins in f32 where that gives NumPy's edges exactly (f32_edges_exact), or on a device
    // without doubles (where the edges may then differ from NumPy's by a rounding).
    const bool doubles = (call.device().features & FUGUE_DEVICE_FP64) != 0;
    const std::string t = f32 ? "float" : "double", B = std::to_string(bins);
    const std::string x = em.name("x"), i = em.name("i"), bin = em.name("bin");
    const std::string low = literal(r.low, f32), high = literal(r.high, f32);
    const double step = (r.high - r.low) / static_cast<double>(bins);
    // Edge j (j < bins) as np.linspace makes it: j * step + low in f64, then rounded to the data's type.
    const bool in_f32 = f32 && (!doubles || f32_edges_exact(r, bins));
    auto edge = [&](const std::string& j) {
      if (!f32) return "((double)(" + j + ") * " + literal(step, false) + " + " + literal(r.low, false) + ")";
      if (!in_f32) return "(float)((double)(" + j + ") * " + literal(step, false) + " + " + literal(r.low, false) + ")";
      if (wide_f32(r))  // j * step past f32's range: halved, then doubled (exactly)
        return "(((float)(" + j + ") * " + literal(step / 2, true) + " + " + literal(r.low / 2, true) + ") * 2.0f)";
      return "((float)(" + j + ") * " + literal(step, true) + " + " + literal(r.low, true) + ")";
    };
    std::string code = "const " + t + " " + x + " = (" + t + ")(" + em.read(kA) + ");\n";
    code += "int " + bin + " = -1;\n";
    // NumPy rounds j * step and + low apart: no fused multiply-add (OpenCL C contracts by default).
    code += "if (" + x + " >= " + low + " && " + x + " <= " + high + ") {\n#pragma OPENCL FP_CONTRACT OFF\n";
    const double norm = static_cast<double>(bins) / (r.high - r.low);
    if (f32 && wide_f32(r))  // x - low past f32's range: in f64, or halved in f32 (then the corrections below fix the bin)
      code += doubles ? "  int " + i + " = (int)(((double)" + x + " - " + literal(r.low, false) + ") * " + literal(norm, false) + ");\n"
                      : "  int " + i + " = (int)((" + x + " * 0.5f - " + literal(r.low / 2, true) + ") * " + literal(2 * norm, true) + ");\n";
    else
      code += "  int " + i + " = (int)((" + x + " - " + low + ") * " + literal(norm, f32) + ");\n";
    code += "  if (" + i + " >= " + B + ") " + i + " = " + B + " - 1;\n";
    if (!exact_scaling(r, bins, f32)) {  // the product may round across an edge: NumPy's corrections
      code += "  if (" + x + " < " + edge(i) + ") --" + i + ";\n";
      code += "  if (" + i + " != " + B + " - 1 && " + x + " >= (" + i + " + 1 == " + B + " ? " + high + " : " + edge(i + " + 1") + ")) ++" + i + ";\n";
    }
    code += "  " + bin + " = " + i + ";\n}\n";
    em.append(counting_code(call, em, c, code, bin, c.weight.empty() ? weight_of(em, c, kW) : ""));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kA)));
    const fugue_type& w = call.operand(kW);
    const double bytes = n * static_cast<double>(abi::dtype_size(call.operand(kA).dtype)) +
                         (w.kind == FUGUE_KIND_ARRAY ? n * static_cast<double>(abi::dtype_size(w.dtype)) : 0) +
                         static_cast<double>(bins_of(call)) * static_cast<double>(abi::dtype_size(call.operand(kH).dtype));
    return {sizeof(fugue_cost), bytes, n * 8};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]), w(arrays[kW]);
    sdk::HostView h(arrays[kH]);
    const Range r = range_of(call);
    const int64_t bins = bins_of(call), n = a.size();
    const fugue_dtype d = a.dtype();
    ReferenceCounts counts(bins);
    for (int64_t e = 0; e < n; ++e) {
      const int64_t k = d == FUGUE_DTYPE_F32 ? numpy_bin<float>(static_cast<float>(a.get(e)), r, bins)
                        : d == FUGUE_DTYPE_F64 ? numpy_bin<double>(a.get(e), r, bins)
                                               : numpy_bin<double>(static_cast<double>(a.get_int(e)), r, bins);
      if (k >= 0) counts.add(k, reference_weight(call.operand(kW), w, e));
    }
    counts.store(h);
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> even_operation() { return std::make_unique<Even>(); }

}  // namespace fugue::histogram
