#include "io/file_format.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "errors.h"
#include "io/image_io.h"
#include "io/npy_io.h"

namespace fugue {
namespace fs = std::filesystem;

FileFormat::FileFormat(std::string name, std::string doc, std::vector<std::string> extensions, Functions functions)
    : name_(std::move(name)), doc_(std::move(doc)), extensions_(std::move(extensions)), functions_(std::move(functions)) {}

FileFormat::FileFormat(std::shared_ptr<const LoadedPlugin> plugin, const fugue_format_desc* desc)
    : plugin_(std::move(plugin)), desc_(desc), name_(desc->name), doc_(desc->doc ? desc->doc : "") {
  std::istringstream list(desc->extensions ? desc->extensions : "");
  for (std::string e; list >> e;) extensions_.push_back(e);
}

bool FileFormat::has_extension(const std::string& extension) const {
  for (const auto& e : extensions_)
    if (e == extension) return true;
  return false;
}

bool FileFormat::reads() const { return desc_ ? desc_->probe && desc_->read : static_cast<bool>(functions_.probe); }
bool FileFormat::reads_as() const {
  return desc_ && desc_->struct_size >= FUGUE_SIZE_UP_TO(fugue_format_desc, read_as) && desc_->probe_as && desc_->read_as;
}
bool FileFormat::writes() const { return desc_ ? desc_->accepts && desc_->write : static_cast<bool>(functions_.write); }

namespace {

// A plugin's status for a file: its message for a bad file, the plugin named for its own failures.
void check(fugue_status status, const ErrorBuffer& error, const std::string& what, const fs::path& path,
           const LoadedPlugin& plugin) {
  if (status == FUGUE_OK) return;
  std::string message = error.text();
  if (message.empty()) message = "failed without a message (status " + std::to_string(status) + ")";
  if (status == FUGUE_ERROR_INVALID_ARGUMENT || status == FUGUE_ERROR_UNSUPPORTED)
    throw UserError(path.string() + ": " + message);
  throw DeviceError(path.string() + ": " + what + " failed: " + message + " (plugin '" + plugin.name + "', " +
                    plugin.file + ")");
}

}  // namespace

FileContents FileFormat::probe(const fs::path& path) const {
  if (!reads()) throw std::logic_error("format " + name_ + " does not read");
  if (!desc_) {
    FileContents c = functions_.probe(path);
    if (c.shape.size() > kMaxRank)
      throw UserError(path.string() + ": holds an array of " + std::to_string(c.shape.size()) +
                      " axes; Fugue supports at most " + std::to_string(kMaxRank));
    return c;
  }
  // Room for the type and, for a file holding a kind with storage, its parts (asked again when more).
  std::vector<int64_t> shape(kMaxRank + 1, 0);
  uint32_t capacity = 8;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<std::vector<int64_t>> part_shapes(capacity, std::vector<int64_t>(kMaxRank + 1, 0));
    std::vector<fugue_declared> parts(capacity);
    for (uint32_t k = 0; k < capacity; ++k) {
      parts[k] = fugue_declared{};
      parts[k].struct_size = sizeof(fugue_declared);
      parts[k].shape = part_shapes[k].data();
      parts[k].shape_capacity = static_cast<uint32_t>(part_shapes[k].size());
    }
    fugue_declared out{};
    out.struct_size = sizeof out;
    out.shape = shape.data();
    out.shape_capacity = static_cast<uint32_t>(shape.size());
    out.parts_capacity = capacity;
    out.parts = parts.data();
    ErrorBuffer error;
    check(desc_->probe(desc_, path.c_str(), &out, error.get()), error, "reading the header", path, *plugin_);
    if (out.num_parts > capacity) {
      if (attempt == 1 || out.num_parts > 64)
        throw DeviceError(path.string() + ": format " + name_ + " probed " + std::to_string(out.num_parts) +
                          " parts (at most 64; plugin '" + plugin_->name + "')");
      capacity = out.num_parts;
      continue;
    }
    auto array_type = [&](const fugue_declared& d, const std::vector<int64_t>& extents, const std::string& what) {
      if (d.rank > kMaxRank)
        throw UserError(path.string() + ": holds " + what + "of " + std::to_string(d.rank) +
                        " axes; Fugue supports at most " + std::to_string(kMaxRank));
      if (!fugue_dtype_supported(d.dtype))
        throw DeviceError(path.string() + ": format " + name_ + " probed an unknown dtype (plugin '" + plugin_->name + "')");
      ArrayType t{static_cast<DType>(d.dtype), Shape(extents.begin(), extents.begin() + d.rank)};
      for (int64_t n : t.shape)
        if (n < 0) throw DeviceError(path.string() + ": format " + name_ + " probed a negative extent");
      shape_elements(t.shape);
      return t;
    };
    FileContents c;
    ArrayType whole = array_type(out, shape, "an array ");
    c.dtype = whole.dtype;
    c.shape = whole.shape;
    if ((out.num_parts > 0) != (out.kind_name != nullptr && *out.kind_name))
      throw DeviceError(path.string() + ": format " + name_ + " probed parts without a kind, or a kind without parts (plugin '" +
                        plugin_->name + "')");
    if (out.num_parts > 0) {
      c.kind_name = out.kind_name;
      for (uint32_t k = 0; k < out.num_parts; ++k)
        c.parts.push_back(array_type(parts[k], part_shapes[k], "a part "));
    }
    return c;
  }
  throw std::logic_error("unreachable");
}

DeclaredType FileFormat::probe_as(const fs::path& path, const std::string& declaration, const Kind& kind,
                                  const DeviceInfo* device) const {
  if (!reads_as()) throw std::logic_error("format " + name_ + " does not read files as declared values");
  const fugue_device_desc described = device ? device->description() : fugue_device_desc{};
  try {
    return read_declared(
        [&](fugue_declared* out, fugue_error* error) {
          return desc_->probe_as(desc_, path.c_str(), declaration.c_str(), device ? &described : nullptr, out, error);
        },
        kind.parts(), "format " + name_ + ": probe_as (" + kind.name() + ")", *plugin_, kind.chooser());
  } catch (const DeviceError& e) {
    throw DeviceError(path.string() + ": " + e.what());
  } catch (const UserError& e) {
    // A message about the declaration starts with a pointer inside it (the loader places it there); one
    // about the file gets its path.
    const std::string message = e.what();
    const size_t colon = message.find(": ");
    if (!message.empty() && message[0] == '/' && colon != std::string::npos) {
      const std::string pointer = message.substr(0, colon), key = pointer.substr(1, pointer.find('/', 1) - 1);
      const nlohmann::json decl = nlohmann::json::parse(declaration, nullptr, false);
      if (decl.is_object() && decl.contains(key)) throw;
    }
    throw UserError(path.string() + ": " + message);
  }
}

std::string FileContents::type_text() const {
  HostArray text;
  text.dtype = dtype;
  text.shape = shape;
  text.kind_name = kind_name;
  for (const auto& p : parts) {
    text.parts.emplace_back();
    text.parts.back().dtype = p.dtype;
    text.parts.back().shape = p.shape;
  }
  return text.type_text();
}

namespace {

// A host array of the type a probe gave, zero-filled (every part of a kind with storage).
HostArray allocate(const FileContents& c) {
  if (c.kind_name.empty()) return HostArray(c.dtype, c.shape);
  HostArray a;
  a.dtype = c.dtype;
  a.shape = c.shape;
  a.kind_name = c.kind_name;
  for (const auto& p : c.parts) a.parts.emplace_back(p.dtype, p.shape);
  return a;
}

}  // namespace

abi::Type type_of(const HostArray& a) {
  abi::Type t(a.compound() ? FUGUE_KIND_PLUGIN : FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(a.dtype), a.shape);
  if (a.compound()) {
    t.kind_name = a.kind_name;
    for (const auto& p : a.parts) t.parts.emplace_back(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(p.dtype), p.shape);
  }
  return t;
}

// The C view of a host array whose type view is `view` (parts included; `parts` holds their views).
fugue_host_array host_view(const HostArray& a, const fugue_type& view, std::vector<fugue_host_array>& parts) {
  parts.clear();
  for (size_t k = 0; k < a.parts.size(); ++k) {
    const HostArray& p = a.parts[k];
    parts.push_back({sizeof(fugue_host_array), FUGUE_NTH(fugue_type, view.parts, k),
                     p.bytes.empty() ? nullptr : const_cast<uint8_t*>(p.bytes.data()), p.bytes.size(), 0, 0, nullptr});
  }
  return {sizeof(fugue_host_array), &view, a.bytes.empty() ? nullptr : const_cast<uint8_t*>(a.bytes.data()),
          a.bytes.size(), 0, static_cast<uint32_t>(parts.size()), parts.empty() ? nullptr : parts.data()};
}


HostArray FileFormat::read(const fs::path& path, const FileContents& expected) const {
  if (expected.values) return *expected.values;
  if (!desc_) return functions_.read(path, expected);
  HostArray array = allocate(expected);
  abi::Type type = type_of(array);
  type.metadata = expected.metadata;
  const fugue_type view = type.view();
  std::vector<fugue_host_array> parts;
  fugue_host_array host = host_view(array, view, parts);
  ErrorBuffer error;
  if (!expected.as_declared.empty()) {
    // The plugin reads the whole file again and checks it against the type it is given.
    const fugue_device_desc described = expected.device ? expected.device->description() : fugue_device_desc{};
    check(desc_->read_as(desc_, path.c_str(), expected.as_declared.c_str(), expected.device ? &described : nullptr, &host,
                         error.get()),
          error, "reading", path, *plugin_);
    return array;
  }
  // The file may have changed since it was probed: probe again and compare.
  FileContents now = probe(path);
  if (now.dtype != expected.dtype || now.shape != expected.shape || now.kind_name != expected.kind_name ||
      now.parts != expected.parts)
    throw UserError(path.string() + ": changed since the program was loaded (now " + now.type_text() + ", was " +
                    expected.type_text() + ")");
  check(desc_->read(desc_, path.c_str(), &host, error.get()), error, "reading", path, *plugin_);
  return array;
}

std::string FileFormat::refuses(const abi::Type& type) const {
  if (!writes()) return "the " + name_ + " format only reads";
  if (!desc_) {
    if (type.kind != FUGUE_KIND_ARRAY && type.kind != FUGUE_KIND_SCALAR)
      return "the " + name_ + " format writes arrays and scalars, not a " + (type.kind_name.empty() ? "value of this kind" : type.kind_name);
    return functions_.refuses(static_cast<DType>(type.dtype), type.kind == FUGUE_KIND_ARRAY ? type.shape : Shape{});
  }
  const fugue_type view = type.view();
  ErrorBuffer error;
  const fugue_status status = desc_->accepts(desc_, &view, error.get());
  if (status == FUGUE_OK) return "";
  std::string message = error.text();
  return message.empty() ? "refused without a reason (status " + std::to_string(status) + ")" : message;
}

void FileFormat::write(const fs::path& path, const HostArray& array, const std::vector<unsigned char>& metadata) const {
  if (!writes()) throw std::logic_error("format " + name_ + " does not write");
  if (!desc_) return functions_.write(path, array);
  abi::Type type = type_of(array);
  type.metadata = metadata;
  const fugue_type view = type.view();
  std::vector<fugue_host_array> parts;
  const fugue_host_array host = host_view(array, view, parts);
  ErrorBuffer error;
  check(desc_->write(desc_, path.c_str(), &host, error.get()), error, "writing", path, *plugin_);
}

namespace {

std::string image_refusal(DType dtype, const Shape& shape) {
  if (dtype == DType::F32 && shape.size() == 2 && shape[0] > 0 && shape[1] > 0) return "";
  return "only non-empty 2-D f32 arrays can be written as images";
}

// An image is decoded when probed (the header alone would not check the pixels): keep them.
FileContents probe_image(const fs::path& path) {
  auto image = std::make_shared<HostArray>(load_gray_image(path, std::nullopt));
  FileContents c;
  c.dtype = DType::F32;
  c.shape = image->shape;
  c.values = image;
  return c;
}

HostArray read_image(const fs::path& path, const FileContents& c) { return load_gray_image(path, c.shape); }

}  // namespace

std::vector<std::shared_ptr<const FileFormat>> builtin_formats() {
  FileFormat::Functions npy;
  npy.probe = [](const fs::path& path) {
    NpyHeader header = read_npy_header(path);
    check_npy_data_size(path, header);  // a truncated or lying file fails here, not mid-run
    FileContents c;
    c.dtype = header.dtype;
    c.shape = header.shape;
    return c;
  };
  npy.read = [](const fs::path& path, const FileContents& c) { return load_npy(path, c.dtype, c.shape); };
  npy.refuses = [](DType, const Shape&) { return std::string(); };
  npy.write = [](const fs::path& path, const HostArray& a) { save_npy(path, a); };
  FileFormat::Functions png{probe_image, read_image, image_refusal,
                            [](const fs::path& path, const HostArray& a) { save_gray_png(path, a); }};
  FileFormat::Functions pgm{probe_image, read_image, image_refusal,
                            [](const fs::path& path, const HostArray& a) { save_pgm(path, a); }};
  return {
      std::make_shared<const FileFormat>("npy", "NumPy arrays, any dtype and shape (complex as complex64/128)",
                                         std::vector<std::string>{".npy"}, npy),
      std::make_shared<const FileFormat>("png", "grayscale pictures: read as f32 [H, W] in 0..255 (colour averaged), "
                                         "2-D f32 written as 8-bit gray", std::vector<std::string>{".png"}, png),
      std::make_shared<const FileFormat>("pgm", "grayscale pictures (binary P5 or plain P2), as png",
                                         std::vector<std::string>{".pgm"}, pgm),
  };
}

}  // namespace fugue
