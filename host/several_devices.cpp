#include "several_devices.h"

#include <algorithm>
#include <chrono>

#include "passes/launch.h"

namespace fugue {

SeveralDevices::SeveralDevices(const std::vector<DeviceInfo>& chosen, bool profile, bool no_disk_cache) {
  for (const auto& info : chosen) sessions.push_back(std::make_unique<Session>(info, profile, no_disk_cache));
}

std::vector<DeviceInfo> SeveralDevices::infos() const {
  std::vector<DeviceInfo> out;
  for (const auto& s : sessions) out.push_back(s->device.info);
  return out;
}

std::vector<DeviceSlot> SeveralDevices::slots() {
  std::vector<DeviceSlot> out;
  for (auto& s : sessions) out.push_back({&s->device, &s->cache, &s->profiler});
  return out;
}

std::vector<double> SeveralDevices::weights() {
  std::vector<double> out;
  for (auto& s : sessions) out.push_back(measured_weight(s->device));
  // A device whose copy could not be timed: equal shares rather than a guess for it alone.
  if (std::any_of(out.begin(), out.end(), [](double w) { return !(w > 0); })) out.assign(out.size(), 1.0);
  return out;
}

Placement place_on(const Program& program, SeveralDevices& devices, const PlanOptions& options) {
  const DeviceInfo& first = devices.sessions.front()->device.info;
  const ExecutionPlan plan = lower(program, first, options);
  const LaunchTuning tuning = tuning_for(first);
  return place_program(program, plan, devices.weights(), static_cast<double>(tuning.split_bytes), tuning.halo_depth,
                                              tuning.gather_rows);
}

std::vector<double> time_split_runs(SplitRun& run, SeveralDevices& devices, int repeat) {
  run.initialize();
  run.run();
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r) {
    run.initialize();
    for (auto& s : devices.sessions) {
      s->device.queue.finish();
      s->profiler.clear();
    }
    const auto start = std::chrono::steady_clock::now();
    run.run();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

}  // namespace fugue
