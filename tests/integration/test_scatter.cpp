// SCATTER partitions: array.scatter_add updates h by atomics inside a generated kernel, fused with the
// element-wise operations that compute its indices and values; every index equal (the worst contention)
// is exact for integers; nothing else may touch h in that kernel.
#include <gtest/gtest.h>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/lower.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::load_text;

std::string notes(const ExecutionPlan& plan) { return test::notes_text(plan.not_fused); }

// h[int(x * bins)] += w * 2 over n values: a histogram of x weighted by w (positive: a float sum's error
// is then relative to it), of `dtype`.
std::string histogram(int64_t bins, int64_t n, const char* dtype, const std::string& index_source, uint64_t seed) {
  return R"({"fugue": 1, "symbols": {
    "h": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(bins) +
         R"(], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": 0, "high": 100}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [)" + std::to_string(n) + R"(], "from": )" + index_source + R"(},
    "w": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(n) +
         R"(], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": 0, "high": 50}}}},
    "body": [{"op": "array.mul", "out": ["s"], "in": ["x", )" + std::to_string(bins) + R"(]},
             {"op": "array.cast", "out": ["index"], "in": ["s"], "attrs": {"dtype": "i32"}},
             {"op": "array.mul", "out": ["v"], "in": ["w", 2]},
             {"op": "array.scatter_add", "out": ["h"], "in": ["h", "index", "v"]}],
    "outputs": {"h": "h.npy"}})";
}

}  // namespace

// The indices and values are computed in registers of the scatter's own kernel: one pass over x and w.
TEST(Scatter, ProducersOfIndicesAndValuesFuseIntoOneKernel) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  Program program = load_text(dir, histogram(37, 100003, "f32", R"({"random": {"seed": 5}})", seed));
  ExecutionPlan plan = lower(program, test::test_device().info, PlanOptions{});
  ASSERT_EQ(plan.groups.size(), 1u) << notes(plan);
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"index", "s", "v"}));
  EXPECT_EQ(plan.groups[0].stored, (SymbolSet{"h"}));
  EXPECT_TRUE(plan.groups[0].shadowed.empty());
  int64_t launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 1);
  const std::string mismatch = test::compare_arrays(fused.at("h"), test::run_reference(program).at("h"), 1e-4);
  EXPECT_TRUE(mismatch.empty()) << mismatch << " (seed " << seed << ")";
}

// Every index equal: integers exact (i32, i64), floats within the summation's bound; and indices spread
// over bins too many for a work-group's private copy (atomics straight into global memory).
TEST(Scatter, WorstContentionAndLargeTargetsAreRight) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* dtype : {"i32", "i64", "f32", "f64"}) {
    Program one_bin = load_text(dir, histogram(16, 200000, dtype, R"({"fill": 0.01})", seed));
    auto device = test::run_on_device(one_bin);
    auto reference = test::run_reference(one_bin);
    const double tol = std::string(dtype) == "f32" ? 1e-4 : std::string(dtype) == "f64" ? 1e-11 : 0;
    std::string mismatch = test::compare_arrays(device.at("h"), reference.at("h"), tol);
    EXPECT_TRUE(mismatch.empty()) << dtype << " one bin: " << mismatch << " (seed " << seed << ")";
  }
  Program wide = load_text(dir, histogram(300000, 200000, "i32", R"({"random": {"seed": 7}})", seed));
  std::string mismatch = test::compare_arrays(test::run_on_device(wide).at("h"), test::run_reference(wide).at("h"), 0);
  EXPECT_TRUE(mismatch.empty()) << "300,000 bins: " << mismatch;
}

// h is complete only after the kernel: nothing else of the kernel may touch it, before or after.
TEST(Scatter, NothingElseTouchesTheTargetInItsKernel) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "h": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"random": {"seed": 1}}},
    "index": {"kind": "array", "dtype": "i32", "shape": [1000], "from": {"random": {"seed": 2, "low": 0, "high": 1000}}}},
    "body": [{"op": "array.mul", "out": ["h"], "in": ["h", 2]},
             {"op": "array.scatter_add", "out": ["h"], "in": ["h", "index", 1]},
             {"op": "array.add", "out": ["g"], "in": ["h", 1]}],
    "outputs": {"g": "g.npy"}})");
  ExecutionPlan plan = lower(program, test::test_device().info, PlanOptions{});
  ASSERT_EQ(plan.groups.size(), 3u) << notes(plan);
  const std::string why = notes(plan);
  EXPECT_NE(why.find("updates 'h' at positions its data decide, but array.mul at /body/0 accesses it"),
            std::string::npos) << why;
  EXPECT_NE(why.find("which array.scatter_add at /body/1 updates at positions its data decide in this kernel"), std::string::npos) << why;
  const std::string mismatch =
      test::compare_arrays(test::run_on_device(program).at("g"), test::run_reference(program).at("g"), 1e-6);
  EXPECT_TRUE(mismatch.empty()) << mismatch;
}

// Where h fits a share of local memory, each work-group adds into its own copy first; the H100's
// description plans it without a device.
TEST(Scatter, SmallTargetsGetAPrivateCopyPerWorkGroup) {
  test::TempDir dir;
  const DeviceInfo h100 = read_device_description(test::source_root() / "devices" / "nvidia-h100.json");
  Program small = load_text(dir, histogram(4096, 1 << 20, "f32", R"({"random": {"seed": 5}})", 1));
  ExecutionPlan plan = lower(small, h100, PlanOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_NE(plan.kernels[0].source.find("fugue_atomic_add_f32_local"), std::string::npos);
  Program large = load_text(dir, histogram(8192, 1 << 20, "f32", R"({"random": {"seed": 5}})", 1));
  plan = lower(large, h100, PlanOptions{});
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].source.find("__local"), std::string::npos);
  EXPECT_NE(plan.kernels[0].source.find("fugue_atomic_add_f32_global"), std::string::npos);
}

// An empty target: nothing to add into, and no private copy of nothing.
TEST(Scatter, EmptyTargetRuns) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "h": {"kind": "array", "dtype": "f32", "shape": [0], "from": {"zeros": {}}},
    "index": {"kind": "array", "dtype": "i32", "shape": [100], "from": {"random": {"seed": 2, "low": -5, "high": 5}}}},
    "body": [{"op": "array.scatter_add", "out": ["h"], "in": ["h", "index", 1]}],
    "outputs": {"h": "h.npy"}})");
  EXPECT_EQ(test::run_on_device(program).at("h").elements(), 0);
}
