// test_support.h: what Fugue's tests share: the registry of bundled plugins, one OpenCL device,
// temporary folders, running a JSON program on the device and on the CPU reference, comparing arrays.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "device/device_manager.h"
#include "passes/lower.h"
#include "program/host_array.h"
#include "plugins/plugin_registry.h"
#include "program/program.h"

namespace fugue::test {

// Bundled plugins (the build's plugin folder), loaded once.
const PluginRegistry& bundled_plugins();
// Bundled plugins plus the test plugins (testops).
const PluginRegistry& plugins_with_test_ops();
// The build's plugin folder, the folder holding the plugins built for tests.
std::filesystem::path bundled_plugin_folder();
std::filesystem::path test_plugin_folder();
// The folder of the test plugins that crash or hang while they load (libfugue_crash_entry.so, ...).
std::filesystem::path crashing_plugin_folder();
// The folder of the test plugins with one fault found only by running them (libfugue_faulty_*.so).
std::filesystem::path faulty_plugin_folder();
// The folder of the `fugue` executable's build, and the repository root.
std::filesystem::path fugue_executable();
std::filesystem::path source_root();

// The default device ($FUGUE_DEVICE respected), opened once.
Device& test_device();

// A fresh folder, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Writes `text` to `file`.
void write_text(const std::filesystem::path& file, const std::string& text);
// The whole of a text file ("" when it cannot be read).
std::string read_text(const std::filesystem::path& file);

// Every output symbol's value after running `program` on the device, and on the CPU reference.
// `cache_dir`: nullopt = the default disk cache ($FUGUE_CACHE_DIR); an empty path = no disk cache.
// `options`: fusion and copy elimination (default: both on, as `fugue run`). `launches`: if given,
// receives the number of kernels enqueued.
std::map<std::string, HostArray> run_on_device(const Program& program,
                                               const std::optional<std::filesystem::path>& cache_dir = std::nullopt,
                                               const PlanOptions& options = {}, int64_t* launches = nullptr);
std::map<std::string, HostArray> run_reference(const Program& program);

// Empty when `actual` matches `expected` within |a - e| <= tol * max(1, |e|) per element (and the
// same dtype and shape); otherwise a message naming the first bad element.
std::string compare_arrays(const HostArray& actual, const HostArray& expected, double tolerance);
// EXPECTs every .npy of `expected_dir` to be in `actual_dir`, equal within `tolerance` (compare_arrays),
// and at least one to be there.
void expect_same_npy_files(const std::filesystem::path& actual_dir, const std::filesystem::path& expected_dir,
                           double tolerance);

// The `fugue` executable run with `args` (a shell command line), stdout and stderr together.
struct CliResult {
  int code = -1;  // exit status (-1: did not exit normally)
  std::string out;
};
// `environment`: assignments put before the command ("FUGUE_PLUGIN_PATH=/x FUGUE_CACHE_DIR=/y").
CliResult run_fugue(const std::string& args, const std::string& environment = "");
// Any shell command line, stdout and stderr together.
CliResult run_command(const std::string& command);
// The python3 that has NumPy (the independent oracle of several tests), or "" when none has.
std::string numpy_python();

// The program `text`, written to p.json in `dir` and loaded with the bundled plugins.
Program load_text(const TempDir& dir, const std::string& text);
// The planner's reasons, one line each ("<where>: <why>"): for every operation it did not fuse.
std::string notes_text(const std::vector<PlanNote>& notes);
// EXPECTs that each output of `expected` matches `actual`'s within `tolerance` (compare_arrays).
void expect_same(const std::map<std::string, HostArray>& actual, const std::map<std::string, HostArray>& expected,
                 double tolerance, const std::string& what);

// "ABI 2.2": this Fugue's plugin ABI, as messages name it.
std::string current_abi();

// A seed that differs per run unless FUGUE_TEST_SEED fixes it; printed by tests on failure.
uint64_t fresh_seed();

}  // namespace fugue::test
