// kind_checks.h: what a plugin's kinds with storage must keep: a declaration (the kind's example) gives
// every part a type, and every format that writes the kind reads back exactly what it wrote (declare
// -> write -> read). Host code only, in a child process: run before the suite opens a device.
#pragma once
#include "conformance_report.h"
#include "plugins/plugin_registry.h"

namespace fugue::conformance {

// One "round trip" result per kind with storage of `plugin` and dtype its example takes (a SKIP when no
// format writes the kind).
void check_kinds(const PluginRegistry& registry, const LoadedPlugin& plugin, uint64_t seed, Report& report);

}  // namespace fugue::conformance
