// The program cache: the second run compiles nothing; corrupt entries are rebuilt; failures show the log.
#include <gtest/gtest.h>

#include <fstream>

#include "errors.h"
#include "runtime/executor.h"
#include "device/program_cache.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

const char* kProgram = R"({"fugue": 1, "symbols": {
  "x": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"random": {"seed": 3}}},
  "y": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"fill": 1.5}}},
  "body": [{"op": "array.mul", "out": ["t"], "in": ["x", "y"]}, {"op": "array.sum", "out": ["s"], "in": ["t"]},
           {"op": "array.mul", "out": ["u"], "in": ["s", 2]}],
  "outputs": {"s": "s.npy", "u": "u.npy"}})";

// Runs the program in a fresh "process" (new cache object) and returns the cache's counts.
ProgramCache::Stats run_once(const Program& program, const fs::path& cache_dir) {
  Profiler profiler;
  ProgramCache cache(test::test_device(), cache_dir, &profiler);
  Executor executor(program, test::test_device(), cache, profiler);
  executor.prepare();
  executor.initialize();
  executor.run();
  return cache.stats();
}

}  // namespace

TEST(ProgramCache, SecondRunCompilesNothing) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kProgram);
  Program program = load_program(dir / "p.json", test::bundled_plugins());
  auto first = run_once(program, dir / "cache");
  EXPECT_GE(first.compiles, 2);
  auto second = run_once(program, dir / "cache");
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.disk_hits, first.compiles);
}

TEST(ProgramCache, CorruptEntryIsRebuilt) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kProgram);
  Program program = load_program(dir / "p.json", test::bundled_plugins());
  auto first = run_once(program, dir / "cache");
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir / "cache")) {
    if (entry.path().extension() != ".bin") continue;
    ++entries;
    // Flip bytes in the middle of the binary.
    std::fstream f(entry.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entry.path()) / 2));
    f.write("garbage!", 8);
  }
  ASSERT_EQ(entries, first.compiles);
  auto second = run_once(program, dir / "cache");
  EXPECT_EQ(second.compiles, first.compiles);
  auto third = run_once(program, dir / "cache");
  EXPECT_EQ(third.compiles, 0);
}

// Kernels are named after the program's symbols, so the same call at several places (here: before a
// loop and inside it, two basic blocks and two kernels) shares one program.
TEST(ProgramCache, IdenticalKernelsShareOneProgram) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [100], "from": {"random": {"seed": 3}}}},
    "body": [{"op": "array.mul", "out": ["a"], "in": ["x", 2]},
             {"for": "i", "count": 3, "body": [{"op": "array.mul", "out": ["a"], "in": ["x", 2]}]}],
    "outputs": {"a": "a.npy"}})");
  Program program = load_program(dir / "p.json", test::bundled_plugins());
  auto stats = run_once(program, fs::path());
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.memory_hits, 1);
}

TEST(ProgramCache, MemoryCacheBuildsOncePerProcess) {
  ProgramCache cache(test::test_device(), fs::path());
  const std::string source = "__kernel void k(__global float* x) { x[get_global_id(0)] *= 2.0f; }";
  cache.get(source, "");
  cache.get(source, "");
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().memory_hits, 1);
}

TEST(ProgramCache, BuildFailureReportsTheLogAndTheSource) {
  test::TempDir dir;
  ProgramCache cache(test::test_device(), dir / "cache");
  try {
    cache.get("__kernel void k(__global float* x) { x[0] = undefined_name; }", "", "broken test kernel");
    FAIL() << "expected a build failure";
  } catch (const DeviceError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("broken test kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;  // from the build log
    EXPECT_NE(what.find("failed"), std::string::npos) << what;
    auto at = what.find("the source is in ");
    ASSERT_NE(at, std::string::npos) << what;
    std::string path = what.substr(at + 17, what.find(';', at) - at - 17);
    EXPECT_TRUE(fs::exists(path)) << path;
  }
}

TEST(ProgramCache, DefaultFolderFollowsTheEnvironment) {
  const char* saved = std::getenv("FUGUE_CACHE_DIR");
  std::string keep = saved ? saved : "";
  setenv("FUGUE_CACHE_DIR", "/tmp/a", 1);
  EXPECT_EQ(ProgramCache::default_folder(), fs::path("/tmp/a"));
  unsetenv("FUGUE_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(ProgramCache::default_folder(), fs::path("/tmp/xdg/fugue"));
  unsetenv("XDG_CACHE_HOME");
  if (saved) setenv("FUGUE_CACHE_DIR", keep.c_str(), 1);
}

TEST(ProgramCache, ProgramCacheOffKeepsNothingOnDisk) {
  const char* saved = std::getenv("FUGUE_PROGRAM_CACHE");
  const std::string keep = saved ? saved : "";
  const char* saved_dir = std::getenv("FUGUE_CACHE_DIR");
  const std::string keep_dir = saved_dir ? saved_dir : "";
  test::TempDir dir;
  setenv("FUGUE_CACHE_DIR", dir.path().c_str(), 1);
  setenv("FUGUE_PROGRAM_CACHE", "on", 1);
  EXPECT_EQ(ProgramCache::default_folder(), dir.path());
  setenv("FUGUE_PROGRAM_CACHE", "off", 1);
  EXPECT_EQ(ProgramCache::default_folder(), fs::path());
  // Built and run with the default folder: nothing written, every process compiles again.
  test::write_text(dir / "p.json", kProgram);
  Program program = load_program(dir / "p.json", test::bundled_plugins());
  for (int run = 0; run < 2; ++run) {
    Profiler profiler;
    ProgramCache cache(test::test_device(), std::nullopt, &profiler);
    Executor executor(program, test::test_device(), cache, profiler);
    executor.prepare();
    EXPECT_GE(cache.stats().compiles, 2);
    EXPECT_EQ(cache.stats().disk_hits, 0);
  }
  for (const auto& entry : fs::directory_iterator(dir.path()))
    EXPECT_NE(entry.path().extension(), ".bin") << entry.path();
  setenv("FUGUE_PROGRAM_CACHE", "no", 1);
  try {
    ProgramCache::default_folder();
    ADD_FAILURE() << "FUGUE_PROGRAM_CACHE=no was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("FUGUE_PROGRAM_CACHE: expected \"on\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("found \"no\""), std::string::npos) << e.what();
  }
  if (saved) setenv("FUGUE_PROGRAM_CACHE", keep.c_str(), 1);
  else unsetenv("FUGUE_PROGRAM_CACHE");
  if (saved_dir) setenv("FUGUE_CACHE_DIR", keep_dir.c_str(), 1);
  else unsetenv("FUGUE_CACHE_DIR");
}
