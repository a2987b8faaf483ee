// benchmark.h: what `fugue run`, `bench` and `tune` share: a session on one device (its context, queue,
// profiler and program cache), and timing a planned program's runs.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device/device_manager.h"
#include "device/profiler.h"
#include "device/program_cache.h"
#include "runtime/executor.h"
#include "timing_report.h"

namespace fugue {

// Everything a run needs on the device: `spec` as --device takes it.
struct Session {
  Device device;
  Profiler profiler;
  ProgramCache cache;
  Session(const std::string& spec, bool profile, bool no_disk_cache);
  Session(const DeviceInfo& info, bool profile, bool no_disk_cache);
  // The devices of this machine, listed once.
  static const std::vector<DeviceInfo>& devices();
};

// Says how the kernels' build goes, on one line of stderr, once it has taken a second and only when
// stderr is a terminal: a first run (or a new size) never sits silent for seconds.
class BuildProgress {
 public:
  BuildProgress();
  ~BuildProgress();
  void operator()(size_t done, size_t total);

 private:
  double start_;
  bool terminal_;
  bool shown_ = false;
};

// A warm-up run (first touches are not timed), then `repeat` timed runs of `executor` (prepared), each
// from the program's initial values: the device time of each run's kernels, and the host's clock around
// the run. With `wall_without_events` (and the profiler on), each timed run is followed by one without
// OpenCL events, whose clock gives the wall time instead (events cost time of their own).
std::vector<RepetitionTimes> time_runs(Executor& executor, Session& session, int repeat, bool wall_without_events = false);

// The median over runs of the whole run's device time, and its bytes and flops (from the costs).
struct RunTime {
  double seconds = 0, bytes = 0, flops = 0;
};
RunTime median_run(const std::vector<RepetitionTimes>& runs);

}  // namespace fugue
