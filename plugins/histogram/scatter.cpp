// scatter.cpp: histogram.scatter (see scatter.h).
#include "scatter.h"

#include <cstring>
#include <string>
#include <vector>

#include "counting.h"
#include "weights.h"

namespace fugue::histogram {

namespace {

constexpr uint32_t kA = 0, kF = 1, kV = 2, kH = 3;
constexpr uint32_t kDataDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32) |
                                 FUGUE_DTYPE_BIT(FUGUE_DTYPE_I64) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U8) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_U32);

// The argument dtypes function operand k is called with: the value, and the flat index (i64) when it
// takes two parameters. Throws InvalidArgument naming the operand for another arity.
std::vector<fugue_dtype> arguments(const sdk::Call& call, uint32_t k, const std::string& operand) {
  const uint32_t arity = call.function_arity(k);
  if (arity != 1 && arity != 2)
    throw sdk::InvalidArgument("operand " + operand + ": expected a function of the value (one parameter) or of the value and its flat index (two), "
                               "found one of " + std::to_string(arity));
  std::vector<fugue_dtype> dtypes = {call.operand(kA).dtype};
  if (arity == 2) dtypes.push_back(FUGUE_DTYPE_I64);
  return dtypes;
}

// Calls function operand k on every element of a on the host: its results (of `result` dtype) as bytes.
std::vector<uint8_t> evaluate_all(const sdk::Call& call, uint32_t k, const sdk::HostView& a, fugue_dtype result) {
  const std::vector<fugue_dtype> dtypes = arguments(call, k, k == kF ? "f" : "v");
  const int64_t n = a.size();
  std::vector<int64_t> index(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) index[static_cast<size_t>(i)] = i;
  std::vector<const void*> args = {a.data()};
  if (dtypes.size() == 2) args.push_back(index.data());
  std::vector<uint8_t> out(static_cast<size_t>(n) * abi::dtype_size(result));
  call.evaluate(k, dtypes, args, static_cast<uint64_t>(n), out.data());
  return out;
}

long double element_of(const std::vector<uint8_t>& bytes, fugue_dtype d, int64_t i) {
  const uint8_t* p = bytes.data() + static_cast<size_t>(i) * abi::dtype_size(d);
  switch (d) {
    case FUGUE_DTYPE_F32: { float v; std::memcpy(&v, p, 4); return v; }
    case FUGUE_DTYPE_F64: { double v; std::memcpy(&v, p, 8); return v; }
    case FUGUE_DTYPE_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case FUGUE_DTYPE_I64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<long double>(v); }
    case FUGUE_DTYPE_U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case FUGUE_DTYPE_U8: return *p;
    default: throw std::logic_error("histogram.scatter: unexpected dtype");
  }
}

class Scatter final : public sdk::Operation {
 public:
  Scatter() {
    name = "histogram.scatter";
    doc = "The histogram h[f(a, i)] += v(a, i) over the elements of a (any shape), with user functions: f gives the bin (an "
          "integer; outside 0..length-1 the element counts nothing), v the weight (a function, whose dtype h takes, or a number: "
          "left out 1, counts in i64); each takes the element's value, or its value and its flat index (i64). Float sums in an "
          "unspecified order";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), function = FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION);
    operands = {sdk::in("a", array, kDataDtypes, "the values"),
                sdk::in("f", function, kDataDtypes, "the bin of an element: f(value) or f(value, index), an integer"),
                sdk::optional_in("v", function, kCountDtypes, 1, "the weight of an element: v(value) or v(value, index), or a number (left out: 1, counts)"),
                sdk::out("h", array, kCountDtypes, "the counts or sums [length]")};
    attrs = {{"length", FUGUE_ATTR_INT, true, 0, "", "h's length, 1 to 2^30"}};
    traits = FUGUE_OP_UNORDERED;
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    // f(a) = a * 10 as an integer; v(a, i) = a + i; a 2-D bin from the index.
    const std::string bin_of_value =
        R"({"kind": "function", "params": ["a"], "body": [{"op": "array.mul", "out": ["s"], "in": ["a", 10]}, {"op": "array.cast", "out": ["k"], "in": ["s"], "attrs": {"dtype": "i32"}}], "result": "k"})";
    const std::string weight_of_both =
        R"({"kind": "function", "params": ["a", "i"], "body": [{"op": "array.cast", "out": ["j"], "in": ["i"], "attrs": {"dtype": "f64"}}, {"op": "array.add", "out": ["w"], "in": ["a", "j"]}], "result": "w"})";
    const std::string bin_of_index =  // i - 7 (i / 7): i modulo 7
        R"({"kind": "function", "params": ["a", "i"], "body": [{"op": "array.div", "out": ["q"], "in": ["i", 7]}, {"op": "array.mul", "out": ["m"], "in": ["q", 7]}, {"op": "array.sub", "out": ["k"], "in": ["i", "m"]}], "result": "k"})";
    test_cases = R"([
      {"name": "counts of f(a) = 10 a", "shape": [5000], "attrs": {"length": 10}, "inputs": {"a": {"from": {"random": {"low": -0.05, "high": 1.05}}}, "f": )" +
                 bin_of_value + R"(}, "dtypes": ["f32", "f64"]},
      {"name": "weights v(a, i) = a + i", "shape": [40, 25], "attrs": {"length": 10},
       "inputs": {"a": {"from": {"random": {"low": 0, "high": 1}}}, "f": )" + bin_of_value + R"(, "v": )" + weight_of_both + R"(}, "dtypes": ["f64"]},
      {"name": "bins from the index", "shape": [3000], "attrs": {"length": 7}, "inputs": {"a": {"from": {"random": {"low": 0, "high": 1}}}, "f": )" +
                 bin_of_index + R"(, "v": {"kind": "const", "value": 2}}, "dtypes": ["f32"]}
    ])";
  }

  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const int64_t length = length_of(call);
    const fugue_dtype bin = call.function_result(kF, arguments(call, kF, "f"));
    if (!(kBinDtypes & FUGUE_DTYPE_BIT(bin)))
      throw sdk::InvalidArgument(std::string("operand f: expected a function returning an integer bin (i32, i64, u8, u32), found one returning ") +
                                 sdk::dtype_name(bin) + " (cast inside it)");
    fugue_dtype counts = FUGUE_DTYPE_I64;
    const fugue_type& v = call.operand(kV);
    if (v.kind == FUGUE_KIND_FUNCTION) {
      counts = call.function_result(kV, arguments(call, kV, "v"));
      if (!(kCountDtypes & FUGUE_DTYPE_BIT(counts)))
        throw sdk::InvalidArgument(std::string("operand v: expected a function returning i32, i64, u32, f32 or f64, found one returning ") +
                                   sdk::dtype_name(counts));
    } else {
      counts = counts_dtype(v, {}, "a");
    }
    types[kH] = sdk::make_type(FUGUE_KIND_ARRAY, counts, {length});
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    sdk::Plan p = counting_plan(call, counting(call), sdk::elements(call.operand(kA)));
    return p;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const Counting c = counting(call);
    if (em.phase() != FUGUE_PHASE_ELEMENT) {
      em.append(counting_code(call, em, c, "", "", ""));
      return;
    }
    const std::string x = em.name("x"), i = em.name("i");
    const fugue_dtype dtype = call.operand(kA).dtype;
    std::string code = "const " + em.ctype(dtype) + " " + x + " = " + em.read(kA) + ";\nconst long " + i + " = (long)(" +
                       em.builtin(FUGUE_BUILTIN_INDEX) + ");\n";
    auto call_with = [&](uint32_t k, const std::string& operand) {
      const std::vector<fugue_dtype> dtypes = arguments(call, k, operand);
      std::vector<std::string> args = {x};
      if (dtypes.size() == 2) args.push_back(i);
      return em.call_function(k, dtypes, args);
    };
    const std::string value = c.weight.empty() ? "(" + em.ctype(c.dtype) + ")(" + call_with(kV, "v") + ")" : "";
    em.append(counting_code(call, em, c, code, "(long)(" + call_with(kF, "f") + ")", value));
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const double n = static_cast<double>(sdk::elements(call.operand(kA)));
    return {sizeof(fugue_cost),
            n * static_cast<double>(abi::dtype_size(call.operand(kA).dtype)) +
                static_cast<double>(length_of(call)) * static_cast<double>(abi::dtype_size(call.operand(kH).dtype)),
            n * 4};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    const sdk::HostView a(arrays[kA]);
    sdk::HostView h(arrays[kH]);
    const int64_t n = a.size();
    const fugue_dtype bin = call.function_result(kF, arguments(call, kF, "f"));
    const std::vector<uint8_t> bins = evaluate_all(call, kF, a, bin);
    const fugue_type& v = call.operand(kV);
    std::vector<uint8_t> weights;
    fugue_dtype wd = FUGUE_DTYPE_I64;
    if (v.kind == FUGUE_KIND_FUNCTION) {
      wd = call.function_result(kV, arguments(call, kV, "v"));
      weights = evaluate_all(call, kV, a, wd);
    }
    ReferenceCounts counts(length_of(call));
    for (int64_t e = 0; e < n; ++e)
      counts.add(static_cast<int64_t>(element_of(bins, bin, e)), v.kind == FUGUE_KIND_FUNCTION ? element_of(weights, wd, e) : v.const_value);
    counts.store(h);
  }

 private:
  static Counting counting(const sdk::Call& call) {
    Counting c;
    c.h = kH;
    c.bins = length_of(call);
    c.dtype = call.operand(kH).dtype;
    const fugue_type& v = call.operand(kV);
    if (v.kind != FUGUE_KIND_FUNCTION) {
      char buf[40];
      if (c.dtype == FUGUE_DTYPE_I64) std::snprintf(buf, sizeof buf, "%lldL", static_cast<long long>(v.const_value));
      else std::snprintf(buf, sizeof buf, "%.17e", v.const_value);
      c.weight = buf;
    }
    return c;
  }
};

}  // namespace

std::unique_ptr<sdk::Operation> scatter_operation() { return std::make_unique<Scatter>(); }

}  // namespace fugue::histogram
