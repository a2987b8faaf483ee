// Plans without OpenCL: a program planned for a device description (devices/) gives the plan that
// `fugue explain` prints on that device (blocks, kernels, launches, generated OpenCL), kept in
// tests/golden/. The H100's golden files came from `fugue explain` on the H100 itself. When the planner
// or the generator changes on purpose, rewrite them with FUGUE_UPDATE_GOLDEN=1 and read the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/plan_report.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

struct Case {
  const char* program;  // under examples/
  const char* device;   // under devices/, without .json
};

std::string golden_name(const Case& c) { return fs::path(c.program).stem().string() + "_" + c.device + ".txt"; }

class PlanGolden : public testing::TestWithParam<Case> {};

}  // namespace

TEST_P(PlanGolden, PlanForADescribedDeviceIsTheGoldenOne) {
  const Case& c = GetParam();
  const fs::path root = test::source_root();
  const DeviceInfo device = read_device_description(root / "devices" / (std::string(c.device) + ".json"));
  const Program program = load_program(root / "examples" / c.program, test::bundled_plugins());
  const ExecutionPlan plan = lower(program, device, PlanOptions{});
  std::string text = explain_plan(program, plan, device);
  text = text.substr(text.find('\n') + 1);  // the first line names the program's path
  const fs::path golden = root / "tests" / "golden" / golden_name(c);
  if (std::getenv("FUGUE_UPDATE_GOLDEN")) {
    std::ofstream(golden) << text;
    GTEST_SKIP() << "rewrote " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << "no golden file " << golden << " (FUGUE_UPDATE_GOLDEN=1 writes it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str()) << "the plan of " << c.program << " for " << c.device << " changed; if on purpose, "
                                  << "rewrite tests/golden with FUGUE_UPDATE_GOLDEN=1 and check the diff";
}

INSTANTIATE_TEST_SUITE_P(
    Examples, PlanGolden,
    testing::Values(Case{"bench/stencil5.json", "nvidia-h100"}, Case{"bench/chain.json", "nvidia-h100"},
                    Case{"jacobi.json", "nvidia-h100"}, Case{"optical_flow/hs_block.json", "nvidia-h100"},
                    Case{"bench/stencil5.json", "pocl-cpu"}, Case{"bench/chain.json", "pocl-cpu"},
                    Case{"jacobi.json", "pocl-cpu"}, Case{"optical_flow/hs_block.json", "pocl-cpu"},
                    // a batched kernel (softmax of its producer) and atomics (scatter_add with a private copy)
                    Case{"bench/softmax.json", "nvidia-h100"}, Case{"bench/softmax.json", "pocl-cpu"},
                    // short rows side by side in a work-group, a team each
                    Case{"bench/softmax_rows16.json", "nvidia-h100"}, Case{"bench/softmax_rows16.json", "pocl-cpu"},
                    Case{"bench/scatter_uniform.json", "nvidia-h100"}, Case{"bench/scatter_uniform.json", "pocl-cpu"},
                    // tile stages (a stencil of a stencil) and a 3-D launch
                    Case{"bench/stencil_chain.json", "nvidia-h100"}, Case{"bench/stencil3d.json", "nvidia-h100"}),
    [](const testing::TestParamInfo<Case>& info) {
      std::string name = fs::path(info.param.program).stem().string() + "_" + info.param.device;
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// The pipeline reads top to bottom: every pass reports once, in order, and the plan it hands on
// grows as the passes fill it in (operations, then kernels, then launches, then sources).
TEST(PassPipeline, EveryPassReportsInOrderAndFillsItsPart) {
  const fs::path root = test::source_root();
  const DeviceInfo device = read_device_description(root / "devices" / "pocl-cpu.json");
  const Program program = load_program(root / "examples" / "jacobi.json", test::bundled_plugins());
  std::vector<std::string> passes;
  size_t ops_after_plan = 0, groups_after_fusion = 0;
  bool launched = false, generated = false;
  lower(program, device, PlanOptions{}, [&](const char* pass, const ExecutionPlan& plan) {
    passes.push_back(pass);
    if (passes.back() == "plan operations") ops_after_plan = plan.ops.size();
    if (passes.back() == "fusion cost") groups_after_fusion = plan.groups.size();
    if (passes.back() == "choose launch")
      launched = !plan.kernels.empty() && plan.kernels[0].launch.num_groups > 0 && plan.kernels[0].source.empty();
    if (passes.back() == "generate") generated = !plan.kernels.empty() && !plan.kernels[0].source.empty();
  });
  EXPECT_EQ(passes, (std::vector<std::string>{"dataflow", "plan operations", "eliminate copies", "group",
                                              "fusion cost", "promote", "choose launch", "generate"}));
  EXPECT_GT(ops_after_plan, 0u);
  EXPECT_EQ(groups_after_fusion, 1u);  // jacobi's iteration is one kernel
  EXPECT_TRUE(launched);
  EXPECT_TRUE(generated);
}
