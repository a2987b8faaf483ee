#include "device/profiler.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "device/device_manager.h"
#include "errors.h"

namespace fugue {

void Profiler::track(const cl::Event& event, std::string name, std::string category, double bytes,
                     double flops) {
  if (!enabled_) return;
  ProfileRecord r;
  r.name = std::move(name);
  r.category = std::move(category);
  r.bytes = bytes;
  r.flops = flops;
  pending_.push_back({event, std::move(r)});
}

void Profiler::host_span(std::string name, std::string category, std::chrono::steady_clock::time_point start,
                         std::chrono::steady_clock::time_point end) {
  if (!enabled_) return;
  ProfileRecord r;
  r.name = std::move(name);
  r.category = std::move(category);
  r.device_clock = false;
  r.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
  r.end_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count();
  records_.push_back(std::move(r));
}

const std::vector<ProfileRecord>& Profiler::collect() {
  for (auto& p : pending_) {
    try {
      p.event.wait();
      p.record.start_ns = p.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      p.record.end_ns = p.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("reading the timing of " + p.record.name + " (" + e.what() + ")", e.err()));
    }
    records_.push_back(std::move(p.record));
  }
  pending_.clear();
  return records_;
}

void Profiler::clear() {
  pending_.clear();
  records_.clear();
}

void Profiler::write_chrome_trace(const std::filesystem::path& file) {
  collect();
  // Device and host clocks differ: each starts at its own first timestamp, on its own track.
  uint64_t device0 = std::numeric_limits<uint64_t>::max(), host0 = device0;
  for (const auto& r : records_) {
    uint64_t& origin = r.device_clock ? device0 : host0;
    origin = std::min(origin, r.start_ns);
  }
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "device queue"}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 2}, {"args", {{"name", "host (compiles)"}}}});
  for (const auto& r : records_) {
    uint64_t origin = r.device_clock ? device0 : host0;
    nlohmann::json e = {{"name", r.name}, {"cat", r.category}, {"ph", "X"}, {"pid", 1},
                        {"tid", r.device_clock ? 1 : 2},
                        {"ts", static_cast<double>(r.start_ns - origin) / 1000.0},
                        {"dur", static_cast<double>(r.duration()) / 1000.0}};
    if (r.bytes > 0) e["args"]["bytes"] = r.bytes;
    if (r.flops > 0) e["args"]["flops"] = r.flops;
    events.push_back(std::move(e));
  }
  nlohmann::json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  write_file_atomically(file, [&](std::ostream& out) { out << doc.dump(1) << "\n"; });
}

}  // namespace fugue
