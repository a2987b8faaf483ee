// A benchmark, outside CTest: the planner scales with the program. A straight-line program ten times
// longer must take about ten times as long to plan, not a hundred (ratios of times, checked here), and
// 20,000 operations must plan in under 2 s. Every operation of these chains may join the kernel being
// built, so the kernels grow as long as the program: judging a candidate must not cost what the kernel
// already holds. Run: build/tests/fugue_planner_bench
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/program_loader.h"
#include "passes/lower.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

// A straight line of `n` operations over one f32 array of 1000 elements: each reads the previous
// result, every fourth one also a result a few operations back, and every 1000th is a reduction (an
// output). `ring` > 0 reuses that many names for the results instead of a fresh name per result.
json chain(int n, int ring) {
  json symbols = {
      {"x", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {1000}}, {"from", {{"random", {{"seed", 7}}}}}}},
      {"a", {{"kind", "scalar"}, {"dtype", "f32"}, {"value", 0.5}}}};
  json body = json::array(), outputs = json::object();
  std::vector<std::string> results;
  auto fresh = [&] {
    size_t k = results.size();
    results.push_back("t" + std::to_string(ring > 0 ? k % static_cast<size_t>(ring) : k));
    return results.back();
  };
  body.push_back({{"op", "array.mul"}, {"out", {fresh()}}, {"in", {"a", "x"}}});
  for (int i = 1; i < n; ++i) {
    const std::string prev = results.back();
    if (i % 1000 == 999) {
      const std::string s = "s" + std::to_string(i);
      body.push_back({{"op", "array.sum"}, {"out", {s}}, {"in", {prev}}});
      outputs[s] = s + ".npy";
      continue;
    }
    switch (i % 4) {
      case 0: body.push_back({{"op", "array.mul"}, {"out", {fresh()}}, {"in", {prev, "a"}}}); break;
      case 1: body.push_back({{"op", "array.add"}, {"out", {fresh()}}, {"in", {prev, "x"}}}); break;
      case 2: body.push_back({{"op", "array.sub"}, {"out", {fresh()}}, {"in", {prev, 0.25}}}); break;
      default: {
        const std::string back = results[results.size() - std::min<size_t>(results.size(), 2 + i % 5)];
        body.push_back({{"op", "array.add"}, {"out", {fresh()}}, {"in", {prev, back}}});
      }
    }
  }
  outputs[results.back()] = "final.npy";
  return {{"fugue", 1}, {"symbols", symbols}, {"body", body}, {"outputs", outputs}};
}

struct Timing {
  double seconds = 0;  // the fastest of the repeats
  ExecutionPlan plan;
};

Timing plan_timed(const Program& program, int repeats) {
  Timing t;
  t.seconds = 1e300;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    ExecutionPlan plan = lower(program, test::test_device().info, PlanOptions{});
    t.seconds = std::min(t.seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (r + 1 == repeats) t.plan = std::move(plan);
  }
  return t;
}

size_t ops_planned(const ExecutionPlan& plan) {
  size_t n = 0;
  for (const auto& g : plan.groups) n += g.ops.size();
  return n;
}

// Per-operation time of planning `large` operations over that of `small` (each the fastest of a few
// runs; the small time has a floor, so that the timer's resolution cannot make the ratio meaningless).
double per_op_ratio(const Timing& small, int small_n, const Timing& large, int large_n) {
  return (large.seconds / large_n) / std::max(small.seconds / small_n, 1e-7);
}

void expect_near_linear(int ring) {
  const int tiny = 500, small = 2000, large = 20000;
  Program p_tiny = parse_program(chain(tiny, ring), "chain_tiny.json", test::bundled_plugins());
  Program p_small = parse_program(chain(small, ring), "chain_small.json", test::bundled_plugins());
  Program p_large = parse_program(chain(large, ring), "chain_large.json", test::bundled_plugins());
  plan_timed(p_tiny, 1);  // warm up (the device, the allocator)
  Timing t_tiny = plan_timed(p_tiny, 5);
  Timing t_small = plan_timed(p_small, 5);
  // A superlinear planner fails here in seconds, before the long program would take it minutes or hours.
  const double early = per_op_ratio(t_tiny, tiny, t_small, small);
  ASSERT_LE(early, 4.0) << "planning " << tiny << " operations took " << t_tiny.seconds << " s, " << small
                        << " operations " << t_small.seconds << " s: " << early << "x the time per operation";
  Timing t_large = plan_timed(p_large, 2);
  // Every operation is planned, each in exactly one kernel, within the register budget.
  EXPECT_EQ(t_small.plan.steps.size(), static_cast<size_t>(small));
  EXPECT_EQ(t_large.plan.steps.size(), static_cast<size_t>(large));
  EXPECT_EQ(ops_planned(t_small.plan), static_cast<size_t>(small));
  EXPECT_EQ(ops_planned(t_large.plan), static_cast<size_t>(large));
  EXPECT_LT(t_large.seconds, 2.0) << large << " operations took " << t_large.seconds << " s to plan";
  for (const auto& g : t_large.plan.groups) EXPECT_LE(g.registers, test::test_device().info.is_cpu ? 512 : 128);
  const double ratio = per_op_ratio(t_small, small, t_large, large);
  EXPECT_LE(ratio, 4.0) << "planning " << small << " operations took " << t_small.seconds << " s, " << large
                        << " operations " << t_large.seconds << " s: " << ratio << "x the time per operation";
  std::printf("planned %d operations in %.4f s, %d in %.4f s, %d in %.4f s (%zu kernels): %.2fx the time per "
              "operation from %d to %d\n",
              tiny, t_tiny.seconds, small, t_small.seconds, large, t_large.seconds, t_large.plan.groups.size(), ratio,
              small, large);
}

}  // namespace

TEST(PlannerScaling, StraightLineWithFreshNamesPlansInNearLinearTime) { expect_near_linear(0); }

TEST(PlannerScaling, StraightLineReusingNamesPlansInNearLinearTime) { expect_near_linear(16); }
