#include "load/program_loader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "errors.h"
#include "io/file_names.h"
#include "io/flo_io.h"
#include "io/generators.h"
#include "io/image_io.h"
#include "io/npy_io.h"

namespace fugue {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string Symbol::kind_text() const {
  switch (kind) {
    case SymbolKind::Array: return "array";
    case SymbolKind::Scalar: return "scalar";
    case SymbolKind::Const: return "const";
    case SymbolKind::Plugin: return kind_name;
  }
  return "?";
}

abi::Type Symbol::type() const {
  const fugue_kind k = kind == SymbolKind::Array    ? FUGUE_KIND_ARRAY
                       : kind == SymbolKind::Scalar ? FUGUE_KIND_SCALAR
                       : kind == SymbolKind::Const  ? FUGUE_KIND_CONST
                                                    : FUGUE_KIND_PLUGIN;
  abi::Type t(k, static_cast<fugue_dtype>(dtype));
  t.shape = shape;
  t.const_value = const_value;
  if (kind == SymbolKind::Plugin) {
    t.kind_name = kind_name;
    t.metadata = metadata;
  }
  return t;
}

void CallDescriptor::bind(const std::vector<fugue_attr_value>& attrs, const fugue_device_desc* device) {
  types.clear();
  for (const auto& v : values) types.push_back(v.view());
  call = fugue_call{};
  call.struct_size = sizeof(fugue_call);
  call.num_operands = static_cast<uint32_t>(types.size());
  call.operands = types.empty() ? nullptr : types.data();
  call.num_attrs = static_cast<uint32_t>(attrs.size());
  call.attrs = attrs.empty() ? nullptr : attrs.data();
  call.device = device;
}

void Program::call(const Statement& statement, CallDescriptor& out, const fugue_device_desc* device) const {
  out.values.clear();
  for (const auto& name : statement.operands) out.values.push_back(symbols.at(name).type());
  out.bind(statement.attrs, device);
}

namespace {

// What a JSON value looks like, for "found ..." in messages.
std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* type = v.is_object()            ? "an object"
                     : v.is_array()           ? "a list"
                     : v.is_string()          ? "a string"
                     : v.is_boolean()         ? "a boolean"
                     : v.is_number_integer()  ? "an integer"
                     : v.is_number()          ? "a number"
                                              : "null";
  return std::string(type) + " " + text;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string c_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

class Loader {
 public:
  Loader(const fs::path& file, const PluginRegistry& registry, const LoadOptions& options)
      : file_(file), registry_(registry), options_(options) {
    program_.file = file;
  }

  Program run(const json& doc) {
    expect_object(doc, "");
    check_keys(doc, "", {"fugue", "symbols", "body", "outputs", "doc"});
    if (!doc.contains("fugue")) fail("", "a \"fugue\": 1 version key", "none");
    if (!doc["fugue"].is_number_integer() || doc["fugue"].get<int64_t>() != 1)
      fail("/fugue", "format version 1", describe(doc["fugue"]));
    if (doc.contains("symbols")) {
      expect_object(doc["symbols"], "/symbols");
      // Consts first (with their --set values): array shapes may name them.
      for (int pass = 0; pass < 2; ++pass) {
        for (const auto& [name, decl] : doc["symbols"].items()) {
          bool is_const = decl.is_object() && decl.contains("kind") && decl["kind"] == "const";
          if ((pass == 0) == is_const) declare(name, decl, "/symbols/" + name);
        }
        if (pass == 0) apply_overrides(true);
      }
    }
    apply_overrides(false);
    if (!doc.contains("body")) fail("", "a \"body\" list of statements", "none");
    defined_ = initially_defined();
    program_.body = statements(doc["body"], "/body", 0);
    if (doc.contains("outputs")) outputs(doc["outputs"]);
    return std::move(program_);
  }

 private:
  // --- messages ---------------------------------------------------------------------------
  std::string at(const std::string& pointer) const {
    return file_.string() + ":" + (pointer.empty() ? "/" : pointer);
  }
  [[noreturn]] void fail(const std::string& pointer, const std::string& expected,
                         const std::string& found) const {
    throw UserError(at(pointer) + ": expected " + expected + ", found " + found);
  }
  [[noreturn]] void error(const std::string& pointer, const std::string& message) const {
    throw UserError(at(pointer) + ": " + message);
  }
  void expect_object(const json& v, const std::string& p) const {
    if (!v.is_object()) fail(p, "an object", describe(v));
  }
  void check_keys(const json& v, const std::string& p, const std::vector<std::string>& allowed) const {
    for (const auto& [key, value] : v.items())
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        error(p + "/" + key, "unknown key '" + key + "' (expected one of: " + join(allowed) + ")");
  }

  // --- symbols ----------------------------------------------------------------------------
  void check_name(const std::string& name, const std::string& p) const {
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(name, identifier))
      fail(p, "a symbol name made of letters, digits and _ (not starting with a digit)",
           "'" + name + "'");
  }

  DType dtype_of(const json& v, const std::string& p) const {
    if (!v.is_string()) fail(p, "a dtype name (" + dtype_names() + ")", describe(v));
    auto d = parse_dtype(v.get<std::string>());
    if (!d) fail(p, "a dtype name (" + dtype_names() + ")", describe(v));
    return *d;
  }

  Shape shape_of(const json& v, const std::string& p) const {
    if (!v.is_array()) fail(p, "a shape: a list of extents", describe(v));
    if (v.size() > kMaxRank)
      fail(p, "at most " + std::to_string(kMaxRank) + " axes", std::to_string(v.size()));
    Shape shape;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto& e = v[i];
      std::string pi = p + "/" + std::to_string(i);
      double extent;
      if (e.is_number_integer()) {
        extent = static_cast<double>(e.get<int64_t>());
      } else if (e.is_string()) {
        auto it = program_.symbols.find(e.get<std::string>());
        if (it == program_.symbols.end() || it->second.kind != SymbolKind::Const)
          fail(pi, "an extent: an integer or the name of a const", describe(e));
        extent = it->second.const_value;
      } else {
        fail(pi, "an extent: an integer or the name of a const", describe(e));
      }
      if (extent < 0 || extent != std::floor(extent) || extent > 9.0e15)
        fail(pi, "a non-negative integer extent", std::to_string(extent));
      shape.push_back(static_cast<int64_t>(extent));
    }
    try {
      shape_elements(shape);
    } catch (const UserError& e) {
      error(p, e.what());
    }
    return shape;
  }

  double number_of(const json& v, const std::string& p, const std::string& what = "a number") const {
    if (!v.is_number()) fail(p, what, describe(v));
    return v.get<double>();
  }

  void declare(const std::string& name, const json& decl, const std::string& p) {
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
      bool array = kind == "array";
      check_keys(decl, p, {"kind", "dtype", "shape", "from", "value", "doc"});
      s.kind = array ? SymbolKind::Array : SymbolKind::Scalar;
      bool has_dtype = decl.contains("dtype"), has_shape = decl.contains("shape");
      if (has_dtype) s.dtype = dtype_of(decl["dtype"], p + "/dtype");
      if (has_shape) {
        if (!array) error(p + "/shape", "a scalar has no shape");
        s.shape = shape_of(decl["shape"], p + "/shape");
      }
      if (decl.contains("from") && decl.contains("value"))
        error(p, "give either \"from\" or \"value\", not both");
      if (decl.contains("value")) {
        s.source.kind = SymbolSource::Kind::Inline;
        s.source.inline_value = decl["value"];
        if (!array) {
          number_of(decl["value"], p + "/value");
          if (!has_dtype) s.dtype = DType::F32;
        }
        if (array && !has_shape) error(p + "/shape", "an array with an inline value needs a shape");
        if (s.dtype == DType::None) error(p + "/dtype", "an array with an inline value needs a dtype");
        check_inline(s, p + "/value");
      } else if (decl.contains("from")) {
        source(s, decl["from"], p + "/from", has_dtype, has_shape || !array);
      }
      s.typed = s.dtype != DType::None && (has_shape || !array || s.source.kind != SymbolSource::Kind::None);
      if (s.source.kind == SymbolSource::Kind::None && (has_dtype != (has_shape || !array)) && array)
        error(p, "give both dtype and shape, or neither (the producing operation then infers them)");
    } else {
      declare_plugin_kind(s, kind.get<std::string>(), decl, p);
    }
    program_.symbols[name] = std::move(s);
  }

  // "array, scalar, const or csr": every kind the registry knows.
  std::string kind_names() const {
    std::vector<std::string> names;
    for (const Kind* k : registry_.kinds()) names.push_back(k->name());
    std::string last = names.back();
    names.pop_back();
    return join(names) + " or " + last;
  }

  // A kind a plugin defines: its declare reads the declaration; its messages point inside it.
  void declare_plugin_kind(Symbol& s, const std::string& kind_name, const json& decl, const std::string& p) {
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
    check_keys(decl, p, keys);
    DeclaredType declared;
    try {
      declared = kind->declare(decl.dump());
    } catch (const UserError& e) {
      // The plugin's message starts with a pointer inside the declaration when it concerns a part.
      std::string message = e.what();
      if (!message.empty() && message[0] == '/') {
        const size_t colon = message.find(": ");
        if (colon != std::string::npos) error(p + message.substr(0, colon), message.substr(colon + 2));
      }
      error(p, message);
    }
    s.kind = SymbolKind::Plugin;
    s.kind_name = kind->name();
    s.dtype = declared.dtype;
    s.shape = declared.shape;
    s.metadata = std::move(declared.metadata);
    s.typed = true;
  }

  // Checked now, so a bad inline value fails before anything runs.
  void check_inline(const Symbol& s, const std::string& p) const {
    array_from_json(s.source.inline_value, s.dtype, s.shape, at(p));
  }

  // "from": a file path, or {"zeros": …}, {"fill": v}, {"random": {...}}, {"arange": {...}},
  // {"file": path}.
  void source(Symbol& s, const json& from, const std::string& p, bool has_dtype, bool has_shape) {
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
      std::string ext = lowercase_extension(path);
      try {
        if (ext == ".npy") {
          NpyHeader header = read_npy_header(path);
          if (has_dtype && header.dtype != s.dtype)
            fail(p, std::string("a file of ") + std::string(dtype_name(s.dtype)) + " (the declared dtype)",
                 path.string() + " holding " + std::string(dtype_name(header.dtype)));
          if (s.kind == SymbolKind::Array && has_shape && header.shape != s.shape)
            fail(p, "a file of shape " + shape_string(s.shape) + " (the declared shape)",
                 path.string() + " of shape " + shape_string(header.shape));
          if (s.kind == SymbolKind::Scalar && !header.shape.empty() && shape_elements(header.shape) != 1)
            fail(p, "a file holding one value (a scalar)",
                 path.string() + " of shape " + shape_string(header.shape));
          check_npy_data_size(path, header);  // a truncated or lying file fails here, not mid-run
          s.dtype = header.dtype;
          if (s.kind == SymbolKind::Array) s.shape = header.shape;
        } else if (ext == ".png" || ext == ".pgm") {
          if (s.kind != SymbolKind::Array) error(p, "an image can only be read into an array");
          if (has_dtype && s.dtype != DType::F32)
            fail(p + "/../dtype", "f32 (images are read as f32 grayscale)", std::string(dtype_name(s.dtype)));
          // Reading the image checks the declared shape before decoding; keep the pixels.
          auto image = std::make_shared<HostArray>(
              load_gray_image(path, has_shape ? std::optional<Shape>(s.shape) : std::nullopt));
          s.dtype = DType::F32;
          s.shape = image->shape;
          preloaded_[s.name] = image;
        } else if (ext == ".flo") {
          if (s.kind != SymbolKind::Array) error(p, "a .flo file (optical flow) can only be read into an array");
          if (has_dtype && s.dtype != DType::F32)
            fail(p.substr(0, p.rfind('/')) + "/dtype", "f32 (.flo files hold f32 flow)",
                 std::string(dtype_name(s.dtype)));
          // The header, checked against the file's size; the flow itself is read when the run starts.
          const Shape shape = read_flo_shape(path);
          if (has_shape && shape != s.shape)
            fail(p, "a file of shape " + shape_string(s.shape) + " (the declared shape)",
                 path.string() + " of shape " + shape_string(shape) + " (height, width, 2)");
          s.dtype = DType::F32;
          s.shape = shape;
        } else {
          fail(p, "a .npy, .png, .pgm or .flo file", "'" + rel + "'");
        }
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
      fail(p, "a generator: zeros, fill, random, arange (or a file path)", "'" + gen + "'");
    }
    check_generator(s, pg);
  }

  // The generator's values must fit the dtype; checked on one element now, not when the run starts.
  void check_generator(const Symbol& s, const std::string& p) const {
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

  // The last --set NAME=... of `name`, or null.
  const std::string* file_override(const std::string& name) const {
    const std::string* found = nullptr;
    for (const auto& [n, text] : options_.overrides)
      if (n == name) found = &text;
    return found;
  }

  // Consts first (`consts_only`), then scalars, with every name checked in the second call. The
  // files of file-sourced arrays were replaced when they were declared (see source).
  void apply_overrides(bool consts_only) {
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
                                                                         : "computed by the program";
        throw UserError("--set " + name + "=" + text + ": '" + name + "' is an array " + how +
                        "; only consts, scalars and file-sourced arrays can be set");
      }
      double value;
      try {
        size_t used = 0;
        value = std::stod(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        throw UserError("--set " + name + "=" + text + ": expected a number, found '" + text + "'");
      }
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

  std::set<std::string> initially_defined() const {
    std::set<std::string> defined;
    for (const auto& [name, s] : program_.symbols)
      if (s.compile_time() || s.source.kind != SymbolSource::Kind::None) defined.insert(name);
    return defined;
  }

  // --- body -------------------------------------------------------------------------------
  std::vector<Statement> statements(const json& list, const std::string& p, int loop_depth) {
    if (!list.is_array()) fail(p, "a list of statements", describe(list));
    std::vector<Statement> out;
    for (size_t i = 0; i < list.size(); ++i)
      out.push_back(statement(list[i], p + "/" + std::to_string(i), loop_depth));
    return out;
  }

  Statement statement(const json& v, const std::string& p, int loop_depth) {
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
        if (s.kind == SymbolKind::Array) fail(p + "/count", "a const or scalar", "array '" + s.name + "'");
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

  void comparand(const json& v, const std::string& p, std::string& symbol, double& value) {
    if (v.is_number()) {
      value = v.get<double>();
      return;
    }
    if (!v.is_string()) fail(p, "a number or the name of a scalar or const", describe(v));
    symbol = v.get<std::string>();
    const Symbol& s = readable(symbol, p);
    if (s.kind == SymbolKind::Array)
      fail(p, "a scalar or const (reduce the array first, e.g. with array.max)", "array '" + symbol + "'");
  }

  // A symbol that is read here: it must be declared and written before.
  const Symbol& readable(const std::string& name, const std::string& p) const {
    auto it = program_.symbols.find(name);
    if (it == program_.symbols.end()) error(p, "undeclared symbol '" + name + "'" + suggest_symbol(name));
    if (!defined_.count(name))
      error(p, "symbol '" + name + "' is read before anything writes it (give it a \"from\" or " +
                   "\"value\", or compute it first)");
    return it->second;
  }

  std::string suggest_symbol(const std::string& name) const {
    std::string best;
    size_t best_d = 3;
    for (const auto& [other, s] : program_.symbols) {
      size_t d = edit_distance(name, other);
      if (d < best_d) best_d = d, best = other;
    }
    return best.empty() ? "" : " (did you mean '" + best + "'?)";
  }

  std::string unknown_op_message(const std::string& name) const {
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

  std::string anonymous_const(double value) {
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

  static std::string kinds_string(const fugue_operand_desc& d) {
    std::vector<std::string> k;
    if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_ARRAY)) k.push_back("array");
    if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_SCALAR)) k.push_back("scalar");
    if (d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_CONST)) k.push_back("const");
    if ((d.kinds & FUGUE_KIND_BIT(FUGUE_KIND_PLUGIN)) && d.plugin_kinds) {
      std::istringstream names(d.plugin_kinds);
      for (std::string name; names >> name;) k.push_back(name);
    }
    return join(k, " or ");
  }

  // Whether the operand accepts a value of type t (a plugin kind by name).
  static bool accepts_kind(const fugue_operand_desc& d, const abi::Type& t) {
    if (!(d.kinds & FUGUE_KIND_BIT(t.kind))) return false;
    if (t.kind != FUGUE_KIND_PLUGIN) return true;
    std::istringstream names(d.plugin_kinds ? d.plugin_kinds : "");
    for (std::string name; names >> name;)
      if (name == t.kind_name) return true;
    return false;
  }

  Statement op_call(const json& v, const std::string& p) {
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

    auto names = [&](const char* key, const std::vector<uint32_t>& slots) {
      std::vector<std::string> expected;
      for (uint32_t slot : slots) expected.push_back(op.operands()[slot]->name);
      std::string pk = p + "/" + key;
      json list = v.contains(key) ? v[key] : json::array();
      if (!list.is_array()) fail(pk, "a list of symbol names", describe(list));
      if (list.size() != slots.size())
        fail(pk, std::to_string(slots.size()) + " operand(s) (" + join(expected) + ") for " + name,
             std::to_string(list.size()));
      return list;
    };

    // Inputs: symbol names (or numbers, which become consts).
    json ins = names("in", op.inputs());
    CallDescriptor call;
    call.values.resize(op.operands().size());
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
        error(pi, label + ": expected " + kinds_string(*desc) + ", found " + s.kind_text() + " '" + symbol + "'");
      if (t.kind != FUGUE_KIND_CONST && !(desc->dtypes & FUGUE_DTYPE_BIT(t.dtype)))
        error(pi, label + ": expected dtype " + dtype_names(desc->dtypes) + ", found " +
                      std::string(dtype_name(s.dtype)) + " '" + symbol + "'");
      st.operands[slot] = symbol;
      call.values[slot] = std::move(t);
    }

    attributes(st, op, v.contains("attrs") ? v["attrs"] : json::object(), p + "/attrs");

    // Outputs: names; undeclared ones become temporaries typed by infer.
    json outs = names("out", op.outputs());
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

    // Infer and reconcile with declarations and earlier assignments.
    call.bind(st.attrs, nullptr);
    std::vector<abi::Type> inferred;
    try {
      inferred = op.infer(call.call);
    } catch (const UserError& e) {
      error(p, e.what());
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      uint32_t slot = op.outputs()[i];
      if (!op.reads(slot)) assign_output(st.operands[slot], inferred[slot], p + "/out/" + std::to_string(i), name);
    }
    return st;
  }

  // An INOUT operand names one symbol in `out` and in `in`; it is updated where it is stored, so it
  // must be storage (an array or a scalar) and no other operand may read it while it changes.
  void in_place(const Statement& st, uint32_t slot, const std::string& written, const std::string& po,
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

  void attributes(Statement& st, const Operation& op, const json& attrs, const std::string& p) {
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
      if (!given && a->required) error(p, op.name() + " needs attribute '" + std::string(a->name) + "'");
      const json v = given ? attrs[a->name] : json();
      switch (a->type) {
        case FUGUE_ATTR_NUMBER:
          value.number = given ? number_of(v, pa) : a->default_number;
          value.integer = static_cast<int64_t>(value.number);
          break;
        case FUGUE_ATTR_INT:
          if (given && !v.is_number_integer()) fail(pa, "an integer", describe(v));
          value.integer = given ? v.get<int64_t>() : static_cast<int64_t>(a->default_number);
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

  void assign_output(const std::string& name, const abi::Type& t, const std::string& p,
                     const std::string& op_name) {
    if (t.kind != FUGUE_KIND_ARRAY && t.kind != FUGUE_KIND_SCALAR)
      throw DeviceError(at(p) + ": " + op_name + " inferred an output that is neither array nor scalar");
    if (t.rank() > kMaxRank)
      error(p, op_name + " would produce an array of " + std::to_string(t.rank()) + " axes; Fugue supports at most " +
                   std::to_string(kMaxRank));
    if (!fugue_dtype_supported(t.dtype) ||
        std::any_of(t.shape.begin(), t.shape.end(), [](int64_t e) { return e < 0; }))
      throw DeviceError(at(p) + ": " + op_name + " inferred a malformed output type (rank " +
                        std::to_string(t.rank()) + ", dtype " + std::to_string(t.dtype) + ")");
    const Shape& shape = t.shape;
    DType dtype = static_cast<DType>(t.dtype);
    SymbolKind kind = t.kind == FUGUE_KIND_ARRAY ? SymbolKind::Array : SymbolKind::Scalar;
    auto describe_type = [](SymbolKind k, DType d, const Shape& s) {
      return std::string(dtype_name(d)) + " " + (k == SymbolKind::Array ? "array " + shape_string(s) : "scalar");
    };
    auto it = program_.symbols.find(name);
    if (it == program_.symbols.end()) {
      Symbol s;
      s.name = name;
      s.kind = kind;
      s.dtype = dtype;
      s.shape = shape;
      s.typed = true;
      s.where = at(p);
      program_.symbols[name] = s;
    } else {
      Symbol& s = it->second;
      if (s.kind != kind)
        error(p, op_name + " produces " + describe_type(kind, dtype, shape) + " but '" + name + "' is a " +
                     s.kind_text() + " (" + s.where + ")");
      if (!s.typed) {
        if (s.dtype == DType::None) s.dtype = dtype;
        if (s.dtype != dtype)
          error(p, op_name + " produces " + describe_type(kind, dtype, shape) + " but '" + name +
                       "' is declared " + std::string(dtype_name(s.dtype)) + " (" + s.where + ")");
        s.shape = shape;
        s.typed = true;
      } else if (s.dtype != dtype || (kind == SymbolKind::Array && s.shape != shape)) {
        error(p, op_name + " produces " + describe_type(kind, dtype, shape) + " but '" + name + "' is " +
                     describe_type(s.kind, s.dtype, s.shape) + " (" + s.where +
                     "); a symbol keeps one type: write to a new name or use array.cast");
      }
    }
    defined_.insert(name);
  }

  void outputs(const json& v) {
    expect_object(v, "/outputs");
    for (const auto& [name, path] : v.items()) {
      std::string p = "/outputs/" + name;
      auto it = program_.symbols.find(name);
      if (it == program_.symbols.end()) error(p, "undeclared symbol '" + name + "'" + suggest_symbol(name));
      if (!defined_.count(name)) error(p, "symbol '" + name + "' is never written by the program");
      if (it->second.compile_time())
        error(p, "'" + name + "' is a " + it->second.kind_text() + ": it has no device value to write");
      if (!path.is_string()) fail(p, "an output file name ending in .npy, .png, .pgm or .flo", describe(path));
      fs::path out = path.get<std::string>();
      std::string ext = lowercase_extension(out);
      if (ext != ".npy" && ext != ".png" && ext != ".pgm" && ext != ".flo")
        fail(p, "an output file name ending in .npy, .png, .pgm or .flo", describe(path));
      bool escapes = out.is_absolute() || std::any_of(out.begin(), out.end(), [](const fs::path& part) { return part == ".."; });
      if (escapes) fail(p, "a path inside the output folder (no absolute path, no ..)", describe(path));
      const Symbol& s = it->second;
      // [H, W, 2] f32/f64: optical flow, written as .flo or as its colour picture in a .png.
      const bool flow = s.kind == SymbolKind::Array && s.shape.size() == 3 && s.shape[0] > 0 && s.shape[1] > 0 &&
                        s.shape[2] == 2 && (s.dtype == DType::F32 || s.dtype == DType::F64);
      if (ext == ".flo" && !flow)
        error(p, "a .flo file needs f32 or f64 flow of shape [H, W, 2] (H, W > 0); '" + name + "' is " +
                     std::string(dtype_name(s.dtype)) + " " + shape_string(s.shape));
      if ((ext == ".pgm" || (ext == ".png" && !flow)) &&
          (s.dtype != DType::F32 || s.shape.size() != 2 || s.shape[0] == 0 || s.shape[1] == 0))
        error(p, "only non-empty 2-D f32 arrays can be written as images (and f32/f64 [H, W, 2] flow as .png "
                 "pictures); '" + name + "' is not");
      for (const auto& [other, file] : program_.outputs)
        if (file.lexically_normal() == out.lexically_normal())
          error(p, "'" + name + "' and '" + other + "' are both written to " + out.string());
      program_.outputs.emplace_back(name, out);
    }
  }

  fs::path file_;
  const PluginRegistry& registry_;
  const LoadOptions& options_;
  Program program_;
  std::set<std::string> defined_;
  std::set<std::string> loop_variables_;
  std::set<std::string> active_loops_;  // variables of the loops enclosing the statement being read
  std::map<std::string, std::shared_ptr<HostArray>> preloaded_;
  std::set<std::string> file_overridden_;  // arrays whose file --set replaced
  int anonymous_ = 0;

 public:
  std::map<std::string, std::shared_ptr<HostArray>> take_preloaded() { return std::move(preloaded_); }
};

// Byte offset -> "line L, column C".
std::string position(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, column = 1;
    else ++column;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

Program parse_program(const json& document, const fs::path& file, const PluginRegistry& registry,
                      const LoadOptions& options) {
  Loader loader(file, registry, options);
  Program program;
  try {
    program = loader.run(document);
  } catch (const json::exception& e) {
    throw UserError(file.string() + ": a value of an unexpected JSON type (" + std::string(e.what()) + ")");
  }
  for (auto& [name, image] : loader.take_preloaded()) program.symbols.at(name).source.preloaded = image;
  return program;
}

Program load_program(const fs::path& file, const PluginRegistry& registry, const LoadOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UserError(file.string() + ": cannot open the program file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann says "[json.exception.parse_error.101] parse error at line L, column C: <why>".
    std::string what = e.what();
    auto why = what.find(": ", what.find("column"));
    throw UserError(file.string() + ": malformed JSON at " + position(text, e.byte ? e.byte - 1 : 0) + ": " +
                    (why == std::string::npos ? what : what.substr(why + 2)));
  } catch (const json::exception& e) {
    throw UserError(file.string() + ": unreadable JSON: " + std::string(e.what()));
  }
  return parse_program(doc, file, registry, options);
}

}  // namespace fugue
