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
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fugue/abi_values.hpp"
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

// Dtype facts, from the one table (fugue_dtypes.h).
using abi::component_dtype;
using abi::dtype_ctype;
using abi::dtype_name;
using abi::dtype_names;
using abi::dtype_size;
using abi::is_complex;
using abi::is_float;
using abi::is_integer;
using abi::is_signed;

// ---------------------------------------------------------------------------------------------
// Types

// A type's value (kind, dtype, shape, const value, metadata): what infer writes for its outputs.
using Type = abi::Type;

inline Type make_type(fugue_kind kind, fugue_dtype dtype, const std::vector<int64_t>& shape = {}) {
  return Type(kind, dtype, shape);
}
inline std::vector<int64_t> shape_of(const fugue_type& t) {
  return t.rank > 0 ? std::vector<int64_t>(t.shape, t.shape + t.rank) : std::vector<int64_t>{};
}
inline int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}
inline int64_t elements(const fugue_type& t) { return elements(shape_of(t)); }
inline int64_t elements(const Type& t) { return elements(t.shape); }
inline bool same_shape(const fugue_type& a, const fugue_type& b) { return shape_of(a) == shape_of(b); }
inline std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
inline std::string shape_string(const fugue_type& t) { return shape_string(shape_of(t)); }
inline std::string kind_name(fugue_kind k) {
  switch (k) {
    case FUGUE_KIND_ARRAY: return "array";
    case FUGUE_KIND_SCALAR: return "scalar";
    case FUGUE_KIND_CONST: return "const";
    case FUGUE_KIND_PLUGIN: return "plugin kind";
    case FUGUE_KIND_FUNCTION: return "function";
    default: return "kind " + std::to_string(k);
  }
}
// A number for messages: its 9 significant digits ("1e+308", "0.25"), where std::to_string writes
// every digit of a large one and rounds a small one to 0.000000.
inline std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}
// "f32 array [4, 5]", "f64 scalar", "const 2.5".
inline std::string type_string(fugue_kind kind, fugue_dtype dtype, const std::vector<int64_t>& shape,
                               double const_value) {
  if (kind == FUGUE_KIND_CONST) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "const %g", const_value);
    return buf;
  }
  std::string s = dtype_name(dtype);
  if (kind == FUGUE_KIND_SCALAR) return s + " scalar";
  return s + " " + kind_name(kind) + " " + shape_string(shape);
}
// A shape with its run-time axes: "[<=1000, 3]" (at most 1000 rows).
inline std::string shape_string(const std::vector<int64_t>& shape, uint32_t runtime_axes) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::string(i < 32 && (runtime_axes >> i) & 1u ? "<=" : "") + std::to_string(shape[i]);
  return s + "]";
}
inline std::string type_string(const fugue_type& t) {
  if (t.kind == FUGUE_KIND_PLUGIN && t.kind_name)
    return std::string(dtype_name(t.dtype)) + " " + t.kind_name + " " + shape_string(shape_of(t));
  if (t.kind == FUGUE_KIND_FUNCTION) return "a function";
  if (t.kind == FUGUE_KIND_ARRAY && t.runtime_axes)
    return std::string(dtype_name(t.dtype)) + " array " + shape_string(shape_of(t), t.runtime_axes);
  return type_string(t.kind, t.dtype, shape_of(t), t.const_value);
}
inline std::string type_string(const Type& t) { return type_string(t.view()); }

// ---------------------------------------------------------------------------------------------
// Signature

struct OperandSpec {
  std::string name;
  fugue_role role = FUGUE_ROLE_IN;
  uint32_t kinds = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
  uint32_t dtypes = FUGUE_DTYPES_REAL;
  std::string doc;
  std::string plugin_kinds;  // with FUGUE_KIND_PLUGIN in kinds: the kinds' names, space-separated
  uint32_t flags = 0;        // FUGUE_OPERAND_* (2.3)
  double default_value = 0;  // an optional input left out reads as this number (2.5)
};
inline OperandSpec in(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_IN, kinds, dtypes, std::move(doc), {}};
}
inline OperandSpec out(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_OUT, kinds, dtypes, std::move(doc), {}};
}
// An output a program may leave out of `out` (FUGUE_OPERAND_OPTIONAL): the last ones of the list only.
inline OperandSpec optional_out(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  OperandSpec spec = out(std::move(name), kinds, dtypes, std::move(doc));
  spec.flags = FUGUE_OPERAND_OPTIONAL;
  return spec;
}
// An input a program may leave out of `in` (FUGUE_OPERAND_OPTIONAL, ABI 2.5): the last ones of the list
// only; left out, it is the const `default_value` (so it must accept FUGUE_KIND_CONST, added here).
inline OperandSpec optional_in(std::string name, uint32_t kinds, uint32_t dtypes, double default_value, std::string doc = {}) {
  OperandSpec spec = in(std::move(name), kinds | FUGUE_KIND_BIT(FUGUE_KIND_CONST), dtypes, std::move(doc));
  spec.flags = FUGUE_OPERAND_OPTIONAL;
  spec.default_value = default_value;
  return spec;
}
// Read and updated in place (FUGUE_ROLE_INOUT): an input to infer, which keeps its type.
inline OperandSpec inout(std::string name, uint32_t kinds, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_INOUT, kinds, dtypes, std::move(doc), {}};
}
// An input of plugin kind(s) `kind_names` ("stencil"; several separated by spaces).
inline OperandSpec in_kind(std::string name, std::string kind_names, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_IN, FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN), dtypes, std::move(doc),
          std::move(kind_names)};
}
// An output of plugin kind(s) `kind_names`: kinds with storage (the program declares the symbol with its
// kind; infer gives the kind's name, dtype and shape).
inline OperandSpec out_kind(std::string name, std::string kind_names, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_OUT, FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN), dtypes, std::move(doc),
          std::move(kind_names)};
}
// A kind with storage, read and updated in place.
inline OperandSpec inout_kind(std::string name, std::string kind_names, uint32_t dtypes, std::string doc = {}) {
  return {std::move(name), FUGUE_ROLE_INOUT, FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN), dtypes, std::move(doc),
          std::move(kind_names)};
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
  // A number attribute a kernel on `dtype` data writes as a literal: finite, and within f32's range for
  // f32 and c64 data (a larger one would become inf there). InvalidArgument ("attribute NAME: ...",
  // which the core points at the attribute) otherwise.
  double number_for(const std::string& name, fugue_dtype dtype) const {
    const double v = number(name);
    if (!std::isfinite(v)) throw InvalidArgument("attribute " + name + ": expected a finite number, found " + number_text(v));
    if ((dtype == FUGUE_DTYPE_F32 || dtype == FUGUE_DTYPE_C64) && std::fabs(v) > 3.4028234663852886e38)
      throw InvalidArgument("attribute " + name + ": " + dtype_name(dtype) + " data needs a value within f32's range (|value| <= 3.4e38), found " +
                            number_text(v));
    return v;
  }
  int64_t integer(const std::string& name) const { return attr(name).integer; }
  bool flag(const std::string& name) const { return attr(name).integer != 0; }  // FUGUE_ATTR_BOOL
  std::string string(const std::string& name) const {
    const char* s = attr(name).string;
    return s ? s : "";
  }
  fugue_dtype dtype(const std::string& name) const { return attr(name).dtype; }
  // ABI 2.2: user functions (FUNCTION operands). The number of parameters function operand k takes.
  uint32_t function_arity(uint32_t k) const {
    const fugue_function_services* f = functions();
    return f ? f->arity(f->context, k) : 0;
  }
  // The dtype function operand k returns for arguments of `args` dtypes; throws InvalidArgument with the
  // core's message (naming the function's statement at fault) when its body does not take them.
  fugue_dtype function_result(uint32_t k, const std::vector<fugue_dtype>& args) const;
  // Evaluates function operand k on the host, `count` calls at once: argument i of call j at
  // args[i][j] (C arrays of arg_dtypes[i]), results into result[j] (of the result's dtype).
  void evaluate(uint32_t k, const std::vector<fugue_dtype>& arg_dtypes, const std::vector<const void*>& args,
                uint64_t count, void* result) const;
  // The device the call is planned for (plan, emit, execute); throws elsewhere.
  const fugue_device_desc& device() const {
    if (!call_->device) throw std::logic_error("the core passed no device description to this call");
    return *call_->device;
  }

 private:
  const fugue_function_services* functions() const {
    if (call_->struct_size < FUGUE_SIZE_UP_TO(fugue_call, functions) || !call_->functions) return nullptr;
    return call_->functions;
  }
  const fugue_function_services& require_functions() const;
  const fugue_call* call_;
  const std::vector<OperandSpec>* operands_;
  const std::vector<AttrSpec>* attrs_;
};

inline const fugue_function_services& Call::require_functions() const {
  const fugue_function_services* f = functions();
  if (!f)
    throw Unsupported("this call has no user functions (the core predates ABI 2.2, or no operand is a function)");
  return *f;
}
inline fugue_dtype Call::function_result(uint32_t k, const std::vector<fugue_dtype>& args) const {
  const fugue_function_services& f = require_functions();
  abi::ErrorBuffer error;
  fugue_dtype result = FUGUE_DTYPE_NONE;
  if (f.result(f.context, k, static_cast<uint32_t>(args.size()), args.data(), &result, error.get()) != FUGUE_OK)
    throw InvalidArgument(error.text());
  return result;
}
inline void Call::evaluate(uint32_t k, const std::vector<fugue_dtype>& arg_dtypes,
                           const std::vector<const void*>& args, uint64_t count, void* result) const {
  if (args.size() != arg_dtypes.size())
    throw std::logic_error("evaluate: " + std::to_string(args.size()) + " argument arrays for " +
                           std::to_string(arg_dtypes.size()) + " dtypes");
  const fugue_function_services& f = require_functions();
  abi::ErrorBuffer error;
  if (f.evaluate(f.context, k, static_cast<uint32_t>(arg_dtypes.size()), arg_dtypes.data(), args.data(), count, result,
                 error.get()) != FUGUE_OK)
    throw InvalidArgument(error.text());
}

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
  // The element of array operand k at flat index `index` (an OpenCL C expression).
  std::string read_at(uint32_t operand, const std::string& index) const {
    return api_->read_at(api_->context, operand, index.c_str());
  }
  // ABI 2.1: an lvalue for element `index` of array operand k (of the current entry, for a BATCH operand).
  std::string write_at(uint32_t operand, const std::string& index) const {
    return require_2_1("write_at")->write_at(api_->context, operand, index.c_str());
  }
  // ABI 2.8: element `index` (flat) of part `part` of operand k, a kind with storage the plan partitions
  // WHOLE and only reads (a sparse matrix's parts, at ELEMENT or ITEM level).
  std::string read_part_at(uint32_t operand, uint32_t part, const std::string& index) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, read_part_at) || !api_->read_part_at)
      throw Unsupported("read_part_at needs a core with plugin ABI 2.8 or later");
    return api_->read_part_at(api_->context, operand, part, index.c_str());
  }
  // ABI 2.22: the count of operand k (a long rvalue), a value whose count is left to the run
  // (PartType::runtime_axes) the plan reads WHOLE, as the operation that made it wrote it; bound it by the
  // capacity before indexing with it. core_abi_minor() >= 22 says at plan time that the core has it.
  std::string count(uint32_t operand) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, count) || !api_->count)
      throw Unsupported("count needs a core with plugin ABI 2.22 or later");
    return api_->count(api_->context, operand);
  }
  // ABI 2.1: a fresh `__local` array of `count` elements of `dtype`, declared by the core.
  std::string local_array(fugue_dtype dtype, int64_t count, const std::string& stem) const {
    return require_2_1("local_array")->local_array(api_->context, dtype, count, stem.c_str());
  }
  // ABI 2.1: a work-group barrier statement (local and global memory consistent after it).
  std::string barrier() const { return require_2_1("barrier")->barrier(api_->context); }
  // ABI 2.1: a statement updating element `index` of SCATTER operand k atomically (FUGUE_ATOMIC_*).
  std::string atomic_at(int32_t op, uint32_t operand, const std::string& index, const std::string& value) const {
    return require_2_1("atomic_at")->atomic_at(api_->context, op, operand, index.c_str(), value.c_str());
  }
  // ABI 2.1: the extent of array operand k along `axis`, as a long expression: a kernel argument or a
  // literal, as the core chooses. Falls back to the literal where the core predates 2.1's extent.
  std::string extent(uint32_t operand, uint32_t axis) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, extent)) {
      const fugue_type& t = call_.operand(operand);
      return "(" + std::to_string(t.shape[axis]) + "L)";
    }
    return api_->extent(api_->context, operand, axis);
  }
  // ABI 2.2: an expression calling function operand k with `args` (expressions of `arg_dtypes`), of
  // the dtype Call::function_result gives for them.
  std::string call_function(uint32_t operand, const std::vector<fugue_dtype>& arg_dtypes,
                            const std::vector<std::string>& args) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, call_function))
      throw Unsupported("this Fugue's emit API predates ABI 2.2, which user functions need: run the plugin with a "
                        "newer Fugue");
    if (args.size() != arg_dtypes.size())
      throw std::logic_error("call_function: " + std::to_string(args.size()) + " arguments for " +
                             std::to_string(arg_dtypes.size()) + " dtypes");
    std::vector<const char*> pointers;
    for (const auto& a : args) pointers.push_back(a.c_str());
    return api_->call_function(api_->context, operand, static_cast<uint32_t>(args.size()), arg_dtypes.data(),
                               pointers.data());
  }
  // ABI 2.2: the element of array operand k `offsets` (one per axis) away from the current element
  // (ELEMENT phase), which the caller keeps inside the array: one address per element, the offsets constant.
  std::string read_offset(uint32_t operand, const std::vector<int64_t>& offsets) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, read_offset))
      throw Unsupported("this Fugue's emit API predates ABI 2.2, which read_offset needs: run the plugin with a newer "
                        "Fugue");
    return api_->read_offset(api_->context, operand, static_cast<uint32_t>(offsets.size()), offsets.data());
  }
  // ABI 2.1: a statement updating `element` of one of the operation's local arrays atomically.
  std::string atomic_local(int32_t op, fugue_dtype dtype, const std::string& element, const std::string& value) const {
    return require_2_1("atomic_local")->atomic_local(api_->context, op, dtype, element.c_str(), value.c_str());
  }
  // The work-group size, a compile-time number.
  int64_t local_size() const { return std::stoll(builtin(FUGUE_BUILTIN_LOCAL_SIZE)); }

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
  const fugue_emit_api* require_2_1(const char* what) const {
    if (api_->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, atomic_local))
      throw Unsupported(std::string("this Fugue's emit API predates ABI 2.1, which ") + what +
                        " needs: run the plugin with a newer Fugue");
    return api_;
  }
  const fugue_emit_api* api_;
  const Call& call_;
};

// BLOCK level: code that combines every work-item's `value` (an OpenCL C expression of type
// `ctype`) with `combine` (an associative, commutative function of two expressions), through
// `scratch`, a local array of at least group_combine_scratch(local size) elements of that type
// (Emitter::local_array), and declares `result` holding the combination in every work-item. Every
// work-item of the group must run it. Two barriers: each item leaves its value; about sqrt(size)
// items combine a share each (neighbouring items reading neighbouring elements); every item then
// combines those partials, which the next combination through the same scratch overwrites only after
// its own first barrier.
inline int64_t group_combine_partials(int64_t local_size) {
  int64_t partials = 1;
  while (partials * partials < local_size) ++partials;
  return partials;
}
inline int64_t group_combine_scratch(int64_t local_size) { return local_size + group_combine_partials(local_size); }

template <class Combine>
std::string group_combine(const Emitter& em, const std::string& ctype, const std::string& value,
                          const std::string& scratch, const std::string& result, Combine combine) {
  const int64_t size = em.local_size(), partials = group_combine_partials(size);
  if (size == 1) return ctype + " " + result + " = " + value + ";\n";  // a team of one: nothing to combine
  const std::string id = em.builtin(FUGUE_BUILTIN_LOCAL_ID), sync = em.barrier() + "\n";
  const std::string n = std::to_string(size), p = std::to_string(partials), k = em.name("k"), acc = em.name("acc");
  auto at = [&](const std::string& i) { return scratch + "[" + i + "]"; };
  std::string code = at(id) + " = " + value + ";\n" + sync;
  code += "if (" + id + " < " + p + ") {\n  " + ctype + " " + acc + " = " + at(id) + ";\n  for (int " + k + " = " + id +
          " + " + p + "; " + k + " < " + n + "; " + k + " += " + p + ") " + acc + " = " + combine(acc, at(k)) + ";\n  " +
          at(n + " + " + id) + " = " + acc + ";\n}\n" + sync;
  code += ctype + " " + result + " = " + at(n) + ";\n";
  code += "for (int " + k + " = 1; " + k + " < " + p + "; ++" + k + ") " + result + " = " + combine(result, at(n + " + " + k)) +
          ";\n";
  return code;
}

// ---------------------------------------------------------------------------------------------
// Plans

using Plan = abi::Plan;
using Partition = abi::Partition;
using Workspace = abi::Workspace;

// A partition of `kind` for an operand of `rank` axes (halo and tiles zero).
inline Partition partition(fugue_partition_kind kind, uint32_t rank = 0) {
  Partition p;
  p.kind = kind;
  p.halo.assign(rank, 0);
  return p;
}

// A BATCH partition: axes 0..batch_axis of the operand number its entries, the rest is one entry
// (batch_axis -1: the whole operand is one entry).
inline Partition batch_partition(uint32_t rank, int32_t batch_axis) {
  Partition p = partition(FUGUE_PARTITION_BATCH, rank);
  p.batch_axis = batch_axis;
  return p;
}

// A plan over a flat index space of `n` elements, in which array operands are ELEMENTWISE and
// scalars/consts WHOLE. The core picks the work-group size between 1 and 1024.
inline Plan elementwise_plan(const Call& call, fugue_level level, int64_t n) {
  Plan plan;
  plan.level = level;
  plan.launch.work_dim = 1;
  plan.launch.iteration[0] = n;
  plan.launch.local_min = 1;
  plan.launch.local_max = 1024;
  plan.launch.local_multiple = 1;
  plan.launch.local_preferred = 256;
  plan.phases = FUGUE_PHASE_ELEMENT;
  for (uint32_t i = 0; i < call.size(); ++i) {
    const auto& t = call.operand(i);
    plan.partitions.push_back(t.kind == FUGUE_KIND_ARRAY      ? partition(FUGUE_PARTITION_ELEMENTWISE, t.rank)
                              : t.kind == FUGUE_KIND_FUNCTION ? partition(FUGUE_PARTITION_NONE)  // called, not read
                                                              : partition(FUGUE_PARTITION_WHOLE));
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Host arrays (references)

// Typed access to a fugue_host_array, any dtype: reals through double (integers also exactly through
// int64_t), complex numbers through std::complex<double>.
class HostView {
 public:
  explicit HostView(fugue_host_array& a) : a_(&a) {}
  const fugue_type& type() const { return *a_->type; }
  // Part k of a kind with storage (its type's parts[k]), a dense array.
  HostView part(uint32_t k) const {
    if (a_->struct_size < FUGUE_SIZE_UP_TO(fugue_host_array, parts) || !a_->parts || k >= a_->num_parts)
      throw std::logic_error("the host array has no part " + std::to_string(k));
    return HostView(*FUGUE_NTH_MUTABLE(fugue_host_array, a_->parts, k));
  }
  uint32_t parts() const {
    return a_->struct_size >= FUGUE_SIZE_UP_TO(fugue_host_array, parts) && a_->parts ? a_->num_parts : 0;
  }
  // The array itself: a plugin that composes kinds views a run of its parts as a value of its own.
  fugue_host_array& raw() const { return *a_; }
  void* data() const { return a_->data; }
  uint64_t bytes() const { return a_->bytes; }
  int64_t size() const { return type().kind == FUGUE_KIND_ARRAY ? elements(type()) : 1; }
  fugue_dtype dtype() const { return type().dtype; }
  // Element i (a scalar or const repeats its one value); a complex element reads as its real part.
  double get(int64_t i) const {
    if (type().kind == FUGUE_KIND_CONST) return type().const_value;
    if (type().kind != FUGUE_KIND_ARRAY) i = 0;
    switch (dtype()) {
      case FUGUE_DTYPE_F32: return static_cast<const float*>(a_->data)[i];
      case FUGUE_DTYPE_F64: return static_cast<const double*>(a_->data)[i];
      case FUGUE_DTYPE_I32: return static_cast<const int32_t*>(a_->data)[i];
      case FUGUE_DTYPE_I64: return static_cast<double>(static_cast<const int64_t*>(a_->data)[i]);
      case FUGUE_DTYPE_U8: return static_cast<const uint8_t*>(a_->data)[i];
      case FUGUE_DTYPE_U32: return static_cast<const uint32_t*>(a_->data)[i];
      case FUGUE_DTYPE_C64:
      case FUGUE_DTYPE_C128: return get_complex(i).real();
      default: throw std::logic_error("host array without dtype");
    }
  }
  // Element i as a complex number (a real element has imaginary part 0).
  std::complex<double> get_complex(int64_t i) const {
    if (type().kind == FUGUE_KIND_CONST) return type().const_value;
    if (type().kind != FUGUE_KIND_ARRAY) i = 0;
    switch (dtype()) {
      case FUGUE_DTYPE_C64: {
        const float* p = static_cast<const float*>(a_->data) + 2 * i;
        return {p[0], p[1]};
      }
      case FUGUE_DTYPE_C128: {
        const double* p = static_cast<const double*>(a_->data) + 2 * i;
        return {p[0], p[1]};
      }
      default: return get(i);
    }
  }
  int64_t get_int(int64_t i) const {
    if (type().kind == FUGUE_KIND_CONST) return static_cast<int64_t>(type().const_value);
    if (type().kind != FUGUE_KIND_ARRAY) i = 0;
    switch (dtype()) {
      case FUGUE_DTYPE_I64: return static_cast<const int64_t*>(a_->data)[i];
      case FUGUE_DTYPE_I32: return static_cast<const int32_t*>(a_->data)[i];
      case FUGUE_DTYPE_U8: return static_cast<const uint8_t*>(a_->data)[i];
      case FUGUE_DTYPE_U32: return static_cast<const uint32_t*>(a_->data)[i];
      default: return static_cast<int64_t>(get(i));
    }
  }
  // Store: floats rounded to the dtype, integers wrapped to it (two's complement, as the device does),
  // complex elements get imaginary part 0.
  void set(int64_t i, double v) {
    switch (dtype()) {
      case FUGUE_DTYPE_F32: static_cast<float*>(a_->data)[i] = static_cast<float>(v); return;
      case FUGUE_DTYPE_F64: static_cast<double*>(a_->data)[i] = v; return;
      case FUGUE_DTYPE_C64:
      case FUGUE_DTYPE_C128: set_complex(i, v); return;
      default: set_int(i, static_cast<int64_t>(v)); return;
    }
  }
  void set_complex(int64_t i, std::complex<double> v) {
    switch (dtype()) {
      case FUGUE_DTYPE_C64: {
        float* p = static_cast<float*>(a_->data) + 2 * i;
        p[0] = static_cast<float>(v.real());
        p[1] = static_cast<float>(v.imag());
        return;
      }
      case FUGUE_DTYPE_C128: {
        double* p = static_cast<double*>(a_->data) + 2 * i;
        p[0] = v.real();
        p[1] = v.imag();
        return;
      }
      default: set(i, v.real()); return;
    }
  }
  void set_int(int64_t i, int64_t v) {
    switch (dtype()) {
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
  uint32_t traits = 0;  // FUGUE_OP_*
  // The calls `fugue conformance` runs (JSON, see fugue_op_desc.test_cases). Empty: the suite
  // derives them from the signature.
  std::string test_cases;

  // Fill the types of OUT operands. Throw InvalidArgument naming the operand at fault.
  // `types` holds every operand's type in signature order; write the OUT entries.
  virtual void infer(const Call& call, std::vector<Type>& types) const = 0;
  // One partition per operand, in signature order.
  virtual Plan plan(const Call& call) const = 0;
  // ELEMENT, ITEM and BLOCK levels.
  virtual void emit(const Call&, const Plan&, const Emitter&) const {
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

 public:
  // Runs f, turning its exceptions into a status and a message (kinds use it too).
  template <class F>
  static fugue_status guard(fugue_error* error, F&& f) {
    auto fail = [&](fugue_status status, const char* what) {
      if (error && error->struct_size >= FUGUE_SIZE_UP_TO(fugue_error, message) && error->message &&
          error->capacity > 0)
        std::snprintf(error->message, error->capacity, "%s", what);
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

 private:
  // Throws InvalidArgument (IN and INOUT: the program's) or logic_error (OUT: the operation's) when
  // operand i's type is outside its signature's kinds and dtypes.
  void check_signature(uint32_t i, const Type& t) const {
    const OperandSpec& spec = operands[i];
    bool kind_ok = t.kind > FUGUE_KIND_NONE && t.kind < 32 && (spec.kinds & FUGUE_KIND_BIT(t.kind));
    if (kind_ok && t.kind == FUGUE_KIND_PLUGIN)
      kind_ok = (" " + spec.plugin_kinds + " ").find(" " + t.kind_name + " ") != std::string::npos;
    const bool dtype_ok = t.kind == FUGUE_KIND_CONST || t.kind == FUGUE_KIND_FUNCTION ||
                          (fugue_dtype_supported(t.dtype) && (spec.dtypes & FUGUE_DTYPE_BIT(t.dtype)));
    if (kind_ok && dtype_ok) return;
    std::string kind_list;
    for (fugue_kind k = FUGUE_KIND_ARRAY; k <= FUGUE_KIND_CONST; ++k)
      if (spec.kinds & FUGUE_KIND_BIT(k)) kind_list += std::string(kind_list.empty() ? "" : " or ") + kind_name(k);
    if (spec.kinds & FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN))
      kind_list += std::string(kind_list.empty() ? "" : " or ") + spec.plugin_kinds;
    if (spec.kinds & FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION))
      kind_list += std::string(kind_list.empty() ? "" : " or ") + "function";
    const std::string signature = kind_list + " of " + dtype_names(spec.dtypes);
    if (spec.role != FUGUE_ROLE_OUT)
      throw InvalidArgument("operand " + spec.name + ": expected " + signature + ", found " + type_string(t));
    throw std::logic_error("operand " + spec.name + ": infer produced " + type_string(t) +
                           ", outside its signature (" + signature + "): a bug in the operation");
  }
  static const Operation& self(const fugue_op_desc* op) {
    return *static_cast<const Operation*>(op->user_data);
  }
  // The core must hand over structs at least as large as ABI 2.0's (a newer core's may be larger).
  static void check_call(const fugue_op_desc* op, const fugue_call* call) {
    if (!call || call->struct_size < FUGUE_SIZE_UP_TO(fugue_call, device))
      throw std::logic_error("fugue_call is smaller than ABI 2.0's");
    if (call->num_operands != self(op).operands.size())
      throw std::logic_error("operand count differs from the signature");
    if (call->num_operands > 0 && call->operands->struct_size < FUGUE_SIZE_UP_TO(fugue_type, runtime_axes))
      throw std::logic_error("fugue_type is smaller than ABI 2.0's");
    if (call->num_attrs > 0 && call->attrs->struct_size < FUGUE_SIZE_UP_TO(fugue_attr_value, dtype))
      throw std::logic_error("fugue_attr_value is smaller than ABI 2.0's");
    for (uint32_t i = 0; i < call->num_operands; ++i) {
      const fugue_type& t = *FUGUE_NTH(fugue_type, call->operands, i);
      if (t.view) throw Unsupported("operand " + self(op).operands[i].name + " is a view; views are not supported yet");
      if (t.runtime_axes && self(op).operands[i].role != FUGUE_ROLE_OUT && !(self(op).traits & FUGUE_OP_RUNTIME_EXTENTS))
        throw Unsupported("operand " + self(op).operands[i].name + " has a run-time length, which " + self(op).name +
                          " does not take");
      if (!(self(op).traits & FUGUE_OP_RUNTIME_COUNTS))
        for (uint32_t k = 0; k < t.num_parts; ++k)
          if (FUGUE_NTH(fugue_type, t.parts, k)->runtime_axes)
            throw Unsupported("operand " + self(op).operands[i].name + " holds parts whose length is counted at run time, which " +
                              self(op).name + " does not take");
    }
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
      // Outputs start empty: an operation whose infer forgets one fails the signature check below,
      // even where the call's entry holds the program's declaration (ABI 2.18), which infer reads
      // through call.operand(i) when it needs it.
      const Operation& o = self(op);
      std::vector<Type> result;
      for (uint32_t i = 0; i < call->num_operands; ++i)
        result.push_back(o.operands[i].role == FUGUE_ROLE_OUT ? Type() : Type(*FUGUE_NTH(fugue_type, call->operands, i)));
      // The signature's masks hold for every call, whoever makes it: the operation's own infer then
      // only checks what is particular to it, and never returns a type its signature excludes.
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (o.operands[i].role != FUGUE_ROLE_OUT) o.check_signature(i, result[i]);
      o.infer(o.view(call), result);
      if (result.size() != call->num_operands) throw std::logic_error("infer changed the number of operands");
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (o.operands[i].role == FUGUE_ROLE_INOUT && !(result[i] == Type(*FUGUE_NTH(fugue_type, call->operands, i))))
          throw std::logic_error("operand " + o.operands[i].name + ": infer changed the type of an in-place operand");
      for (uint32_t i = 0; i < call->num_operands; ++i)
        if (o.operands[i].role == FUGUE_ROLE_OUT) o.check_signature(i, result[i]);
      // Everything is checked before the first output is written: on failure they stay untouched.
      for (uint32_t i = 0; i < call->num_operands; ++i) {
        const fugue_type& room = *FUGUE_NTH(fugue_type, types, i);
        if (o.operands[i].role == FUGUE_ROLE_OUT &&
            (result[i].rank() > room.shape_capacity || (result[i].rank() > 0 && !room.shape)))
          throw std::logic_error("operand " + o.operands[i].name + ": infer produced " +
                                 std::to_string(result[i].rank()) + " axes; the core takes at most " +
                                 std::to_string(room.shape_capacity));
      }
      for (uint32_t i = 0; i < call->num_operands; ++i) {
        if (o.operands[i].role != FUGUE_ROLE_OUT) continue;
        fugue_type& t = *FUGUE_NTH_MUTABLE(fugue_type, types, i);
        t.kind = result[i].kind;
        t.dtype = result[i].dtype;
        t.rank = result[i].rank();
        std::copy(result[i].shape.begin(), result[i].shape.end(), t.shape);
        t.const_value = result[i].const_value;
        if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, runtime_axes)) t.runtime_axes = result[i].runtime_axes;
        if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, kind_name))
          t.kind_name = result[i].kind_name.empty() ? nullptr : interned(result[i].kind_name);
      }
    });
  }
  // A copy of `text` that lives as long as the plugin (the kind names infer hands the core).
  static const char* interned(const std::string& text) {
    static std::mutex mutex;
    static std::set<std::string> strings;  // nodes never move
    std::lock_guard<std::mutex> lock(mutex);
    return strings.insert(text).first->c_str();
  }
  static fugue_status plan_thunk(const fugue_op_desc* op, const fugue_call* call, fugue_plan* plan,
                                 fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (plan->struct_size < FUGUE_SIZE_UP_TO(fugue_plan, registers) || !plan->launch ||
          plan->launch->struct_size < FUGUE_SIZE_UP_TO(fugue_launch, local_preferred))
        throw std::logic_error("fugue_plan is smaller than ABI 2.0's");
      try {
        abi::write_plan(self(op).plan(self(op).view(call)), *plan);
      } catch (const std::length_error& e) {
        throw std::logic_error(std::string("plan: ") + e.what());
      }
    });
  }
  static fugue_status emit_thunk(const fugue_op_desc* op, const fugue_call* call,
                                 const fugue_plan* plan, const fugue_emit_api* api,
                                 fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (api->struct_size < FUGUE_SIZE_UP_TO(fugue_emit_api, read_at))
        throw std::logic_error("fugue_emit_api is smaller than ABI 2.0's");
      Call c = self(op).view(call);
      self(op).emit(c, abi::PlanBuffer::read(*plan), Emitter(api, c));
    });
  }
  static fugue_status execute_thunk(const fugue_op_desc* op, const fugue_call* call,
                                    const fugue_device_services* services, fugue_error* error) {
    return guard(error, [&] {
      check_call(op, call);
      if (services->struct_size < FUGUE_SIZE_UP_TO(fugue_device_services, workspace))
        throw std::logic_error("fugue_device_services is smaller than ABI 2.0's");
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
                                o.doc.c_str(), o.plugin_kinds.empty() ? nullptr : o.plugin_kinds.c_str(), o.flags, o.default_value});
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

// ---------------------------------------------------------------------------------------------
// Kinds

// What a kind's declare makes of a declaration: the type operations see, and the metadata baked
// into kernels (in a layout the kind's plugin documents for the operations that read it).
// One part of a kind with storage: a dense array type.
struct PartType {
  fugue_dtype dtype = FUGUE_DTYPE_NONE;
  std::vector<int64_t> shape;
  // 2.21: bit 0 when axis 0's length is the value's count, known at run time (shape[0]: its capacity).
  uint32_t runtime_axes = 0;
};

struct Declared {
  fugue_dtype dtype = FUGUE_DTYPE_NONE;
  std::vector<int64_t> shape;
  std::vector<unsigned char> metadata;
  std::vector<PartType> parts;  // a kind with storage: every part, in the kind's order
  std::string kind_name;        // a format's probe of a file holding a kind with storage: which kind;
                                // probe_as for a chooser kind: the kind it chose
  std::string note;             // probe_as for a chooser kind: why it chose it (fugue explain shows it)
};

namespace detail {
// Writes d's parts into the core's room (fugue_declared.parts); false when the room is too small and
// num_parts says how much is needed.
inline bool write_parts(const Declared& d, fugue_declared& out) {
  if (d.parts.empty()) return true;
  if (out.struct_size < FUGUE_SIZE_UP_TO(fugue_declared, kind_name))
    throw std::logic_error("fugue_declared has no room for parts (older core)");
  out.num_parts = static_cast<uint32_t>(d.parts.size());
  if (d.parts.size() > out.parts_capacity || !out.parts) return false;
  for (size_t k = 0; k < d.parts.size(); ++k) {
    fugue_declared& room = *FUGUE_NTH_MUTABLE(fugue_declared, out.parts, k);
    if (d.parts[k].shape.size() > room.shape_capacity)
      throw std::logic_error("part " + std::to_string(k) + " has " + std::to_string(d.parts[k].shape.size()) +
                             " axes; the core takes at most " + std::to_string(room.shape_capacity));
    room.dtype = d.parts[k].dtype;
    room.rank = static_cast<uint32_t>(d.parts[k].shape.size());
    std::copy(d.parts[k].shape.begin(), d.parts[k].shape.end(), room.shape);
    if (d.parts[k].runtime_axes) {
      if (room.struct_size < FUGUE_SIZE_UP_TO(fugue_declared, runtime_axes))
        throw Unsupported("a part whose length is counted at run time needs a Fugue core of ABI 2.21 or later");
      room.runtime_axes = d.parts[k].runtime_axes;
    }
  }
  return true;
}
// Writes a whole declared type into the core's room: metadata room first (when too small, only
// metadata_bytes is set and the core asks again), then the shape, the parts and the metadata; a chosen
// kind's name (kept alive in `kind_name`) and note too.
inline void write_declared(const Declared& d, fugue_declared& out, const char* who, std::string& kind_name) {
  if (out.struct_size < FUGUE_SIZE_UP_TO(fugue_declared, kind_name)) throw std::logic_error("fugue_declared is smaller than ABI 2.0's");
  if (d.metadata.size() > out.metadata_capacity) {
    out.metadata_bytes = d.metadata.size();
    return;
  }
  if (d.shape.size() > out.shape_capacity)
    throw std::logic_error(std::string(who) + " gave " + std::to_string(d.shape.size()) + " axes; the core takes at most " +
                           std::to_string(out.shape_capacity));
  if (!write_parts(d, out))
    throw std::logic_error(std::string(who) + " gave " + std::to_string(d.parts.size()) + " parts; the kind has " +
                           std::to_string(out.parts_capacity));
  out.dtype = d.dtype;
  out.rank = static_cast<uint32_t>(d.shape.size());
  std::copy(d.shape.begin(), d.shape.end(), out.shape);
  if (!d.metadata.empty()) std::memcpy(out.metadata, d.metadata.data(), d.metadata.size());
  out.metadata_bytes = d.metadata.size();
  if (!d.kind_name.empty()) out.kind_name = kind_name.assign(d.kind_name).c_str();
  if (!d.note.empty() && out.struct_size >= FUGUE_SIZE_UP_TO(fugue_declared, note_capacity) && out.note && out.note_capacity > 0) {
    const size_t n = std::min<size_t>(d.note.size(), out.note_capacity - 1);
    std::memcpy(out.note, d.note.data(), n);
    out.note[n] = 0;
  }
}
}  // namespace detail

// A kind of symbol the plugin defines, accepted by operations by name (sdk::in_kind). Without parts
// it is a compile-time kind: a type and metadata, no device value (a stencil's points). With parts it
// has storage: its values live on the device as those arrays (declare gives each part's type), DEVICE
// level operations reach them with part(), references with HostView::part().
class Kind {
 public:
  virtual ~Kind() = default;
  std::string name;                // what "kind" says in a declaration
  std::string doc;
  std::vector<std::string> keys;   // the keys a declaration may have besides "kind" and "doc"
  std::vector<std::string> parts;  // a kind with storage: its parts' names, in order
  // A chooser kind (ABI 2.6): no parts; its declarations take a kind with storage that a format's or a
  // generator's probe_as chooses ("from" is required; declare refuses declarations without it).
  bool chooser = false;

  // The type of `declaration` (a JSON object, as text). Throw InvalidArgument for a bad one, its
  // message starting with the JSON pointer of the part at fault ("/points/2/weight: expected a finite
  // number, found 1e999"); the core puts the file and the symbol in front.
  virtual Declared declare(const std::string& declaration) const = 0;
  // A valid declaration (JSON text) for an operand of `rank` axes and `dtype`: the conformance suite
  // declares one to call operations that take the kind.
  virtual std::string example(uint32_t rank, fugue_dtype dtype) const = 0;
  // A kind with storage (ABI 2.6): throw InvalidArgument when `value`'s parts, given one by one by a
  // program ("parts"), do not make a well-formed value (an index out of range). The core asks before the
  // run; values from the kind's formats, generators and operations are not asked about.
  virtual void check_value(const fugue_host_array& value) const { (void)value; }
  // A kind with storage whose values a program may split by rows across devices (ABI 2.13): set
  // `cuts_rows` and give the type of rows [first, first + count) of axis 0 of `value` as a value of the
  // kind of its own (rows_type), and fill `rows`, allocated with that type, with them (rows_value).
  bool cuts_rows = false;
  virtual Declared rows_type(const fugue_host_array& value, int64_t first, int64_t count) const {
    (void)value, (void)first, (void)count;
    throw std::logic_error("kind " + name + " cuts no rows");
  }
  virtual void rows_value(const fugue_host_array& value, int64_t first, int64_t count, fugue_host_array& rows) const {
    (void)value, (void)first, (void)count, (void)rows;
    throw std::logic_error("kind " + name + " cuts no rows");
  }
  // ABI 2.14, with cuts_rows: set `gives_columns` and give the columns [first, one past the last) that rows
  // [first, first + count) of `value` hold entries in ({0, 0} when none), for operations that read an
  // operand only at the columns of the kind's entries (fugue_plan.read_at_columns).
  bool gives_columns = false;
  virtual std::pair<int64_t, int64_t> rows_columns(const fugue_host_array& value, int64_t first, int64_t count) const {
    (void)value, (void)first, (void)count;
    throw std::logic_error("kind " + name + " gives no columns");
  }

  const fugue_kind_desc* descriptor() {
    keys_text_.clear();
    for (const auto& k : keys) keys_text_ += (keys_text_.empty() ? "" : " ") + k;
    desc_ = fugue_kind_desc{};
    desc_.struct_size = sizeof desc_;
    desc_.name = name.c_str();
    desc_.doc = doc.c_str();
    desc_.flags = chooser ? FUGUE_KIND_FLAG_CHOOSER : parts.empty() ? FUGUE_KIND_FLAG_COMPILE_TIME : FUGUE_KIND_FLAG_STORAGE;
    desc_.keys = keys_text_.c_str();
    parts_text_.clear();
    for (const auto& p : parts) parts_text_ += (parts_text_.empty() ? "" : " ") + p;
    desc_.parts = parts.empty() ? nullptr : parts_text_.c_str();
    desc_.declare = &declare_thunk;
    desc_.example = &example_thunk;
    desc_.check_value = &check_value_thunk;
    desc_.rows_type = cuts_rows ? &rows_type_thunk : nullptr;
    desc_.rows_value = cuts_rows ? &rows_value_thunk : nullptr;
    desc_.rows_columns = cuts_rows && gives_columns ? &rows_columns_thunk : nullptr;
    desc_.user_data = this;
    return &desc_;
  }

 private:
  static const Kind& self(const fugue_kind_desc* k) { return *static_cast<const Kind*>(k->user_data); }
  static fugue_status declare_thunk(const fugue_kind_desc* k, const char* declaration, fugue_declared* out,
                                    fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out || out->struct_size < FUGUE_SIZE_UP_TO(fugue_declared, metadata_bytes))
        throw std::logic_error("fugue_declared is smaller than ABI 2.0's");
      write_declared(self(k), self(k).declare(declaration ? declaration : ""), *out);
    });
  }
  // Writes `d` (a type with parts) into the core's room as declare does; false when the metadata needs
  // more room (metadata_bytes then says how much).
  static bool write_declared(const Kind& kind, const Declared& d, fugue_declared& out) {
    if (d.metadata.size() > out.metadata_capacity) {  // the core asks again with this much room
      out.metadata_bytes = d.metadata.size();
      return false;
    }
    if (d.shape.size() > out.shape_capacity)
      throw std::logic_error("the type has " + std::to_string(d.shape.size()) + " axes; the core takes at most " +
                             std::to_string(out.shape_capacity));
    if (d.parts.size() != kind.parts.size())
      throw std::logic_error("the type has " + std::to_string(d.parts.size()) + " parts; the kind has " +
                             std::to_string(kind.parts.size()));
    if (!detail::write_parts(d, out)) throw std::logic_error("the core offers too little room for the parts");
    out.dtype = d.dtype;
    out.rank = static_cast<uint32_t>(d.shape.size());
    std::copy(d.shape.begin(), d.shape.end(), out.shape);
    if (!d.metadata.empty()) std::memcpy(out.metadata, d.metadata.data(), d.metadata.size());
    out.metadata_bytes = d.metadata.size();
    return true;
  }
  static fugue_status rows_type_thunk(const fugue_kind_desc* k, const fugue_host_array* value, int64_t first, int64_t count,
                                      fugue_declared* out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out || out->struct_size < FUGUE_SIZE_UP_TO(fugue_declared, metadata_bytes))
        throw std::logic_error("fugue_declared is smaller than ABI 2.0's");
      if (!value) throw std::logic_error("rows_type without a value");
      write_declared(self(k), self(k).rows_type(*value, first, count), *out);
    });
  }
  static fugue_status rows_value_thunk(const fugue_kind_desc* k, const fugue_host_array* value, int64_t first, int64_t count,
                                       fugue_host_array* rows, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!value || !rows) throw std::logic_error("rows_value without a value");
      self(k).rows_value(*value, first, count, *rows);
    });
  }
  static fugue_status rows_columns_thunk(const fugue_kind_desc* k, const fugue_host_array* value, int64_t first, int64_t count,
                                         int64_t* columns, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!value || !columns) throw std::logic_error("rows_columns without a value");
      const auto [begin, end] = self(k).rows_columns(*value, first, count);
      columns[0] = begin;
      columns[1] = end;
    });
  }
  static fugue_status check_value_thunk(const fugue_kind_desc* k, const fugue_host_array* value, fugue_error* error) {
    return Operation::guard(error, [&] { self(k).check_value(*value); });
  }
  static fugue_status example_thunk(const fugue_kind_desc* k, uint32_t rank, fugue_dtype dtype, fugue_text* out,
                                    fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out || out->struct_size < FUGUE_SIZE_UP_TO(fugue_text, length))
        throw std::logic_error("fugue_text is smaller than ABI 2.0's");
      const std::string text = self(k).example(rank, dtype);
      out->length = text.size();
      if (text.size() + 1 > out->capacity) return;  // the core asks again with this much room
      std::memcpy(out->text, text.c_str(), text.size() + 1);
    });
  }

  std::string keys_text_, parts_text_;
  fugue_kind_desc desc_{};
};

// ---------------------------------------------------------------------------------------------
// File formats and generators

// A file format the plugin reads and/or writes, chosen by extension. Override probe and read to read,
// accepts and write to write (a format may do one or both). Throw InvalidArgument for a bad file or a
// type it cannot write, saying what is wrong; the core puts the file's path in front.
class Format {
 public:
  virtual ~Format() = default;
  std::string name;                     // an identifier: "flo"
  std::string doc;
  std::vector<std::string> extensions;  // lower case, with the dot: ".flo"

  virtual bool reads() const { return false; }
  virtual bool writes() const { return false; }
  // The dtype and shape `path` holds (read no more than the header).
  virtual Declared probe(const std::string& path) const { throw Unsupported(name + " does not read: " + path); }
  // Reads the values into `array` (allocated by the core with the type probe gave).
  virtual void read(const std::string& path, fugue_host_array& array) const {
    (void)array;
    throw Unsupported(name + " does not read: " + path);
  }
  // Formats that convert as they read (ABI 2.6): a file read as the value a declaration of a kind with
  // storage describes (a sparse matrix read as CSR or ELL, the parts' sizes from the file). A program's
  // declaration with "from" such a file takes its type from probe_as (the kind's declare is not called):
  // the dtype, shape, parts and metadata, as declare gives them. read_as fills `array` (allocated with
  // that type, its metadata included); throw InvalidArgument when the file no longer gives that type.
  // `device`: the device the program is loaded for, null when none (fugue validate); a chooser kind's
  // declaration (FUGUE_KIND_FLAG_CHOOSER) gets Declared::kind_name, the kind chosen for it, and a note.
  virtual bool reads_as() const { return false; }
  virtual Declared probe_as(const std::string& path, const std::string& declaration, const fugue_device_desc* device) const {
    (void)declaration;
    (void)device;
    throw Unsupported(name + " does not read files as declared values: " + path);
  }
  virtual void read_as(const std::string& path, const std::string& declaration, const fugue_device_desc* device,
                       fugue_host_array& array) const {
    (void)declaration;
    (void)device;
    (void)array;
    throw Unsupported(name + " does not read files as declared values: " + path);
  }
  // Returns normally when it writes values of `type`; throws InvalidArgument saying why not.
  virtual void accepts(const fugue_type& type) const {
    (void)type;
    throw InvalidArgument(name + " does not write");
  }
  // Writes to `path`, a staging file the core renames into place.
  virtual void write(const std::string& path, const fugue_host_array& array) const {
    (void)array;
    throw Unsupported(name + " does not write: " + path);
  }

  const fugue_format_desc* descriptor() {
    extensions_text_.clear();
    for (const auto& e : extensions) extensions_text_ += (extensions_text_.empty() ? "" : " ") + e;
    desc_ = fugue_format_desc{};
    desc_.struct_size = sizeof desc_;
    desc_.name = name.c_str();
    desc_.doc = doc.c_str();
    desc_.extensions = extensions_text_.c_str();
    if (reads()) desc_.probe = &probe_thunk, desc_.read = &read_thunk;
    if (writes()) desc_.accepts = &accepts_thunk, desc_.write = &write_thunk;
    if (reads_as()) desc_.probe_as = &probe_as_thunk, desc_.read_as = &read_as_thunk;
    desc_.user_data = this;
    return &desc_;
  }

 private:
  static const Format& self(const fugue_format_desc* f) { return *static_cast<const Format*>(f->user_data); }
  static fugue_status probe_thunk(const fugue_format_desc* f, const char* path, fugue_declared* out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out || out->struct_size < FUGUE_SIZE_UP_TO(fugue_declared, metadata_bytes))
        throw std::logic_error("fugue_declared is smaller than ABI 2.0's");
      Declared d = self(f).probe(path ? path : "");
      if (d.shape.size() > out->shape_capacity)
        throw InvalidArgument("holds " + std::to_string(d.shape.size()) + " axes; Fugue takes at most " +
                              std::to_string(out->shape_capacity));
      if (!d.parts.empty()) {
        if (!detail::write_parts(d, *out)) return;  // the core asks again with room for num_parts
        out->kind_name = self(f).kind_name_.assign(d.kind_name).c_str();
      }
      out->dtype = d.dtype;
      out->rank = static_cast<uint32_t>(d.shape.size());
      std::copy(d.shape.begin(), d.shape.end(), out->shape);
      out->metadata_bytes = 0;
    });
  }
  static fugue_status probe_as_thunk(const fugue_format_desc* f, const char* path, const char* declaration,
                                     const fugue_device_desc* device, fugue_declared* out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out) throw std::logic_error("no fugue_declared");
      detail::write_declared(self(f).probe_as(path ? path : "", declaration ? declaration : "{}", device), *out, "probe_as",
                             self(f).kind_name_);
    });
  }
  static fugue_status read_as_thunk(const fugue_format_desc* f, const char* path, const char* declaration,
                                    const fugue_device_desc* device, fugue_host_array* array, fugue_error* error) {
    return Operation::guard(error, [&] { self(f).read_as(path ? path : "", declaration ? declaration : "{}", device, *array); });
  }
  static fugue_status read_thunk(const fugue_format_desc* f, const char* path, fugue_host_array* array, fugue_error* error) {
    return Operation::guard(error, [&] { self(f).read(path ? path : "", *array); });
  }
  static fugue_status accepts_thunk(const fugue_format_desc* f, const fugue_type* type, fugue_error* error) {
    return Operation::guard(error, [&] { self(f).accepts(*type); });
  }
  static fugue_status write_thunk(const fugue_format_desc* f, const char* path, const fugue_host_array* array,
                                  fugue_error* error) {
    return Operation::guard(error, [&] { self(f).write(path ? path : "", *array); });
  }

  std::string extensions_text_;
  mutable std::string kind_name_;  // what the last probe's kind_name points at (the core copies it)
  fugue_format_desc desc_{};
};

// A generator of initial values, `"from": {"<name>": parameters}`. Throw InvalidArgument for bad
// parameters, the message starting with a JSON pointer inside them ("/stop: expected a number").
class Generator {
 public:
  virtual ~Generator() = default;
  std::string name;  // an identifier: "linspace"
  std::string doc;
  uint32_t dtypes = FUGUE_DTYPES_FLOAT;

  // Arrays (the usual case): check and generate.
  virtual bool makes_arrays() const { return true; }
  // Checks `parameters` (JSON text) for an array of `type`, before the program runs.
  virtual void check(const std::string& parameters, const fugue_type& type) const {
    (void)parameters;
    (void)type;
    throw Unsupported(name + " makes no arrays");
  }
  // Fills `array`; the same parameters always give the same values.
  virtual void generate(const std::string& parameters, fugue_host_array& array) const {
    (void)parameters;
    (void)array;
    throw Unsupported(name + " makes no arrays");
  }
  // Whole values of kinds with storage (ABI 2.6): `"from": {"poisson": {...}}` in a declaration of such a
  // kind. probe_as gives the type of what `parameters` make as `declaration` (the program's JSON object,
  // with "kind", without "from") declares it — dtype, shape, parts, metadata, as a kind's declare would —
  // before the program runs; generate_as fills the value (allocated with that type, metadata included). Throw
  // InvalidArgument for bad parameters (a message starting with a pointer inside them) or a declaration it
  // cannot make.
  // `device` as for Format::probe_as (a chooser kind's declaration gets the kind chosen and a note).
  virtual bool makes_values() const { return false; }
  virtual Declared probe_as(const std::string& parameters, const std::string& declaration, const fugue_device_desc* device) const {
    (void)parameters;
    (void)declaration;
    (void)device;
    throw Unsupported(name + " makes no values of kinds");
  }
  virtual void generate_as(const std::string& parameters, const std::string& declaration, const fugue_device_desc* device,
                           fugue_host_array& value) const {
    (void)parameters;
    (void)declaration;
    (void)device;
    (void)value;
    throw Unsupported(name + " makes no values of kinds");
  }

  const fugue_generator_desc* descriptor() {
    desc_ = fugue_generator_desc{};
    desc_.struct_size = sizeof desc_;
    desc_.name = name.c_str();
    desc_.doc = doc.c_str();
    if (makes_arrays()) {
      desc_.dtypes = dtypes;
      desc_.check = &check_thunk;
      desc_.generate = &generate_thunk;
    }
    if (makes_values()) desc_.probe_as = &probe_as_thunk, desc_.generate_as = &generate_as_thunk;
    desc_.user_data = this;
    return &desc_;
  }

 private:
  static const Generator& self(const fugue_generator_desc* g) { return *static_cast<const Generator*>(g->user_data); }
  static fugue_status check_thunk(const fugue_generator_desc* g, const char* parameters, const fugue_type* type,
                                  fugue_error* error) {
    return Operation::guard(error, [&] { self(g).check(parameters ? parameters : "", *type); });
  }
  static fugue_status generate_thunk(const fugue_generator_desc* g, const char* parameters, fugue_host_array* array,
                                     fugue_error* error) {
    return Operation::guard(error, [&] { self(g).generate(parameters ? parameters : "", *array); });
  }
  static fugue_status probe_as_thunk(const fugue_generator_desc* g, const char* parameters, const char* declaration,
                                     const fugue_device_desc* device, fugue_declared* out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!out) throw std::logic_error("no fugue_declared");
      detail::write_declared(self(g).probe_as(parameters ? parameters : "", declaration ? declaration : "{}", device), *out,
                             "probe_as", self(g).kind_name_);
    });
  }
  static fugue_status generate_as_thunk(const fugue_generator_desc* g, const char* parameters, const char* declaration,
                                        const fugue_device_desc* device, fugue_host_array* value, fugue_error* error) {
    return Operation::guard(error, [&] {
      self(g).generate_as(parameters ? parameters : "", declaration ? declaration : "{}", device, *value);
    });
  }

  mutable std::string kind_name_;  // what the last probe_as's kind_name points at (the core copies it)
  fugue_generator_desc desc_{};
};

// A tuner (ABI 2.8): measures on one device, offline, what the plugin's choices depend on. `fugue tune
// <name>` times the programs `programs` gives and passes their timings to `table`, whose JSON the core
// stores as "<device.tuning_folder>/<name>.json"; the plugin reads that file back where it chooses for
// the device (tuning_table below).
class Tuner {
 public:
  virtual ~Tuner() = default;
  std::string name;  // an identifier: "sparse"
  std::string doc;

  // JSON text: an array of {"label": "...", "program": {...}}. flags: FUGUE_TUNE_QUICK for small sizes.
  virtual std::string programs(const fugue_device_desc& device, uint32_t flags) const = 0;
  // JSON text of the table, from `measurements` (an array of {"label", "seconds", "bytes", "flops"}).
  virtual std::string table(const fugue_device_desc& device, const std::string& measurements) const = 0;

  const fugue_tuner_desc* descriptor() {
    desc_ = fugue_tuner_desc{};
    desc_.struct_size = sizeof desc_;
    desc_.name = name.c_str();
    desc_.doc = doc.c_str();
    desc_.programs = &programs_thunk;
    desc_.table = &table_thunk;
    desc_.user_data = this;
    return &desc_;
  }

 private:
  static Tuner& self(const fugue_tuner_desc* t) { return *static_cast<Tuner*>(t->user_data); }
  static fugue_status programs_thunk(const fugue_tuner_desc* t, const fugue_device_desc* device, uint32_t flags,
                                     const char** out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!device || !out) throw std::logic_error("programs without a device or a place for the text");
      self(t).text_ = self(t).programs(*device, flags);
      *out = self(t).text_.c_str();
    });
  }
  static fugue_status table_thunk(const fugue_tuner_desc* t, const fugue_device_desc* device, const char* measurements,
                                  const char** out, fugue_error* error) {
    return Operation::guard(error, [&] {
      if (!device || !out) throw std::logic_error("table without a device or a place for the text");
      self(t).text_ = self(t).table(*device, measurements ? measurements : "[]");
      *out = self(t).text_.c_str();
    });
  }
  fugue_tuner_desc desc_{};
  std::string text_;  // what the last call returned
};

// How many values of `dtype`'s parts (f32 or f64; complex values count their parts) the device's
// arithmetic takes at once (ABI 2.10: a CPU's SIMD lanes, 1 on GPUs), 0 where the core does not say.
inline uint32_t native_vector_width(const fugue_device_desc* device, fugue_dtype dtype) {
  if (!device || device->struct_size < FUGUE_SIZE_UP_TO(fugue_device_desc, native_vector_width_double)) return 0;
  return dtype == FUGUE_DTYPE_F64 || dtype == FUGUE_DTYPE_C128 ? device->native_vector_width_double : device->native_vector_width_float;
}

// The device's instruction set (ABI 2.15: "sm_90" on an NVIDIA GPU of compute capability 9.0), "" where
// the core or the driver does not say.
inline std::string architecture(const fugue_device_desc* device) {
  if (!device || device->struct_size < FUGUE_SIZE_UP_TO(fugue_device_desc, architecture) || !device->architecture) return "";
  return device->architecture;
}

// The compute capability of an NVIDIA architecture "sm_XY" as XY (90 for "sm_90"), 0 for any other.
inline int nvidia_compute_capability(const fugue_device_desc* device) {
  const std::string a = architecture(device);
  if (a.size() < 4 || a.size() > 8 || a.compare(0, 3, "sm_") != 0) return 0;
  int v = 0;
  for (size_t i = 3; i < a.size(); ++i) {
    if (a[i] < '0' || a[i] > '9') return 0;
    v = v * 10 + (a[i] - '0');
  }
  return v;
}

// Whether the device runs work-items in warps of 32 (its subgroup sizes hold 32): what plans issuing
// warp-wide instructions (mma.sync, shfl.sync) need.
inline bool has_warps_of_32(const fugue_device_desc* device) {
  if (!device) return false;
  for (uint32_t i = 0; i < device->num_subgroup_sizes; ++i)
    if (device->subgroup_sizes[i] == 32) return true;
  return false;
}

// The path of the tuning table `<tuner>.json` of `device` (ABI 2.8), or "" where the core gives no
// tuning folder (an older core, a machine without a cache folder).
inline std::string tuning_table_path(const fugue_device_desc* device, const std::string& tuner) {
  if (!device || device->struct_size < FUGUE_SIZE_UP_TO(fugue_device_desc, tuning_folder) || !device->tuning_folder ||
      !*device->tuning_folder)
    return {};
  return std::string(device->tuning_folder) + "/" + tuner + ".json";
}

// The text of `device`'s tuning table `<tuner>.json`, or "" where there is none (not tuned: the
// defaults built in). InvalidArgument naming the file when it is there but cannot be read. Read once
// per process and path: plans and executions that consult it every call do no I/O after the first.
inline std::string read_tuning_table(const fugue_device_desc* device, const std::string& tuner) {
  const std::string path = tuning_table_path(device, tuner);
  if (path.empty()) return {};
  static std::mutex mutex;
  static std::map<std::string, std::string> read;  // path -> text ("" where there is no file)
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = read.find(path); it != read.end()) return it->second;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return read[path] = "";
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(path, error) || !in)
    throw InvalidArgument("the tuning table " + path + " cannot be read (not a file, or not readable); run `fugue tune " + tuner +
                          "` again (or delete it)");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InvalidArgument("the tuning table " + path + " cannot be read; run `fugue tune " + tuner + "` again (or delete it)");
  return read[path] = text.empty() ? std::string(" ") : text;  // an empty file is there: malformed, not absent
}

// The plugin ABI minor version of the core that loaded the plugin (FUGUE_SDK_PLUGIN records its entry
// point's argument; 0 where the plugin was not loaded through it, as in a unit test): what a plan may
// count on the core to emit (ABI 2.22: Emitter::count).
inline uint32_t& core_abi_minor_held() {
  static uint32_t minor = 0;
  return minor;
}
inline uint32_t core_abi_minor() { return core_abi_minor_held(); }

class Plugin {
 public:
  Plugin(std::string name, std::string version, std::string description)
      : name_(std::move(name)), version_(std::move(version)), description_(std::move(description)) {}
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  void add(std::unique_ptr<Operation> op) { ops_.push_back(std::move(op)); }
  void add_kind(std::unique_ptr<Kind> kind) { kinds_.push_back(std::move(kind)); }
  void add_format(std::unique_ptr<Format> format) { formats_.push_back(std::move(format)); }
  void add_generator(std::unique_ptr<Generator> generator) { generators_.push_back(std::move(generator)); }
  void add_tuner(std::unique_ptr<Tuner> tuner) { tuners_.push_back(std::move(tuner)); }

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
    kind_descs_.clear();
    for (auto& kind : kinds_) kind_descs_.push_back(kind->descriptor());
    table_.num_kinds = static_cast<uint32_t>(kind_descs_.size());
    table_.kinds = kind_descs_.empty() ? nullptr : kind_descs_.data();
    format_descs_.clear();
    for (auto& format : formats_) format_descs_.push_back(format->descriptor());
    table_.num_formats = static_cast<uint32_t>(format_descs_.size());
    table_.formats = format_descs_.empty() ? nullptr : format_descs_.data();
    generator_descs_.clear();
    for (auto& generator : generators_) generator_descs_.push_back(generator->descriptor());
    table_.num_generators = static_cast<uint32_t>(generator_descs_.size());
    table_.generators = generator_descs_.empty() ? nullptr : generator_descs_.data();
    tuner_descs_.clear();
    for (auto& tuner : tuners_) tuner_descs_.push_back(tuner->descriptor());
    table_.num_tuners = static_cast<uint32_t>(tuner_descs_.size());
    table_.tuners = tuner_descs_.empty() ? nullptr : tuner_descs_.data();
    return &table_;
  }

 private:
  std::string name_, version_, description_;
  std::vector<std::unique_ptr<Operation>> ops_;
  std::vector<std::unique_ptr<Kind>> kinds_;
  std::vector<std::unique_ptr<Format>> formats_;
  std::vector<std::unique_ptr<Generator>> generators_;
  std::vector<std::unique_ptr<Tuner>> tuners_;
  std::vector<const fugue_op_desc*> descs_;
  std::vector<const fugue_kind_desc*> kind_descs_;
  std::vector<const fugue_format_desc*> format_descs_;
  std::vector<const fugue_generator_desc*> generator_descs_;
  std::vector<const fugue_tuner_desc*> tuner_descs_;
  fugue_plugin table_{};
};

}  // namespace fugue::sdk

// Defines the plugin's entry point. `populate` is called once with the Plugin to add operations to.
// An exception while building the table returns NULL, which the core reports as a refused plugin.
#define FUGUE_SDK_PLUGIN(NAME, VERSION, DESCRIPTION, POPULATE)                      \
  FUGUE_DEFINE_PLUGIN_ENTRY {                                                       \
    (void)core_abi_major;                                                           \
    fugue::sdk::core_abi_minor_held() = core_abi_minor;                             \
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
