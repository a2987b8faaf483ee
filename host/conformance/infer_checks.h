// infer_checks.h: infer on valid calls (they must be accepted, with well-formed output types) and on
// invalid ones (mismatched shapes and dtypes, empty arrays, odd attributes): every answer must be a
// status with a message, never a crash, an exception across the C boundary or a hang. All of it runs
// in a child process.
#pragma once
#include <vector>

#include "conformance_report.h"
#include "plugins/plugin_registry.h"
#include "test_calls.h"

namespace fugue::conformance {

// Reports "infer (valid)" and "infer (invalid)" for `op`; returns the candidates that are valid calls
// (all declared ones, or the derived ones of the first rank the operation accepts).
std::vector<TestCall> check_infer(const Operation& op, const PluginRegistry& registry,
                                  const std::vector<TestCall>& candidates, Report& report);

}  // namespace fugue::conformance
