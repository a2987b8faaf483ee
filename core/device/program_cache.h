// program_cache.h: OpenCL programs built once per process and kept on disk between runs.
// The disk key hashes the source, build options, platform, device name and driver version; entries
// are written atomically and checked on load, so a corrupt entry is rebuilt, never trusted.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <CL/opencl.hpp>

#include "device/device_manager.h"
#include "device/profiler.h"

namespace fugue {

class ProgramCache {
 public:
  struct Stats {
    int memory_hits = 0;
    int disk_hits = 0;
    int compiles = 0;  // builds from source
  };

  // `folder`: nullopt = the default ($FUGUE_CACHE_DIR, else $XDG_CACHE_HOME/fugue, else ~/.cache/fugue;
  // none where FUGUE_PROGRAM_CACHE=off); an empty path disables the disk cache.
  ProgramCache(const Device& device, std::optional<std::filesystem::path> folder = std::nullopt,
               Profiler* profiler = nullptr);

  // A built program. Throws DeviceError with the build log (and where the source was saved) on failure.
  cl::Program get(const std::string& source, const std::string& options, const std::string& label = "");

  const Stats& stats() const { return stats_; }
  const std::filesystem::path& folder() const { return folder_; }
  static std::filesystem::path default_folder();

 private:
  std::string key(const std::string& source, const std::string& options) const;
  std::optional<cl::Program> load(const std::string& key, const std::filesystem::path& file);
  void store(const std::string& key, const std::filesystem::path& file, const cl::Program& program);
  cl::Program build(const std::string& source, const std::string& options, const std::string& hash,
                    const std::string& label);

  const Device& device_;
  std::filesystem::path folder_;
  Profiler* profiler_;
  std::map<std::string, cl::Program> memory_;
  Stats stats_;
  bool warned_ = false;
};

// 64-bit FNV-1a: the cache's file names and integrity check (the full key is also stored and compared).
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 1469598103934665603ull);

}  // namespace fugue
