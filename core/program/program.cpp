// program.cpp: what a symbol's type looks like to operations, and the call descriptors built from it.
#include "program/program.h"

#include <string_view>

#include "program/user_function.h"

namespace fugue {

std::string Statement::pointer_of(const std::string& message) const {
  // The operation's name may stand in front, once from the core and once from plugins that add it.
  std::string_view text = message;
  const std::string own = op ? op->name() + ": " : std::string();
  while (!own.empty() && text.substr(0, own.size()) == own) text.remove_prefix(own.size());
  constexpr std::string_view attribute = "attribute ", operand = "operand ";
  const bool about_attribute = text.substr(0, attribute.size()) == attribute;
  if (!about_attribute && text.substr(0, operand.size()) != operand) return "";
  text.remove_prefix(about_attribute ? attribute.size() : operand.size());
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return "";
  const std::string name(text.substr(0, colon));
  if (about_attribute) {
    for (const std::string& written : written_attrs)
      if (written == name) return "/attrs/" + name;
    return "";
  }
  if (!op) return "";
  for (size_t slot = 0; slot < op->operands().size() && slot < operand_pointers.size(); ++slot)
    if (op->operands()[slot]->name == name) return operand_pointers[slot];
  return "";
}

size_t Symbol::row_bytes() const {
  size_t row = dtype_size(dtype);
  for (size_t d = 1; d < shape.size(); ++d) row *= static_cast<size_t>(shape[d]);
  return row;
}

std::string Symbol::kind_text() const {
  switch (kind) {
    case SymbolKind::Array: return "array";
    case SymbolKind::Scalar: return "scalar";
    case SymbolKind::Const: return "const";
    case SymbolKind::Plugin: return kind_name;
    case SymbolKind::Function: return "function";
  }
  return "?";
}

std::string Symbol::shape_text() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::string((runtime_axes >> i) & 1u ? "<=" : "") + std::to_string(shape[i]);
  return s + "]";
}

abi::Type Symbol::type() const {
  const fugue_kind k = kind == SymbolKind::Array      ? FUGUE_KIND_ARRAY
                       : kind == SymbolKind::Scalar   ? FUGUE_KIND_SCALAR
                       : kind == SymbolKind::Const    ? FUGUE_KIND_CONST
                       : kind == SymbolKind::Function ? FUGUE_KIND_FUNCTION
                                                      : FUGUE_KIND_PLUGIN;
  abi::Type t(k, static_cast<fugue_dtype>(dtype));
  t.shape = shape;
  t.runtime_axes = runtime_axes;
  t.const_value = const_value;
  if (kind == SymbolKind::Plugin) {
    t.kind_name = kind_name;
    t.metadata = metadata;
    for (const auto& p : part_types) {
      t.parts.emplace_back(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(p.dtype), p.shape);
      t.parts.back().runtime_axes = p.runtime_axes;
    }
  }
  return t;
}

void CallDescriptor::bind(const std::vector<fugue_attr_value>& attrs, const fugue_device_desc* device) {
  types.clear();
  for (const auto& v : values) types.push_back(v.view());
  call = fugue_call{};
  call.struct_size = sizeof(fugue_call);
  call.num_operands = static_cast<uint32_t>(types.size());
  call.operands = types.empty() ? nullptr : types.data();
  call.num_attrs = static_cast<uint32_t>(attrs.size());
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.device = device;
  functions.resize(values.size());
  call.functions = bind_function_services(*this);
}

std::vector<std::string> Program::storage_of(const std::string& name) const {
  auto it = symbols.find(name);
  if (it != symbols.end() && it->second.compound()) return it->second.parts;
  return {name};
}

void Program::call(const Statement& statement, CallDescriptor& out, const fugue_device_desc* device) const {
  out.values.clear();
  out.functions.clear();
  for (const auto& name : statement.operands) {
    const Symbol& s = symbols.at(name);
    out.values.push_back(s.type());
    out.functions.push_back(s.function);
  }
  out.bind(statement.attrs, device);
}

}  // namespace fugue
