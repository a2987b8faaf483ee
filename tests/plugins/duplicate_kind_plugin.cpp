// duplicate_kind_plugin.cpp: a plugin that defines a kind testops already defines, `poly` (refused,
// all of it: its operation does not register either).
#include <fugue/sdk.hpp>

namespace {
using namespace fugue::sdk;

class Poly : public Kind {
 public:
  Poly() {
    name = "poly";
    doc = "a second poly";
  }
  Declared declare(const std::string&) const override { return {FUGUE_DTYPE_F32, {1}, {}, {}, {}}; }
  std::string example(uint32_t, fugue_dtype) const override { return R"({"kind": "poly"})"; }
};

class Copy : public Operation {
 public:
  Copy() {
    name = "dupkind.copy";
    doc = "out = x";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPES_FLOAT),
                out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPES_FLOAT)};
  }
  void infer(const Call& call, std::vector<Type>& types) const override { types[1] = call.operand(0); }
  Plan plan(const Call& call) const override {
    return elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(0)));
  }
  void emit(const Call&, const Plan&, const Emitter& e) const override { e.emit("${out=} = ${x};\n"); }
  fugue_cost cost(const Call&) const override { return {sizeof(fugue_cost), 0, 0}; }
  void reference(const Call&, fugue_host_array*) const override {}
};
}  // namespace

FUGUE_SDK_PLUGIN("duplicate_kind", "0.1.0", "Defines the kind poly a second time", [](Plugin& p) {
  p.add_kind(std::make_unique<Poly>());
  p.add(std::make_unique<Copy>());
})
