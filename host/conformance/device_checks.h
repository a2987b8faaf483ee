// device_checks.h: an operation on the device, against its CPU reference and its own promises:
// results within the declared tolerance, the same bits on a second run, nothing written outside the
// declared partitions (guards and element sampling, see Instrumentation), and the same result fused
// with neighbouring element-wise operations as alone. Also the cost's plausibility.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "conformance_report.h"
#include "device/device_manager.h"
#include "plugins/plugin_registry.h"
#include "device/profiler.h"
#include "device/program_cache.h"
#include "test_calls.h"

namespace fugue::conformance {

struct DeviceSession {
  Device& device;
  ProgramCache& cache;
  Profiler& profiler;
  const PluginRegistry& registry;
  // Told "check|call label" before each step that runs plugin code, so that a crash can be placed.
  std::function<void(const std::string&)> progress = nullptr;
};

// The bytes of guard region around every device buffer and every host array the checks hand over.
constexpr size_t kGuardBytes = 256;

// "reference", "determinism", "guard regions", "partition honesty", "fusion neutrality" for `op`
// over `calls`. Every call runs with guard regions around its device buffers and its reference's
// host arrays, checked after each run.
void check_on_device(const Operation& op, const std::vector<TestCall>& calls, DeviceSession& session, Report& report);

// "cost": present, finite, at least the bytes of the outputs, not absurdly above all operands' bytes,
// and not decreasing as the calls grow.
void check_cost(const Operation& op, const std::vector<TestCall>& calls, const PluginRegistry& registry,
                Report& report);

}  // namespace fugue::conformance
