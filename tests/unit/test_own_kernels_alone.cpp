// The fusion-cost pass and fugue_plan.own_kernels_alone (ABI 2.19), without OpenCL: an operation that
// offers its neighbours a generated kernel but runs faster as its own kernels (a bcsr product) becomes a
// device-level step where nothing joins it, and stays in the kernel where something does. (bcsr asks for
// it on CPUs, where its own kernel was the faster; on GPUs the generated kernel was as fast.)
#include <gtest/gtest.h>

#include "device/device_description.h"
#include "passes/lower.h"
#include "passes/plan_report.h"
#include "test_support.h"

using namespace fugue;

namespace {

std::string product(bool consumer) {
  return std::string(R"({"fugue": 1, "symbols": {
    "A": {"kind": "bcsr", "dtype": "f32", "block": [2, 4], "from": {"fem": {"nodes": 40, "block": 2, "neighbours": 3, "seed": 1}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [80], "from": {"random": {"seed": 4}}}},
    "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]})") +
         (consumer ? R"(, {"op": "array.sub", "out": ["r"], "in": ["x", "y"]}], "outputs": {"r": "r.npy"}})"
                   : R"(], "outputs": {"y": "y.npy"}})");
}

const Statement& first_op(const Program& program) {
  for (const auto& st : program.body)
    if (st.op) return st;
  throw std::logic_error("no operation");
}

}  // namespace

TEST(OwnKernelsAlone, AnOperationLeftAloneRunsItsOwnKernels) {
  const DeviceInfo device = read_device_description(test::source_root() / "devices" / "pocl-cpu.json");
  test::TempDir dir;
  const Program program = test::load_text(dir, product(false));
  const ExecutionPlan plan = lower(program, device, PlanOptions{});
  const Statement& spmv = first_op(program);
  // On a GPU the generated kernel runs alone too.
  const ExecutionPlan on_gpu = lower(program, read_device_description(test::source_root() / "devices" / "nvidia-h100.json"), PlanOptions{});
  EXPECT_EQ(on_gpu.steps.at(&spmv).kind, Step::Kind::Kernel);
  EXPECT_FALSE(on_gpu.planned.at(&spmv)->plan.own_kernels_alone);
  EXPECT_EQ(plan.planned.at(&spmv)->level(), FUGUE_LEVEL_ELEMENT) << "it plans the kernel it offers";
  EXPECT_TRUE(plan.planned.at(&spmv)->plan.own_kernels_alone);
  EXPECT_EQ(plan.steps.at(&spmv).kind, Step::Kind::Device);
  EXPECT_TRUE(plan.groups.empty());
  EXPECT_EQ(plan.alone_own_kernels, std::vector<const Statement*>{&spmv});
  const std::string text = explain_plan(program, plan, device);
  EXPECT_NE(text.find("Device-level operations, enqueuing their own kernels (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("alone: no other operation joins its ELEMENT-level kernel"), std::string::npos) << text;

  // The conformance suite's partition check keeps the generated kernel, to check it alone too.
  PlanOptions kept;
  kept.own_kernels_alone = false;
  const ExecutionPlan generated = lower(program, device, kept);
  EXPECT_EQ(generated.steps.at(&spmv).kind, Step::Kind::Kernel);
  EXPECT_EQ(generated.groups.size(), 1u);
}

TEST(OwnKernelsAlone, AConsumerJoinsTheGeneratedKernel) {
  const DeviceInfo device = read_device_description(test::source_root() / "devices" / "pocl-cpu.json");
  test::TempDir dir;
  const Program program = test::load_text(dir, product(true));
  const Statement& spmv = first_op(program);
  const ExecutionPlan plan = lower(program, device, PlanOptions{});
  ASSERT_EQ(plan.steps.at(&spmv).kind, Step::Kind::Kernel);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].ops.size(), 2u);
  EXPECT_TRUE(plan.alone_own_kernels.empty());

  // Without fusion each operation is alone: the product runs its own kernels, the subtraction a kernel.
  PlanOptions unfused;
  unfused.fuse = false;
  const ExecutionPlan apart = lower(program, device, unfused);
  EXPECT_EQ(apart.steps.at(&spmv).kind, Step::Kind::Device);
  EXPECT_EQ(apart.groups.size(), 1u);
  EXPECT_EQ(apart.groups[0].ops.size(), 1u);
}
