#include "codegen/function_writer.h"

#include <cctype>

#include "codegen/emit_context.h"
#include "codegen/kernel_generator.h"
#include "errors.h"

namespace fugue {

namespace {

// Answers the accessors of one body operation: parameters and values are the function's own
// variables; nothing else (indices, local memory, other elements) exists inside a function.
class FunctionWriter {
 public:
  explicit FunctionWriter(const UserFunction& f) : f_(f) {}

  static std::string param(const std::string& s) { return "p_" + c_identifier(s); }
  static std::string value(const std::string& s) { return "v_" + c_identifier(s); }

  const char* keep(fugue_emit_context* c, std::string s) { return c->strings.emplace_back(std::move(s)).c_str(); }
  const Statement& statement(const fugue_emit_context* c) const { return f_.body[c->op]; }

  const char* access(fugue_emit_context* c, uint32_t k, bool write) {
    const Statement& st = statement(c);
    if (k >= st.operands.size()) {
      c->misuse = "accessor asked for operand " + std::to_string(k) + ", which does not exist";
      return "0";
    }
    const std::string& s = st.operands[k];
    if (auto it = f_.consts.find(s); it != f_.consts.end()) {
      if (write) c->misuse = "accessor asked to write const operand " + std::to_string(k);
      return keep(c, c_literal(it->second));
    }
    if (write != st.op->writes(k)) {
      c->misuse = std::string(write ? "write of input" : "read of output") + " operand " + std::to_string(k);
      return "0";
    }
    if (c->phase != FUGUE_PHASE_ELEMENT) {
      c->misuse = "operand " + std::to_string(k) + " accessed outside the ELEMENT phase";
      return "0";
    }
    const bool is_param = std::find(f_.params.begin(), f_.params.end(), s) != f_.params.end();
    return keep(c, is_param ? param(s) : value(s));
  }

  // What a function has not: the element's index, work-items, local memory, other elements.
  const char* absent(fugue_emit_context* c, const std::string& what) {
    if (c->user_error.empty())
      c->user_error = statement(c).where + ": " + statement(c).op->name() + " uses " + what +
                      ", which a function's body has not: a function holds element-wise operations only";
    return "0";
  }

  const UserFunction& f_;
};

FunctionWriter* writer(fugue_emit_context* c) { return static_cast<FunctionWriter*>(c->writer); }
const char* read_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->access(c, k, false); }
const char* write_fn(fugue_emit_context* c, uint32_t k) { return writer(c)->access(c, k, true); }
const char* ctype_fn(fugue_emit_context* c, fugue_dtype dtype) {
  if (!fugue_dtype_supported(dtype)) {
    c->misuse = "ctype of unknown dtype " + std::to_string(dtype);
    return "void";
  }
  return writer(c)->keep(c, std::string(dtype_ctype(static_cast<DType>(dtype))));
}
const char* name_fn(fugue_emit_context* c, const char* stem) {
  return writer(c)->keep(c, stem_identifier(stem) + "_s" + std::to_string(c->op));
}
const char* builtin_fn(fugue_emit_context* c, int32_t which) {
  return writer(c)->absent(c, which == FUGUE_BUILTIN_INDEX ? "the element's index" : "a work-item builtin");
}
const char* workspace_fn(fugue_emit_context* c, uint32_t) { return writer(c)->absent(c, "a workspace"); }
void append_fn(fugue_emit_context* c, const char* code) {
  if (code) *c->code += code;
}
const char* read_at_fn(fugue_emit_context* c, uint32_t, const char*) { return writer(c)->absent(c, "other elements (read_at)"); }
const char* write_at_fn(fugue_emit_context* c, uint32_t, const char*) { return writer(c)->absent(c, "write_at"); }
const char* local_array_fn(fugue_emit_context* c, fugue_dtype, int64_t, const char*) {
  return writer(c)->absent(c, "local memory");
}
const char* barrier_fn(fugue_emit_context* c) { return writer(c)->absent(c, "barriers"); }
const char* atomic_at_fn(fugue_emit_context* c, int32_t, uint32_t, const char*, const char*) {
  return writer(c)->absent(c, "atomic updates");
}
const char* atomic_local_fn(fugue_emit_context* c, int32_t, fugue_dtype, const char*, const char*) {
  return writer(c)->absent(c, "atomic updates");
}
const char* extent_fn(fugue_emit_context* c, uint32_t, uint32_t) { return writer(c)->absent(c, "array extents"); }
const char* read_part_at_fn(fugue_emit_context* c, uint32_t, uint32_t, const char*) { return writer(c)->absent(c, "read_part_at"); }
const char* count_fn(fugue_emit_context* c, uint32_t) { return writer(c)->absent(c, "count"); }
const char* read_offset_fn(fugue_emit_context* c, uint32_t, uint32_t, const int64_t*) {
  return writer(c)->absent(c, "other elements (read_offset)");
}
const char* call_function_fn(fugue_emit_context* c, uint32_t, uint32_t, const fugue_dtype*, const char* const*) {
  return writer(c)->absent(c, "another function");
}

}  // namespace

std::string write_function(const UserFunction& f, const TypedFunction& typed, const std::string& name,
                           const fugue_device_desc* device) {
  FunctionWriter fw(f);
  auto ctype = [](DType d) { return std::string(dtype_ctype(d)); };
  std::string code = ctype(typed.result) + " " + name + "(";
  for (size_t i = 0; i < f.params.size(); ++i)
    code += (i ? ", " : "") + std::string("const ") + ctype(typed.dtypes.at(f.params[i])) + " " +
            FunctionWriter::param(f.params[i]);
  code += ") {\n";
  for (const auto& st : f.body)
    for (uint32_t o : st.op->outputs())
      code += "  " + ctype(typed.dtypes.at(st.operands[o])) + " " + FunctionWriter::value(st.operands[o]) + ";\n";
  for (size_t s = 0; s < f.body.size(); ++s) {
    const Statement& st = f.body[s];
    CallDescriptor call;
    describe_body_call(f, typed, s, 1, call, device);
    abi::Plan plan;
    try {
      plan = st.op->plan(call.call);
    } catch (const UserError& e) {
      throw UserError(st.where + st.pointer_of(e.what()) + ": " + e.what());
    }
    check_element_wise(st, plan, call);
    std::string body;
    fugue_emit_context context;
    context.writer = &fw;
    context.op = s;
    context.phase = FUGUE_PHASE_ELEMENT;
    context.code = &body;
    fugue_emit_api api{};
    api.struct_size = sizeof(fugue_emit_api);
    api.context = &context;
    api.phase = FUGUE_PHASE_ELEMENT;
    api.read = &read_fn;
    api.write = &write_fn;
    api.ctype = &ctype_fn;
    api.name = &name_fn;
    api.builtin = &builtin_fn;
    api.workspace = &workspace_fn;
    api.append = &append_fn;
    api.read_at = &read_at_fn;
    api.write_at = &write_at_fn;
    api.local_array = &local_array_fn;
    api.barrier = &barrier_fn;
    api.atomic_at = &atomic_at_fn;
    api.atomic_local = &atomic_local_fn;
    api.extent = &extent_fn;
    api.call_function = &call_function_fn;
    api.read_offset = &read_offset_fn;
    api.read_part_at = &read_part_at_fn;
    api.count = &count_fn;
    st.op->emit(call.call, plan, api);
    if (!context.user_error.empty()) throw UserError(context.user_error);
    if (!context.misuse.empty())
      throw DeviceError(st.where + ": the emit of " + st.op->name() + " misused an accessor: " + context.misuse);
    code += "  { /* " + st.op->name() + " */\n" + body + "  }\n";
  }
  const bool is_param = std::find(f.params.begin(), f.params.end(), f.result) != f.params.end();
  code += "  return " + (is_param ? FunctionWriter::param(f.result) : FunctionWriter::value(f.result)) + ";\n}\n";
  return code;
}

}  // namespace fugue
