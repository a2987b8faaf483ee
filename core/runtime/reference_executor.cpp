#include "runtime/reference_executor.h"

#include "errors.h"
#include "io/initial_values.h"

namespace fugue {

void ReferenceExecutor::run() {
  values_.clear();
  for (const auto& [name, s] : program_.symbols)
    if (!s.compile_time() && s.source.kind != SymbolSource::Kind::None) values_[name] = initial_value(s);
  interpret(program_, program_.body, *this);
}

const HostArray& ReferenceExecutor::value(const std::string& symbol) const {
  auto it = values_.find(symbol);
  if (it == values_.end()) throw UserError("'" + symbol + "' was never written, so it has no value");
  return it->second;
}

void ReferenceExecutor::run_op(const Statement& st) {
  CallDescriptor call;
  program_.call(st, call);
  // Outputs are fresh arrays, moved into place afterwards, so an output that is also an input never
  // sees a half-written value; inputs are read where they are stored, and an in-place (INOUT)
  // operand is updated where it is stored.
  std::vector<HostArray> outputs(st.operands.size());
  std::vector<fugue_host_array> views(st.operands.size());
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Symbol& s = program_.symbol(st.operands[i]);
    HostArray* array = nullptr;
    if (st.op->role(i) == FUGUE_ROLE_OUT) {
      outputs[i] = HostArray(s.dtype, s.kind == SymbolKind::Array ? s.shape : Shape{});
      array = &outputs[i];
    } else if (!s.compile_time()) {
      auto it = values_.find(s.name);
      if (it == values_.end())
        throw UserError(st.where + ": '" + s.name + "' is read before anything wrote it at run time");
      array = &it->second;
    }
    views[i].struct_size = sizeof(fugue_host_array);
    views[i].type = &call.types[i];
    views[i].data = array && !array->bytes.empty() ? array->bytes.data() : nullptr;
    views[i].bytes = array ? array->bytes.size() : 0;
  }
  st.op->reference(call.call, views.data());
  for (uint32_t o : st.op->outputs())
    if (st.op->role(o) == FUGUE_ROLE_OUT) values_[st.operands[o]] = std::move(outputs[o]);
}

double ReferenceExecutor::scalar_value(const std::string& symbol) { return value(symbol).get(0); }

void ReferenceExecutor::set_loop_variable(const std::string& symbol, int64_t v) {
  HostArray a(DType::I64, {});
  a.set(0, static_cast<double>(v));
  values_[symbol] = std::move(a);
}

}  // namespace fugue
