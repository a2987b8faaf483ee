// operation.h: one registered operation: the plugin's C descriptor behind a C++ face that turns
// statuses into exceptions, and the handle that keeps the plugin's library loaded.
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "fugue/abi_values.hpp"
#include "fugue_plugin.h"

namespace fugue {

// A loaded plugin library and its table. Shared by every Operation of the plugin: the library stays
// loaded while anything refers to it.
struct LoadedPlugin {
  boost::dll::shared_library library;
  std::string file;  // the path it was loaded from
  const fugue_plugin* table = nullptr;
  std::string name;
  std::string version;
  std::string description;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
};

using abi::ErrorBuffer;

class Operation {
 public:
  Operation(std::shared_ptr<const LoadedPlugin> plugin, const fugue_op_desc* desc);

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const LoadedPlugin& plugin() const { return *plugin_; }
  const fugue_op_desc& desc() const { return *desc_; }
  const std::vector<const fugue_operand_desc*>& operands() const { return operands_; }
  const std::vector<const fugue_attr_desc*>& attrs() const { return attrs_; }
  // Indices of the operands read (IN, INOUT) and written (OUT, INOUT), in signature order: an INOUT
  // operand is in both lists, as it is in both of a program's `in` and `out`.
  const std::vector<uint32_t>& inputs() const { return inputs_; }
  const std::vector<uint32_t>& outputs() const { return outputs_; }
  fugue_role role(size_t operand) const { return operands_[operand]->role; }
  bool writes(size_t operand) const { return role(operand) != FUGUE_ROLE_IN; }
  bool reads(size_t operand) const { return role(operand) != FUGUE_ROLE_OUT; }
  // An output a program may leave out of `out` (FUGUE_OPERAND_OPTIONAL, ABI 2.3).
  bool optional(size_t operand) const {
    const fugue_operand_desc* o = operands_[operand];
    return o->struct_size >= FUGUE_SIZE_UP_TO(fugue_operand_desc, flags) && (o->flags & FUGUE_OPERAND_OPTIONAL);
  }
  // How many entries of a program's `out` list may be left out at its end.
  size_t optional_outputs() const {
    size_t n = 0;
    while (n < outputs_.size() && optional(outputs_[outputs_.size() - 1 - n])) ++n;
    return n;
  }
  // How many entries of a program's `in` list may be left out at its end (ABI 2.5), and the number an
  // input left out reads as.
  size_t optional_inputs() const {
    size_t n = 0;
    while (n < inputs_.size() && role(inputs_[inputs_.size() - 1 - n]) == FUGUE_ROLE_IN && optional(inputs_[inputs_.size() - 1 - n])) ++n;
    return n;
  }
  double default_value(size_t operand) const {
    const fugue_operand_desc* o = operands_[operand];
    return o->struct_size >= FUGUE_SIZE_UP_TO(fugue_operand_desc, default_value) ? o->default_value : 0.0;
  }
  // FUGUE_OP_* traits.
  uint32_t traits() const { return desc_->traits; }
  // The calls the conformance suite runs, as JSON text ("" when the plugin declares none).
  std::string test_cases() const { return desc_->test_cases ? desc_->test_cases : ""; }

  // Each throws UserError for the plugin's INVALID_ARGUMENT / UNSUPPORTED and DeviceError for
  // DEVICE / INTERNAL, with the operation's name in front of the plugin's message.
  // Every operand's type, the OUT ones as the plugin inferred them (not yet checked: the loader
  // reconciles them with the program).
  std::vector<abi::Type> infer(const fugue_call& call) const;
  // The same without turning the status into an exception: `result` and `error` as the plugin left
  // them (the conformance suite judges the status itself).
  fugue_status infer_status(const fugue_call& call, std::vector<abi::Type>& result, ErrorBuffer& error) const;
  // The plugin's plan for a call (the core gives it room for one partition per operand).
  abi::Plan plan(const fugue_call& call) const;
  void emit(const fugue_call& call, const abi::Plan& plan, const fugue_emit_api& api) const;
  void execute(const fugue_call& call, const fugue_device_services& services) const;
  bool has_execute() const { return desc_->execute != nullptr; }
  fugue_cost cost(const fugue_call& call) const;
  void reference(const fugue_call& call, fugue_host_array* operands) const;

 private:
  void check(fugue_status status, const ErrorBuffer& error, const char* what) const;

  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_op_desc* desc_;
  std::string name_, doc_;
  std::vector<const fugue_operand_desc*> operands_;
  std::vector<const fugue_attr_desc*> attrs_;
  std::vector<uint32_t> inputs_, outputs_;
};

}  // namespace fugue
