// sdk.hpp: header-only C++ helpers for writing Fugue operations over the C ABI (fugue_plugin.h).
//
// An operation is a class derived from fugue::sdk::Operation; a plugin is a fugue::sdk::Plugin that
// owns them. The helpers build the C tables, check the sizes of the structs the core hands over, and
// turn every exception into a status with its message at the boundary, so nothing C++ crosses it.
//
//   class Scale : public fugue::sdk::Operation { ... };
//   FUGUE_SDK_PLUGIN("myplugin", "1.0.0", "What it does", [](fugue::sdk::Plugin& p) {
//     p.add(std::make_unique<Scale>());
//   })
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fugue_plugin.h"

namespace fugue::sdk {

// Throw from infer/plan for a program the operation cannot accept (FUGUE_ERROR_INVALID_ARGUMENT).
struct InvalidArgument : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throw for valid input this operation does not support (FUGUE_ERROR_UNSUPPORTED).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throw when an OpenCL call fails in execute (FUGUE_ERROR_DEVICE).
struct DeviceFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline const char* dtype_name(fugue_dtype d) {
  switch (d) {
    case FUGUE_DTYPE_F32: return "f32";
    case FUGUE_DTYPE_F64: return "f64";
    case FUGUE_DTYPE_I32: return "i32";
    case FUGUE_DTYPE_I64: return "i64";
    case FUGUE_DTYPE_U8: return "u8";
    case FUGUE_DTYPE_U32: return "u32";
    default: return "none";
  }
}
inline bool is_float(fugue_dtype d) { return d == FUGUE_DTYPE_F32 || d == FUGUE_DTYPE_F64; }
inline bool is_signed(fugue_dtype d) {
  return is_float(d) || d == FUGUE_DTYPE_I32 || d == FUGUE_DTYPE_I64;
}

// ---------------------------------------------------------------------------------------------
// Types

inline fugue_type make_type(fugue_kind kind, fugue_dtype dtype, const std::vector<int64_t>& shape = {}) {
  fugue_type t{};
  t.struct_size = sizeof(fugue_type);
  t.kind = kind;
  t.dtype = dtype;
  t.rank = static_cast<uint32_t>(shape.size());
  for (size_t i = 0; i < shape.size() && i < FUGUE_MAX_RANK; ++i) t.shape[i] = shape[i];
  return t;
}
inline int64_t elements(const fugue_type& t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t.rank; ++i) n *= t.shape[i];
  return n;
}
inline bool same_shape(const fugue_type& a, const fugue_type& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t i = 0; i < a.rank; ++i)
    if (a.shape[i] != b.shape[i]) return false;
  return true;
}
inline std::string shape_string(const fugue_type& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}
// "f32 array [4, 5]", "f64 scalar", "const 2.5".
inline std::string type_string(const fugue_type& t) {
  if (t.kind == FUGUE_KIND_CONST) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "const %g", t.const_value);
    return buf;
  }
  std::string s = dtype_name(t.dtype);
  if (t.kind == FUGUE_KIND_SCALAR) return s + " scalar";
  return s + " array " + shape_string(t);
}

// ---------------------------------------------------------------------------------------------
// Signature

struct OperandSpec {
  std::string name;
  fugue_role role = FUGUE_ROLE_IN;
  uint32_t kinds = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
  uint32_t dtypes = FUGUE_DTYPES_ALL;
  std::string doc;
};
inline OperandSpec in(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_IN, kinds, dtypes, std::move(doc)};
}
inline OperandSpec out(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_OUT, kinds, dtypes, std::move(doc)};
}

struct AttrSpec {
  std::string name;
  fugue_attr_type type = FUGUE_ATTR_NUMBER;
  bool required = false;
  double default_number = 0;
  std::string default_string;
  std::string doc;
};

// A read-only view of one use of an operation (fugue_call), by operand index or name.
class Call {
 public:
  Call(const fugue_call* call, const std::vector<OperandSpec>& operands,
       const std::vector<AttrSpec>& attrs)
      : call_(call), operands_(&operands), attrs_(&attrs) {}
  const fugue_call* raw() const { return call_; }
  uint32_t size() const { return call_->num_operands; }
  const fugue_type& operand(uint32_t i) const { return *FUGUE_NTH(fugue_type, call_->operands, i); }
  const fugue_type& operand(const std::string& name) const { return operand(index(name)); }
  const std::string& operand_name(uint32_t i) const { return (*operands_)[i].name; }
  uint32_t index(const std::string& name) const {
    for (uint32_t i = 0; i < operands_->size(); ++i)
      if ((*operands_)[i].name == name) return i;
    throw std::logic_error("no operand named " + name);
  }
  const fugue_attr_value& attr(const std::string& name) const {
    for (uint32_t i = 0; i < attrs_->size() && i < call_->num_attrs; ++i)
      if ((*attrs_)[i].name == name) return *FUGUE_NTH(fugue_attr_value, call_->attrs, i);
    throw std::logic_error("no attribute named " + name);
  }
  double number(const std::string& name) const {
    const auto& a = attr(name);
    return a.type == FUGUE_ATTR_INT ? static_cast<double>(a.integer) : a.number;
  }
  int64_t integer(const std::string& name) const { return attr(name).integer; }
  std::string string(const std::string& name) const {
    const char* s = attr(name).string;
    return s ? s : "";
  }
  fugue_dtype dtype(const std::string& name) const { return attr(name).dtype; }
  // The points of STENCIL operand i (ABI 1.1); throws when the core did not provide them.
  const fugue_stencil& stencil(uint32_t i) const {
    if (call_->struct_size < FUGUE_SIZE_UP_TO(fugue_call, stencils) || !call_->stencils)
      throw std::logic_error("the core passed no stencils (it predates ABI 1.1)");
    const fugue_stencil& s = *FUGUE_NTH(fugue_stencil, call_->stencils, i);
    if (s.num_points == 0 || operand(i).kind != FUGUE_KIND_STENCIL)
      throw std::logic_error("operand " + operand_name(i) + " is not a stencil");
    return s;
  }

 private:
  const fugue_call* call_;
  const std::vector<OperandSpec>* operands_;
  const std::vector<AttrSpec>* attrs_;
};

// ---------------------------------------------------------------------------------------------
// Emit

// Builds OpenCL C through the core's accessors. `format` substitutes ${name} with the accessor of
// the operand of that name (${name} reads, ${name=} writes, ${T:name} the operand's C type), and
// ${@stem} with a per-call unique identifier; everything else is copied as it is.
class Emitter {
 public:
  Emitter(const fugue_emit_api* api, const Call& call) : api_(api), call_(call) {}
  uint32_t phase() const { return api_->phase; }
  std::string read(uint32_t operand) const { return api_->read(api_->context, operand); }
  std::string write(uint32_t operand) const { return api_->write(api_->context, operand); }
  std::string ctype(fugue_dtype dtype) const { return api_->ctype(api_->context, dtype); }
  std::string name(const std::string& stem) const { return api_->name(api_->context, stem.c_str()); }
  std::string builtin(int32_t which) const { return api_->builtin(api_->context, which); }
  std::string workspace(uint32_t k) const { return api_->workspace(api_->context, k); }
  void append(const std::string& code) const { api_->append(api_->context, code.c_str()); }
  // The element of array operand k at flat index `index` (an OpenCL C expression); ABI 1.1.
  std::string read_at(uint32_t operand, const std::string& index) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, read_at))
      throw std::logic_error("the core offers no read_at (it predates ABI 1.1)");
    return api_->read_at(api_->context, operand, index.c_str());
  }

  std::string format(const std::string& pattern) const {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] != '$' || i + 1 >= pattern.size() || pattern[i + 1] != '{') {
        out += pattern[i];
        continue;
      }
      size_t close = pattern.find('}', i);
      if (close == std::string::npos) throw std::logic_error("unclosed ${ in emit pattern");
      std::string key = pattern.substr(i + 2, close - i - 2);
      i = close;
      if (!key.empty() && key[0] == '@') {
        out += name(key.substr(1));
      } else if (key.rfind("T:", 0) == 0) {
        out += ctype(call_.operand(key.substr(2)).dtype);
      } else if (!key.empty() && key.back() == '=') {
        out += write(call_.index(key.substr(0, key.size() - 1)));
      } else {
        out += read(call_.index(key));
      }
    }
    return out;
  }
  void emit(const std::string& pattern) const { append(format(pattern)); }

 private:
  const fugue_emit_api* api_;
  const Call& call_;
};

// ---------------------------------------------------------------------------------------------
// Plans

inline fugue_partition partition(fugue_partition_kind kind, uint32_t rank = 0) {
  fugue_partition p{};
  p.struct_size = sizeof(fugue_partition);
  p.kind = kind;
  p.rank = rank;
  return p;
}

// A plan over a flat index space of `n` elements, in which array operands are ELEMENTWISE and
// scalars/consts WHOLE. The core picks the work-group size between 1 and 1024.
inline fugue_plan elementwise_plan(const Call& call, fugue_level level, int64_t n) {
  fugue_plan plan{};
  plan.struct_size = sizeof(fugue_plan);
  plan.level = level;
  plan.launch.struct_size = sizeof(fugue_launch);
  plan.launch.work_dim = 1;
  plan.launch.iteration[0] = n;
  plan.launch.iteration[1] = plan.launch.iteration[2] = 1;
  plan.launch.local_min = 1;
  plan.launch.local_max = 1024;
  plan.launch.local_multiple = 1;
  plan.launch.local_preferred = 256;
  plan.phases = FUGUE_PHASE_ELEMENT;
  plan.num_partitions = call.size();
  for (uint32_t i = 0; i < call.size(); ++i) {
    const auto& t = call.operand(i);
    plan.partitions[i] = t.kind == FUGUE_KIND_ARRAY ? partition(FUGUE_PARTITION_ELEMENTWISE, t.rank)
                                                    : partition(FUGUE_PARTITION_WHOLE);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Host arrays (references)

// Typed access to a fugue_host_array, any dtype, through double.
class HostView {
 public:
  explicit HostView(fugue_host_array& a) : a_(&a) {}
  int64_t size() const { return a_->type.kind == FUGUE_KIND_ARRAY ? elements(a_->type) : 1; }
  fugue_dtype dtype() const { return a_->type.dtype; }
  // Element i (a scalar or const repeats its one value).
  double get(int64_t i) const {
    if (a_->type.kind == FUGUE_KIND_CONST) return a_->type.const_value;
    if (a_->type.kind != FUGUE_KIND_ARRAY) i = 0;
    switch (a_->type.dtype) {
      case FUGUE_DTYPE_F32: return static_cast<const float*>(a_->data)[i];
      case FUGUE_DTYPE_F64: return static_cast<const double*>(a_->data)[i];
      case FUGUE_DTYPE_I32: return static_cast<const int32_t*>(a_->data)[i];
      case FUGUE_DTYPE_I64: return static_cast<double>(static_cast<const int64_t*>(a_->data)[i]);
      case FUGUE_DTYPE_U8: return static_cast<const uint8_t*>(a_->data)[i];
      case FUGUE_DTYPE_U32: return static_cast<const uint32_t*>(a_->data)[i];
      default: throw std::logic_error("host array without dtype");
    }
  }
  int64_t get_int(int64_t i) const {
    if (a_->type.kind == FUGUE_KIND_CONST) return static_cast<int64_t>(a_->type.const_value);
    if (a_->type.kind != FUGUE_KIND_ARRAY) i = 0;
    switch (a_->type.dtype) {
      case FUGUE_DTYPE_I64: return static_cast<const int64_t*>(a_->data)[i];
      case FUGUE_DTYPE_I32: return static_cast<const int32_t*>(a_->data)[i];
      case FUGUE_DTYPE_U8: return static_cast<const uint8_t*>(a_->data)[i];
      case FUGUE_DTYPE_U32: return static_cast<const uint32_t*>(a_->data)[i];
      default: return static_cast<int64_t>(get(i));
    }
  }
  // Store: floats rounded to the dtype, integers wrapped to it (two's complement, as the device does).
  void set(int64_t i, double v) {
    switch (a_->type.dtype) {
      case FUGUE_DTYPE_F32: static_cast<float*>(a_->data)[i] = static_cast<float>(v); return;
      case FUGUE_DTYPE_F64: static_cast<double*>(a_->data)[i] = v; return;
      default: set_int(i, static_cast<int64_t>(v)); return;
    }
  }
  void set_int(int64_t i, int64_t v) {
    switch (a_->type.dtype) {
      case FUGUE_DTYPE_I32: static_cast<int32_t*>(a_->data)[i] = static_cast<int32_t>(v); return;
      case FUGUE_DTYPE_I64: static_cast<int64_t*>(a_->data)[i] = v; return;
      case FUGUE_DTYPE_U8: static_cast<uint8_t*>(a_->data)[i] = static_cast<uint8_t>(v); return;
      case FUGUE_DTYPE_U32: static_cast<uint32_t*>(a_->data)[i] = static_cast<uint32_t>(v); return;
      default: set(i, static_cast<double>(v)); return;
    }
  }

 private:
  fugue_host_array* a_;
};

// ---------------------------------------------------------------------------------------------
// Operations

class Operation {
 public:
  virtual ~Operation() = default;

  // Signature: set these in the constructor.
  std::string name;
  std::string doc;
  std::vector<OperandSpec> operands;
  std::vector<AttrSpec> attrs;
  double tolerance_f32 = 1e-6;
  double tolerance_f64 = 1e-12;
  double test_low = -1.0;
  double test_high = 1.0;
  uint32_t traits = 0;  // FUGUE_OP_* (ABI 1.1)
  // The calls `fugue conformance` runs (ABI 1.2; JSON, see fugue_op_desc.test_cases). Empty: the
  // suite derives them from the signature.
  std::string test_cases;

  // Fill the types of OUT operands. Throw InvalidArgument naming the operand at fault.
  virtual void infer(const Call& call, fugue_type* types) const = 0;
  virtual fugue_plan plan(const Call& call) const = 0;
  // ELEMENT, ITEM and BLOCK levels.
  virtual void emit(const Call&, const fugue_plan&, const Emitter&) const {
    throw Unsupported(name + " has no emit (it is a device-level operation)");
  }
  // DEVICE level.
  virtual void execute(const Call&, const fugue_device_services&) const {
    throw Unsupported(name + " has no execute (the core generates its kernels)");
  }
  virtual fugue_cost cost(const Call& call) const = 0;
  // Compute the outputs on the CPU, in higher precision than the device where it matters.
  virtual void reference(const Call& call, fugue_host_array* operands) const = 0;

  // The C descriptor; valid while this object lives.
  const fugue_op_desc* descriptor() {
    build_descriptor();
    return &desc_;
  }

 private:
  template <class F>
  static fugue_status guard(fugue_error* error, F&& f) {
    auto fail = [&](fugue_status status, const char* what) {
      if (error && error->struct_size >= sizeof(fugue_error)) {
        std::snprintf(error->message, sizeof error->message, "%s", what);
      }
      return status;
    };
    try {
      f();
      return FUGUE_OK;
    } catch (const InvalidArgument& e) {
      return fail(FUGUE_ERROR_INVALID_ARGUMENT, e.what());
    } catch (const Unsupported& e) {
      return fail(FUGUE_ERROR_UNSUPPORTED, e.what());
    } catch (const DeviceFailure& e) {
      return fail(FUGUE_ERROR_DEVICE, e.what());
    } catch (const std::exception& e) {
      return fail(FUGUE_ERROR_INTERNAL, e.what());
    } catch (...) {
      return fail(FUGUE_ERROR_INTERNAL, "unknown exception");
    }
  }
  // Throws InvalidArgument (inputs) or logic_error (outputs) when operand i's type is outside its
  // signature's kinds and dtypes.
  void check_signature(uint32_t i, const fugue_type& t) const {
    const OperandSpec& spec = operands[i];
    const bool kind_ok = t.kind > FUGUE_KIND_NONE && t.kind < 32 && (spec.kinds & FUGUE_KIND_BIT(t.kind));
    const bool dtype_ok = t.kind == FUGUE_KIND_CONST ||
                          (t.dtype > FUGUE_DTYPE_NONE && t.dtype < FUGUE_DTYPE_COUNT && (spec.dtypes & FUGUE_DTYPE_BIT(t.dtype)));
    if (kind_ok && dtype_ok) return;
    std::string allowed;
    for (fugue_dtype d = FUGUE_DTYPE_F32; d < FUGUE_DTYPE_COUNT; ++d)
      if (spec.dtypes & FUGUE_DTYPE_BIT(d)) allowed += std::string(allowed.empty() ? "" : ", ") + dtype_name(d);
    static const char* kinds[] = {"none", "array", "scalar", "const", "stencil"};
    std::string kind_list;
    for (fugue_kind k = FUGUE_KIND_ARRAY; k <= FUGUE_KIND_STENCIL; ++k)
      if (spec.kinds & FUGUE_KIND_BIT(k)) kind_list += std::string(kind_list.empty() ? "" : " or ") + kinds[k];
    const std::string signature = kind_list + " of " + allowed;
    if (spec.role == FUGUE_ROLE_IN)
      throw InvalidArgument("operand " + spec.name + ": expected " + signature + ", found " + type_string(t));
    throw std::logic_error("operand " + spec.name + ": infer produced " + type_string(t) +
                           ", outside its signature (" + signature + "): a bug in the operation");
  }
  static const Operation& self(const fugue_op_desc* op) {
    return *static_cast<const Operation*>(op->user_data);
  }
  // The core must hand over structs at least as large as ABI 1.0's (a newer core's may be larger).
  static void check_call(const fugue_op_desc* op, const fugue_call* call) {
    if (!call || call->struct_size < FUGUE_SIZE_UP_TO(fugue_call, attrs))
      throw std::logic_error("fugue_call is smaller than ABI 1.0's");
    if (call->num_operands != self(op).operands.size())
      throw std::logic_error("operand count differs from the signature");
    if (call->num_operands > 0 && call->operands->struct_size < FUGUE_SIZE_UP_TO(fugue_type, const_value))
      throw std::logic_error("fugue_type is smaller than ABI 1.0's");
    if (call->num_attrs > 0 && call->attrs->struct_size < FUGUE_SIZE_UP_TO(fugue_attr_value, dtype))
      throw std::logic_error("fugue_attr_value is smaller than ABI 1.0's");
  }
  // Copies `value` into a struct the core owns, no further than the core's struct_size reaches.
  template <class T>
  static void copy_into(T* destination, const T& value) {
    uint32_t size = destination->struct_size;
    std::memcpy(destination, &value, std::min<size_t>(size, sizeof(T)));
    destination->struct_size = size;
  }
  Call view(const fugue_call* call) const { return Call(call, operands, attrs); }

  static fugue_status infer_thunk(const fugue_op_desc* op, const fugue_call* call, fugue_type* types,
                                  fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      std::vector<fugue_type> result;
      for (uint32_t i = 0; i < call->num_operands; ++i) {
        fugue_type t{};
        std::memcpy(&t, FUGUE_NTH(fugue_type, call->operands, i),
                    std::min<size_t>(sizeof t, call->operands->struct_size));
        t.struct_size = sizeof t;
        result.push_back(t);
      }
      // The signature's masks hold for every call, whoever makes it: the operation's own infer then
      // only checks what is particular to it, and never returns a type its signature excludes.
      const Operation& o = self(op);
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (o.operands[i].role == FUGUE_ROLE_IN) o.check_signature(i, result[i]);
      o.infer(o.view(call), result.data());
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (o.operands[i].role == FUGUE_ROLE_OUT) o.check_signature(i, result[i]);
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (self(op).operands[i].role == FUGUE_ROLE_OUT) copy_into(FUGUE_NTH_MUTABLE(fugue_type, types, i), result[i]);
    });
  }
  static fugue_status plan_thunk(const fugue_op_desc* op, const fugue_call* call, fugue_plan* plan,
                                 fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (plan->struct_size < FUGUE_SIZE_UP_TO(fugue_plan, registers))
        throw std::logic_error("fugue_plan is smaller than ABI 1.0's");
      copy_into(plan, self(op).plan(self(op).view(call)));
    });
  }
  static fugue_status emit_thunk(const fugue_op_desc* op, const fugue_call* call,
                                 const fugue_plan* plan, const fugue_emit_api* api,
                                 fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (api->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, append))
        throw std::logic_error("fugue_emit_api is smaller than ABI 1.0's");
      Call c = self(op).view(call);
      self(op).emit(c, *plan, Emitter(api, c));
    });
  }
  static fugue_status execute_thunk(const fugue_op_desc* op, const fugue_call* call,
                                    const fugue_device_services* services, fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (services->struct_size < FUGUE_SIZE_UP_TO(fugue_device_services, track))
        throw std::logic_error("fugue_device_services is smaller than ABI 1.0's");
      self(op).execute(self(op).view(call), *services);
    });
  }
  static fugue_status cost_thunk(const fugue_op_desc* op, const fugue_call* call, fugue_cost* cost,
                                 fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      copy_into(cost, self(op).cost(self(op).view(call)));
    });
  }
  static fugue_status reference_thunk(const fugue_op_desc* op, const fugue_call* call,
                                      fugue_host_array* arrays, fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      self(op).reference(self(op).view(call), arrays);
    });
  }

  void build_descriptor() {
    operand_descs_.clear();
    for (const auto& o : operands)
      operand_descs_.push_back({sizeof(fugue_operand_desc), o.name.c_str(), o.role, o.kinds, o.dtypes,
                                o.doc.c_str()});
    attr_descs_.clear();
    for (const auto& a : attrs)
      attr_descs_.push_back({sizeof(fugue_attr_desc), a.name.c_str(), a.type, a.required ? 1 : 0,
                             a.default_number, a.default_string.c_str(), a.doc.c_str()});
    desc_ = fugue_op_desc{};
    desc_.struct_size = sizeof(fugue_op_desc);
    desc_.name = name.c_str();
    desc_.doc = doc.c_str();
    desc_.num_operands = static_cast<uint32_t>(operand_descs_.size());
    desc_.operands = operand_descs_.data();
    desc_.num_attrs = static_cast<uint32_t>(attr_descs_.size());
    desc_.attrs = attr_descs_.empty() ? nullptr : attr_descs_.data();
    desc_.infer = &infer_thunk;
    desc_.plan = &plan_thunk;
    desc_.emit = &emit_thunk;
    desc_.execute = &execute_thunk;
    desc_.cost = &cost_thunk;
    desc_.reference = &reference_thunk;
    desc_.tolerance_f32 = tolerance_f32;
    desc_.tolerance_f64 = tolerance_f64;
    desc_.test_low = test_low;
    desc_.test_high = test_high;
    desc_.user_data = this;
    desc_.traits = traits;
    desc_.test_cases = test_cases.empty() ? nullptr : test_cases.c_str();
  }

  std::vector<fugue_operand_desc> operand_descs_;
  std::vector<fugue_attr_desc> attr_descs_;
  fugue_op_desc desc_{};
};

// ---------------------------------------------------------------------------------------------
// Plugins

class Plugin {
 public:
  Plugin(std::string name, std::string version, std::string description)
      : name_(std::move(name)), version_(std::move(version)), description_(std::move(description)) {}
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  void add(std::unique_ptr<Operation> op) { ops_.push_back(std::move(op)); }

  const fugue_plugin* table() {
    descs_.clear();
    for (auto& op : ops_) descs_.push_back(op->descriptor());
    table_ = fugue_plugin{};
    table_.struct_size = sizeof(fugue_plugin);
    table_.abi_major = FUGUE_ABI_VERSION_MAJOR;
    table_.abi_minor = FUGUE_ABI_VERSION_MINOR;
    table_.name = name_.c_str();
    table_.version = version_.c_str();
    table_.description = description_.c_str();
    table_.num_ops = static_cast<uint32_t>(descs_.size());
    table_.ops = descs_.data();
    return &table_;
  }

 private:
  std::string name_, version_, description_;
  std::vector<std::unique_ptr<Operation>> ops_;
  std::vector<const fugue_op_desc*> descs_;
  fugue_plugin table_{};
};

}  // namespace fugue::sdk

// Defines the plugin's entry point. `populate` is called once with the Plugin to add operations to.
// An exception while building the table returns NULL, which the core reports as a refused plugin.
#define FUGUE_SDK_PLUGIN(NAME, VERSION, DESCRIPTION, POPULATE)                      \
  FUGUE_DEFINE_PLUGIN_ENTRY {                                                       \
    (void)core_abi_major;                                                           \
    (void)core_abi_minor;                                                           \
    try {                                                                           \
      static fugue::sdk::Plugin plugin_(NAME, VERSION, DESCRIPTION);                \
      static const fugue_plugin* table_ = [] {                                      \
        std::function<void(fugue::sdk::Plugin&)> populate_ = POPULATE;              \
        populate_(plugin_);                                                         \
        return plugin_.table();                                                     \
      }();                                                                          \
      return table_;                                                                \
    } catch (...) {                                                                 \
      return nullptr;                                                               \
    }                                                                               \
  }
