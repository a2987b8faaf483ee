#include "kernel_generator.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "errors.h"

// The emit context behind fugue_emit_api: what the accessors need to name operands.
struct fugue_emit_context {
  const fugue::PlannedOp* op = nullptr;
  size_t op_index = 0;
  uint32_t phase = 0;
  const std::map<std::string, std::string>* params = nullptr;  // symbol -> kernel parameter
  const fugue::Launch* launch = nullptr;
  bool finalize = false;
  std::string index;  // the element loop's index variable
  std::string* code = nullptr;
  std::deque<std::string> strings;  // keeps returned strings alive until emit returns
  std::string misuse;               // the first accessor misuse, reported after emit
};

namespace fugue {

std::string c_literal(double value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return value < 0 ? "(" + s + ")" : s;
}

namespace {

const char* keep(fugue_emit_context* c, std::string s) { return c->strings.emplace_back(std::move(s)).c_str(); }

const char* param_of(fugue_emit_context* c, uint32_t operand) {
  const auto& op = *c->op;
  if (operand >= op.statement->operands.size()) {
    if (c->misuse.empty()) c->misuse = "accessor asked for operand " + std::to_string(operand) + ", which does not exist";
    return nullptr;
  }
  auto it = c->params->find(op.statement->operands[operand]);
  if (it == c->params->end()) {
    if (c->misuse.empty())
      c->misuse = "accessor asked for operand " + std::to_string(operand) +
                  ", whose partition is NONE (the op promised not to touch it)";
    return nullptr;
  }
  return it->second.c_str();
}

const char* access(fugue_emit_context* c, uint32_t operand, bool write) {
  const auto& op = *c->op;
  if (operand < op.types.size() && op.types[operand].kind == FUGUE_KIND_CONST) {
    if (write) {
      c->misuse = "accessor asked to write const operand " + std::to_string(operand);
      return "0";
    }
    return keep(c, c_literal(op.types[operand].const_value));
  }
  const char* param = param_of(c, operand);
  if (!param) return "0";
  if (op.types[operand].kind == FUGUE_KIND_SCALAR) return keep(c, std::string(param) + "[0]");
  if (c->phase == FUGUE_PHASE_ELEMENT) return keep(c, std::string(param) + "[" + c->index + "]");
  return param;  // outside the element loop an array is its pointer
}

const char* read_fn(fugue_emit_context* c, uint32_t operand) { return access(c, operand, false); }
const char* write_fn(fugue_emit_context* c, uint32_t operand) { return access(c, operand, true); }

const char* ctype_fn(fugue_emit_context* c, fugue_dtype dtype) {
  try {
    return keep(c, std::string(dtype_ctype(static_cast<DType>(dtype))));
  } catch (const std::exception&) {
    c->misuse = "ctype of unknown dtype " + std::to_string(dtype);
    return "void";
  }
}

const char* name_fn(fugue_emit_context* c, const char* stem) {
  std::string s;
  for (const char* p = stem ? stem : ""; *p; ++p) s += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  return keep(c, s + "_" + std::to_string(c->op_index));
}

const char* builtin_fn(fugue_emit_context* c, int32_t which) {
  switch (which) {
    case FUGUE_BUILTIN_INDEX: return keep(c, c->index);
    case FUGUE_BUILTIN_LOCAL_ID: return "((int)get_local_id(0))";
    case FUGUE_BUILTIN_GROUP_ID: return "((int)get_group_id(0))";
    case FUGUE_BUILTIN_LOCAL_SIZE: return keep(c, std::to_string(c->launch->local_size));
    case FUGUE_BUILTIN_NUM_GROUPS: return c->finalize ? "fugue_groups" : "((int)get_num_groups(0))";
    default:
      c->misuse = "unknown builtin " + std::to_string(which);
      return "0";
  }
}

std::string workspace_name(size_t op, uint32_t k) { return "ws" + std::to_string(k) + "_" + std::to_string(op); }

const char* workspace_fn(fugue_emit_context* c, uint32_t k) {
  if (k >= c->op->plan.num_workspaces) {
    c->misuse = "workspace " + std::to_string(k) + " was not declared in the plan";
    return "0";
  }
  return keep(c, workspace_name(c->op_index, k));
}

void append_fn(fugue_emit_context* c, const char* code) {
  if (code) *c->code += code;
}

// Indents every line of `code` by `pad`.
std::string indent(const std::string& code, const std::string& pad) {
  std::string out;
  bool at_start = true;
  for (char ch : code) {
    if (at_start && ch != '\n') out += pad;
    out += ch;
    at_start = ch == '\n';
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

}  // namespace

GeneratedKernel generate_kernel(const std::vector<const PlannedOp*>& ops, const Launch& launch,
                                const std::string& kernel_name) {
  if (ops.empty()) throw std::logic_error("generate_kernel: no operations");
  GeneratedKernel k;
  k.launch = launch;
  k.main_name = kernel_name;
  const int64_t n = ops.front()->plan.launch.iteration[0];
  const fugue_level level = ops.front()->plan.level;

  // Parameters: each touched symbol once (written ones not const), then workspaces.
  std::map<std::string, std::string> params;
  std::vector<std::string> param_decls;
  std::map<std::string, std::pair<DType, bool>> symbols;  // symbol -> dtype, written
  std::vector<std::string> order;
  for (const auto* op : ops)
    for (size_t i = 0; i < op->statement->operands.size(); ++i) {
      const fugue_type& t = op->types[i];
      if (t.kind == FUGUE_KIND_CONST || op->plan.partitions[i].kind == FUGUE_PARTITION_NONE) continue;
      const std::string& s = op->statement->operands[i];
      bool written = op->statement->op->operands()[i]->role == FUGUE_ROLE_OUT;
      auto [it, fresh] = symbols.emplace(s, std::make_pair(static_cast<DType>(t.dtype), written));
      if (!fresh) it->second.second |= written;
      else order.push_back(s);
      if (t.dtype == FUGUE_DTYPE_F64) k.uses_fp64 = true;
    }
  // Parameters are named by position, not by symbol: the same operation on other symbols then
  // generates the same source and shares one program (KernelArg keeps the binding to symbols).
  for (const auto& s : order) {
    auto [dtype, written] = symbols[s];
    params[s] = "p" + std::to_string(params.size());
    param_decls.push_back(std::string("__global ") + (written ? "" : "const ") + std::string(dtype_ctype(dtype)) +
                          "* restrict " + params[s]);
    k.main_args.push_back({KernelArg::Kind::Symbol, s, 0, 0});
  }
  std::vector<std::string> workspace_decls;
  std::vector<KernelArg> workspace_args;
  bool any_finalize = false;
  for (size_t o = 0; o < ops.size(); ++o) {
    const auto& plan = ops[o]->plan;
    any_finalize |= (plan.phases & FUGUE_PHASE_FINALIZE) != 0;
    for (uint32_t w = 0; w < plan.num_workspaces; ++w) {
      DType dtype = static_cast<DType>(plan.workspace_dtype[w]);
      if (dtype == DType::F64) k.uses_fp64 = true;
      workspace_decls.push_back("__global " + std::string(dtype_ctype(dtype)) + "* restrict " + workspace_name(o, w));
      workspace_args.push_back({KernelArg::Kind::Workspace, "", o, w});
    }
  }
  const bool wide = n > std::numeric_limits<int32_t>::max() / 2;
  const std::string index_type = wide ? "long" : "int";
  // The element count (main kernel) and the number of partials (finalize) are arguments, so one
  // program serves every size of the same shape class.
  auto signature = [&](const std::string& name, const std::string& count_decl) {
    std::string sig = "__kernel __attribute__((reqd_work_group_size(" + std::to_string(launch.local_size) +
                      ", 1, 1)))\nvoid " + name + "(";
    std::vector<std::string> all = param_decls;
    all.insert(all.end(), workspace_decls.begin(), workspace_decls.end());
    all.push_back(count_decl);
    for (size_t i = 0; i < all.size(); ++i) sig += (i ? ",\n    " : "") + all[i];
    return sig + ")\n";
  };
  std::vector<KernelArg> args = k.main_args;
  args.insert(args.end(), workspace_args.begin(), workspace_args.end());
  k.main_args = args;

  // Runs one op's emit for one phase and returns its code.
  auto emit = [&](size_t o, uint32_t phase, bool finalize) {
    std::string code;
    fugue_emit_context context;
    context.op = ops[o];
    context.op_index = o;
    context.phase = phase;
    context.params = &params;
    context.launch = &launch;
    context.finalize = finalize;
    context.index = "i";
    context.code = &code;
    fugue_emit_api api{};
    api.struct_size = sizeof(fugue_emit_api);
    api.context = &context;
    api.phase = phase;
    api.read = &read_fn;
    api.write = &write_fn;
    api.ctype = &ctype_fn;
    api.name = &name_fn;
    api.builtin = &builtin_fn;
    api.workspace = &workspace_fn;
    api.append = &append_fn;
    ops[o]->statement->op->emit(ops[o]->call, ops[o]->plan, api);
    if (!context.misuse.empty())
      throw DeviceError(ops[o]->label + ": the plugin's emit misused an accessor: " + context.misuse);
    return code;
  };
  auto phase_code = [&](uint32_t phase, const std::string& pad, bool finalize) {
    std::string code;
    for (size_t o = 0; o < ops.size(); ++o) {
      if (!(ops[o]->plan.phases & phase)) continue;
      // The op's name, not its call site: identical operations generate identical source.
      code += pad + "/* " + ops[o]->statement->op->name() + " */\n" + indent(emit(o, phase, finalize), pad);
    }
    return code;
  };

  std::string src = "/* Generated by Fugue. */\n";
  if (k.uses_fp64) src += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  src += "\n" + signature(kernel_name, "const " + index_type + " fugue_n") + "{\n";
  if (level == FUGUE_LEVEL_BLOCK) {
    src += phase_code(FUGUE_PHASE_BODY, "  ", false);
  } else {
    src += phase_code(FUGUE_PHASE_PROLOGUE, "  ", false);
    if (launch.blocked) {
      src += "  const " + index_type + " chunk = (fugue_n + (" + index_type + ")get_global_size(0) - 1) / (" +
             index_type + ")get_global_size(0);\n";
      src += "  const " + index_type + " begin = (" + index_type + ")get_global_id(0) * chunk;\n";
      src += "  const " + index_type + " end = min(begin + chunk, fugue_n);\n";
      src += "  for (" + index_type + " i = begin; i < end; ++i) {\n";
    } else {
      src += "  for (" + index_type + " i = (" + index_type + ")get_global_id(0); i < fugue_n; i += (" + index_type +
             ")get_global_size(0)) {\n";
    }
    src += phase_code(FUGUE_PHASE_ELEMENT, "    ", false);
    src += "  }\n";
    src += phase_code(FUGUE_PHASE_EPILOGUE, "  ", false);
  }
  src += "}\n";
  k.elements = n;
  k.wide_index = wide;
  if (any_finalize) {
    k.finalize_name = kernel_name + "_finalize";
    k.finalize_args = k.main_args;
    src += "\n" + signature(k.finalize_name, "const int fugue_groups") + "{\n" +
           phase_code(FUGUE_PHASE_FINALIZE, "  ", true) + "}\n";
  }
  k.source = src;
  return k;
}

}  // namespace fugue
