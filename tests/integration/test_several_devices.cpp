// Several devices (--device 0:0,0:1): PoCL made to show two CPU devices (POCL_DEVICES), a program split
// by rows gives what one device gives, fused and unfused; programs that cannot be split, or are too
// small to be worth it, stay on the first device and `explain` says why; bad lists are refused.
#include <gtest/gtest.h>

#include "io/npy_io.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

// Two PoCL CPU devices; split_bytes=0 splits even the small programs of these tests.
const std::string kTwoDevices = "POCL_DEVICES='pthread pthread'";
const std::string kSplitAll = kTwoDevices + " FUGUE_TUNING=split_bytes=0";

// Runs `program` (a path) with `args`, its outputs into `out`.
test::CliResult run(const fs::path& program, const fs::path& out, const std::string& args, const std::string& env) {
  return test::run_fugue("run " + program.string() + " --out " + out.string() + " " + args, env);
}

// EXPECTs every .npy of `expected_dir` to be in `actual_dir`, equal within `tolerance`.
void expect_same_outputs(const fs::path& actual_dir, const fs::path& expected_dir, double tolerance) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(expected_dir)) {
    if (entry.path().extension() != ".npy") continue;
    ++files;
    const HostArray expected = load_npy(entry.path(), std::nullopt, std::nullopt);
    const HostArray actual = load_npy(actual_dir / entry.path().filename(), expected.dtype, expected.shape);
    EXPECT_EQ(test::compare_arrays(actual, expected, tolerance), "") << entry.path().filename();
  }
  EXPECT_GT(files, 0) << expected_dir;
}

// potrf(A * s) with a consumer: element-wise operations fused into the batched kernel, 1001 entries.
const char* kScaledCholesky = R"({"fugue": 1, "symbols": {
  "A": {"kind": "array", "dtype": "f64", "shape": [1001, 8, 8], "from": {"spd": {"seed": 4, "cond": 20}}},
  "s": {"kind": "scalar", "dtype": "f64", "value": 0.5}},
  "body": [{"op": "array.mul", "out": ["B"], "in": ["A", "s"]},
           {"op": "linalg.potrf", "out": ["L", "info"], "in": ["B"]},
           {"op": "array.mul", "out": ["C"], "in": ["L", 2]}],
  "outputs": {"C": "C.npy", "info": "info.npy", "A": "A.npy"}})";

}  // namespace

TEST(SeveralDevices, SplitByRowsGivesWhatOneDeviceGives) {
  test::TempDir dir;
  const fs::path kalman = test::source_root() / "examples" / "linalg" / "kalman_update.json";
  auto one = run(kalman, dir / "one", "--device 0:0", kTwoDevices);
  ASSERT_EQ(one.code, 0) << one.out;
  auto two = run(kalman, dir / "two", "--device 0:0,0:1 --stats", kSplitAll);
  ASSERT_EQ(two.code, 0) << two.out;
  // Devices of one model weigh the same: 500 rows each; every array of the program is split.
  EXPECT_NE(two.out.find("1000 rows split"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("0:0 pthread"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("rows 0..499 (500,"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("rows 500..999 (500,"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("split by rows (1.80 MB): H, HP, HPHt, Hx, KHP, Kt, L, P, P1, R, S, dx, info, x, x1, y, z"),
            std::string::npos)
      << two.out;
  EXPECT_NE(two.out.find("device 0:1 pthread"), std::string::npos) << two.out;
  expect_same_outputs(dir / "two", dir / "one", 1e-12);
}

TEST(SeveralDevices, FusedAndUnfusedSplitsMatchOneDevice) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  auto one = run(dir / "p.json", dir / "one", "--device 0:0", kTwoDevices);
  ASSERT_EQ(one.code, 0) << one.out;
  for (const std::string flags : {"", "--no-fuse"}) {
    const fs::path out = dir / ("two" + flags);
    auto two = run(dir / "p.json", out, "--device 0:0,0:1 --stats " + flags, kSplitAll);
    ASSERT_EQ(two.code, 0) << two.out;
    EXPECT_NE(two.out.find("rows 0..500 (501,"), std::string::npos) << two.out;
    EXPECT_NE(two.out.find("rows 501..1000 (500,"), std::string::npos) << two.out;
    // Fused: one kernel per device (the scaling, the factorization and the doubling); unfused: three.
    const size_t kernels_each = flags.empty() ? 1 : 3;
    size_t rows = 0, at = 0;  // the --stats tables' rows: one per kernel
    while ((at = two.out.find("\n/body/", at)) != std::string::npos) ++rows, ++at;
    EXPECT_EQ(rows, 2 * kernels_each) << two.out;
    expect_same_outputs(out, dir / "one", 1e-12);
  }
}

TEST(SeveralDevices, WhatCannotBeSplitStaysOnTheFirstDevice) {
  test::TempDir dir;
  // A sum over the rows: a scalar the device writes.
  test::write_text(dir / "sum.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [4096], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.mul", "out": ["y"], "in": ["x", 2]}, {"op": "array.sum", "out": ["s"], "in": ["y"]}],
    "outputs": {"s": "s.npy", "y": "y.npy"}})");
  auto sum = test::run_fugue("explain " + (dir / "sum.json").string() + " --device 0:0,0:1", kSplitAll);
  ASSERT_EQ(sum.code, 0) << sum.out;
  EXPECT_NE(sum.out.find("placement on 2 devices: all on 0:0"), std::string::npos) << sum.out;
  EXPECT_NE(sum.out.find("/body/1 array.sum s = (y): 's' is a scalar the device writes"), std::string::npos) << sum.out;
  // Its run on two devices is the run on one.
  auto one = run(dir / "sum.json", dir / "one", "--device 0:0", kTwoDevices);
  auto two = run(dir / "sum.json", dir / "two", "--device 0:0,0:1", kSplitAll);
  ASSERT_EQ(one.code, 0) << one.out;
  ASSERT_EQ(two.code, 0) << two.out;
  expect_same_outputs(dir / "two", dir / "one", 0);

  // A stencil's halo.
  auto jacobi = test::run_fugue("explain " + (test::source_root() / "examples" / "jacobi.json").string() +
                                    " --device 0:0,0:1",
                                kSplitAll);
  ASSERT_EQ(jacobi.code, 0) << jacobi.out;
  EXPECT_NE(jacobi.out.find("placement on 2 devices: all on 0:0"), std::string::npos) << jacobi.out;
  EXPECT_NE(jacobi.out.find("with halo"), std::string::npos) << jacobi.out;

  // Small work: below split_bytes (512 MB by default) a second device costs more than it brings.
  test::write_text(dir / "chol.json", kScaledCholesky);
  auto small = test::run_fugue("explain " + (dir / "chol.json").string() + " --device 0:0,0:1", kTwoDevices);
  ASSERT_EQ(small.code, 0) << small.out;
  EXPECT_NE(small.out.find("all on 0:0"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("small: the arrays split by rows hold 2.05 MB, less than 536.87 MB"), std::string::npos)
      << small.out;
}

TEST(SeveralDevices, BenchTimesTheSplitRun) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  auto bench = test::run_fugue("bench " + (dir / "p.json").string() + " --device 0:0,0:1 --repeat 2 --json -", kSplitAll);
  ASSERT_EQ(bench.code, 0) << bench.out;
  EXPECT_NE(bench.out.find("on 2 devices, 2 repetitions"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("wall ms: median"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("\"rows\":501"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("\"rows\":500"), std::string::npos) << bench.out;
}

TEST(SeveralDevices, BadDeviceListsAreRefused) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  const std::string p = (dir / "p.json").string();
  auto twice = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,0:0", kTwoDevices);
  EXPECT_EQ(twice.code, 2) << twice.out;
  EXPECT_NE(twice.out.find("device '0:0,0:0': 0:0 (pthread"), std::string::npos) << twice.out;
  EXPECT_NE(twice.out.find("is named twice"), std::string::npos) << twice.out;
  auto missing = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,3:7", kTwoDevices);
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_NE(missing.out.find("no device 3:7"), std::string::npos) << missing.out;
  auto empty = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,", kTwoDevices);
  EXPECT_EQ(empty.code, 2) << empty.out;
  EXPECT_NE(empty.out.find("an empty entry in the list"), std::string::npos) << empty.out;
  auto gpus = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device gpu:all", kTwoDevices);
  EXPECT_EQ(gpus.code, 2) << gpus.out;
  EXPECT_NE(gpus.out.find("no gpu device"), std::string::npos) << gpus.out;
  auto profile = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device cpu:all --profile " +
                                     (dir / "t.json").string(),
                                 kSplitAll);
  EXPECT_EQ(profile.code, 2) << profile.out;
  EXPECT_NE(profile.out.find("--profile records one device"), std::string::npos) << profile.out;
  EXPECT_FALSE(fs::exists(dir / "o")) << "nothing written";
}
