// file_format.h: one file format, chosen by extension: the core's own (.npy, .png, .pgm) or a
// plugin's (fugue_format_desc). The registry (plugins/plugin_registry.h) holds them all; the loader
// probes inputs and checks outputs through it, and initial values and output files use the format
// it chose. Every error is a UserError that names the file.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fugue_plugin.h"
#include "plugins/operation.h"
#include "program/host_array.h"

namespace fugue {

// What a file holds, as a probe saw it (with its values where probing had to read them anyway).
struct FileContents {
  DType dtype = DType::None;
  Shape shape;
  std::shared_ptr<const HostArray> values;  // null: read them when the run starts
};

class FileFormat {
 public:
  struct Functions {
    std::function<FileContents(const std::filesystem::path&)> probe;  // empty: it only writes
    std::function<HostArray(const std::filesystem::path&, const FileContents&)> read;
    std::function<std::string(DType, const Shape&)> refuses;  // "" when it writes it; empty: it only reads
    std::function<void(const std::filesystem::path&, const HostArray&)> write;
  };
  // One of the core's formats.
  FileFormat(std::string name, std::string doc, std::vector<std::string> extensions, Functions functions);
  // A plugin's (its descriptor was checked by the registry).
  FileFormat(std::shared_ptr<const LoadedPlugin> plugin, const fugue_format_desc* desc);

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const std::vector<std::string>& extensions() const { return extensions_; }
  bool has_extension(const std::string& lowercase_extension) const;
  const LoadedPlugin* plugin() const { return plugin_.get(); }
  bool reads() const;
  bool writes() const;

  FileContents probe(const std::filesystem::path& path) const;
  // The values of a file `probe` described (its shape and dtype are checked again).
  HostArray read(const std::filesystem::path& path, const FileContents& expected) const;
  // "" when it writes values of this type; otherwise why not ("only 2-D f32 arrays ...").
  std::string refuses(DType dtype, const Shape& shape) const;
  void write(const std::filesystem::path& path, const HostArray& array) const;

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_format_desc* desc_ = nullptr;
  std::string name_, doc_;
  std::vector<std::string> extensions_;
  Functions functions_;
};

// The core's formats: npy (any dtype and shape), png and pgm (2-D f32 grayscale images).
std::vector<std::shared_ptr<const FileFormat>> builtin_formats();

}  // namespace fugue
