// program_loader.h: reads a JSON program file into a Program, validated and fully typed before
// anything runs. Every error names the file and JSON pointer, what was expected and what was found.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device_manager.h"
#include "plugins/plugin_registry.h"
#include "program/program.h"

namespace fugue {

struct LoadOptions {
  // --set NAME=VALUE: overrides of consts and scalars, applied before types are inferred.
  std::vector<std::pair<std::string, std::string>> overrides;
  // The device the program will run on (null: none, as for fugue validate): formats and generators that
  // choose a kind for a declaration (a sparse matrix's format) choose for it.
  std::shared_ptr<const DeviceInfo> device;
};

// Throws UserError on any problem with the file or the program.
Program load_program(const std::filesystem::path& file, const PluginRegistry& registry,
                     const LoadOptions& options = {});
// Same, from a parsed document; `file` names it in messages and anchors relative paths.
Program parse_program(const nlohmann::json& document, const std::filesystem::path& file,
                      const PluginRegistry& registry, const LoadOptions& options = {});

}  // namespace fugue
