// plugin_registry.h: finds plugin libraries, checks their ABI and tables, and registers their operations.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/file_format.h"
#include "io/generator.h"
#include "plugins/tuner.h"
#include "plugins/kind.h"
#include "plugins/operation.h"

namespace fugue {

// More operands than any operation has reason to take: a count above it is a corrupt table.
constexpr uint32_t kMaxOperands = 256;

// A plugin file the registry refused, and why (named file, versions, conflicting plugin).
struct PluginRefusal {
  std::string file;
  std::string reason;
};

class PluginRegistry {
 public:
  // Knows the core's kinds (array, scalar, const), formats (npy, png, pgm) and generators (zeros,
  // fill, random, arange) from the start.
  PluginRegistry();

  // The folders searched by default: beside the executable (`../plugins` in a build tree,
  // `../lib/fugue/plugins` in an install), then every folder of FUGUE_PLUGIN_PATH (colon-separated).
  static std::vector<std::filesystem::path> default_search_path();

  // Loads every `*.so` in `folder` (sorted by name), each through load_probed. A missing folder is skipped.
  void load_folder(const std::filesystem::path& folder);
  // Loads one library in this process. On refusal, records why, logs a warning, and returns false;
  // the registry stays as it was (a plugin registers all its operations or none).
  bool load_file(const std::filesystem::path& file);
  // load_file, once a child process has loaded the library and checked its tables without crashing
  // or hanging (plugins/plugin_probe.h: the verdict is cached until the file changes); a library
  // that crashed or hung there is refused with how. Forks: call before OpenCL starts in this process.
  bool load_probed(const std::filesystem::path& file);
  // The default search path, then `extra_files` (from --plugin), all probed.
  void load_defaults(const std::vector<std::filesystem::path>& extra_files = {});

  // nullptr when no plugin provides `name`. The handle keeps the plugin's library loaded.
  std::shared_ptr<const Operation> find(const std::string& name) const;
  const std::vector<std::shared_ptr<const LoadedPlugin>>& plugins() const { return plugins_; }
  std::vector<const Operation*> operations_of(const LoadedPlugin& plugin) const;
  const std::vector<PluginRefusal>& refusals() const { return refusals_; }
  // nullptr when neither the core nor a plugin defines kind `name`.
  std::shared_ptr<const Kind> find_kind(const std::string& name) const;
  // Every kind, the core's first, then by name.
  std::vector<const Kind*> kinds() const;
  // Every format, the core's first, then the plugins' in the order they loaded.
  const std::vector<std::shared_ptr<const FileFormat>>& formats() const { return formats_; }
  // The first format that reads files with this extension (".npy", lower case); null if none.
  std::shared_ptr<const FileFormat> reader_for(const std::string& extension) const;
  // The formats that write files with this extension, in order.
  std::vector<std::shared_ptr<const FileFormat>> writers_for(const std::string& extension) const;
  // "a .npy, .png, .pgm or .flo file": the extensions some format reads (or writes).
  std::string extensions_text(bool writing) const;
  std::shared_ptr<const Generator> find_generator(const std::string& name) const;
  // Every generator, the core's first, then by name.
  std::vector<const Generator*> generators() const;
  // The plugins' tuners (ABI 2.8), by name; nullptr when none has `name`.
  const Tuner* find_tuner(const std::string& name) const;
  std::vector<const Tuner*> tuners() const;

 private:
  void refuse(const std::filesystem::path& file, const std::string& reason);

  std::vector<std::shared_ptr<const LoadedPlugin>> plugins_;
  std::map<std::string, std::shared_ptr<const Operation>> operations_;
  std::map<std::string, std::shared_ptr<const Kind>> kinds_;
  std::vector<std::shared_ptr<const FileFormat>> formats_;
  std::map<std::string, std::shared_ptr<const Generator>> generators_;
  std::map<std::string, std::shared_ptr<const Tuner>> tuners_;
  std::vector<PluginRefusal> refusals_;
  std::vector<std::string> loaded_files_;  // canonical paths, so a folder listed twice loads once
};

}  // namespace fugue
