#include "test_calls.h"

#include "program/host_array.h"

#include <algorithm>
#include <sstream>

#include "errors.h"

namespace fugue::conformance {

using json = nlohmann::json;

namespace {

const DType kDtypeOrder[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8, DType::U32, DType::C64, DType::C128};

// Floats and complex numbers take fractional test values; integers whole ones.
bool fractional(DType dtype) { return dtype_is_float(dtype) || dtype_is_complex(dtype); }

DType dtype_from_name(const std::string& name) { return parse_dtype(name).value_or(DType::None); }

bool accepts(uint32_t mask, DType dtype) { return mask & FUGUE_DTYPE_BIT(static_cast<int>(dtype)); }

// The operand's dtype for a call testing `dtype`: that one if it takes it, else the first it takes.
DType dtype_for(const fugue_operand_desc& d, DType dtype) {
  if (accepts(d.dtypes, dtype)) return dtype;
  for (DType t : kDtypeOrder)
    if (accepts(d.dtypes, t)) return t;
  return dtype;
}

// Random inputs: the op's declared domain for floats; for integers a range wide enough to matter,
// and 0/1 for an integer operand beside another dtype (a mask or a condition).
std::pair<double, double> domain(const Operation& op, DType symbol_dtype, DType call_dtype) {
  if (fractional(symbol_dtype)) return {op.desc().test_low, op.desc().test_high};
  if (symbol_dtype != call_dtype) return {0, 1};
  bool is_unsigned = symbol_dtype == DType::U8 || symbol_dtype == DType::U32;
  return {is_unsigned || op.desc().test_low >= 0 ? 0 : -100, 100};
}

// The example declaration of the first plugin kind operand `d` accepts, for `rank` axes and `dtype`;
// null when no loaded plugin defines one of its kinds.
json kind_example(const fugue_operand_desc& d, const PluginRegistry& registry, size_t rank, DType dtype) {
  std::istringstream names(d.plugin_kinds ? d.plugin_kinds : "");
  for (std::string name; names >> name;)
    if (auto kind = registry.find_kind(name); kind && !kind->builtin()) {
      json example = json::parse(kind->example(static_cast<uint32_t>(rank), dtype), nullptr, false);
      if (!example.is_object()) throw UserError("kind " + name + ": its example declaration is not a JSON object");
      example["kind"] = name;
      return example;
    }
  return nullptr;
}

std::string shape_text(const json& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].dump();
  return s + "]";
}

// The extension of the first format that writes values declared by `declaration` (a kind with
// storage; its "from" and "parts" aside), with the declared type; "" when no format writes them.
std::string writer_extension(const PluginRegistry& registry, const Kind& kind, const json& declaration,
                             DeclaredType* declared = nullptr) {
  json own = declaration;
  for (const char* key : {"kind", "doc", "from", "parts"}) own.erase(key);
  const DeclaredType type = kind.declare(own.dump());
  if (declared) *declared = type;
  abi::Type t(FUGUE_KIND_PLUGIN, static_cast<fugue_dtype>(type.dtype), type.shape);
  t.kind_name = kind.name();
  for (const auto& p : type.parts) t.parts.emplace_back(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(p.dtype), p.shape);
  for (const auto& format : registry.formats())
    if (format->writes() && format->refuses(t).empty()) return format->extensions().front();
  return "";
}

// One call: `spec` holds "shape", and optionally "inputs" and "attrs" (test_cases syntax).
json make_program(const Operation& op, const PluginRegistry& registry, const json& spec, DType dtype, uint64_t seed) {
  json shape = spec.value("shape", json::array({7}));
  const json given = spec.value("inputs", json::object());
  json symbols = json::object(), in = json::array(), out = json::array(), outputs = json::object();
  // An output of a kind with storage is declared (its declaration gives the parts): as the case's
  // "outputs" says, else as the kind's example, whose shape the case's arrays then take.
  std::map<std::string, std::string> output_files;
  for (uint32_t o : op.outputs()) {
    const fugue_operand_desc& d = *op.operands()[o];
    if (d.role != FUGUE_ROLE_OUT || (d.kinds & ~FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN))) continue;
    json declaration = spec.contains("outputs") && spec["outputs"].contains(d.name)
                           ? spec["outputs"][d.name]
                           : kind_example(d, registry, shape.size(), dtype_for(d, dtype));
    if (declaration.is_null())
      throw UserError("output " + std::string(d.name) + " takes kind(s) '" + (d.plugin_kinds ? d.plugin_kinds : "") +
                      "', which no loaded plugin defines");
    declaration.erase("parts");
    declaration.erase("from");
    if (!declaration.contains("dtype")) declaration["dtype"] = dtype_name(dtype_for(d, dtype));  // the dtype under test
    auto kind = registry.find_kind(declaration.value("kind", ""));
    if (!kind || !kind->storage())
      throw UserError("output " + std::string(d.name) + ": '" + declaration.value("kind", "") + "' is not a kind with storage");
    DeclaredType type;
    const std::string extension = writer_extension(registry, *kind, declaration, &type);
    if (!(spec.contains("outputs") && spec["outputs"].contains(d.name)) &&
        (!spec.contains("shape") || spec.value("shape_from_outputs", false)))
      shape = type.shape;
    symbols[d.name] = declaration;
    // Written through the first format that takes it (the suite compares values, not files).
    if (!extension.empty()) output_files[d.name] = std::string(d.name) + extension;
    if (!output_files.count(d.name))
      throw UserError("output " + std::string(d.name) + ": no format writes a " + kind->name() + ", so the suite cannot "
                      "declare it as an output");
  }
  uint64_t k = 0;
  for (uint32_t i : op.inputs()) {
    const fugue_operand_desc& d = *op.operands()[i];
    const std::string name = d.name;
    // An optional input the case does not give is left out: the call reads its default (ABI 2.5).
    if (!given.contains(name) && d.role == FUGUE_ROLE_IN && op.optional(i)) continue;
    const DType t = dtype_for(d, dtype);
    auto [low, high] = domain(op, t, dtype);
    json random = {{"random", {{"seed", seed + k++}, {"low", low}, {"high", high}}}};
    json symbol;
    if (given.contains(name)) {
      symbol = given[name];
      const std::string kind = symbol.value("kind", "array");
      symbol["kind"] = kind;
      if ((kind == "array" || kind == "scalar") && !symbol.contains("dtype")) symbol["dtype"] = dtype_name(t);
      if (kind == "array" && !symbol.contains("shape")) symbol["shape"] = shape;
      if (kind == "array" && !symbol.contains("from") && !symbol.contains("value")) {
        auto [l, h] = domain(op, dtype_from_name(symbol["dtype"].get<std::string>()), dtype);
        symbol["from"] = {{"random", {{"seed", seed + 1000 + k}, {"low", l}, {"high", h}}}};
      }
      if (kind == "scalar" && !symbol.contains("value") && !symbol.contains("from"))
        symbol["value"] = fractional(t) ? 0.25 * low + 0.75 * high : 5;
    } else if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)) {
      symbol = {{"kind", "array"}, {"dtype", dtype_name(t)}, {"shape", shape}, {"from", random}};
    } else if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_SCALAR)) {
      symbol = {{"kind", "scalar"}, {"dtype", dtype_name(t)}, {"value", fractional(t) ? 0.25 * low + 0.75 * high : 5}};
    } else if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST)) {
      symbol = {{"kind", "const"}, {"value", fractional(t) ? 0.5 * (low + high) + 0.125 : 3}};
    } else if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN)) {
      symbol = kind_example(d, registry, shape.size(), t);
      if (symbol.is_null())
        throw UserError("operand " + name + " takes kind(s) '" + (d.plugin_kinds ? d.plugin_kinds : "") +
                        "', which no loaded plugin defines");
    }
    symbols[name] = symbol;
    in.push_back(name);
  }
  for (uint32_t o : op.outputs()) {
    const std::string name = op.operands()[o]->name;
    out.push_back(name);
    // An in-place operand of a kind with storage is written by a format that takes it too.
    if (!output_files.count(name) && symbols.contains(name) && symbols[name].contains("kind"))
      if (auto kind = registry.find_kind(symbols[name]["kind"].get<std::string>()); kind && kind->storage())
        if (const std::string extension = writer_extension(registry, *kind, symbols[name]); !extension.empty())
          output_files[name] = name + extension;
    outputs[name] = output_files.count(name) ? output_files[name] : name + ".npy";
  }
  json attrs = spec.value("attrs", json::object());
  for (const auto* a : op.attrs()) {
    if (!a->required || attrs.contains(a->name)) continue;
    // A required attribute the case does not give: a value most operations accept.
    // Another dtype of the same family: complex numbers convert to complex ones only.
    if (a->type == FUGUE_ATTR_DTYPE && dtype_is_complex(dtype)) attrs[a->name] = dtype == DType::C64 ? "c128" : "c64";
    else if (a->type == FUGUE_ATTR_DTYPE) attrs[a->name] = dtype == DType::F32 ? "f64" : "f32";
    else if (a->type == FUGUE_ATTR_INT) attrs[a->name] = 3;
    else if (a->type == FUGUE_ATTR_NUMBER) attrs[a->name] = fractional(dtype) ? 1.25 : 3;
  }
  return {{"fugue", 1},
          {"doc", "conformance call of " + op.name()},
          {"symbols", symbols},
          {"body", {{{"op", op.name()}, {"in", in}, {"out", out}, {"attrs", attrs}}}},
          {"outputs", outputs}};
}

// The dtypes a call runs with by default: those of the first input that can be an array.
std::vector<DType> default_dtypes(const Operation& op) {
  uint32_t mask = 0;
  for (uint32_t i : op.inputs())
    if (op.operands()[i]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)) {
      mask = op.operands()[i]->dtypes;
      break;
    }
  if (!mask && !op.inputs().empty()) mask = op.operands()[op.inputs().front()]->dtypes;
  if (!mask && !op.outputs().empty()) mask = op.operands()[op.outputs().front()]->dtypes;
  std::vector<DType> out;
  for (DType t : kDtypeOrder)
    if (accepts(mask, t)) out.push_back(t);
  return out;
}

std::vector<TestCall> declared_calls(const Operation& op, const PluginRegistry& registry, const std::string& text,
                                     uint64_t seed) {
  const std::string where = op.name() + " test_cases";
  json cases;
  try {
    cases = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UserError(where + ": not valid JSON (" + e.what() + ")");
  }
  if (!cases.is_array() || cases.empty()) throw UserError(where + ": expected a non-empty JSON array of cases");
  std::vector<TestCall> calls;
  for (size_t c = 0; c < cases.size(); ++c) {
    const json& spec = cases[c];
    const std::string p = where + " /" + std::to_string(c);
    if (!spec.is_object()) throw UserError(p + ": expected an object (shape, inputs, attrs, dtypes)");
    for (const auto& [key, value] : spec.items())
      if (key != "shape" && key != "inputs" && key != "outputs" && key != "attrs" && key != "dtypes" && key != "name" &&
          key != "ranked")
        throw UserError(p + "/" + key + ": unknown key (expected shape, inputs, outputs, attrs, dtypes, name, ranked)");
    std::map<std::string, std::string> ranked;
    if (spec.contains("ranked")) {
      if (!spec["ranked"].is_object()) throw UserError(p + "/ranked: expected an object: per output of indices, the output that ranks them");
      auto is_output = [&](const std::string& name) {
        return std::any_of(op.outputs().begin(), op.outputs().end(), [&](uint32_t o) { return op.operands()[o]->name == name; });
      };
      for (const auto& [name, by] : spec["ranked"].items()) {
        if (!is_output(name)) throw UserError(p + "/ranked/" + name + ": no output operand of that name");
        if (!by.is_string() || !is_output(by.get<std::string>()) || by.get<std::string>() == name)
          throw UserError(p + "/ranked/" + name + ": expected the name of another output (the values that rank it)");
        ranked[name] = by.get<std::string>();
      }
    }
    if (spec.contains("outputs") && !spec["outputs"].is_object())
      throw UserError(p + "/outputs: expected an object: per output of a kind with storage, its declaration");
    if (spec.contains("shape") && (!spec["shape"].is_array() || spec["shape"].size() > fugue::kMaxRank ||
                                   !std::all_of(spec["shape"].begin(), spec["shape"].end(),
                                                [](const json& n) { return n.is_number_integer() && n >= 0; })))
      throw UserError(p + "/shape: expected a list of at most 8 non-negative integers");
    if (spec.contains("inputs") && !spec["inputs"].is_object())
      throw UserError(p + "/inputs: expected an object of input operand names");
    if (spec.contains("inputs"))
      for (const auto& [name, symbol] : spec["inputs"].items()) {
        bool known = std::any_of(op.inputs().begin(), op.inputs().end(),
                                 [&](uint32_t i) { return op.operands()[i]->name == name; });
        if (!known) throw UserError(p + "/inputs/" + name + ": no input operand of that name");
        if (!symbol.is_object()) throw UserError(p + "/inputs/" + name + ": expected a symbol object");
      }
    if (spec.contains("attrs") && !spec["attrs"].is_object()) throw UserError(p + "/attrs: expected an object");
    std::vector<DType> dtypes;
    if (spec.contains("dtypes")) {
      if (!spec["dtypes"].is_array()) throw UserError(p + "/dtypes: expected a list of dtype names");
      for (const auto& t : spec["dtypes"]) {
        DType d = t.is_string() ? dtype_from_name(t.get<std::string>()) : DType::None;
        if (d == DType::None) throw UserError(p + "/dtypes: unknown dtype " + t.dump());
        dtypes.push_back(d);
      }
    } else {
      dtypes = default_dtypes(op);
    }
    const json shape = spec.value("shape", json::array({7}));
    for (DType t : dtypes) {
      TestCall call;
      call.declared = true;
      call.dtype = t;
      call.rank = shape.size();
      call.label = spec.value("name", "case " + std::to_string(c)) + " " + std::string(dtype_name(t)) + " " + shape_text(shape);
      call.program = make_program(op, registry, spec, t, seed + 101 * c);
      call.ranked = ranked;
      calls.push_back(std::move(call));
    }
  }
  return calls;
}

std::vector<TestCall> derived_calls(const Operation& op, const PluginRegistry& registry, uint64_t seed) {
  const std::vector<std::pair<std::string, std::vector<json>>> shapes = {
      {"degenerate", {json::array({1}), json::array({1, 1}), json::array({1, 1, 1})}},
      {"odd", {json::array({7}), json::array({7, 5}), json::array({3, 5, 7})}},
      {"large", {json::array({1000003}), json::array({1031, 1029}), json::array({101, 103, 97})}},
  };
  // An output of a kind with storage is declared as the kind's example says, which fixes the shape:
  // one call per rank and dtype, its arrays of that shape.
  const bool kind_output = std::any_of(op.outputs().begin(), op.outputs().end(), [&](uint32_t o) {
    const fugue_operand_desc& d = *op.operands()[o];
    return d.role == FUGUE_ROLE_OUT && !(d.kinds & ~FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN));
  });
  std::vector<TestCall> calls;
  for (size_t rank = 1; rank <= 3; ++rank)
    for (const auto& [size_class, by_rank] : shapes)
      for (DType t : default_dtypes(op)) {
        if (kind_output && size_class != "odd") continue;
        json spec = {{"shape", by_rank[rank - 1]}};
        if (kind_output) spec["shape_from_outputs"] = true;
        TestCall call;
        call.dtype = t;
        call.size_class = size_class;
        call.rank = rank;
        call.label = std::string(dtype_name(t)) + " " + (kind_output ? "rank " + std::to_string(rank) + " (the output kind's example)" : shape_text(spec["shape"]));
        call.program = make_program(op, registry, spec, t, seed);
        calls.push_back(call);
        // The second input as a const, where the signature takes one.
        if (size_class == "odd" && op.inputs().size() >= 2 &&
            (op.operands()[op.inputs()[1]]->kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST))) {
          const std::string name = op.operands()[op.inputs()[1]]->name;
          spec["inputs"] = {{name, {{"kind", "const"}, {"value", fractional(t) ? 0.625 : 3}}}};
          call.label += " " + name + " const";
          call.program = make_program(op, registry, spec, t, seed);
          calls.push_back(call);
        }
      }
  return calls;
}

}  // namespace

std::vector<TestCall> candidate_calls(const Operation& op, const PluginRegistry& registry, uint64_t seed) {
  const std::string declared = op.test_cases();
  return declared.empty() ? derived_calls(op, registry, seed) : declared_calls(op, registry, declared, seed);
}

json with_neighbours(const Operation& op, const json& program, const std::string& neighbour, double identity,
                     const std::vector<uint32_t>& inputs, const std::vector<uint32_t>& outputs) {
  json p = program;
  json& statement = p["body"][0];
  json body = json::array();
  for (uint32_t i : inputs) {
    const std::string name = op.operands()[i]->name, source = name + "_source";
    p["symbols"][source] = p["symbols"][name];
    p["symbols"].erase(name);
    body.push_back({{"op", neighbour}, {"in", {source, identity}}, {"out", {name}}});
  }
  body.push_back(statement);
  json outs = json::object();
  for (const auto& [name, file] : p["outputs"].items()) outs[name] = file;
  for (uint32_t o : outputs) {
    const std::string name = op.operands()[o]->name, next = name + "_next";
    body.push_back({{"op", neighbour}, {"in", {name, identity}}, {"out", {next}}});
    outs.erase(name);
    outs[next] = next + ".npy";
  }
  p["body"] = body;
  p["outputs"] = outs;
  return p;
}

}  // namespace fugue::conformance
