// descriptor_checks.h: what can be checked of a plugin's table without calling it: operation names,
// signatures, attributes, sizes, entry points, tolerances.
#pragma once
#include <vector>

#include "conformance_report.h"
#include "plugins/operation.h"
#include "plugins/plugin_registry.h"

namespace fugue::conformance {

// One "descriptor" result per operation (and one for the plugin's table). Returns the operations
// whose descriptors are sound enough to call.
// `only`: report just these operations (all when empty).
std::vector<const Operation*> check_descriptors(const PluginRegistry& registry, const LoadedPlugin& plugin,
                                                const std::vector<std::string>& only, Report& report);

}  // namespace fugue::conformance
