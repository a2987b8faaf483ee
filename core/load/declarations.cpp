// declarations.cpp: the loader's symbols: the core's kinds and the plugins', initial values from
// files (through the format registry), inline values and generators, and --set.
#include "load/loader.h"
#include "load/reads.h"

#include <cctype>
#include <cstdlib>
#include <optional>

namespace fugue::load {

void Loader::declare(const std::string& name, const json& decl, const std::string& p) {
  check_name(name, p);
  expect_object(decl, p);
  if (!decl.contains("kind")) fail(p + "/kind", "a kind (" + kind_names() + ")", "none");
  const auto& kind = decl["kind"];
  if (!kind.is_string()) fail(p + "/kind", kind_names(), describe(kind));
  Symbol s;
  s.name = name;
  s.where = at(p);
  if (kind == "const") {
    check_keys(decl, p, {"kind", "value", "doc"});
    if (!decl.contains("value")) fail(p + "/value", "the const's value (a number)", "none");
    s.kind = SymbolKind::Const;
    s.const_value = number_of(decl["value"], p + "/value");
    s.typed = true;
  } else if (kind == "scalar" || kind == "array") {
    s.kind = kind == "array" ? SymbolKind::Array : SymbolKind::Scalar;
    declare_value(s, decl, p);
  } else if (kind == "function") {
    declare_function(s, decl, p);
  } else {
    declare_plugin_kind(s, kind.get<std::string>(), decl, p);
  }
  program_.symbols[name] = std::move(s);
}

// An array or a scalar (s.kind says which): its dtype, shape and initial value.
void Loader::declare_value(Symbol& s, const json& decl, const std::string& p) {
  const bool array = s.kind == SymbolKind::Array;
  check_keys(decl, p, {"kind", "dtype", "shape", "from", "value", "doc"});
  bool has_dtype = decl.contains("dtype"), has_shape = decl.contains("shape");
  if (has_dtype) s.dtype = dtype_of(decl["dtype"], p + "/dtype");
  if (has_shape) {
    if (!array) error(p + "/shape", "a scalar has no shape");
    s.shape = shape_of(decl["shape"], p + "/shape", &s.runtime_axes);
  }
  if (decl.contains("from") && decl.contains("value"))
    error(p, "give either \"from\" or \"value\", not both");
  if (decl.contains("value")) {
    s.source.kind = SymbolSource::Kind::Inline;
    s.source.inline_value = decl["value"];
    if (!array) {
      // A number, or for a complex scalar also an [re, im] pair (checked by check_inline).
      if (!(dtype_is_complex(s.dtype) && decl["value"].is_array()))
        number_of(decl["value"], p + "/value", dtype_is_complex(s.dtype) ? "a number or an [re, im] pair" : "a number");
      if (!has_dtype) s.dtype = DType::F32;
    }
    if (array && !has_shape) error(p + "/shape", "an array with an inline value needs a shape");
    if (s.runtime_axes)
      error(p + "/value", "an array of run-time length takes its values from a file or a generator, not inline");
    if (s.dtype == DType::None) error(p + "/dtype", "an array with an inline value needs a dtype");
    check_inline(s, p + "/value");
  } else if (decl.contains("from")) {
    source(s, decl["from"], p + "/from", has_dtype, has_shape || !array);
  }
  s.typed = s.dtype != DType::None && (has_shape || !array || s.source.kind != SymbolSource::Kind::None);
  if (s.source.kind == SymbolSource::Kind::None && (has_dtype != (has_shape || !array)) && array)
    error(p, "give both dtype and shape, or neither (the producing operation then infers them)");
}

// "array, scalar, const or csr": every kind the registry knows.
std::string Loader::kind_names() const {
  std::vector<std::string> names;
  for (const Kind* k : registry_.kinds()) names.push_back(k->name());
  std::string last = names.back();
  names.pop_back();
  return join(names) + " or " + last;
}

// A kind a plugin defines: its declare reads the declaration; its messages point inside it.
void Loader::declare_plugin_kind(Symbol& s, const std::string& kind_name, const json& decl, const std::string& p) {
  auto kind = registry_.find_kind(kind_name);
  if (!kind) {
    std::string hint;
    size_t best = 3;
    for (const Kind* k : registry_.kinds())
      if (size_t d = edit_distance(kind_name, k->name()); d < best) best = d, hint = k->name();
    error(p + "/kind", "unknown kind '" + kind_name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                           "; the kinds are " + kind_names() + " (`fugue plugins` lists them)");
  }
  std::vector<std::string> keys = {"kind", "doc"};
  keys.insert(keys.end(), kind->keys().begin(), kind->keys().end());
  if (kind->storage()) keys.insert(keys.end(), {"from", "parts"});  // the core reads these
  if (kind->chooser()) keys.push_back("from");
  check_keys(decl, p, keys);
  json own = decl;  // what the kind's declare reads
  own.erase("from");
  own.erase("parts");
  // A chooser weighs what each kind costs to make against the value's uses (ABI 2.16): told them where it
  // takes "reads" (a key of its own, which a program may also give).
  const std::vector<std::string>& kind_keys = kind->keys();
  const bool takes_reads = kind->chooser() && kind->plugin() && kind->plugin()->abi_minor >= 16 &&
                           std::find(kind_keys.begin(), kind_keys.end(), "reads") != kind_keys.end();
  if (takes_reads && !own.contains("reads") && body_)
    own["reads"] = reads_in(*body_, s.name, [&](const std::string& name) -> std::optional<double> {
      const auto it = program_.symbols.find(name);
      if (it == program_.symbols.end() || it->second.kind != SymbolKind::Const) return std::nullopt;
      return it->second.const_value;
    });
  if ((kind->storage() || kind->chooser()) && decl.contains("from") && !decl.contains("parts") &&
      declare_from_source(s, *kind, decl, own, p))
    return;
  DeclaredType declared;
  try {
    declared = kind->declare(own.dump());
    if (kind->chooser()) throw DeviceError("kind " + kind->name() + " chooses kinds, but its declare accepted a declaration without \"from\"");
  } catch (const DeviceError& e) {
    throw DeviceError(at(p) + ": " + e.what());  // the plugin's own failure, at the declaration
  } catch (const UserError& e) {
    // The plugin's message starts with a pointer inside the declaration when it concerns a part.
    std::string message = e.what();
    if (!message.empty() && message[0] == '/') {
      const size_t colon = message.find(": ");
      if (colon != std::string::npos) error(p + message.substr(0, colon), message.substr(colon + 2));
    }
    error(p, message);
  }
  type_as(s, kind, declared);
  if (kind->storage()) declare_parts(s, *kind, declared.parts, decl, p);
}

// A symbol of plugin kind `kind` with the type its declare (or its source) gave.
void Loader::type_as(Symbol& s, const std::shared_ptr<const Kind>& kind, DeclaredType& declared) {
  s.kind = SymbolKind::Plugin;
  s.kind_name = kind->name();
  s.dtype = declared.dtype;
  s.shape = declared.shape;
  s.metadata = std::move(declared.metadata);
  s.typed = true;
  if (kind->storage()) s.kind_object = kind;
}

// A value whose type comes from its source: a generator of the kind's values ("from": {"poisson": ...}),
// or a file whose format converts as it reads (a sparse matrix read as CSR). A chooser kind's source
// also chooses the kind (for the device the program is loaded for). False when "from" is neither: a file
// read as it is.
bool Loader::declare_from_source(Symbol& s, const Kind& kind, const json& decl, const json& own, const std::string& p) {
  s.kind_name = kind.name();
  const json& from = decl["from"];
  const bool generated = from.is_object() && from.size() == 1 && !from.contains("file");
  std::shared_ptr<const Generator> generator;
  CompoundFile file;
  std::string pg = p + "/from";  // where messages about the source point
  if (generated) {
    const std::string name = from.begin().key();
    pg += "/" + name;
    generator = registry_.find_generator(name);
    if (!generator || !generator->makes_values()) {
      std::vector<std::string> names;
      for (const Generator* g : registry_.generators())
        if (g->makes_values()) names.push_back(g->name());
      fail(p + "/from", "a file holding a " + kind.name() + (names.empty() ? std::string() : ", or a generator of values (" + join(names) + ")"),
           "'" + name + "'");
    }
  } else {
    file = compound_file_of(s, from, p + "/from");
    if (!file.format->reads_as()) {
      if (kind.chooser())
        fail(p + "/from", "a file whose format chooses a kind for a " + kind.name() + " (the " + file.format->name() + " format does not)",
             "'" + file.rel + "'");
      return false;
    }
  }
  DeclaredType declared;
  try {
    declared = generated ? generator->probe_as(from.begin().value().dump(), own.dump(), kind, options_.device.get())
                         : file.format->probe_as(file.path, own.dump(), kind, options_.device.get());
  } catch (const DeviceError& e) {
    throw DeviceError(at(pg) + ": " + e.what());
  } catch (const UserError& e) {
    // A message may start with a pointer: inside the declaration where it names one of its keys, else
    // inside a generator's parameters.
    const std::string message = e.what();
    const size_t colon = message.find(": ");
    if (!message.empty() && message[0] == '/' && colon != std::string::npos) {
      const std::string pointer = message.substr(0, colon), key = pointer.substr(1, pointer.find('/', 1) - 1);
      if (own.contains(key)) error(p + pointer, message.substr(colon + 2));
      if (generated) error(pg + pointer, message.substr(colon + 2));
    }
    error(pg, message);
  }
  std::shared_ptr<const Kind> chosen = registry_.find_kind(kind.chooser() ? declared.kind_name : kind.name());
  if (kind.chooser()) {
    if (!chosen || !chosen->storage() || chosen->plugin() != kind.plugin() || chosen->parts().size() != declared.parts.size())
      throw DeviceError(at(pg) + ": the source chose kind '" + declared.kind_name + "' for a " + kind.name() +
                        ", which is not one of its plugin's kinds with storage and " + std::to_string(declared.parts.size()) + " parts");
    s.note = kind.name() + " chose " + chosen->name() + (declared.note.empty() ? "" : ": " + declared.note);
  }
  type_as(s, chosen, declared);
  if (generated) {
    json without_source = decl;
    without_source.erase("from");
    declare_parts(s, *chosen, declared.parts, without_source, p);
    s.source.kind = SymbolSource::Kind::Generated;
    s.source.generator = generator;
    s.source.parameters = from.begin().value().dump();
    s.source.declaration = own.dump();
    s.source.device = options_.device;
  } else {
    declare_parts(s, *chosen, declared.parts, decl, p, own.dump());
    s.source.contents.device = options_.device;
  }
  return true;
}

// A kind with storage: an array symbol per part, "<name>.<part>", and the initial value: a file that
// holds the kind ("from"), or a source per part ("parts": {"<part>": {"from": ...} or {"value": ...}}).
void Loader::declare_parts(Symbol& s, const Kind& kind, const std::vector<ArrayType>& types, const json& decl,
                           const std::string& p, const std::string& as_declared) {
  s.part_types = types;
  if (decl.contains("from") && decl.contains("parts")) error(p, "give either \"from\" or \"parts\", not both");
  // Parts whose length is the value's count, known at run time (ABI 2.21): only an operation counts it.
  std::vector<std::string> counted;
  int64_t capacity = 0;
  for (size_t k = 0; k < types.size() && k < kind.parts().size(); ++k)
    if (types[k].runtime_axes) {
      counted.push_back(kind.parts()[k]);
      capacity = types[k].shape[0];
    }
  if (!counted.empty() && (decl.contains("from") || decl.contains("parts")))
    error(p + (decl.contains("from") ? "/from" : "/parts"),
          "'" + s.name + "' is declared with a count left to the run (its " + join(counted) + " hold at most " +
              std::to_string(capacity) + "), which only an operation that writes it gives; a file or parts given " +
              "here have a count of their own: declare it exactly");
  const json* sources = decl.contains("parts") ? &decl["parts"] : nullptr;
  if (sources) {
    expect_object(*sources, p + "/parts");
    check_keys(*sources, p + "/parts", kind.parts());
    std::vector<std::string> missing;
    for (const auto& part : kind.parts())
      if (!sources->contains(part)) missing.push_back(part);
    if (!missing.empty())
      error(p + "/parts", "every part needs a source; " + join(missing) + (missing.size() == 1 ? " has" : " have") +
                              " none (a " + kind.name() + " has parts " + join(kind.parts()) + ")");
  }
  for (size_t k = 0; k < kind.parts().size(); ++k) {
    Symbol part;
    part.name = s.name + "." + kind.parts()[k];
    part.kind = SymbolKind::Array;
    part.dtype = types[k].dtype;
    part.shape = types[k].shape;
    part.runtime_axes = types[k].runtime_axes;
    part.typed = true;
    part.part_of = s.name;
    part.where = s.where + "/parts/" + kind.parts()[k];
    if (sources) {
      const std::string pp = p + "/parts/" + kind.parts()[k];
      const json& given = (*sources)[kind.parts()[k]];
      expect_object(given, pp);
      check_keys(given, pp, {"from", "value", "doc"});
      if (!given.contains("from") && !given.contains("value")) error(pp, "give the part's \"from\" or \"value\"");
      json as_array = given;  // the part's declaration as an array's, its type from the kind's declare
      as_array["kind"] = "array";
      as_array["dtype"] = std::string(dtype_name(part.dtype));
      as_array["shape"] = part.shape;
      declare_value(part, as_array, pp);
    }
    s.parts.push_back(part.name);
    program_.symbols[part.name] = std::move(part);
  }
  if (decl.contains("from")) compound_file(s, decl["from"], p + "/from", as_declared);
}

// Where "from" of a kind with storage points: the file, and the format its extension names (null when none reads it).
Loader::CompoundFile Loader::compound_file_of(const Symbol& s, const json& from, const std::string& p) const {
  std::string rel;
  if (from.is_string()) {
    rel = from.get<std::string>();
  } else if (from.is_object() && from.contains("file")) {
    check_keys(from, p, {"file"});
    if (!from["file"].is_string()) fail(p + "/file", "a file path", describe(from["file"]));
    rel = from["file"].get<std::string>();
  } else {
    fail(p, "a file holding a " + s.kind_name + " (generators fill parts: \"parts\": {\"<part>\": {\"from\": ...}})",
         describe(from));
  }
  CompoundFile file;
  file.rel = rel;
  file.path = fs::path(rel).is_absolute() ? fs::path(rel) : file_.parent_path() / rel;
  check_regular_file(file.path, p);
  file.format = registry_.reader_for(lowercase_extension(file.path));
  if (!file.format) fail(p, "a " + registry_.extensions_text(false) + " file", "'" + rel + "'");
  return file;
}

// A file holding a whole value of a kind with storage: read by the format its extension names, which
// must hold that kind, with the declared type and parts; or, where the format converts as it reads,
// read as `as_declared` declares it (its type came from the format's probe_as).
void Loader::compound_file(Symbol& s, const json& from, const std::string& p, const std::string& as_declared) {
  const CompoundFile file = compound_file_of(s, from, p);
  auto& src = s.source;
  src.kind = SymbolSource::Kind::File;
  src.file = file.path;
  src.format = file.format;
  if (!as_declared.empty()) {
    src.contents.dtype = s.dtype;
    src.contents.shape = s.shape;
    src.contents.kind_name = s.kind_name;
    src.contents.parts = s.part_types;
    src.contents.as_declared = as_declared;
    src.contents.metadata = s.metadata;
    return;
  }
  try {
    src.contents = src.format->probe(file.path);
    const FileContents& c = src.contents;
    FileContents declared;
    declared.dtype = s.dtype;
    declared.shape = s.shape;
    declared.kind_name = s.kind_name;
    declared.parts = s.part_types;
    if (c.kind_name != s.kind_name || c.dtype != s.dtype || c.shape != s.shape || c.parts != s.part_types)
      fail(p, "a file holding " + declared.type_text() + " (the declared type)", file.path.string() + " holding " + c.type_text());
  } catch (const UserError& e) {
    std::string what = e.what();
    if (what.rfind(file_.string() + ":", 0) != 0) what = at(p) + ": " + what;
    throw UserError(what);
  }
}

// Checked now, so a bad inline value fails before anything runs.
void Loader::check_inline(const Symbol& s, const std::string& p) const {
  array_from_json(s.source.inline_value, s.dtype, s.shape, at(p));
}

// "from": a file path, or {"zeros": …}, {"fill": v}, {"random": {...}}, {"arange": {...}},
// {"file": path}.
void Loader::source(Symbol& s, const json& from, const std::string& p, bool has_dtype, bool has_shape) {
  auto& src = s.source;
  if (from.is_string() || (from.is_object() && from.contains("file"))) {
    std::string rel = from.is_string() ? from.get<std::string>() : "";
    if (from.is_object()) {
      check_keys(from, p, {"file"});
      if (!from["file"].is_string()) fail(p + "/file", "a file path", describe(from["file"]));
      rel = from["file"].get<std::string>();
    }
    fs::path path = fs::path(rel).is_absolute() ? fs::path(rel) : file_.parent_path() / rel;
    // --set NAME=PATH replaces an array's file, here, so the declared one is never read. The path
    // comes from the command line: a relative one stays relative to the working directory.
    const std::string* replacement = s.kind == SymbolKind::Array ? file_override(s.name) : nullptr;
    if (replacement) {
      rel = *replacement;
      path = rel;
      file_overridden_.insert(s.name);
    }
    src.kind = SymbolSource::Kind::File;
    src.file = path;
    check_regular_file(path, p);
    const std::string ext = lowercase_extension(path);
    try {
      src.format = registry_.reader_for(ext);
      if (!src.format) fail(p, "a " + registry_.extensions_text(false) + " file", "'" + rel + "'");
      // The header (or, for an image, the whole file) now, so a bad file fails before anything runs.
      FileContents& c = src.contents;
      c = src.format->probe(path);
      if (has_dtype && c.dtype != s.dtype)
        fail(p, std::string("a file of ") + std::string(dtype_name(s.dtype)) + " (the declared dtype)",
             path.string() + " holding " + std::string(dtype_name(c.dtype)));
      // A run-time first axis holds any length up to its capacity.
      const bool fits = s.runtime_axes ? !c.shape.empty() && c.shape.size() == s.shape.size() &&
                                             c.shape[0] <= s.shape[0] &&
                                             std::equal(c.shape.begin() + 1, c.shape.end(), s.shape.begin() + 1)
                                       : c.shape == s.shape;
      if (s.kind == SymbolKind::Array && has_shape && !fits)
        fail(p, "a file of shape " + s.shape_text() + " (the declared shape)",
             path.string() + " of shape " + shape_string(c.shape) +
                 (s.runtime_axes && !c.shape.empty() && c.shape[0] > s.shape[0] ? ", above the capacity" : ""));
      // A scalar may be stored as shape () or (1,), or any shape of one value.
      if (s.kind == SymbolKind::Scalar && shape_elements(c.shape) != 1)
        fail(p, "a file holding one value (a scalar)", path.string() + " of shape " + shape_string(c.shape));
      s.dtype = c.dtype;
      if (s.kind == SymbolKind::Array && !s.runtime_axes) s.shape = c.shape;
    } catch (const UserError& e) {
      std::string what = e.what();
      if (what.rfind(file_.string() + ":", 0) != 0) what = at(p) + ": " + what;
      if (replacement) what = "--set " + s.name + "=" + *replacement + ": " + what;
      throw UserError(what);
    }
    return;
  }
  if (!from.is_object() || from.size() != 1)
    fail(p, "a file path or one generator: {\"zeros\": {}}, {\"fill\": v}, {\"random\": {...}}, "
            "{\"arange\": {...}}",
         describe(from));
  const std::string gen = from.begin().key();
  const json& args = from.begin().value();
  std::string pg = p + "/" + gen;
  if (!has_dtype) error(p, "a generated value needs a declared dtype");
  if (!has_shape) error(p, "a generated array needs a declared shape");
  if (gen == "zeros") {
    if (!args.is_object() || !args.empty()) fail(pg, "{} (zeros takes no arguments)", describe(args));
    src.kind = SymbolSource::Kind::Fill;
    src.value = 0;
  } else if (gen == "fill") {
    src.kind = SymbolSource::Kind::Fill;
    src.value = number_of(args, pg, "the fill value (a number)");
  } else if (gen == "random") {
    expect_object(args, pg);
    check_keys(args, pg, {"seed", "low", "high"});
    src.kind = SymbolSource::Kind::Random;
    if (args.contains("seed")) {
      const auto& seed = args["seed"];
      if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
        fail(pg + "/seed", "a non-negative integer seed", describe(args["seed"]));
      src.seed = args["seed"].get<uint64_t>();
    }
    src.low = args.contains("low") ? number_of(args["low"], pg + "/low") : 0.0;
    src.high = args.contains("high") ? number_of(args["high"], pg + "/high") : 1.0;
    if (!(src.low <= src.high)) error(pg, "low must not exceed high");
  } else if (gen == "arange") {
    if (!args.is_object()) fail(pg, "an object {\"start\": a, \"step\": b}", describe(args));
    src.kind = SymbolSource::Kind::Arange;
    check_keys(args, pg, {"start", "step"});
    src.start = args.contains("start") ? number_of(args["start"], pg + "/start") : 0.0;
    src.step = args.contains("step") ? number_of(args["step"], pg + "/step") : 1.0;
  } else {
    plugin_generator(s, gen, args, p);
    return;
  }
  check_generator(s, pg);
}

// A generator a plugin adds: it checks its parameters now; its messages point inside them.
void Loader::plugin_generator(Symbol& s, const std::string& name, const json& parameters, const std::string& p) {
  const std::string pg = p + "/" + name;
  auto generator = registry_.find_generator(name);
  if (!generator) {
    std::vector<std::string> names;
    for (const Generator* g : registry_.generators()) names.push_back(g->name());
    fail(p, "a generator (" + join(names) + ") or a file path", "'" + name + "'");
  }
  if (!generator->makes_arrays())
    error(pg, "the " + name + " generator makes values of kinds with storage (a sparse matrix), not arrays");
  if (!(generator->dtypes() & FUGUE_DTYPE_BIT(static_cast<int>(s.dtype))))
    error(pg, "the " + name + " generator makes " + dtype_names(generator->dtypes()) + ", not " +
                  std::string(dtype_name(s.dtype)));
  if (s.kind != SymbolKind::Array) error(pg, "the " + name + " generator makes arrays, and '" + s.name + "' is a scalar");
  try {
    generator->check(parameters.dump(), s.dtype, s.shape);
  } catch (const DeviceError& e) {
    throw DeviceError(at(pg) + ": " + e.what());  // the plugin's own failure, at the parameters
  } catch (const UserError& e) {
    const std::string message = e.what();
    const size_t colon = message.find(": ");
    if (!message.empty() && message[0] == '/' && colon != std::string::npos)
      error(pg + message.substr(0, colon), message.substr(colon + 2));
    error(pg, message);
  }
  s.source.kind = SymbolSource::Kind::Generated;
  s.source.generator = generator;
  s.source.parameters = parameters.dump();
}

// The generator's values must fit the dtype; checked on one element now, not when the run starts.
void Loader::check_generator(const Symbol& s, const std::string& p) const {
  const auto& src = s.source;
  try {
    if (src.kind == SymbolSource::Kind::Fill) make_filled(s.dtype, {}, src.value);
    if (src.kind == SymbolSource::Kind::Random) make_random(s.dtype, {}, src.seed, src.low, src.high);
    if (src.kind == SymbolSource::Kind::Arange) {
      int64_t n = s.kind == SymbolKind::Array ? shape_elements(s.shape) : 1;
      make_arange(s.dtype, {}, src.start, src.step);
      if (n > 1) make_arange(s.dtype, {}, src.start + static_cast<double>(n - 1) * src.step, src.step);
    }
  } catch (const UserError& e) {
    error(p, e.what());
  }
}

namespace {

// A --set value: a decimal number, or an infinity ("inf", "-inf": JSON cannot write one), all of
// `text` (strtod would also take leading spaces, hexadecimal and "nan").
std::optional<double> decimal_number(const std::string& text) {
  for (const char* sign : {"", "+", "-"})
    if (text == std::string(sign) + "inf") return sign[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  size_t i = 0, digits = 0;
  auto run_of_digits = [&] {
    size_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++n;
    return n;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  digits += run_of_digits();
  if (i < text.size() && text[i] == '.') ++i, digits += run_of_digits();
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (run_of_digits() == 0) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;  // past double's range: a number written to be finite
  return v;
}

}  // namespace

// The last --set NAME=... of `name`, or null.
const std::string* Loader::file_override(const std::string& name) const {
  const std::string* found = nullptr;
  for (const auto& [n, text] : options_.overrides)
    if (n == name) found = &text;
  return found;
}

// Consts first (`consts_only`), then scalars, with every name checked in the second call. The
// files of file-sourced arrays were replaced when they were declared (see source).
void Loader::apply_overrides(bool consts_only) {
  for (const auto& [name, text] : options_.overrides) {
    auto it = program_.symbols.find(name);
    if (consts_only && (it == program_.symbols.end() || it->second.kind != SymbolKind::Const)) continue;
    if (!consts_only && it != program_.symbols.end() && it->second.kind == SymbolKind::Const) continue;
    if (it == program_.symbols.end())
      throw UserError("--set " + name + "=" + text + ": the program has no symbol '" + name + "'");
    Symbol& s = it->second;
    if (s.kind == SymbolKind::Array) {
      if (file_overridden_.count(name)) continue;
      const auto& src = s.source;
      const std::string how = src.kind == SymbolSource::Kind::Inline   ? "given inline (\"value\")"
                              : src.kind == SymbolSource::Kind::Fill   ? "generated by fill (or zeros)"
                              : src.kind == SymbolSource::Kind::Random ? "generated by random"
                              : src.kind == SymbolSource::Kind::Arange ? "generated by arange"
                              : src.kind == SymbolSource::Kind::Generated
                                  ? "generated by " + src.generator->name()
                                  : "computed by the program";
      throw UserError("--set " + name + "=" + text + ": '" + name + "' is an array " + how +
                      "; only consts, scalars and file-sourced arrays can be set");
    }
    if (s.kind == SymbolKind::Plugin)
      throw UserError("--set " + name + "=" + text + ": '" + name + "' is a " + s.kind_text() +
                      "; only consts, scalars and file-sourced arrays can be set");
    const std::optional<double> parsed = decimal_number(text);
    if (!parsed)
      throw UserError("--set " + name + "=" + text + ": expected a decimal number (as 4, -0.5, 1e-3 or -inf), found '" + text + "'");
    const double value = *parsed;
    if (s.kind == SymbolKind::Const) {
      s.const_value = value;
    } else if (s.kind == SymbolKind::Scalar) {
      s.source = SymbolSource{};
      s.source.kind = SymbolSource::Kind::Inline;
      s.source.inline_value = value;
      if (s.dtype == DType::None) s.dtype = DType::F32;
      s.typed = true;
      try {
        array_from_json(s.source.inline_value, s.dtype, {}, "--set " + name + "=" + text);
      } catch (const UserError& e) {
        throw UserError(std::string(e.what()) + " ('" + name + "' is " + std::string(dtype_name(s.dtype)) + ")");
      }
    } else {
      throw UserError("--set " + name + "=" + text + ": '" + name +
                      "' is a " + s.kind_text() + "; only consts, scalars and file-sourced arrays can be set");
    }
  }
}

std::set<std::string> Loader::initially_defined() const {
  std::set<std::string> defined;
  for (const auto& [name, s] : program_.symbols)
    if (s.compile_time() || s.source.kind != SymbolSource::Kind::None) defined.insert(name);
  // A value of a kind with storage is defined with all its parts: from its file, or a source per part.
  for (const auto& [name, s] : program_.symbols) {
    if (!s.compound()) continue;
    if (defined.count(name)) defined.insert(s.parts.begin(), s.parts.end());
    if (std::all_of(s.parts.begin(), s.parts.end(), [&](const std::string& part) { return defined.count(part) > 0; }))
      defined.insert(name);
  }
  return defined;
}

}  // namespace fugue::load
