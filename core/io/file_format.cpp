#include "io/file_format.h"

#include <sstream>

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
  std::vector<int64_t> shape(kMaxRank + 1, 0);
  fugue_declared out{};
  out.struct_size = sizeof out;
  out.shape = shape.data();
  out.shape_capacity = static_cast<uint32_t>(shape.size());
  ErrorBuffer error;
  check(desc_->probe(desc_, path.c_str(), &out, error.get()), error, "reading the header", path, *plugin_);
  if (out.rank > kMaxRank)
    throw UserError(path.string() + ": holds an array of " + std::to_string(out.rank) + " axes; Fugue supports at most " +
                    std::to_string(kMaxRank));
  if (!fugue_dtype_supported(out.dtype))
    throw DeviceError(path.string() + ": format " + name_ + " probed an unknown dtype (plugin '" + plugin_->name + "')");
  FileContents c;
  c.dtype = static_cast<DType>(out.dtype);
  c.shape.assign(shape.begin(), shape.begin() + out.rank);
  for (int64_t n : c.shape)
    if (n < 0) throw DeviceError(path.string() + ": format " + name_ + " probed a negative extent");
  return c;
}

HostArray FileFormat::read(const fs::path& path, const FileContents& expected) const {
  if (expected.values) return *expected.values;
  if (!desc_) return functions_.read(path, expected);
  // The file may have changed since it was probed: probe again and compare.
  FileContents now = probe(path);
  if (now.dtype != expected.dtype || now.shape != expected.shape)
    throw UserError(path.string() + ": changed since the program was loaded (now " +
                    std::string(dtype_name(now.dtype)) + " " + shape_string(now.shape) + ", was " +
                    std::string(dtype_name(expected.dtype)) + " " + shape_string(expected.shape) + ")");
  HostArray array(expected.dtype, expected.shape);
  const abi::Type type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(expected.dtype), expected.shape);
  const fugue_type view = type.view();
  fugue_host_array host{sizeof(fugue_host_array), &view, array.bytes.empty() ? nullptr : array.bytes.data(),
                        array.bytes.size(), 0};
  ErrorBuffer error;
  check(desc_->read(desc_, path.c_str(), &host, error.get()), error, "reading", path, *plugin_);
  return array;
}

std::string FileFormat::refuses(DType dtype, const Shape& shape) const {
  if (!writes()) return "the " + name_ + " format only reads";
  if (!desc_) return functions_.refuses(dtype, shape);
  const abi::Type type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(dtype), shape);
  const fugue_type view = type.view();
  ErrorBuffer error;
  const fugue_status status = desc_->accepts(desc_, &view, error.get());
  if (status == FUGUE_OK) return "";
  std::string message = error.text();
  return message.empty() ? "refused without a reason (status " + std::to_string(status) + ")" : message;
}

void FileFormat::write(const fs::path& path, const HostArray& array) const {
  if (!writes()) throw std::logic_error("format " + name_ + " does not write");
  if (!desc_) return functions_.write(path, array);
  const abi::Type type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(array.dtype), array.shape);
  const fugue_type view = type.view();
  fugue_host_array host{sizeof(fugue_host_array), &view,
                        array.bytes.empty() ? nullptr : const_cast<uint8_t*>(array.bytes.data()), array.bytes.size(), 0};
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
  return {DType::F32, image->shape, image};
}

HostArray read_image(const fs::path& path, const FileContents& c) { return load_gray_image(path, c.shape); }

}  // namespace

std::vector<std::shared_ptr<const FileFormat>> builtin_formats() {
  FileFormat::Functions npy;
  npy.probe = [](const fs::path& path) {
    NpyHeader header = read_npy_header(path);
    check_npy_data_size(path, header);  // a truncated or lying file fails here, not mid-run
    return FileContents{header.dtype, header.shape, nullptr};
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
