#include "benchmark.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <spdlog/spdlog.h>

namespace fugue {

namespace {
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Session::Session(const std::string& spec, bool profile, bool no_disk_cache)
    : Session(select_device(devices(), device_spec(spec)), profile, no_disk_cache) {}

Session::Session(const DeviceInfo& info, bool profile, bool no_disk_cache)
    : device(info),
      profiler(profile),
      cache(device, no_disk_cache ? std::optional<std::filesystem::path>(std::filesystem::path()) : std::nullopt, &profiler) {
  spdlog::info("device {} ({}), {}", device.info.name, device.info.id(), device.info.platform_name);
}

const std::vector<DeviceInfo>& Session::devices() {
  static std::vector<DeviceInfo> list = list_devices();
  return list;
}

BuildProgress::BuildProgress() : start_(now_seconds()), terminal_(isatty(STDERR_FILENO)) {}

BuildProgress::~BuildProgress() {
  if (shown_) std::fprintf(stderr, "\n");
}

void BuildProgress::operator()(size_t done, size_t total) {
  const double elapsed = now_seconds() - start_;
  if (!terminal_ || (elapsed < 1.0 && !shown_)) return;
  std::fprintf(stderr, "\rfugue: building kernels: %zu of %zu (%.1f s)", done, total, elapsed);
  std::fflush(stderr);
  shown_ = true;
}

std::vector<RepetitionTimes> time_runs(Executor& executor, Session& session, int repeat, bool wall_without_events) {
  executor.initialize();
  executor.run();
  // One run from the program's initial values, on the host's clock.
  auto timed_run = [&] {
    executor.initialize();
    session.device.queue.finish();
    const double start = now_seconds();
    executor.run();
    return now_seconds() - start;
  };
  std::vector<RepetitionTimes> runs;
  for (int r = 0; r < repeat; ++r) {
    session.profiler.clear();
    const double wall = timed_run();
    runs.push_back(summarize(session.profiler.collect()));
    runs.back().wall_seconds = wall;
    if (!wall_without_events || !session.profiler.enabled()) continue;
    // The wall time of a run as `fugue run` runs it, without an event per launch: on NVIDIA's OpenCL an
    // event costs more than the launch it times (H200: 11.9-12.0 us a launch with events, 4.2-4.5
    // without; the launches of tiny kernels back to back).
    session.profiler.set_enabled(false);
    try {
      runs.back().wall_seconds = timed_run();
    } catch (...) {
      session.profiler.set_enabled(true);
      throw;
    }
    session.profiler.set_enabled(true);
  }
  return runs;
}

RunTime median_run(const std::vector<RepetitionTimes>& runs) {
  std::vector<RunTime> each;
  for (const auto& r : runs) {
    RunTime t;
    for (const auto& [name, s] : r.seconds) t.seconds += s;
    for (const auto& [name, b] : r.bytes) t.bytes += b;
    for (const auto& [name, f] : r.flops) t.flops += f;
    each.push_back(t);
  }
  if (each.empty()) return {};
  std::sort(each.begin(), each.end(), [](const RunTime& a, const RunTime& b) { return a.seconds < b.seconds; });
  return each[each.size() / 2];
}

}  // namespace fugue
