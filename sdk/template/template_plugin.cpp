// template_plugin.cpp: a complete Fugue plugin with one ELEMENT-level operation, to copy and change.
//
//   template.axpb: y = a * x + b, for f32 and f64 arrays of any rank; a and b are NUMBER attributes.
//
// ELEMENT level means the operation only says what happens to one element; the core generates the
// kernel around it, and fuses it with the operations before and after when that saves memory traffic.
// Check it with `fugue conformance <path to libfugue_template.so> --report report.json`.
#include <fugue/sdk.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

namespace {

using namespace fugue::sdk;

constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);

// A constant baked into the generated code, in the precision of the code ("2.500000000e+00f" for f32):
// an f32 kernel then never needs double support on the device.
std::string literal(double value, fugue_dtype dtype) {
  char buf[64];
  std::snprintf(buf, sizeof buf, dtype == FUGUE_DTYPE_F32 ? "%.9ef" : "%.17e", value);
  return buf;
}

class Axpb : public Operation {
 public:
  Axpb() {
    // The signature: what `fugue plugins` lists and what the core checks programs against.
    name = "template.axpb";
    doc = "y = a * x + b, element by element";
    operands = {in("x", kArray, FUGUE_DTYPES_FLOAT, "the input (any rank)"),
                out("y", kArray, FUGUE_DTYPES_FLOAT, "the result: x's dtype and shape")};
    attrs = {{"a", FUGUE_ATTR_NUMBER, false, 1.0, "", "the factor"},
             {"b", FUGUE_ATTR_NUMBER, false, 0.0, "", "the offset"}};
    // How far the device may be from the reference: |device - ref| <= tol * max(1, |ref|). Rounding a,
    // the product and the sum cost a few ulps of max(|a x|, |b|), about 1e-6 at most for the test's
    // a, b and x in [test_low, test_high]; f64 arithmetic is correctly rounded.
    tolerance_f32 = 1e-6;
    tolerance_f64 = 1e-14;
    test_low = -1;
    test_high = 1;
    // The calls `fugue conformance` runs (JSON; see test_cases in fugue_plugin.h): the smallest array,
    // an odd 2-D shape (work-groups end mid-row), and one past a million elements (many work-groups,
    // a ragged last one). "dtypes" is left out: every dtype x accepts.
    test_cases = R"([
      {"name": "degenerate", "shape": [1], "attrs": {"a": 2.5, "b": -0.5}},
      {"name": "odd", "shape": [7, 5], "attrs": {"a": -1.25, "b": 3}},
      {"name": "large", "shape": [1000003], "attrs": {"a": 0.75, "b": 0.125}}
    ])";
  }

  // Types of the outputs from the inputs'. The SDK has already checked every input against the
  // signature's kinds and dtypes (and checks the outputs after), so check only what is particular to
  // the operation, naming the operand or attribute at fault ("attribute a: ...", "operand x: ..."): the
  // core puts the program's location (the attribute's or operand's own) and the operation's name in
  // front of the message.
  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = call.operand("x");
    for (const char* attr : {"a", "b"}) call.number_for(attr, x.dtype);  // finite, and within f32's range for f32 data
    types[call.index("y")] = x;  // same kind, dtype and shape
  }

  // The launch and what each work-item touches: one element of x read, the same element of y written
  // (ELEMENTWISE partitions), which is what lets the core fuse the operation with its neighbours.
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand("x")));
    p.registers = 2;  // live values per work-item, for the planner's register budget
    return p;
  }

  // OpenCL C for one element. ${x} reads x at the current element, ${y=} writes y there, ${T:x} is
  // x's C type, ${@v} a name unique in the kernel. The braces keep locals apart when fused.
  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    if (e.phase() != FUGUE_PHASE_ELEMENT) throw std::logic_error("only the ELEMENT phase is planned");
    const fugue_dtype t = call.operand("x").dtype;
    e.emit("{\n  ${y=} = " + literal(call.number("a"), t) + " * ${x} + " + literal(call.number("b"), t) + ";\n}\n");
  }

  // What one run moves and computes alone: the planner weighs fusion with it, `fugue bench` reports
  // GB/s and GFLOP/s with it.
  fugue_cost cost(const Call& call) const override {
    const fugue_type& x = call.operand("x");
    const double n = static_cast<double>(elements(x));
    const double size = x.dtype == FUGUE_DTYPE_F64 ? 8 : 4;
    return {sizeof(fugue_cost), 2 * n * size, 2 * n};  // read x, write y; one multiply, one add
  }

  // The CPU reference (`fugue run --reference`, `fugue conformance`): in long double, so that it is
  // more precise than either device dtype; HostView::set rounds to the output's dtype.
  void reference(const Call& call, fugue_host_array* a) const override {
    const long double alpha = call.number("a"), beta = call.number("b");
    HostView x(a[call.index("x")]), y(a[call.index("y")]);
    for (int64_t i = 0; i < x.size(); ++i) y.set(i, static_cast<double>(alpha * x.get(i) + beta));
  }
};

}  // namespace

// The entry point the core looks up: the plugin's name (by convention the family of its operations'
// "family.op" names), version, and a description for `fugue plugins`. Exceptions while building the table refuse the plugin.
FUGUE_SDK_PLUGIN("template", "0.1.0", "A template for Fugue plugins: y = a * x + b", [](fugue::sdk::Plugin& p) {
  p.add(std::make_unique<Axpb>());
})
