// isolated_checks.h: an operation's device checks (device against reference, determinism, guard
// regions, partition honesty, fusion neutrality) and its cost, run in a child process that opens the
// device itself, within a time limit. The suite's own process never touches OpenCL, so every
// operation gets a fresh child forked from a clean parent, and a plugin that crashes or hangs in
// plan, emit, execute, reference or cost is a FAIL naming the check and the call, not the suite's end.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "conformance_report.h"
#include "plugins/plugin_registry.h"
#include "test_calls.h"

namespace fugue::conformance {

// candidate_calls (test_calls.h), in a child process: a kind's example declaration is plugin code.
// False, after a FAIL of "test_cases" in `report`, when it threw, crashed or hung.
bool candidate_calls_in_child(const Operation& op, const PluginRegistry& registry, uint64_t seed, Report& report,
                              std::vector<TestCall>& calls);

// Adds the op's results to `report`; returns the name of the device the child opened ("" if none did).
// Throws DeviceError when the child could not open the device (`device_spec` as `fugue run --device`).
std::string check_in_child(const Operation& op, const std::vector<TestCall>& calls, const PluginRegistry& registry,
                           const std::string& device_spec, std::chrono::milliseconds timeout, Report& report);

}  // namespace fugue::conformance
