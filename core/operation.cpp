#include "operation.h"

#include <cstring>

#include "errors.h"

namespace fugue {

fugue_error make_error() {
  fugue_error e{};
  e.struct_size = sizeof(fugue_error);
  return e;
}

Operation::Operation(std::shared_ptr<const LoadedPlugin> plugin, const fugue_op_desc* desc)
    : plugin_(std::move(plugin)), desc_(desc), name_(desc->name), doc_(desc->doc ? desc->doc : "") {
  for (uint32_t i = 0; i < desc->num_operands; ++i) {
    const auto* o = FUGUE_NTH(fugue_operand_desc, desc->operands, i);
    operands_.push_back(o);
    (o->role == FUGUE_ROLE_OUT ? outputs_ : inputs_).push_back(i);
  }
  for (uint32_t i = 0; i < desc->num_attrs; ++i) attrs_.push_back(FUGUE_NTH(fugue_attr_desc, desc->attrs, i));
}

void Operation::check(fugue_status status, const fugue_error& error, const char* what) const {
  if (status == FUGUE_OK) return;
  std::string message(error.message, strnlen(error.message, sizeof error.message));
  if (message.empty()) message = "failed without a message (status " + std::to_string(status) + ")";
  std::string text = name_ + ": " + message;
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED)
    throw UserError(text);
  if (status == FUGUE_ERROR_DEVICE) throw DeviceError(text);
  throw DeviceError(text + " (internal error in " + what + " of plugin '" + plugin_->name + "', " +
                    plugin_->file + ")");
}

void Operation::infer(const fugue_call& call, fugue_type* types) const {
  auto e = make_error();
  check(desc_->infer(desc_, &call, types, &e), e, "infer");
}

fugue_plan Operation::plan(const fugue_call& call) const {
  fugue_plan plan{};
  plan.struct_size = sizeof(fugue_plan);
  auto e = make_error();
  check(desc_->plan(desc_, &call, &plan, &e), e, "plan");
  return plan;
}

void Operation::emit(const fugue_call& call, const fugue_plan& plan, const fugue_emit_api& api) const {
  if (!desc_->emit) throw DeviceError(name_ + ": plans a kernel level but has no emit function");
  auto e = make_error();
  check(desc_->emit(desc_, &call, &plan, &api, &e), e, "emit");
}

void Operation::execute(const fugue_call& call, const fugue_device_services& services) const {
  if (!desc_->execute) throw DeviceError(name_ + ": plans device level but has no execute function");
  auto e = make_error();
  check(desc_->execute(desc_, &call, &services, &e), e, "execute");
}

fugue_cost Operation::cost(const fugue_call& call) const {
  fugue_cost cost{};
  cost.struct_size = sizeof(fugue_cost);
  auto e = make_error();
  check(desc_->cost(desc_, &call, &cost, &e), e, "cost");
  return cost;
}

void Operation::reference(const fugue_call& call, fugue_host_array* operands) const {
  auto e = make_error();
  check(desc_->reference(desc_, &call, operands, &e), e, "reference");
}

}  // namespace fugue
