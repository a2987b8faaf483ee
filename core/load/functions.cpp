// functions.cpp: the loader's user functions: {"kind": "function", "params": [...], "body": [...],
// "result": name}. Parameters are read now; bodies once every symbol is declared, since they read the
// program's consts (JSON objects have no order to rely on).
#include "load/loader.h"
#include "program/user_function.h"

namespace fugue::load {

void Loader::declare_function(Symbol& s, const json& decl, const std::string& p) {
  check_keys(decl, p, {"kind", "params", "body", "result", "doc"});
  auto f = std::make_shared<UserFunction>();
  f->name = s.name;
  f->where = at(p);
  if (!decl.contains("params")) fail(p + "/params", "the function's parameters: a list of names", "none");
  const json& params = decl["params"];
  if (!params.is_array() || params.empty() || params.size() > kMaxFunctionParams)
    fail(p + "/params", "a list of 1 to " + std::to_string(kMaxFunctionParams) + " parameter names", describe(params));
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string pi = p + "/params/" + std::to_string(i);
    if (!params[i].is_string()) fail(pi, "a parameter name", describe(params[i]));
    const std::string name = params[i].get<std::string>();
    check_name(name, pi);
    if (std::find(f->params.begin(), f->params.end(), name) != f->params.end())
      error(pi, "parameter '" + name + "' is named twice");
    f->params.push_back(name);
  }
  if (!decl.contains("result")) fail(p + "/result", "the name of the function's result (a parameter or a value its body "
                                                    "writes)", "none");
  if (!decl["result"].is_string()) fail(p + "/result", "a name", describe(decl["result"]));
  f->result = decl["result"].get<std::string>();
  if (!decl.contains("body")) fail(p + "/body", "the function's body: a list of operation calls", "none");
  if (!decl["body"].is_array()) fail(p + "/body", "a list of operation calls", describe(decl["body"]));
  s.kind = SymbolKind::Function;
  s.typed = true;
  s.function = f;
  pending_functions_.push_back({s.name, decl["body"], p});
}

void Loader::define_functions() {
  for (const auto& pending : pending_functions_) {
    Symbol& s = program_.symbols.at(pending.name);
    auto f = std::const_pointer_cast<UserFunction>(s.function);
    const json& body = pending.body;
    for (size_t i = 0; i < body.size(); ++i) f->body.push_back(function_statement(*f, body[i], pending.pointer + "/body/" +
                                                                                                 std::to_string(i)));
    if (!f->local(f->result)) {
      std::vector<std::string> names = f->params;
      for (const auto& st : f->body)
        for (uint32_t o : st.op->outputs()) names.push_back(st.operands[o]);
      error(pending.pointer + "/result", "'" + f->result + "' is neither a parameter of '" + f->name +
                                             "' nor a value its body writes (" + join(names) + ")");
    }
  }
}

// One operation call of a function's body: its inputs are parameters, values written before, consts
// or numbers; its outputs are new values; no operand is updated in place or is itself a function. The
// function's own names (parameters and values) hide the program's symbols of the same names.
Statement Loader::function_statement(UserFunction& f, const json& v, const std::string& p) {
  expect_object(v, p);
  if (!v.contains("op"))
    error(p, "a function's body holds operation calls only ({\"op\": ..., \"out\": [...], \"in\": [...]}), no "
             "loops or branches");
  check_keys(v, p, {"op", "in", "out", "attrs", "doc"});
  Statement st;
  st.kind = Statement::Kind::Op;
  st.where = at(p);
  if (!v["op"].is_string()) fail(p + "/op", "an operation name such as \"array.add\"", describe(v["op"]));
  const std::string name = v["op"].get<std::string>();
  st.op = registry_.find(name);
  if (!st.op) error(p + "/op", unknown_op_message(name));
  const Operation& op = *st.op;
  st.operands.assign(op.operands().size(), "");
  for (uint32_t k = 0; k < op.operands().size(); ++k)
    if (op.role(k) == FUGUE_ROLE_INOUT)
      error(p + "/op", op.name() + " updates operand '" + op.operands()[k]->name +
                           "' in place, which a function's body cannot do: its operations compute element-wise values");
  auto list = [&](const char* key, const std::vector<uint32_t>& slots, size_t optional) {
    const std::string pk = p + "/" + key;
    json l = v.contains(key) ? v[key] : json::array();
    if (!l.is_array()) fail(pk, "a list of names", describe(l));
    if (l.size() > slots.size() || l.size() + optional < slots.size())
      fail(pk, (optional ? std::to_string(slots.size() - optional) + " to " : std::string()) + std::to_string(slots.size()) + " operand(s) for " + name,
           std::to_string(l.size()));
    return l;
  };
  json ins = list("in", op.inputs(), op.optional_inputs());
  for (size_t i = ins.size(); i < op.inputs().size(); ++i) ins.push_back(op.default_value(op.inputs()[i]));  // optional inputs left out
  for (size_t i = 0; i < ins.size(); ++i) {
    const uint32_t slot = op.inputs()[i];
    const auto* desc = op.operands()[slot];
    const std::string pi = p + "/in/" + std::to_string(i);
    const std::string label = "operand '" + std::string(desc->name) + "' of " + name;
    std::string symbol;
    if (ins[i].is_number()) {
      symbol = anonymous_const(ins[i].get<double>());
    } else if (ins[i].is_string()) {
      symbol = ins[i].get<std::string>();
    } else {
      fail(pi, "a name or a number", describe(ins[i]));
    }
    if (f.local(symbol)) {
      if (!(desc->kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)))
        error(pi, label + ": expected " + kinds_string(*desc) + ", found '" + symbol +
                      "', one element of the function's (which operations read as an array)");
      st.operands[slot] = symbol;
      continue;
    }
    auto it = program_.symbols.find(symbol);
    if (it == program_.symbols.end())
      error(pi, "'" + symbol + "' is neither a parameter of '" + f.name + "', a value its body wrote before, nor a "
                                "const of the program");
    const Symbol& s = it->second;
    if (s.kind != SymbolKind::Const)
      error(pi, "'" + symbol + "' is " + (s.kind == SymbolKind::Array ? "an " : "a ") + s.kind_text() + " of the program; a function's body reads its parameters, "
                                "the values it wrote before and consts");
    if (!(desc->kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST)))
      error(pi, label + ": expected " + kinds_string(*desc) + ", found " +
                    (s.inline_number ? "the number " + c_number(s.const_value) : "const '" + symbol + "'"));
    f.consts[symbol] = s.const_value;
    st.operands[slot] = symbol;
  }
  attributes(st, op, v.contains("attrs") ? v["attrs"] : json::object(), p + "/attrs");
  const json outs = list("out", op.outputs(), 0);
  for (size_t i = 0; i < outs.size(); ++i) {
    const uint32_t slot = op.outputs()[i];
    const std::string po = p + "/out/" + std::to_string(i);
    if (!outs[i].is_string()) fail(po, "a name", describe(outs[i]));
    const std::string symbol = outs[i].get<std::string>();
    check_name(symbol, po);
    if (!(op.operands()[slot]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)))
      error(po, op.name() + " writes '" + symbol + "' as a " + kinds_string(*op.operands()[slot]) +
                    "; a function's body holds element-wise operations, which write arrays");
    if (f.local(symbol) || std::find(st.operands.begin(), st.operands.end(), symbol) != st.operands.end())
      error(po, "'" + symbol + "' is written once in a function: it is " +
                    (std::find(f.params.begin(), f.params.end(), symbol) != f.params.end() ? "a parameter"
                                                                                           : "already a value") +
                    " of '" + f.name + "'; give the new value another name");
    st.operands[slot] = symbol;
  }
  return st;
}

}  // namespace fugue::load
