// profiler.h: timings of kernels, transfers and compiles, from OpenCL event profiling and the host
// clock; written as Chrome trace-event JSON (--profile) or summarised per kernel (--stats, bench).
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

namespace fugue {

struct ProfileRecord {
  std::string name;      // kernel or call-site label
  std::string category;  // "kernel", "transfer", "compile"
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  bool device_clock = true;  // device timestamps; false: host steady clock
  double bytes = 0;          // the op's cost, for GB/s
  double flops = 0;
  uint64_t duration() const { return end_ns - start_ns; }
};

class Profiler {
 public:
  explicit Profiler(bool enabled = false) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  void set_enabled(bool on) { enabled_ = on; }

  // Keep an event of enqueued work; its timestamps are read in collect().
  void track(const cl::Event& event, std::string name, std::string category, double bytes = 0,
             double flops = 0);
  // A span measured on the host (compiles).
  void host_span(std::string name, std::string category, std::chrono::steady_clock::time_point start,
                 std::chrono::steady_clock::time_point end);
  // Waits for tracked events and turns them into records. Call after the queue finished.
  const std::vector<ProfileRecord>& collect();
  void clear();

  // Chrome trace-event JSON (open in Perfetto or chrome://tracing); written atomically.
  void write_chrome_trace(const std::filesystem::path& file);

 private:
  struct Pending {
    cl::Event event;
    ProfileRecord record;
  };
  bool enabled_;
  std::vector<Pending> pending_;
  std::vector<ProfileRecord> records_;
};

}  // namespace fugue
