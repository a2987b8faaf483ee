// user_function.cpp: typing a user function for its arguments, evaluating it on the host, and the
// services an operation's call gets for its FUNCTION operands.
#include "program/user_function.h"

#include <cstring>

#include "errors.h"

namespace fugue {

bool UserFunction::local(const std::string& name) const {
  for (const auto& p : params)
    if (p == name) return true;
  for (const auto& st : body)
    for (uint32_t o : st.op->outputs())
      if (st.operands[o] == name) return true;
  return false;
}

namespace {

// The type a body operand has: a const's, or an array of `count` elements of its dtype.
abi::Type operand_type(const UserFunction& f, const TypedFunction& typed, const std::string& name, int64_t count) {
  if (auto c = f.consts.find(name); c != f.consts.end()) {
    abi::Type t(FUGUE_KIND_CONST, FUGUE_DTYPE_NONE);
    t.const_value = c->second;
    return t;
  }
  auto d = typed.dtypes.find(name);
  return abi::Type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(d == typed.dtypes.end() ? DType::None : d->second),
                   {count});
}

std::string dtype_list(uint32_t mask) { return abi::dtype_names(mask); }

// "a f32 scalar", "an f32 array [1, 3]": what an operation made, for messages.
std::string describe(const abi::Type& t) {
  const std::string dtype = fugue_dtype_supported(t.dtype) ? abi::dtype_name(t.dtype) : "untyped";
  switch (t.kind) {
    case FUGUE_KIND_SCALAR: return "a " + dtype + " scalar";
    case FUGUE_KIND_ARRAY: return "a " + dtype + " array " + shape_string(t.shape);
    default: return "a value of another kind";
  }
}

// What typing plans body operations for, before any device is chosen: a GPU with doubles, whose
// plan says whether an operation is element-wise (the device's own plan is checked again when kernels
// are written).
const fugue_device_desc& generic_device() {
  static const fugue_device_desc device = [] {
    fugue_device_desc d{};
    d.struct_size = sizeof d;
    d.type = FUGUE_DEVICE_GPU;
    d.name = "any device";
    d.vendor = "";
    d.driver_version = "";
    d.compute_units = 1;
    d.features = FUGUE_DEVICE_FP64 | FUGUE_DEVICE_INT64_ATOMICS;
    d.max_work_group_size = 1024;
    d.local_mem_bytes = 48 * 1024;
    d.global_mem_bytes = d.max_alloc_bytes = uint64_t{1} << 32;
    d.extensions = "";
    d.architecture = "";
    return d;
  }();
  return device;
}

}  // namespace

void check_element_wise(const Statement& st, const abi::Plan& plan, const CallDescriptor& call) {
  std::string why;
  if (plan.level != FUGUE_LEVEL_ELEMENT) why = "it plans at " + abi::level_name(plan.level) + " level";
  else if (plan.phases != FUGUE_PHASE_ELEMENT) why = "it emits phases besides ELEMENT";
  else if (!plan.workspaces.empty()) why = "it needs workspaces";
  for (size_t k = 0; why.empty() && k < call.types.size() && k < plan.partitions.size(); ++k) {
    const abi::Partition& part = plan.partitions[k];
    if (call.types[k].kind == FUGUE_KIND_ARRAY && (part.kind != FUGUE_PARTITION_ELEMENTWISE || part.has_halo()))
      why = "it reaches operand '" + std::string(st.op->operands()[k]->name) + "' beyond its own element";
  }
  if (!why.empty())
    throw UserError(st.where + ": " + st.op->name() + " cannot be part of a function (" + why +
                    "): a function's body holds element-wise operations only");
}

void describe_body_call(const UserFunction& f, const TypedFunction& typed, size_t index, int64_t count,
                        CallDescriptor& out, const fugue_device_desc* device) {
  const Statement& st = f.body.at(index);
  out.values.clear();
  out.functions.clear();
  for (const auto& name : st.operands) out.values.push_back(operand_type(f, typed, name, count));
  out.bind(st.attrs, device);
}

TypedFunction type_function(const UserFunction& f, const std::vector<DType>& args) {
  if (args.size() != f.params.size())
    throw UserError(f.where + ": function '" + f.name + "' takes " + std::to_string(f.params.size()) +
                    " argument(s), but is called with " + std::to_string(args.size()));
  TypedFunction typed;
  for (size_t i = 0; i < args.size(); ++i) typed.dtypes[f.params[i]] = args[i];
  for (size_t s = 0; s < f.body.size(); ++s) {
    const Statement& st = f.body[s];
    const Operation& op = *st.op;
    for (uint32_t i : op.inputs()) {
      const std::string& name = st.operands[i];
      if (f.consts.count(name)) continue;
      const DType d = typed.dtypes.at(name);
      if (!(op.operands()[i]->dtypes & FUGUE_DTYPE_BIT(static_cast<fugue_dtype>(d))))
        throw UserError(st.where + ": operand '" + std::string(op.operands()[i]->name) + "' of " + op.name() +
                        ": expected dtype " + dtype_list(op.operands()[i]->dtypes) + ", found " +
                        std::string(dtype_name(d)) + " '" + name + "' (function '" + f.name + "' called with " +
                        [&] {
                          std::string a;
                          for (size_t k = 0; k < args.size(); ++k) a += (k ? ", " : "") + std::string(dtype_name(args[k]));
                          return a;
                        }() + ")");
    }
    CallDescriptor call;
    describe_body_call(f, typed, s, 1, call);
    std::vector<abi::Type> inferred;
    try {
      inferred = op.infer(call.call);
    } catch (const UserError& e) {
      throw UserError(st.where + ": " + e.what());
    }
    for (uint32_t o : op.outputs()) {
      const abi::Type& t = inferred[o];
      if (t.kind != FUGUE_KIND_ARRAY || t.shape != std::vector<int64_t>{1} || !fugue_dtype_supported(t.dtype))
        throw UserError(st.where + ": " + op.name() + " gives '" + st.operands[o] + "' " + describe(t) +
                        " for one element: a function's body holds element-wise operations, whose results have "
                        "their arguments' shape");
      typed.dtypes[st.operands[o]] = static_cast<DType>(t.dtype);
    }
    // Element-wise, checked here too (and for the device when its code is written), so that host
    // evaluations, which run the body over many calls at once, never mix calls.
    describe_body_call(f, typed, s, 1, call, &generic_device());
    abi::Plan plan;
    try {
      plan = op.plan(call.call);
    } catch (const UserError& e) {
      throw UserError(st.where + ": " + e.what());
    }
    check_element_wise(st, plan, call);
  }
  typed.result = typed.dtypes.at(f.result);
  return typed;
}

void evaluate_function(const UserFunction& f, const std::vector<DType>& arg_dtypes, const void* const* args,
                       uint64_t count, void* result) {
  const TypedFunction typed = type_function(f, arg_dtypes);
  const auto n = static_cast<int64_t>(count);
  std::map<std::string, HostArray> values;
  for (size_t i = 0; i < f.params.size(); ++i) {
    HostArray a(arg_dtypes[i], {n});
    if (!a.bytes.empty()) std::memcpy(a.bytes.data(), args[i], a.bytes.size());
    values[f.params[i]] = std::move(a);
  }
  for (size_t s = 0; s < f.body.size(); ++s) {
    const Statement& st = f.body[s];
    CallDescriptor call;
    describe_body_call(f, typed, s, n, call);
    std::vector<HostArray> outputs(st.operands.size());
    std::vector<fugue_host_array> views(st.operands.size());
    for (size_t k = 0; k < st.operands.size(); ++k) {
      HostArray* a = nullptr;
      if (st.op->role(k) == FUGUE_ROLE_OUT) {
        outputs[k] = HostArray(typed.dtypes.at(st.operands[k]), {n});
        a = &outputs[k];
      } else if (auto it = values.find(st.operands[k]); it != values.end()) {
        a = &it->second;
      }
      views[k] = fugue_host_array{sizeof(fugue_host_array), &call.types[k],
                                  a && !a->bytes.empty() ? a->bytes.data() : nullptr, a ? a->bytes.size() : 0, 0, 0,
                                  nullptr};
    }
    st.op->reference(call.call, views.data());
    for (uint32_t o : st.op->outputs()) values[st.operands[o]] = std::move(outputs[o]);
  }
  const HostArray& r = values.at(f.result);
  if (!r.bytes.empty()) std::memcpy(result, r.bytes.data(), r.bytes.size());
}

// ---------------------------------------------------------------------------------------------
// The services behind fugue_call.functions: the context is the call descriptor.

namespace {

CallDescriptor& descriptor(fugue_function_context* context) { return *reinterpret_cast<CallDescriptor*>(context); }

const UserFunction* function_at(fugue_function_context* context, uint32_t operand) {
  CallDescriptor& d = descriptor(context);
  return operand < d.functions.size() ? d.functions[operand].get() : nullptr;
}

// The argument dtypes, checked (a plugin may pass anything).
bool arguments(const UserFunction& f, uint32_t num_args, const fugue_dtype* arg_dtypes, std::vector<DType>& out,
               fugue_error* error) {
  if (num_args != f.params.size()) {
    abi::write_error(error, "function '" + f.name + "' (" + f.where + ") takes " + std::to_string(f.params.size()) +
                         " argument(s), not " + std::to_string(num_args));
    return false;
  }
  for (uint32_t i = 0; i < num_args; ++i) {
    if (!arg_dtypes || !fugue_dtype_supported(arg_dtypes[i])) {
      abi::write_error(error, "argument " + std::to_string(i) + " of function '" + f.name + "' (" + f.where +
                                  ") has no supported dtype");
      return false;
    }
    out.push_back(static_cast<DType>(arg_dtypes[i]));
  }
  return true;
}

uint32_t arity(fugue_function_context* context, uint32_t operand) {
  const UserFunction* f = function_at(context, operand);
  return f ? static_cast<uint32_t>(f->params.size()) : 0;
}

// The function operand k names and its argument dtypes, checked (a plugin may pass anything): null,
// with the error written, when they do not fit.
const UserFunction* called(fugue_function_context* context, uint32_t operand, uint32_t num_args,
                           const fugue_dtype* arg_dtypes, std::vector<DType>& args, fugue_error* error) {
  const UserFunction* f = function_at(context, operand);
  if (!f) {
    abi::write_error(error, "operand " + std::to_string(operand) + " is not a function");
    return nullptr;
  }
  return arguments(*f, num_args, arg_dtypes, args, error) ? f : nullptr;
}

// Runs `work`, turning the program's errors into INVALID_ARGUMENT and anything else into INTERNAL.
template <class Work>
fugue_status guarded(fugue_error* error, Work&& work) {
  try {
    work();
    return FUGUE_OK;
  } catch (const UserError& e) {
    abi::write_error(error, e.what());
    return FUGUE_ERROR_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    abi::write_error(error, e.what());
    return FUGUE_ERROR_INTERNAL;
  }
}

fugue_status result(fugue_function_context* context, uint32_t operand, uint32_t num_args,
                    const fugue_dtype* arg_dtypes, fugue_dtype* out, fugue_error* error) {
  std::vector<DType> args;
  const UserFunction* f = called(context, operand, num_args, arg_dtypes, args, error);
  if (!f) return FUGUE_ERROR_INVALID_ARGUMENT;
  return guarded(error, [&] {
    const TypedFunction typed = type_function(*f, args);
    if (out) *out = static_cast<fugue_dtype>(typed.result);
  });
}

fugue_status evaluate(fugue_function_context* context, uint32_t operand, uint32_t num_args,
                      const fugue_dtype* arg_dtypes, const void* const* args, uint64_t count, void* out,
                      fugue_error* error) {
  std::vector<DType> dtypes;
  const UserFunction* f = called(context, operand, num_args, arg_dtypes, dtypes, error);
  if (!f) return FUGUE_ERROR_INVALID_ARGUMENT;
  bool arrays = !count || (out && args);
  for (uint32_t i = 0; arrays && count && i < num_args; ++i) arrays = args[i] != nullptr;
  if (!arrays) {
    abi::write_error(error, "evaluate of function '" + f->name + "' (" + f->where + ") without its argument or result arrays");
    return FUGUE_ERROR_INVALID_ARGUMENT;
  }
  return guarded(error, [&] { evaluate_function(*f, dtypes, args, count, out); });
}

}  // namespace

const fugue_function_services* bind_function_services(CallDescriptor& call) {
  bool any = false;
  for (const auto& f : call.functions) any |= f != nullptr;
  if (!any) return nullptr;
  call.function_services = fugue_function_services{};
  call.function_services.struct_size = sizeof(fugue_function_services);
  call.function_services.context = reinterpret_cast<fugue_function_context*>(&call);
  call.function_services.arity = &arity;
  call.function_services.result = &result;
  call.function_services.evaluate = &evaluate;
  return &call.function_services;
}

}  // namespace fugue
