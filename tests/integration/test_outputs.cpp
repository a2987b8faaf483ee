// `fugue run --out DIR` as a reader of DIR sees it: runs writing into one folder at once both succeed
// and leave one run's complete set, described by fugue-run.json; a run waits for the folder's lock
// and says so; a --profile that cannot be written leaves the old outputs and manifest as they were;
// the leftovers of a killed run are cleaned by the next one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "io/npy_io.h"
#include "io/output_files.h"
#include "io/output_lock.h"
#include "io/sha256.h"
#include "test_support.h"

namespace fs = std::filesystem;
using fugue::test::TempDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// z = 1 + n everywhere, s = 200000 (1 + n).
fs::path write_program(const TempDir& dir) {
  fugue::test::write_text(dir / "prog.json", R"({"fugue": 1,
    "symbols": {"x": {"kind": "array", "dtype": "f32", "shape": [200000], "from": {"fill": 1}},
                "n": {"kind": "const", "value": 1}, "z": {"kind": "array"}},
    "body": [{"op": "array.copy", "out": ["z"], "in": ["x"]},
             {"for": "i", "count": "n", "body": [{"op": "array.add", "out": ["z"], "in": ["z", "x"]}]},
             {"op": "array.sum", "out": ["s"], "in": ["z"]}],
    "outputs": {"z": "z.npy", "s": "s.npy"}})");
  return dir / "prog.json";
}

std::string run_args(const fs::path& program, const fs::path& out, int n) {
  return "run " + program.string() + " --out " + out.string() + " --set n=" + std::to_string(n);
}

nlohmann::json manifest_of(const fs::path& folder) {
  return nlohmann::json::parse(slurp(folder / fugue::kOutputManifest));
}

// "" when every file the manifest lists has its recorded size and SHA-256 and the manifest is complete.
std::string manifest_mismatch(const fs::path& folder) {
  const nlohmann::json m = manifest_of(folder);
  if (m.value("complete", false) != true) return "not complete";
  for (const auto& o : m.at("outputs")) {
    const std::string file = o.at("file").get<std::string>(), bytes = slurp(folder / file);
    if (bytes.size() != o.at("bytes").get<uint64_t>()) return file + ": size differs";
    if (fugue::sha256_hex(bytes.data(), bytes.size()) != o.at("sha256")) return file + ": sha256 differs";
  }
  return "";
}

double value_in(const fs::path& file) { return fugue::load_npy(file, std::nullopt, std::nullopt).get(0); }

// The n of the run the manifest describes.
int n_of_manifest(const fs::path& folder) {
  const std::string set = manifest_of(folder).at("options").at("set").at(0);  // "n=..."
  return std::stoi(set.substr(2));
}

std::set<std::string> listing(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.insert(e.path().filename().string());
  return names;
}

const std::set<std::string> kCompleteSet{"fugue-run.json", "s.npy", "z.npy"};

}  // namespace

TEST(Outputs, ManifestDescribesTheRun) {
  TempDir dir;
  const fs::path program = write_program(dir);
  auto r = fugue::test::run_fugue(run_args(program, dir / "out", 2) + " --no-fuse");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(listing(dir / "out"), kCompleteSet);
  EXPECT_EQ(manifest_mismatch(dir / "out"), "");
  const nlohmann::json m = manifest_of(dir / "out");
  EXPECT_EQ(m.at("program"), fs::absolute(program).lexically_normal().string());
  EXPECT_EQ(m.at("command"), "run");
  EXPECT_EQ(m.at("options").at("set").at(0), "n=2");
  EXPECT_EQ(m.at("options").at("no_fuse"), true);
  EXPECT_EQ(m.at("checksum"), "sha256");
  ASSERT_EQ(m.at("outputs").size(), 2u);
  std::set<std::string> files;
  for (const auto& o : m.at("outputs")) {
    files.insert(o.at("file").get<std::string>());
    EXPECT_EQ(o.at("symbol").get<std::string>() + ".npy", o.at("file"));
    EXPECT_EQ(o.at("format"), "npy");
  }
  EXPECT_EQ(files, (std::set<std::string>{"s.npy", "z.npy"}));
  EXPECT_EQ(value_in(dir / "out" / "z.npy"), 3.0);
}

TEST(Outputs, ConcurrentRunsBothSucceedAndLeaveOneCompleteSet) {
  TempDir dir;
  const fs::path program = write_program(dir);
  for (int round = 0; round < 3; ++round) {
    auto first = std::async(std::launch::async, [&] { return fugue::test::run_fugue(run_args(program, dir / "out", 2)); });
    auto second = std::async(std::launch::async, [&] { return fugue::test::run_fugue(run_args(program, dir / "out", 5)); });
    const auto a = first.get(), b = second.get();
    ASSERT_EQ(a.code, 0) << a.out;
    ASSERT_EQ(b.code, 0) << b.out;
    EXPECT_EQ(listing(dir / "out"), kCompleteSet);
    EXPECT_EQ(manifest_mismatch(dir / "out"), "");
    const int n = n_of_manifest(dir / "out");
    EXPECT_EQ(value_in(dir / "out" / "z.npy"), 1.0 + n);
    EXPECT_EQ(value_in(dir / "out" / "s.npy"), 200000.0 * (1 + n));
  }
}

// While another process holds the folder's lock, a run waits, says so, and finishes after it.
TEST(Outputs, RunWaitsForTheFoldersLock) {
  TempDir dir;
  const fs::path program = write_program(dir);
  ASSERT_EQ(fugue::test::run_fugue(run_args(program, dir / "out", 1)).code, 0);  // the kernels, cached
  std::optional<fugue::OutputFolderLock> lock;
  lock.emplace(dir / "out", std::chrono::seconds(5));
  const fs::path log = dir / "log.txt";
  const std::string command =
      fugue::test::fugue_executable().string() + " " + run_args(program, dir / "out", 3) + " >" + log.string() + " 2>&1";
  auto waiting = std::async(std::launch::async, [&] { return std::system(command.c_str()); });
  const std::string notice = "waiting for another fugue run writing " + (dir / "out").string() +
                             " (pid " + std::to_string(::getpid()) + ") to finish";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (slurp(log).find(notice) == std::string::npos && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(value_in(dir / "out" / "z.npy"), 2.0);  // nothing written while it waits
  lock.reset();
  const int status = waiting.get();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(log);
  EXPECT_NE(slurp(log).find(notice), std::string::npos) << slurp(log);
  EXPECT_EQ(manifest_mismatch(dir / "out"), "");
  EXPECT_EQ(value_in(dir / "out" / "z.npy"), 4.0);
  EXPECT_EQ(listing(dir / "out"), kCompleteSet);
}

TEST(Outputs, FailingProfileLeavesTheOldOutputsAndManifest) {
  TempDir dir;
  const fs::path program = write_program(dir);
  ASSERT_EQ(fugue::test::run_fugue(run_args(program, dir / "out", 1)).code, 0);
  const std::string manifest = slurp(dir / "out" / fugue::kOutputManifest), z = slurp(dir / "out" / "z.npy");
  fs::create_directories(dir / "folder");
  // A folder that does not exist is found when the trace is written, after the run but before the
  // first output is replaced; a path that is a folder, before the run.
  for (const std::string& profile : {(dir / "missing" / "trace.json").string(), (dir / "folder").string()}) {
    auto r = fugue::test::run_fugue(run_args(program, dir / "out", 4) + " --profile " + profile);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("cannot write " + profile), std::string::npos) << r.out;
    EXPECT_EQ(slurp(dir / "out" / fugue::kOutputManifest), manifest);
    EXPECT_EQ(slurp(dir / "out" / "z.npy"), z);
    EXPECT_EQ(listing(dir / "out"), kCompleteSet);
  }
  // A profile inside a new --out is written with the outputs.
  auto r = fugue::test::run_fugue(run_args(program, dir / "new", 4) + " --profile " + (dir / "new" / "t.json").string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "new" / "t.json"));
  EXPECT_EQ(manifest_mismatch(dir / "new"), "");
}

// A run killed while it replaced its outputs leaves staging files, its lock file and no manifest (or
// one killed while staging, an older manifest): the next run cleans up and writes a complete set.
TEST(Outputs, NextRunCleansUpAfterAKilledRun) {
  TempDir dir;
  const fs::path program = write_program(dir);
  const fs::path out = dir / "out";
  ASSERT_EQ(fugue::test::run_fugue(run_args(program, out, 1)).code, 0);
  const std::string dead = "2147483646";  // above any pid_max
  for (const std::string& name : {".z.npy.fugue-" + dead + "-00c0ffee.new", ".s.npy.fugue-" + dead + "-00c0ffee.new",
                                  "..s.npy.fugue-" + dead + "-00c0ffee.new.tmp." + dead + ".0",
                                  ".fugue-run.json.fugue-" + dead + "-00c0ffee.new", std::string(".z.npy.fugue-new"),
                                  std::string(fugue::OutputFolderLock::kFileName)})
    fugue::test::write_text(out / name, "partial");
  nlohmann::json stale = manifest_of(out);
  stale["outputs"][0]["sha256"] = std::string(64, '0');
  fugue::test::write_text(out / fugue::kOutputManifest, stale.dump());
  auto r = fugue::test::run_fugue(run_args(program, out, 6));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(listing(out), kCompleteSet);
  EXPECT_EQ(manifest_mismatch(out), "");
  EXPECT_EQ(n_of_manifest(out), 6);
  EXPECT_EQ(value_in(out / "z.npy"), 7.0);
}
