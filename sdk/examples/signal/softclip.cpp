// softclip.cpp: signal.softclip, y = x / (1 + |x| / limit). An ELEMENT-level operation: the core
// generates the kernel (and fuses it with its neighbours); the operation writes only what happens to
// one element.
#include <cmath>
#include <cstdio>

#include "signal_ops.h"

namespace signal_plugin {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);

class SoftClip : public Operation {
 public:
  SoftClip() {
    name = "signal.softclip";
    doc = "y = x / (1 + |x| / limit): about x where |x| << limit, approaching +-limit smoothly beyond it";
    operands = {in("x", kArray, FUGUE_DTYPES_FLOAT, "the signal (any rank)"),
                out("y", kArray, FUGUE_DTYPES_FLOAT, "the clipped signal: x's dtype and shape")};
    attrs = {{"limit", FUGUE_ATTR_NUMBER, false, 1.0, "", "the level |y| approaches for large |x|; > 0"}};
    // Three roundings plus OpenCL's 2.5 ulp for an f32 division, against |y| < limit: well inside 2e-6
    // (the check is relative to max(1, |reference|)). f64 divisions are correctly rounded.
    tolerance_f32 = 2e-6;
    tolerance_f64 = 1e-14;
    // Inputs reaching beyond the default limit, so that the clipping shows.
    test_low = -4;
    test_high = 4;
    test_cases = R"([
      {"name": "degenerate", "shape": [1]},
      {"name": "odd", "shape": [7, 5], "attrs": {"limit": 0.75}},
      {"name": "large", "shape": [1000003], "attrs": {"limit": 2.5}}
    ])";
  }

  // The attribute, checked where every caller goes through (infer, emit, reference).
  double limit(const Call& call) const {
    const double l = call.number("limit");
    if (!(l > 0) || !std::isfinite(l)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", l);
      throw InvalidArgument(std::string("attribute limit: expected a finite number > 0, found ") + buf);
    }
    return l;
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = float_array(call, name, "x");
    limit(call);
    types[call.index("y")] = x;  // same kind, dtype and shape
  }

  Plan plan(const Call& call) const override {
    // One element in, the same element out: ELEMENTWISE partitions, so the core may fuse it.
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand("x")));
    p.registers = 3;
    return p;
  }

  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    if (e.phase() != FUGUE_PHASE_ELEMENT) throw std::logic_error("only the ELEMENT phase is planned");
    // x is read once into a local (its accessor may be a load); the scope keeps the local private
    // when the core fuses several operations into one loop. 1/limit is baked in as a literal of x's
    // precision, so the division by limit becomes a multiplication.
    const std::string inverse = literal(1.0 / limit(call), call.operand("x").dtype);
    e.emit("{\n"
           "  const ${T:x} ${@v} = ${x};\n"
           "  ${y=} = ${@v} / (1 + fabs(${@v}) * " + inverse + ");\n"
           "}\n");
  }

  fugue_cost cost(const Call& call) const override {
    const fugue_type& x = call.operand("x");
    const double n = static_cast<double>(elements(x));
    const double size = x.dtype == FUGUE_DTYPE_F64 ? 8 : 4;
    return {sizeof(fugue_cost), 2 * n * size, 4 * n};  // read x, write y; fabs, *, +, /
  }

  void reference(const Call& call, fugue_host_array* a) const override {
    const long double l = limit(call);
    HostView x(a[call.index("x")]), y(a[call.index("y")]);
    for (int64_t i = 0; i < x.size(); ++i) {
      const long double v = x.get(i);
      y.set(i, static_cast<double>(v / (1 + std::fabs(v) / l)));
    }
  }
};

}  // namespace

std::unique_ptr<fugue::sdk::Operation> make_softclip() { return std::make_unique<SoftClip>(); }

}  // namespace signal_plugin
