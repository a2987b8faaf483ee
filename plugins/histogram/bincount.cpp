// bincount.cpp: histogram.bincount (see bincount.h).
#include "bincount.h"

#include <string>
#include <vector>

#include "counting.h"
#include "weights.h"

namespace fugue::histogram {

namespace {

constexpr uint32_t kIdx = 0, kW = 1, kH = 2;

class Bincount final : public sdk::Operation {
 public:
  Bincount() {
    name = "histogram.bincount";
    doc = "NumPy's bincount with a fixed length: h [length] counts each index of idx (any shape), or sums the weights w "
          "(idx's shape) at them; indices outside 0..length-1 are not counted. Counts are i64; sums have w's dtype (floats "
          "in an unspecified order)";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("idx", array, kBinDtypes, "the bins, integers"), weights_operand("idx"),
                sdk::out("h", array, kCountDtypes, "the counts or sums [length]")};
    attrs = {{"length", FUGUE_ATTR_INT, true, 0, "", "h's length, 1 to 2^30"}};
    traits = FUGUE_OP_UNORDERED;
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    test_cases = R"([
      {"name": "counts of 37 bins, some indices outside", "shape": [5000], "attrs": {"length": 37},
       "inputs": {"idx": {"from": {"random": {"low": -3, "high": 40}}}}, "dtypes": ["i32", "i64"]},
      {"name": "u8 pixels", "shape": [64, 64], "attrs": {"length": 256},
       "inputs": {"idx": {"from": {"random": {"low": 0, "high": 255}}}}, "dtypes": ["u8", "u32"]},
      {"name": "weighted, one index", "shape": [30000], "attrs": {"length": 4},
       "inputs": {"idx": {"from": {"fill": 2}}, "w": {"dtype": "f32", "from": {"random": {"low": 0, "high": 1}}}}, "dtypes": ["i32"]},
      {"name": "integer weight 3 over 100000 bins, no local copy", "shape": [2000], "attrs": {"length": 100000},
       "inputs": {"idx": {"from": {"random": {"low": 0, "high": 100000}}}, "w": {"kind": "const", "value": 3}}, "dtypes": ["i64"]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const int64_t length = length_of(call);
    types[kH] = sdk::make_type(FUGUE_KIND_ARRAY, counts_dtype(call.operand(kW), sdk::shape_of(call.operand(kIdx)), "idx"), {length});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    return counting_plan(call, counting_for(call, kH, kW, length_of(call)), sdk::elements(call.operand(kIdx)));
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const Counting c = counting_for(call, kH, kW, length_of(call));
    const std::string bin = em.phase() == FUGUE_PHASE_ELEMENT ? "(long)(" + em.read(kIdx) + ")" : "";
    const std::string value = em.phase() == FUGUE_PHASE_ELEMENT && c.weight.empty() ? weight_of(em, c, kW) : "";
    em.append(counting_code(call, em, c, "", bin, value));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kIdx)));
    const fugue_type& w = call.operand(kW);
    return {sizeof(fugue_cost),
            n * static_cast<double>(abi::dtype_size(call.operand(kIdx).dtype)) + (w.kind == FUGUE_KIND_ARRAY ? n * static_cast<double>(abi::dtype_size(w.dtype)) : 0) +
                static_cast<double>(length_of(call)) * static_cast<double>(abi::dtype_size(call.operand(kH).dtype)),
            n};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView idx(arrays[kIdx]), w(arrays[kW]);
    sdk::HostView h(arrays[kH]);
    ReferenceCounts counts(length_of(call));
    for (int64_t e = 0; e < idx.size(); ++e) counts.add(idx.get_int(e), reference_weight(call.operand(kW), w, e));
    counts.store(h);
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> bincount_operation() { return std::make_unique<Bincount>(); }

}  // namespace fugue::histogram
