// generator.h: one generator of initial values, `"from": {"<name>": parameters}`: the core's own
// (zeros, fill, random, arange: generators.h, read by the loader) or a plugin's
// (fugue_generator_desc), which checks its parameters when the program is loaded and fills the array
// when the run starts.
#pragma once
#include <memory>
#include <string>

#include "fugue_plugin.h"
#include "device/device_manager.h"
#include "plugins/kind.h"
#include "plugins/operation.h"
#include "program/host_array.h"

namespace fugue {

class Generator {
 public:
  // One of the core's (the loader reads its parameters itself).
  Generator(std::string name, std::string doc, uint32_t dtypes);
  // A plugin's (its descriptor was checked by the registry).
  Generator(std::shared_ptr<const LoadedPlugin> plugin, const fugue_generator_desc* desc);

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  uint32_t dtypes() const { return dtypes_; }
  const LoadedPlugin* plugin() const { return plugin_.get(); }
  bool builtin() const { return !desc_; }

  // A plugin generator's check of `parameters` (JSON text) for an array of `dtype` and `shape`.
  // Throws UserError with its message, which starts with a pointer inside the parameters when it
  // has one.
  void check(const std::string& parameters, DType dtype, const Shape& shape) const;
  HostArray generate(const std::string& parameters, DType dtype, const Shape& shape) const;
  // Whether it makes arrays (check, generate), and whether it makes whole values of kinds with storage
  // (probe_as, generate_as; ABI 2.6).
  bool makes_arrays() const;
  bool makes_values() const;
  // The type of what `parameters` make as `declaration` (JSON text with "kind", no "from") declares a
  // value of `kind`; UserError with the plugin's message.
  // `device`: the device the program is loaded for (null: none); a chooser kind gets the kind chosen.
  DeclaredType probe_as(const std::string& parameters, const std::string& declaration, const Kind& kind,
                        const DeviceInfo* device) const;
  // The value of that type (every part allocated and filled; `metadata`: the type's, as probe_as made it).
  HostArray generate_as(const std::string& parameters, const std::string& declaration, const HostArray& like,
                        const std::vector<unsigned char>& metadata, const DeviceInfo* device) const;

 private:
  std::shared_ptr<const LoadedPlugin> plugin_;
  const fugue_generator_desc* desc_ = nullptr;
  std::string name_, doc_;
  uint32_t dtypes_ = 0;
};

}  // namespace fugue
