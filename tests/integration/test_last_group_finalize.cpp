// Reductions whose FINALIZE phase (the work-groups' partials combined) runs in the last work-group to
// finish, counted by an atomic, instead of in a second kernel (Launch::last_group_finalizes): the same
// values as the reference and as the second kernel, launch after launch (the count goes back to 0),
// one launch less per reduction, and explain says which.
#include <gtest/gtest.h>

#include <cstdlib>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/lower.h"
#include "passes/plan_report.h"
#include "test_support.h"

using namespace fugue;

namespace {

// Sums, norms, maxima and a dot product over sizes that leave partial work-groups, in a loop of 12,
// so that every kernel runs again after its last work-group reset the count.
const char* kProgram = R"({"fugue": 1,
  "symbols": {
    "x": {"kind": "array", "dtype": "f64", "shape": [1000003], "from": {"random": {"seed": 3}}},
    "y": {"kind": "array", "dtype": "f32", "shape": [77777], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
    "z": {"kind": "array", "dtype": "f32", "shape": [77777], "from": {"random": {"seed": 5}}},
    "acc": {"kind": "scalar", "dtype": "f64", "value": 0}},
  "body": [
    {"for": "k", "count": 12, "body": [
      {"op": "array.mul", "out": ["x"], "in": ["x", 0.5]},
      {"op": "array.sum", "out": ["s"], "in": ["x"]},
      {"op": "array.norm2", "out": ["n"], "in": ["y"]},
      {"op": "array.max", "out": ["m"], "in": ["y"]},
      {"op": "array.dot", "out": ["d"], "in": ["y", "z"]},
      {"op": "array.add", "out": ["acc"], "in": ["acc", "s"]}]}],
  "outputs": {"s": "s.npy", "n": "n.npy", "m": "m.npy", "d": "d.npy", "acc": "acc.npy"}})";

struct Tuning {
  explicit Tuning(const char* value) { EXPECT_EQ(setenv("FUGUE_TUNING", value, 1), 0); }
  ~Tuning() { unsetenv("FUGUE_TUNING"); }
};

}  // namespace

// CPUs keep the second kernel by default (LaunchTuning::last_group_finalizes): the tuning turns the
// last work-group's section on here, so that it runs on this machine's device.
TEST(LastGroupFinalize, ReductionsMatchTheReferenceAndTheSecondKernel) {
  test::TempDir dir;
  Program program = test::load_text(dir, kProgram);
  const auto reference = test::run_reference(program);
  int64_t launches = 0, second_kernel_launches = 0, reducing = 0;
  std::map<std::string, HostArray> folded, apart;
  {
    Tuning on("last_group_finalize=1");
    folded = test::run_on_device(program, std::string(), {}, &launches);
    // Every kernel with a reduction has lost its second launch, in each of the 12 rounds.
    const ExecutionPlan plan = lower(program, test::test_device().info, {});
    for (const GeneratedKernel& k : plan.kernels) {
      EXPECT_TRUE(k.finalize_name.empty());
      if (k.launch.last_group_finalizes) ++reducing;
    }
  }
  {
    Tuning off("last_group_finalize=0");
    apart = test::run_on_device(program, std::string(), {}, &second_kernel_launches);
  }
  for (const char* name : {"s", "n", "m", "d", "acc"}) {
    EXPECT_EQ(test::compare_arrays(folded.at(name), reference.at(name), 1e-5), "") << name;
    EXPECT_EQ(test::compare_arrays(folded.at(name), apart.at(name), 1e-12), "") << name;
  }
  EXPECT_GE(reducing, 2);
  EXPECT_EQ(second_kernel_launches - launches, 12 * reducing);
}

TEST(LastGroupFinalize, ExplainSaysWhoCombinesThePartials) {
  test::TempDir dir;
  Program program = test::load_text(dir, kProgram);
  auto explain = [&](const char* device) {
    const DeviceInfo info = read_device_description(test::source_root() / "devices" / (std::string(device) + ".json"));
    return explain_plan(program, lower(program, info, {}), info);
  };
  const char* folded = "the last work-group to finish combining the partials";
  // A GPU's kernels count their work-groups; a CPU's run a second kernel.
  std::string gpu = explain("nvidia-h100"), cpu = explain("pocl-cpu");
  EXPECT_NE(gpu.find(folded), std::string::npos);
  EXPECT_NE(gpu.find("atomic_inc(fugue_groups_done)"), std::string::npos);
  EXPECT_EQ(gpu.find("fugue_kernel_finalize"), std::string::npos);
  EXPECT_EQ(gpu.find("then a finalize kernel"), std::string::npos);
  EXPECT_EQ(cpu.find(folded), std::string::npos);
  EXPECT_NE(cpu.find("then a finalize kernel"), std::string::npos);
  EXPECT_NE(cpu.find("fugue_kernel_finalize"), std::string::npos);
  Tuning off("last_group_finalize=0");
  gpu = explain("nvidia-h100");
  EXPECT_EQ(gpu.find(folded), std::string::npos);
  EXPECT_NE(gpu.find("then a finalize kernel"), std::string::npos);
}
