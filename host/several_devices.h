// several_devices.h: `fugue run`, `bench` and `explain` with several devices (--device 0:0,0:1,
// gpu:all): a session on each, their measured weights, and the program's placement on them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "benchmark.h"
#include "passes/placement.h"
#include "runtime/split_run.h"

namespace fugue {

struct SeveralDevices {
  std::vector<std::unique_ptr<Session>> sessions;  // in the order they were named
  SeveralDevices(const std::vector<DeviceInfo>& chosen, bool profile, bool no_disk_cache);
  std::vector<DeviceInfo> infos() const;
  std::vector<DeviceSlot> slots();
  // Each device's measured copy bandwidth (GB/s): a split gives each rows in proportion (equal shares
  // where some device's copy could not be timed).
  std::vector<double> weights();
};

// Where `program` runs: planned for the first device, then placed on all of them.
Placement place_on(const Program& program, SeveralDevices& devices, const PlanOptions& options);

// A split run's repetitions: a warm-up, then `repeat` runs, each from the initial values; the host's
// wall time of each run (all devices started, all finished), in seconds.
std::vector<double> time_split_runs(SplitRun& run, SeveralDevices& devices, int repeat);

}  // namespace fugue
