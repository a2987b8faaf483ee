#include "device/program_cache.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "io/atomic_file.h"
#include "io/cache_folder.h"
#include "errors.h"

namespace fugue {
namespace fs = std::filesystem;

namespace {
constexpr char kMagic[8] = {'F', 'U', 'G', 'U', 'E', 'P', 'C', '1'};

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

uint64_t fnv1a64(const void* data, size_t size, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

fs::path ProgramCache::default_folder() {
  // Off keeps programs in memory only. On PoCL, whose own kernel cache keeps built programs between
  // runs, that saves a quarter of every first build: asking PoCL for a binary makes it generate code a
  // second time (a work-group function for any size).
  const char* setting = std::getenv("FUGUE_PROGRAM_CACHE");
  const std::string value = setting ? setting : "";
  if (value == "off") return {};
  if (!value.empty() && value != "on")
    throw UserError("FUGUE_PROGRAM_CACHE: expected \"on\" (the default: built programs kept on disk) or \"off\" "
                    "(kept in memory only), found \"" + value + "\"");
  return cache_folder();
}

ProgramCache::ProgramCache(const Device& device, std::optional<fs::path> folder, Profiler* profiler)
    : device_(device), folder_(folder ? *folder : default_folder()), profiler_(profiler) {}

std::string ProgramCache::key(const std::string& source, const std::string& options) const {
  const auto& i = device_.info;
  return "platform=" + i.platform_name + "|" + i.platform_version + "\ndevice=" + i.name +
         "\ndriver=" + i.driver_version + "\noptions=" + options + "\nsource=" + source;
}

std::optional<cl::Program> ProgramCache::load(const std::string& key, const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  auto corrupt = [&](const char* why) -> std::optional<cl::Program> {
    spdlog::debug("program cache entry {} is unusable ({}); rebuilding", file.string(), why);
    return std::nullopt;
  };
  char magic[8];
  uint64_t key_size = 0, binary_size = 0, checksum = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return corrupt("bad magic");
  if (!in.read(reinterpret_cast<char*>(&key_size), 8) || key_size != key.size()) return corrupt("key size");
  std::string stored(key_size, '\0');
  if (!in.read(stored.data(), key_size) || stored != key) return corrupt("different key");
  std::error_code ec;
  uint64_t file_size = fs::file_size(file, ec);
  if (!in.read(reinterpret_cast<char*>(&binary_size), 8) || ec ||
      binary_size != file_size - 8 - 8 - key_size - 8 - 8)
    return corrupt("binary size");
  std::vector<unsigned char> binary(binary_size);
  if (!in.read(reinterpret_cast<char*>(binary.data()), binary_size) ||
      !in.read(reinterpret_cast<char*>(&checksum), 8))
    return corrupt("truncated");
  uint64_t expect = fnv1a64(binary.data(), binary.size(), fnv1a64(key.data(), key.size()));
  if (checksum != expect) return corrupt("checksum");
  try {
    cl::Program program(device_.context, {device_.info.device}, cl::Program::Binaries{binary});
    program.build({device_.info.device});
    return program;
  } catch (const cl::Error&) {
    return corrupt("the driver rejected the binary");
  }
}

void ProgramCache::store(const std::string& key, const fs::path& file, const cl::Program& program) {
  std::vector<std::vector<unsigned char>> binaries;
  try {
    binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  } catch (const cl::Error&) {
    return;
  }
  if (binaries.size() != 1 || binaries[0].empty()) return;
  const auto& binary = binaries[0];
  uint64_t key_size = key.size(), binary_size = binary.size();
  uint64_t checksum = fnv1a64(binary.data(), binary.size(), fnv1a64(key.data(), key.size()));
  try {
    fs::create_directories(folder_);
    write_file_atomically(file, [&](std::ostream& out) {
      out.write(kMagic, 8);
      out.write(reinterpret_cast<const char*>(&key_size), 8);
      out.write(key.data(), key.size());
      out.write(reinterpret_cast<const char*>(&binary_size), 8);
      out.write(reinterpret_cast<const char*>(binary.data()), binary.size());
      out.write(reinterpret_cast<const char*>(&checksum), 8);
    });
  } catch (const std::exception& e) {
    if (!warned_) spdlog::warn("program cache {} is not writable ({}); kernels will be rebuilt next run", folder_.string(), e.what());
    warned_ = true;
  }
}

cl::Program ProgramCache::build(const std::string& source, const std::string& options,
                                const std::string& hash, const std::string& label) {
  auto start = std::chrono::steady_clock::now();
  cl::Program program(device_.context, source);
  try {
    program.build({device_.info.device}, options.c_str());
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.info.device);
    } catch (const cl::Error&) {
    }
    fs::path saved = (folder_.empty() ? fs::temp_directory_path() : folder_) / "failed" / (hash + ".cl");
    std::string where;
    try {
      fs::create_directories(saved.parent_path());
      write_file_atomically(saved, [&](std::ostream& out) { out << source; });
      where = "; the source is in " + saved.string();
    } catch (const std::exception&) {
    }
    throw DeviceError("building OpenCL program" + (label.empty() ? "" : " for " + label) + " on " +
                      device_.info.name + " failed (" + cl_error_name(e.err()) + ")" + where +
                      "; build log:\n" + log);
  }
  ++stats_.compiles;
  if (profiler_) profiler_->host_span("compile " + (label.empty() ? hash : label), "compile", start, std::chrono::steady_clock::now());
  return program;
}

cl::Program ProgramCache::get(const std::string& source, const std::string& options, const std::string& label) {
  std::string k = key(source, options);
  if (auto it = memory_.find(k); it != memory_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  std::string hash = hex64(fnv1a64(k.data(), k.size())) + hex64(fnv1a64(k.data(), k.size(), 0x9e3779b97f4a7c15ull));
  fs::path file = folder_.empty() ? fs::path() : folder_ / (hash + ".bin");
  if (!folder_.empty()) {
    if (auto program = load(k, file)) {
      ++stats_.disk_hits;
      memory_[k] = *program;
      return *program;
    }
  }
  cl::Program program = build(source, options, hash, label);
  if (!folder_.empty()) store(k, file, program);
  memory_[k] = program;
  return program;
}

}  // namespace fugue
