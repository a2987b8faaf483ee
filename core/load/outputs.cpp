// outputs.cpp: the loader's types of operation results, reconciled with declarations, and the
// program's output files, each with the format that will write it.
#include "load/loader.h"

namespace fugue::load {

void Loader::assign_output(const std::string& name, const abi::Type& t, const std::string& p,
                   const std::string& op_name) {
  if (t.kind == FUGUE_KIND_PLUGIN) return assign_compound_output(name, t, p, op_name);
  if (t.kind != FUGUE_KIND_ARRAY && t.kind != FUGUE_KIND_SCALAR)
    throw DeviceError(at(p) + ": " + op_name + " inferred an output that is neither array nor scalar");
  if (t.rank() > kMaxRank)
    error(p, op_name + " would produce an array of " + std::to_string(t.rank()) + " axes; Fugue supports at most " +
                 std::to_string(kMaxRank));
  if (!fugue_dtype_supported(t.dtype) ||
      std::any_of(t.shape.begin(), t.shape.end(), [](int64_t e) { return e < 0; }))
    throw DeviceError(at(p) + ": " + op_name + " inferred a malformed output type (rank " +
                      std::to_string(t.rank()) + ", dtype " + std::to_string(t.dtype) + ")");
  if (t.runtime_axes & ~1u || (t.runtime_axes && (t.kind != FUGUE_KIND_ARRAY || t.rank() == 0)))
    throw DeviceError(at(p) + ": " + op_name + " inferred run-time axes other than an array's first");
  const Shape& shape = t.shape;
  DType dtype = static_cast<DType>(t.dtype);
  SymbolKind kind = t.kind == FUGUE_KIND_ARRAY ? SymbolKind::Array : SymbolKind::Scalar;
  auto describe_type = [](SymbolKind k, DType d, const Shape& s, uint32_t runtime) {
    Symbol text;
    text.shape = s;
    text.runtime_axes = runtime;
    return std::string(dtype_name(d)) + " " + (k == SymbolKind::Array ? "array " + text.shape_text() : "scalar");
  };
  auto it = program_.symbols.find(name);
  if (it == program_.symbols.end()) {
    Symbol s;
    s.name = name;
    s.kind = kind;
    s.dtype = dtype;
    s.shape = shape;
    s.runtime_axes = t.runtime_axes;
    s.typed = true;
    s.where = at(p);
    program_.symbols[name] = s;
  } else {
    Symbol& s = it->second;
    if (!s.part_of.empty())
      error(p, "'" + name + "' is a part of '" + s.part_of + "'; an operation writes '" + s.part_of + "' as a whole");
    if (s.kind != kind)
      error(p, op_name + " produces " + describe_type(kind, dtype, shape, t.runtime_axes) + " but '" + name + "' is a " +
                   s.kind_text() + " (" + s.where + ")");
    if (!s.typed) {
      if (s.dtype == DType::None) s.dtype = dtype;
      if (s.dtype != dtype)
        error(p, op_name + " produces " + describe_type(kind, dtype, shape, t.runtime_axes) + " but '" + name +
                     "' is declared " + std::string(dtype_name(s.dtype)) + " (" + s.where + ")");
      s.shape = shape;
      s.runtime_axes = t.runtime_axes;
      s.typed = true;
    } else if (s.dtype != dtype || (kind == SymbolKind::Array && (s.shape != shape || s.runtime_axes != t.runtime_axes))) {
      error(p, op_name + " produces " + describe_type(kind, dtype, shape, t.runtime_axes) + " but '" + name + "' is " +
                   describe_type(s.kind, s.dtype, s.shape, s.runtime_axes) + " (" + s.where +
                   "); a symbol keeps one type: write to a new name or use array.cast");
    }
  }
  defined_.insert(name);
}

// "a csr", "an ell": the kind's name with its article (by its first letter, as kind names are read).
static std::string a_kind(const std::string& kind) {
  return (!kind.empty() && std::string("aeiou").find(kind[0]) != std::string::npos ? "an " : "a ") + kind;
}

// An output of a plugin's kind: only a kind with storage, into a symbol declared with that kind (its
// declaration gives the parts), with the declared dtype and shape.
void Loader::assign_compound_output(const std::string& name, const abi::Type& t, const std::string& p,
                                    const std::string& op_name) {
  auto kind = registry_.find_kind(t.kind_name);
  if (!kind || !kind->storage())
    throw DeviceError(at(p) + ": " + op_name + " inferred an output of kind '" + t.kind_name + "', " +
                      (kind ? "which has no storage" : "which no plugin defines"));
  auto it = program_.symbols.find(name);
  if (it == program_.symbols.end() || it->second.kind_name != t.kind_name)
    error(p, op_name + " produces " + a_kind(t.kind_name) + "; declare '" + name + "' as one (\"kind\": \"" + t.kind_name +
                 "\") so that its parts are known" +
                 (it == program_.symbols.end() ? "" : " ('" + name + "' is " + a_kind(it->second.kind_text()) + ", " +
                                                          it->second.where + ")"));
  const Symbol& s = it->second;
  if (static_cast<DType>(t.dtype) != s.dtype || t.shape != s.shape)
    error(p, op_name + " produces " + a_kind(t.kind_name) + " of " + std::string(dtype_name(static_cast<DType>(t.dtype))) + " " +
                 shape_string(t.shape) + " but '" + name + "' is declared " + std::string(dtype_name(s.dtype)) + " " +
                 shape_string(s.shape) + " (" + s.where + ")");
  defined_.insert(name);
  defined_.insert(s.parts.begin(), s.parts.end());
}

void Loader::outputs(const json& v) {
  expect_object(v, "/outputs");
  for (const auto& [name, path] : v.items()) {
    std::string p = "/outputs/" + name;
    auto it = program_.symbols.find(name);
    if (it == program_.symbols.end()) error(p, "undeclared symbol '" + name + "'" + suggest_symbol(name));
    if (!defined_.count(name)) error(p, "symbol '" + name + "' is never written by the program");
    if (it->second.compile_time())
      error(p, "'" + name + "' is a " + it->second.kind_text() + ": it has no device value to write");
    const std::string writable = "an output file name ending in " + registry_.extensions_text(true);
    if (!path.is_string()) fail(p, writable, describe(path));
    fs::path out = path.get<std::string>();
    const std::string ext = lowercase_extension(out);
    auto writers = registry_.writers_for(ext);
    if (writers.empty()) fail(p, writable, describe(path));
    bool escapes = out.is_absolute() || std::any_of(out.begin(), out.end(), [](const fs::path& part) { return part == ".."; });
    if (escapes) fail(p, "a path inside the output folder (no absolute path, no ..)", describe(path));
    // File systems refuse longer names; found now, not when the outputs are written after the run.
    for (const auto& part : out)
      if (part.native().size() > 255)
        fail(p, "an output path whose every name has at most 255 bytes",
             "a name of " + std::to_string(part.native().size()) + " bytes");
    if (out.native().find('\0') != std::string::npos) fail(p, "an output path without NUL bytes", describe(path));
    // The first format for the extension that writes the value's type.
    const Symbol& s = it->second;
    std::shared_ptr<const FileFormat> format;
    std::string reasons;
    for (const auto& w : writers) {
      const std::string why = w->refuses(s.type());
      if (why.empty()) {
        format = w;
        break;
      }
      reasons += (reasons.empty() ? "" : "; ") + w->name() + ": " + why;
    }
    if (!format)
      error(p, "no format writes '" + name + "' (" + std::string(dtype_name(s.dtype)) + " " + s.kind_text() +
                   (s.kind == SymbolKind::Array ? " " + s.shape_text() : "") + ") to a " + ext + " file: " + reasons);
    for (const auto& other : program_.outputs) {
      const fs::path mine = out.lexically_normal(), theirs = other.file.lexically_normal();
      if (mine == theirs) error(p, "'" + name + "' and '" + other.symbol + "' are both written to " + out.string());
      // One file inside the other's name would need it as a file and as a folder at once.
      auto inside = [](const fs::path& file, const fs::path& folder) {
        auto f = file.begin(), d = folder.begin();
        for (; d != folder.end() && !d->empty(); ++d, ++f)
          if (f == file.end() || *f != *d) return false;
        return f != file.end();
      };
      if (const bool under = inside(mine, theirs); under || inside(theirs, mine))
        error(p, "'" + name + "' is written to " + out.string() + " and '" + other.symbol + "' to " + other.file.string() + ": " +
                     (under ? other.file.string() : out.string()) + " would have to be a file and a folder at once");
    }
    program_.outputs.push_back({name, out, format});
  }
}

}  // namespace fugue::load
