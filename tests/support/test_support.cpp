#include "test_support.h"

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>

#include <gtest/gtest.h>

#include "load/program_loader.h"
#include "io/npy_io.h"
#include "runtime/array_comparison.h"
#include "runtime/executor.h"
#include "device/program_cache.h"
#include "device/profiler.h"
#include "runtime/reference_executor.h"

namespace fugue::test {
namespace fs = std::filesystem;

namespace {
// A relocated build (e.g. bundled for another machine) sets FUGUE_TEST_BUILD and FUGUE_TEST_SOURCE.
fs::path relocated(const char* variable, const fs::path& below, const char* built_in) {
  const char* root = std::getenv(variable);
  return root && *root ? fs::path(root) / below : fs::path(built_in);
}
}  // namespace

fs::path bundled_plugin_folder() { return relocated("FUGUE_TEST_BUILD", "plugins", FUGUE_BUILD_PLUGIN_DIR); }
fs::path test_plugin_folder() { return relocated("FUGUE_TEST_BUILD", "test_plugins", FUGUE_TEST_PLUGIN_DIR); }
fs::path crashing_plugin_folder() {
  return relocated("FUGUE_TEST_BUILD", "crashing_plugins", FUGUE_CRASHING_PLUGIN_DIR);
}
fs::path faulty_plugin_folder() { return relocated("FUGUE_TEST_BUILD", "faulty_plugins", FUGUE_FAULTY_PLUGIN_DIR); }
fs::path fugue_executable() { return relocated("FUGUE_TEST_BUILD", "host/fugue", FUGUE_EXECUTABLE); }
fs::path source_root() { return relocated("FUGUE_TEST_SOURCE", "", FUGUE_SOURCE_ROOT); }

const PluginRegistry& bundled_plugins() {
  static PluginRegistry registry = [] {
    PluginRegistry r;
    r.load_folder(bundled_plugin_folder());
    return r;
  }();
  return registry;
}

const PluginRegistry& plugins_with_test_ops() {
  static PluginRegistry registry = [] {
    PluginRegistry r;
    r.load_folder(bundled_plugin_folder());
    r.load_file(test_plugin_folder() / "libfugue_testops.so");
    return r;
  }();
  return registry;
}

Device& test_device() {
  static Device device = [] {
    static std::vector<DeviceInfo> devices = list_devices();
    return Device(select_device(devices, device_spec("")));
  }();
  return device;
}

TempDir::TempDir() {
  static int counter = 0;
  auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
  path_ = fs::temp_directory_path() / ("fugue_test_" + std::to_string(stamp) + "_" + std::to_string(counter++));
  fs::create_directories(path_);
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::map<std::string, HostArray> run_on_device(const Program& program, const std::optional<fs::path>& cache_dir,
                                               const PlanOptions& options, int64_t* launches) {
  Profiler profiler;
  ProgramCache cache(test_device(), cache_dir, &profiler);
  Executor executor(program, test_device(), cache, profiler, options);
  executor.prepare();
  executor.initialize();
  executor.run();
  if (launches) *launches = executor.kernel_launches();
  std::map<std::string, HostArray> out;
  for (const auto& o : program.outputs) out[o.symbol] = executor.read(o.symbol);
  return out;
}

std::map<std::string, HostArray> run_reference(const Program& program) {
  ReferenceExecutor reference(program);
  reference.run();
  std::map<std::string, HostArray> out;
  for (const auto& o : program.outputs) out[o.symbol] = reference.value(o.symbol);
  return out;
}

std::string compare_arrays(const HostArray& actual, const HostArray& expected, double tolerance) {
  return fugue::compare_arrays(actual, expected, tolerance);
}

CliResult run_fugue(const std::string& args, const std::string& environment) {
  std::string command = (environment.empty() ? "" : "env " + environment + " ") + fugue_executable().string() + " " +
                        args + " 2>&1";
  CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

CliResult run_command(const std::string& command) {
  CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[256];
  while (fgets(buf, sizeof buf, pipe)) r.out += buf;
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string numpy_python() {
  for (const char* python : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(python) + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0) return python;
  return "";
}

uint64_t fresh_seed() {
  if (const char* fixed = std::getenv("FUGUE_TEST_SEED")) return std::strtoull(fixed, nullptr, 10);
  static std::random_device rd;
  return rd() & 0x7fffffffu;  // short enough to retype into FUGUE_TEST_SEED
}

std::string current_abi() {
  return "ABI " + std::to_string(FUGUE_ABI_VERSION_MAJOR) + "." + std::to_string(FUGUE_ABI_VERSION_MINOR);
}

Program load_text(const TempDir& dir, const std::string& text) {
  write_text(dir / "p.json", text);
  return load_program(dir / "p.json", bundled_plugins());
}

std::string notes_text(const std::vector<PlanNote>& notes) {
  std::string s;
  for (const auto& n : notes) s += n.statement->where + ": " + n.text + "\n";
  return s;
}

void expect_same(const std::map<std::string, HostArray>& actual, const std::map<std::string, HostArray>& expected,
                 double tolerance, const std::string& what) {
  for (const auto& [name, value] : expected) {
    const std::string mismatch = fugue::compare_arrays(actual.at(name), value, tolerance);
    EXPECT_TRUE(mismatch.empty()) << what << ", output " << name << ": " << mismatch;
  }
}

}  // namespace fugue::test

namespace fugue::test {

void expect_same_npy_files(const std::filesystem::path& actual_dir, const std::filesystem::path& expected_dir,
                           double tolerance) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(expected_dir)) {
    if (entry.path().extension() != ".npy") continue;
    ++files;
    const HostArray expected = load_npy(entry.path(), std::nullopt, std::nullopt);
    const HostArray actual = load_npy(actual_dir / entry.path().filename(), expected.dtype, expected.shape);
    EXPECT_EQ(test::compare_arrays(actual, expected, tolerance), "") << entry.path().filename();
  }
  EXPECT_GT(files, 0) << expected_dir;
}

}  // namespace fugue::test
