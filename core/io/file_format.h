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
#include "device/device_manager.h"
#include "plugins/kind.h"
#include "plugins/operation.h"
#include "program/host_array.h"

namespace fugue {

// What a file holds, as a probe saw it (with its values where probing had to read them anyway).
struct FileContents {
  DType dtype = DType::None;
  Shape shape;
  std::string kind_name;         // a file holding a kind with storage (a plugin's): which kind
  std::vector<ArrayType> parts;  // ... and its parts' types
  std::shared_ptr<const HostArray> values;  // null: read them when the run starts
  // Read as this declaration (JSON text) declares the value, through the format's read_as, for this
  // device (null: none); "" for a file read as it is.
  std::string as_declared;
  std::shared_ptr<const DeviceInfo> device;
  // ... and the metadata of the type that declaration made (read_as sees the type whole).
  std::vector<unsigned char> metadata;
  // "f32 [3, 4]", or "pair f32 [3] (f32 [3], f32 [3])".
  std::string type_text() const;
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
  // Whether it reads files as values of kinds with storage that a declaration describes (probe_as).
  bool reads_as() const;
  // The type of `path` read as `declaration` (a JSON object as text, "from" left out) declares a value
  // of `kind`, whose parts it checks; UserError for a bad file or a declaration it cannot read into.
  // A chooser kind's declaration gets the kind the format chose (DeclaredType::kind_name) and why.
  DeclaredType probe_as(const std::filesystem::path& path, const std::string& declaration, const Kind& kind,
                        const DeviceInfo* device) const;
  // The values of a file `probe` described (its shape and dtype are checked again).
  HostArray read(const std::filesystem::path& path, const FileContents& expected) const;
  // "" when it writes values of this type (a kind with storage: kind_name and parts set); otherwise why
  // not ("only 2-D f32 arrays ...").
  std::string refuses(const abi::Type& type) const;
  // The same for an array of `dtype` and `shape` (a scalar: shape {}).
  std::string refuses(DType dtype, const Shape& shape) const {
    return refuses(abi::Type(FUGUE_KIND_ARRAY, static_cast<fugue_dtype>(dtype), shape));
  }
  // `metadata`: a plugin kind's, from its declaration (a sparse matrix's block size).
  void write(const std::filesystem::path& path, const HostArray& array, const std::vector<unsigned char>& metadata = {}) const;

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_format_desc* desc_ = nullptr;
  std::string name_, doc_;
  std::vector<std::string> extensions_;
  Functions functions_;
};

// The ABI's type of a host array: an array (a scalar: rank 0), or a kind with storage (kind PLUGIN, with
// its parts).
abi::Type type_of(const HostArray& array);
// The C view of `array`, whose type's view is `view` (parts included; `parts` holds their views).
fugue_host_array host_view(const HostArray& array, const fugue_type& view, std::vector<fugue_host_array>& parts);

// The core's formats: npy (any dtype and shape), png and pgm (2-D f32 grayscale images).
std::vector<std::shared_ptr<const FileFormat>> builtin_formats();

}  // namespace fugue
