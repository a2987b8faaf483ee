// outputs.cpp: the loader's types of operation results, reconciled with declarations, and the
// program's output files, each with the format that will write it.
#include "load/loader.h"

namespace fugue::load {

void Loader::assign_output(const std::string& name, const abi::Type& t, const std::string& p,
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
    // The first format for the extension that writes the value's type.
    const Symbol& s = it->second;
    const Shape shape = s.kind == SymbolKind::Array ? s.shape : Shape{};
    std::shared_ptr<const FileFormat> format;
    std::string reasons;
    for (const auto& w : writers) {
      const std::string why = w->refuses(s.dtype, shape);
      if (why.empty()) {
        format = w;
        break;
      }
      reasons += (reasons.empty() ? "" : "; ") + w->name() + ": " + why;
    }
    if (!format)
      error(p, "no format writes '" + name + "' (" + std::string(dtype_name(s.dtype)) + " " + s.kind_text() +
                   (s.kind == SymbolKind::Array ? " " + s.shape_text() : "") + ") to a " + ext + " file: " + reasons);
    for (const auto& other : program_.outputs)
      if (other.file.lexically_normal() == out.lexically_normal())
        error(p, "'" + name + "' and '" + other.symbol + "' are both written to " + out.string());
    program_.outputs.push_back({name, out, format});
  }
}

}  // namespace fugue::load
