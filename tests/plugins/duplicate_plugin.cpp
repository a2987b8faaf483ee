// duplicate_plugin.cpp: a plugin that registers an operation name testops already has (refused).
#include <fugue/sdk.hpp>

namespace {
class Copy : public fugue::sdk::Operation {
 public:
  Copy() {
    name = "test.scale";
    operands = {fugue::sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPES_FLOAT),
                fugue::sdk::out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPES_FLOAT)};
  }
  void infer(const fugue::sdk::Call& call, std::vector<fugue::sdk::Type>& types) const override { types[1] = call.operand(0); }
  fugue::sdk::Plan plan(const fugue::sdk::Call& call) const override {
    return fugue::sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, fugue::sdk::elements(call.operand(0)));
  }
  void emit(const fugue::sdk::Call&, const fugue::sdk::Plan&, const fugue::sdk::Emitter& e) const override {
    e.emit("${out=} = ${x};\n");
  }
  fugue_cost cost(const fugue::sdk::Call&) const override { return {sizeof(fugue_cost), 0, 0}; }
  void reference(const fugue::sdk::Call&, fugue_host_array*) const override {}
};
}  // namespace

FUGUE_SDK_PLUGIN("duplicate", "0.1.0", "Registers test.scale a second time", [](fugue::sdk::Plugin& p) {
  p.add(std::make_unique<Copy>());
})
