// Fault: the reference disagrees with the kernel by a relative 1e-3, beyond the declared tolerance; caught by conformance's device-vs-reference check.
//
// broken_reference_plugin.cpp: a plugin for the conformance suite's own tests. broken.cube computes
// y = x * x * x on the device; its reference computes x * x * x * (1 + 1e-3), while the operation
// declares a tolerance of 1e-5 (f32) and 1e-12 (f64). Everything else about it is sound.
#include <string>

#include <fugue/sdk.hpp>

namespace {

using namespace fugue::sdk;

constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);

class Cube : public Operation {
 public:
  enum : uint32_t { kX, kY };

  Cube() {
    name = "broken.cube";
    doc = "y = x * x * x, with a reference that is off by a relative 1e-3";
    operands = {in("x", kArray, FUGUE_DTYPES_FLOAT, "the input"),
                out("y", kArray, FUGUE_DTYPES_FLOAT, "x cubed, of x's shape and dtype")};
    tolerance_f32 = 1e-5;
    tolerance_f64 = 1e-12;
    // Away from zero, so that every element's error is well above the tolerance.
    test_low = 0.5;
    test_high = 2.0;
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    if (x.kind != FUGUE_KIND_ARRAY || !is_float(x.dtype))
      throw InvalidArgument("operand x: expected an f32 or f64 array, found " + type_string(x));
    types[kY] = x;
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(kX)));
    p.registers = 3;
    return p;
  }

  void emit(const Call&, const Plan&, const Emitter& e) const override {
    if (e.phase() != FUGUE_PHASE_ELEMENT)
      throw std::logic_error(name + ": asked to emit phase " + std::to_string(e.phase()));
    e.emit("{\n  const ${T:x} ${@v} = ${x};\n  ${y=} = ${@v} * ${@v} * ${@v};\n}\n");
  }

  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(kX)));
    const double bytes = call.operand(kX).dtype == FUGUE_DTYPE_F64 ? 8 : 4;
    return {sizeof(fugue_cost), 2 * bytes * n, 2 * n};
  }

  void reference(const Call&, fugue_host_array* a) const override {
    const HostView x(a[kX]);
    HostView y(a[kY]);
    for (int64_t i = 0; i < y.size(); ++i) {
      const long double v = x.get(i);
      y.set(i, static_cast<double>(v * v * v * (1.0L + 1e-3L)));  // the fault
    }
  }
};

}  // namespace

FUGUE_SDK_PLUGIN("broken_reference", "0.1.0",
                 "An operation whose reference disagrees with its kernel (conformance tests)",
                 [](fugue::sdk::Plugin& p) { p.add(std::make_unique<Cube>()); })
