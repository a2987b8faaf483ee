// conformance_suite.h: `fugue conformance PLUGIN`: every check of every operation of one plugin,
// each that calls plugin code in a child process (infer, then each operation's device checks in a
// child that opens the device itself), with PASS / FAIL / SKIP lines, a summary and an optional
// JSON report.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fugue::conformance {

struct SuiteOptions {
  std::string plugin;            // a plugin file, or the name of a plugin on the search path
  std::string device;            // as `fugue run --device`
  std::string report_file;       // --report: the JSON report ("" none)
  std::vector<std::string> ops;  // --op: only these operations (default: all)
  uint64_t seed = 0;             // --seed: inputs' seed (0: a fresh one, printed)
  int timeout_seconds = 600;     // --timeout: the most one operation's device checks may take
};

// Returns the exit status: 0 when nothing FAILed, 1 otherwise. Throws UserError when the plugin is
// not found or an --op names no operation of it.
int run_conformance(const SuiteOptions& options);

}  // namespace fugue::conformance
