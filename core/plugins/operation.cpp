#include "plugins/operation.h"

#include <cstring>

#include "errors.h"
#include "program/host_array.h"

namespace fugue {

Operation::Operation(std::shared_ptr<const LoadedPlugin> plugin, const fugue_op_desc* desc)
    : plugin_(std::move(plugin)), desc_(desc), name_(desc->name), doc_(desc->doc ? desc->doc : "") {
  for (uint32_t i = 0; i < desc->num_operands; ++i) {
    const auto* o = FUGUE_NTH(fugue_operand_desc, desc->operands, i);
    operands_.push_back(o);
    if (o->role != FUGUE_ROLE_OUT) inputs_.push_back(i);
    if (o->role != FUGUE_ROLE_IN) outputs_.push_back(i);
  }
  for (uint32_t i = 0; i < desc->num_attrs; ++i) attrs_.push_back(FUGUE_NTH(fugue_attr_desc, desc->attrs, i));
}

void Operation::check(fugue_status status, const ErrorBuffer& error, const char* what) const {
  if (status == FUGUE_OK) return;
  std::string message = error.text();
  if (message.empty()) message = "failed without a message (status " + std::to_string(status) + ")";
  std::string text = name_ + ": " + message;
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED)
    throw UserError(text);
  if (status == FUGUE_ERROR_DEVICE) throw DeviceError(text);
  throw DeviceError(text + " (internal error in " + what + " of plugin '" + plugin_->name + "', " +
                    plugin_->file + ")");
}

fugue_status Operation::infer_status(const fugue_call& call, std::vector<abi::Type>& result,
                                     ErrorBuffer& error) const {
  // OUT entries get room for kMaxRank axes (+ 1, so that a plugin inferring one axis too many is
  // seen and refused by the loader rather than cut short).
  constexpr uint32_t room = kMaxRank + 1;
  std::vector<fugue_type> types(call.num_operands);
  std::vector<std::vector<int64_t>> shapes(call.num_operands);
  for (uint32_t i = 0; i < call.num_operands; ++i) {
    types[i] = *FUGUE_NTH(fugue_type, call.operands, i);
    types[i].struct_size = sizeof(fugue_type);
    if (operands_[i]->role != FUGUE_ROLE_OUT) continue;
    shapes[i].assign(room, 0);
    types[i] = fugue_type{};
    types[i].struct_size = sizeof(fugue_type);
    types[i].shape = shapes[i].data();
    types[i].shape_capacity = room;
  }
  const fugue_status status = desc_->infer(desc_, &call, types.data(), error.get());
  result.clear();
  for (uint32_t i = 0; i < call.num_operands; ++i) {
    fugue_type t = types[i];
    if (operands_[i]->role == FUGUE_ROLE_OUT) t.rank = std::min(t.rank, room);
    result.emplace_back(t);
  }
  return status;
}

std::vector<abi::Type> Operation::infer(const fugue_call& call) const {
  std::vector<abi::Type> result;
  ErrorBuffer e;
  check(infer_status(call, result, e), e, "infer");
  return result;
}

abi::Plan Operation::plan(const fugue_call& call) const {
  std::vector<uint32_t> ranks;
  for (uint32_t i = 0; i < call.num_operands; ++i) ranks.push_back(FUGUE_NTH(fugue_type, call.operands, i)->rank);
  abi::PlanBuffer buffer(ranks);
  ErrorBuffer e;
  check(desc_->plan(desc_, &call, buffer.get(), e.get()), e, "plan");
  return buffer.read();
}

void Operation::emit(const fugue_call& call, const abi::Plan& plan, const fugue_emit_api& api) const {
  if (!desc_->emit) throw DeviceError(name_ + ": plans a kernel level but has no emit function");
  abi::PlanBuffer buffer(plan);
  ErrorBuffer e;
  check(desc_->emit(desc_, &call, buffer.get(), &api, e.get()), e, "emit");
}

void Operation::execute(const fugue_call& call, const fugue_device_services& services) const {
  if (!desc_->execute) throw DeviceError(name_ + ": plans device level but has no execute function");
  ErrorBuffer e;
  check(desc_->execute(desc_, &call, &services, e.get()), e, "execute");
}

fugue_cost Operation::cost(const fugue_call& call) const {
  fugue_cost cost{};
  cost.struct_size = sizeof(fugue_cost);
  ErrorBuffer e;
  check(desc_->cost(desc_, &call, &cost, e.get()), e, "cost");
  return cost;
}

void Operation::reference(const fugue_call& call, fugue_host_array* operands) const {
  ErrorBuffer e;
  check(desc_->reference(desc_, &call, operands, e.get()), e, "reference");
}

}  // namespace fugue
