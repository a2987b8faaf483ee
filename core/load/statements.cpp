// statements.cpp: the loader's body: loops, branches and operation calls, with their operands
// (kinds, dtypes, in-place operands) and attributes checked against the signature.
#include "load/loader.h"

#include <cmath>
#include <cstdint>

namespace fugue::load {

namespace {

// The integer nearest a double within int64's range (0 for NaN): converting one outside is undefined.
int64_t saturated_integer(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 9223372036854775807.0) return INT64_MAX;
  if (x <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(x);
}

// Whether the operation takes and makes values whose count is left to the run (ABI 2.21).
bool takes_counts(const Operation& op) {
  return op.plugin().abi_minor >= 21 && (op.traits() & FUGUE_OP_RUNTIME_COUNTS);
}

}  // namespace

// --- body -------------------------------------------------------------------------------
std::vector<Statement> Loader::statements(const json& list, const std::string& p, int loop_depth) {
  if (!list.is_array()) fail(p, "a list of statements", describe(list));
  // Loops and branches nest one level per body: bounded before anything recurses into them.
  if (nesting_ > kMaxStatementNesting)
    error(p, "loops and branches nested deeper than " + std::to_string(kMaxStatementNesting) + " levels");
  ++nesting_;
  std::vector<Statement> out;
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(statement(list[i], p + "/" + std::to_string(i), loop_depth));
  --nesting_;
  return out;
}

Statement Loader::statement(const json& v, const std::string& p, int loop_depth) {
  expect_object(v, p);
  Statement st;
  st.where = at(p);
  if (v.contains("op")) return op_call(v, p);
  if (v.contains("for")) {
    check_keys(v, p, {"for", "count", "body", "doc"});
    st.kind = Statement::Kind::For;
    if (!v["for"].is_string()) fail(p + "/for", "the loop variable's name", describe(v["for"]));
    st.variable = v["for"].get<std::string>();
    check_name(st.variable, p + "/for");
    auto existing = program_.symbols.find(st.variable);
    if (active_loops_.count(st.variable))
      error(p + "/for", "loop variable '" + st.variable + "' is already the variable of an enclosing loop");
    if (existing != program_.symbols.end() && !loop_variables_.count(st.variable))
      error(p + "/for", "loop variable '" + st.variable + "' is already a symbol (" +
                            existing->second.where + ")");
    Symbol var;
    var.name = st.variable;
    var.kind = SymbolKind::Scalar;
    var.dtype = DType::I64;
    var.typed = true;
    var.where = at(p + "/for");
    program_.symbols[st.variable] = var;
    loop_variables_.insert(st.variable);
    defined_.insert(st.variable);
    if (!v.contains("count")) fail(p + "/count", "the iteration count", "none");
    const auto& count = v["count"];
    if (count.is_string()) {
      st.count_symbol = count.get<std::string>();
      const Symbol& s = readable(st.count_symbol, p + "/count");
      if (s.kind != SymbolKind::Const && (s.kind != SymbolKind::Scalar || dtype_is_complex(s.dtype)))
        fail(p + "/count", "a const or a real scalar", s.kind_text() + " '" + s.name + "'" +
                                                         (dtype_is_complex(s.dtype) ? " (complex)" : ""));
      if (s.kind == SymbolKind::Const &&
          (s.const_value < 0 || s.const_value != std::floor(s.const_value) || s.const_value > 9.0e15))
        fail(p + "/count", "a non-negative integer count", "const '" + s.name + "' = " + c_number(s.const_value));
    } else if (count.is_number_integer() && count.get<int64_t>() >= 0) {
      st.count_value = count.get<int64_t>();
    } else {
      fail(p + "/count", "a non-negative integer or the name of a const or scalar", describe(count));
    }
    if (!v.contains("body")) fail(p + "/body", "the loop body", "none");
    active_loops_.insert(st.variable);
    st.body = statements(v["body"], p + "/body", loop_depth + 1);
    active_loops_.erase(st.variable);
    return st;
  }
  if (v.contains("if")) {
    check_keys(v, p, {"if", "then", "else", "doc"});
    st.kind = Statement::Kind::If;
    const auto& cond = v["if"];
    static const std::vector<std::string> comparisons = {"lt", "le", "gt", "ge", "eq", "ne"};
    if (!cond.is_object() || cond.size() != 1 ||
        std::find(comparisons.begin(), comparisons.end(), cond.begin().key()) == comparisons.end())
      fail(p + "/if", "one comparison {\"lt|le|gt|ge|eq|ne\": [a, b]}", describe(cond));
    st.compare = cond.begin().key();
    const auto& args = cond.begin().value();
    std::string pa = p + "/if/" + st.compare;
    if (!args.is_array() || args.size() != 2) fail(pa, "a list of two operands", describe(args));
    comparand(args[0], pa + "/0", st.lhs_symbol, st.lhs_value);
    comparand(args[1], pa + "/1", st.rhs_symbol, st.rhs_value);
    if (!v.contains("then")) fail(p + "/then", "the statements to run when the comparison holds", "none");
    auto before = defined_;
    st.body = statements(v["then"], p + "/then", loop_depth);
    auto after_then = defined_;
    defined_ = before;
    if (v.contains("else")) st.else_body = statements(v["else"], p + "/else", loop_depth);
    // Defined after the if: what both branches define.
    std::set<std::string> both;
    for (const auto& n : after_then)
      if (defined_.count(n)) both.insert(n);
    defined_ = both;
    return st;
  }
  if (v.contains("break")) {
    check_keys(v, p, {"break", "doc"});
    if (v["break"] != true) fail(p + "/break", "true", describe(v["break"]));
    if (loop_depth == 0) error(p, "break outside a for loop");
    st.kind = Statement::Kind::Break;
    return st;
  }
  fail(p, "a statement: an object with \"op\", \"for\", \"if\" or \"break\"", describe(v));
}

void Loader::comparand(const json& v, const std::string& p, std::string& symbol, double& value) {
  if (v.is_number()) {
    value = v.get<double>();
    return;
  }
  if (!v.is_string()) fail(p, "a number or the name of a scalar or const", describe(v));
  symbol = v.get<std::string>();
  const Symbol& s = readable(symbol, p);
  if (s.kind == SymbolKind::Array)
    fail(p, "a scalar or const (reduce the array first, e.g. with array.max)", "array '" + symbol + "'");
  if (s.kind != SymbolKind::Const && (s.kind != SymbolKind::Scalar || dtype_is_complex(s.dtype)))
    fail(p, "a real scalar or a const", s.kind_text() + " '" + symbol + "'" +
                                           (dtype_is_complex(s.dtype) ? " (complex: complex numbers have no order)" : ""));
}

// A symbol that is read here: it must be declared and written before.
const Symbol& Loader::readable(const std::string& name, const std::string& p) const {
  auto it = program_.symbols.find(name);
  if (it == program_.symbols.end()) error(p, "undeclared symbol '" + name + "'" + suggest_symbol(name));
  if (!defined_.count(name))
    error(p, "symbol '" + name + "' is read before anything writes it (give it a \"from\" or " +
                 "\"value\", or compute it first)");
  return it->second;
}

std::string Loader::suggest_symbol(const std::string& name) const {
  std::string best;
  size_t best_d = 3;
  for (const auto& [other, s] : program_.symbols) {
    size_t d = edit_distance(name, other);
    if (d < best_d) best_d = d, best = other;
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string Loader::unknown_op_message(const std::string& name) const {
  std::string best;
  size_t best_d = 4;
  std::vector<std::string> families;
  for (const auto& plugin : registry_.plugins())
    for (const auto* op : registry_.operations_of(*plugin)) {
      size_t d = edit_distance(name, op->name());
      if (d < best_d) best_d = d, best = op->name();
    }
  std::string msg = "unknown operation '" + name + "'";
  if (!best.empty()) msg += " (did you mean '" + best + "'?)";
  if (!registry_.refusals().empty())
    msg += "; " + std::to_string(registry_.refusals().size()) +
           " plugin file(s) were refused, see `fugue plugins`";
  if (registry_.plugins().empty())
    msg += "; no plugins are loaded: set FUGUE_PLUGIN_PATH or pass --plugin FILE";
  return msg;
}

std::string Loader::anonymous_const(double value) {
  std::string name = "const_" + std::to_string(anonymous_++);
  Symbol s;
  s.name = name;
  s.kind = SymbolKind::Const;
  s.const_value = value;
  s.typed = true;
  s.where = "inline number";
  s.inline_number = true;
  program_.symbols[name] = s;
  defined_.insert(name);
  return name;
}

std::string Loader::kinds_string(const fugue_operand_desc& d) {
  std::vector<std::string> k;
  if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)) k.push_back("array");
  if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_SCALAR)) k.push_back("scalar");
  if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST)) k.push_back("const");
  if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_FUNCTION)) k.push_back("function");
  if ((d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN)) && d.plugin_kinds) {
    std::istringstream names(d.plugin_kinds);
    for (std::string name; names >> name;) k.push_back(name);
  }
  return join(k, " or ");
}

// Whether the operand accepts a value of type t (a plugin kind by name).
bool Loader::accepts_kind(const fugue_operand_desc& d, const abi::Type& t) {
  if (!(d.kinds & FUGUE_KIND_BIT(t.kind))) return false;
  if (t.kind != FUGUE_KIND_PLUGIN) return true;
  std::istringstream names(d.plugin_kinds ? d.plugin_kinds : "");
  for (std::string name; names >> name;)
    if (name == t.kind_name) return true;
  return false;
}

Statement Loader::op_call(const json& v, const std::string& p) {
  check_keys(v, p, {"op", "in", "out", "attrs", "doc"});
  Statement st;
  st.kind = Statement::Kind::Op;
  st.where = at(p);
  if (!v["op"].is_string()) fail(p + "/op", "an operation name such as \"array.add\"", describe(v["op"]));
  std::string name = v["op"].get<std::string>();
  st.op = registry_.find(name);
  if (!st.op) error(p + "/op", unknown_op_message(name));
  const Operation& op = *st.op;
  st.operands.assign(op.operands().size(), "");
  st.operand_pointers.assign(op.operands().size(), "");

  // `optional`: how many entries at the list's end a program may leave out.
  auto names = [&](const char* key, const std::vector<uint32_t>& slots, size_t optional = 0) {
    std::vector<std::string> expected;
    for (uint32_t slot : slots) expected.push_back(op.operands()[slot]->name);
    std::string pk = p + "/" + key;
    json list = v.contains(key) ? v[key] : json::array();
    if (!list.is_array()) fail(pk, "a list of symbol names", describe(list));
    if (list.size() > slots.size() || list.size() + optional < slots.size())
      fail(pk,
           (optional ? std::to_string(slots.size() - optional) + " to " : std::string()) + std::to_string(slots.size()) +
               " operand(s) (" + join(expected) + (optional ? "; the last " + std::to_string(optional) + " may be left out" : "") +
               ") for " + name,
           std::to_string(list.size()));
    return list;
  };

  // Inputs: symbol names (or numbers, which become consts); optional inputs left out are their
  // default numbers.
  json ins = names("in", op.inputs(), op.optional_inputs());
  for (size_t i = 0; i < ins.size(); ++i) st.operand_pointers[op.inputs()[i]] = "/in/" + std::to_string(i);
  for (size_t i = ins.size(); i < op.inputs().size(); ++i) ins.push_back(op.default_value(op.inputs()[i]));
  CallDescriptor call;
  call.values.resize(op.operands().size());
  call.functions.resize(op.operands().size());
  for (size_t i = 0; i < ins.size(); ++i) {
    uint32_t slot = op.inputs()[i];
    const auto* desc = op.operands()[slot];
    std::string pi = p + "/in/" + std::to_string(i);
    std::string symbol;
    if (ins[i].is_number()) {
      symbol = anonymous_const(ins[i].get<double>());
    } else if (ins[i].is_string()) {
      symbol = ins[i].get<std::string>();
      readable(symbol, pi);
    } else {
      fail(pi, "a symbol name or a number", describe(ins[i]));
    }
    const Symbol& s = program_.symbols.at(symbol);
    abi::Type t = s.type();
    std::string label = "operand '" + std::string(desc->name) + "' of " + name;
    if (!accepts_kind(*desc, t))
      error(pi, label + ": expected " + kinds_string(*desc) + ", found " +
                    (s.inline_number ? "the number " + c_number(s.const_value) : s.kind_text() + " '" + symbol + "'"));
    if (t.kind != FUGUE_KIND_CONST && t.kind != FUGUE_KIND_FUNCTION && !(desc->dtypes & FUGUE_DTYPE_BIT(t.dtype)))
      error(pi, label + ": expected dtype " + dtype_names(desc->dtypes) + ", found " +
                    std::string(dtype_name(s.dtype)) + " '" + symbol + "'");
    if (t.runtime_axes && !(op.traits() & FUGUE_OP_RUNTIME_EXTENTS))
      error(pi, label + ": '" + symbol + "' has a run-time length (" + s.shape_text() + "), which " + name +
                    " does not take");
    if (!takes_counts(op) && s.counted_at_run_time())
      error(pi, label + ": '" + symbol + "' has a count left to the run (" + s.where + "), which " + name + " does not take");
    st.operands[slot] = symbol;
    call.values[slot] = std::move(t);
    call.functions[slot] = s.function;
  }

  attributes(st, op, v.contains("attrs") ? v["attrs"] : json::object(), p + "/attrs");

  // Outputs: names; undeclared ones become temporaries typed by infer. An optional output the program
  // leaves out gets a temporary named by its place (a JSON pointer, which no program can name).
  json outs = names("out", op.outputs(), op.optional_outputs());
  for (size_t i = 0; i < outs.size(); ++i)
    if (!op.reads(op.outputs()[i])) st.operand_pointers[op.outputs()[i]] = "/out/" + std::to_string(i);
  for (size_t i = outs.size(); i < op.outputs().size(); ++i) st.operands[op.outputs()[i]] = p + "/out/" + std::to_string(i);
  for (size_t i = 0; i < outs.size(); ++i) {
    uint32_t slot = op.outputs()[i];
    std::string po = p + "/out/" + std::to_string(i);
    if (!outs[i].is_string()) fail(po, "a symbol name", describe(outs[i]));
    std::string symbol = outs[i].get<std::string>();
    check_name(symbol, po);
    if (op.reads(slot)) in_place(st, slot, symbol, po, p, name);
    auto it = program_.symbols.find(symbol);
    if (it != program_.symbols.end() && it->second.compile_time())
      error(po, "'" + symbol + "' is a " + it->second.kind_text() + " and cannot be written");
    if (loop_variables_.count(symbol)) error(po, "'" + symbol + "' is a loop variable and cannot be written");
    for (size_t j = 0; j < i; ++j)
      if (outs[j] == outs[i]) error(po, "'" + symbol + "' is written twice by one operation");
    st.operands[slot] = symbol;
  }

  // Infer and reconcile with declarations and earlier assignments. An output declared with a kind with
  // storage shows infer its declaration (ABI 2.18: the program chooses that result's layout); a plugin
  // built before 2.18 sees kind NONE there, as it did then.
  for (uint32_t slot : op.outputs())
    if (auto it = program_.symbols.find(st.operands[slot]);
        op.plugin().abi_minor >= 18 && !op.reads(slot) && it != program_.symbols.end() && it->second.compound()) {
      if (!takes_counts(op) && it->second.counted_at_run_time())
        error(p + "/out/" + std::to_string(std::find(op.outputs().begin(), op.outputs().end(), slot) - op.outputs().begin()),
              "'" + it->first + "' is declared with a count left to the run (" + it->second.where + "), which " + name +
                  " does not count: declare it exactly");
      call.values[slot] = it->second.type();
    }
  call.bind(st.attrs, nullptr);
  std::vector<abi::Type> inferred;
  try {
    inferred = op.infer(call.call);
  } catch (const UserError& e) {
    error(p + st.pointer_of(e.what()), e.what());
  }
  for (size_t i = 0; i < op.outputs().size(); ++i) {
    uint32_t slot = op.outputs()[i];
    if (!op.reads(slot)) assign_output(st.operands[slot], inferred[slot], p + "/out/" + std::to_string(i), name);
  }
  run_time_origins(st, p);
  return st;
}

// Run-time lengths meet only when they come from the same place: an operation that follows them
// (FUGUE_OP_RUNTIME_EXTENTS) must read lengths of one origin and gives its results that origin; any
// other operation that makes one (array.compact) is the origin of its results'.
void Loader::run_time_origins(const Statement& st, const std::string& p) {
  const Operation& op = *st.op;
  std::string origin, first;
  for (uint32_t i : op.inputs()) {
    const std::string& s = st.operands[i];
    if (!program_.symbols.at(s).runtime_axes) continue;
    const std::string& o = extent_origins_.count(s) ? extent_origins_.at(s) : s;
    if (!origin.empty() && o != origin)
      error(p, "'" + first + "' and '" + s + "' have run-time lengths from different places (" + origin + " and " + o +
                   "), which may differ: combine values of one length (from one array.compact, one file)");
    origin = o;
    first = s;
  }
  const bool follows = op.traits() & FUGUE_OP_RUNTIME_EXTENTS;
  for (uint32_t o : op.outputs()) {
    const std::string& s = st.operands[o];
    if (!program_.symbols.at(s).runtime_axes || op.reads(o)) continue;
    extent_origins_[s] = follows && !origin.empty() ? origin : p;
  }
}

// An INOUT operand names one symbol in `out` and in `in`; it is updated where it is stored, so it
// must be storage (an array or a scalar) and no other operand may read it while it changes.
void Loader::in_place(const Statement& st, uint32_t slot, const std::string& written, const std::string& po,
              const std::string& p, const std::string& op_name) {
  const Operation& op = *st.op;
  const std::string& read = st.operands[slot];
  const auto& inputs = op.inputs();
  const size_t in_index = std::find(inputs.begin(), inputs.end(), slot) - inputs.begin();
  const std::string label = "operand '" + std::string(op.operands()[slot]->name) + "' of " + op_name;
  if (written != read)
    error(po, label + " is updated in place: name the same symbol here and at " + p + "/in/" +
                  std::to_string(in_index) + " (found '" + written + "' and '" + read + "')");
  const Symbol& s = program_.symbols.at(read);
  if (s.compile_time() || s.inline_number)
    error(p + "/in/" + std::to_string(in_index),
          label + " is updated in place, so it must be an array or a scalar, not a " +
              (s.inline_number ? std::string("number") : s.kind_text()));
  for (uint32_t other : inputs)
    if (other != slot && st.operands[other] == read)
      error(po, label + " is updated in place while operand '" + op.operands()[other]->name +
                    "' reads '" + read + "' too; read a copy (array.copy) instead");
}

void Loader::attributes(Statement& st, const Operation& op, const json& attrs, const std::string& p) {
  expect_object(attrs, p);
  std::vector<std::string> known;
  for (const auto* a : op.attrs()) known.push_back(a->name);
  for (const auto& [key, value] : attrs.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      error(p + "/" + key, "unknown attribute '" + key + "' of " + op.name() +
                               (known.empty() ? " (it takes none)" : " (expected " + join(known) + ")"));
  for (const auto* a : op.attrs()) {
    fugue_attr_value value{};
    value.struct_size = sizeof(fugue_attr_value);
    value.name = st.keep(a->name);
    value.type = a->type;
    std::string pa = p + "/" + a->name;
    bool given = attrs.contains(a->name);
    if (given) st.written_attrs.push_back(a->name);
    if (!given && a->required) error(p, op.name() + " needs attribute '" + std::string(a->name) + "'");
    const json v = given ? attrs[a->name] : json();
    switch (a->type) {
      case FUGUE_ATTR_NUMBER:
        value.number = given ? number_of(v, pa) : a->default_number;
        value.integer = saturated_integer(value.number);  // a double beyond int64 has no integer value
        break;
      case FUGUE_ATTR_INT:
        if (given && !v.is_number_integer()) fail(pa, "an integer", describe(v));
        if (given && v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
          fail(pa, "an integer from -2^63 to 2^63 - 1", describe(v));
        value.integer = given ? v.get<int64_t>() : saturated_integer(a->default_number);
        value.number = static_cast<double>(value.integer);
        break;
      case FUGUE_ATTR_BOOL:
        if (given && !v.is_boolean()) fail(pa, "true or false", describe(v));
        value.integer = given ? (v.get<bool>() ? 1 : 0) : (a->default_number != 0 ? 1 : 0);
        value.number = static_cast<double>(value.integer);
        break;
      case FUGUE_ATTR_STRING:
        if (given && !v.is_string()) fail(pa, "a string", describe(v));
        value.string = st.keep(given ? v.get<std::string>() : std::string(a->default_string ? a->default_string : ""));
        break;
      case FUGUE_ATTR_DTYPE: {
        std::string text = given ? "" : (a->default_string ? a->default_string : "");
        if (given) {
          value.dtype = static_cast<fugue_dtype>(dtype_of(v, pa));
        } else if (text.empty()) {
          value.dtype = FUGUE_DTYPE_NONE;
        } else {
          auto d = parse_dtype(text);
          if (!d)
            throw DeviceError(at(pa) + ": plugin '" + op.plugin().name + "' gives attribute '" + a->name +
                              "' the default '" + text + "', which is not a dtype");
          value.dtype = static_cast<fugue_dtype>(*d);
        }
        value.string = st.keep(given ? v.get<std::string>() : text);
        break;
      }
      default:
        error(pa, "attribute '" + std::string(a->name) + "' has an unknown type in plugin '" +
                      op.plugin().name + "'");
    }
    st.attrs.push_back(value);
  }
}

}  // namespace fugue::load
