// lower.cpp: the planner's passes in the order they run. Each pass is a file pair in this folder
// whose header says what the plan looks like before and after it.
#include "passes/lower.h"

#include "codegen/kernel_generator.h"
#include "passes/eliminate_copies.h"
#include "passes/fusion_cost.h"
#include "passes/group_operations.h"
#include "passes/launch.h"
#include "passes/plan_operations.h"
#include "passes/promote.h"

namespace fugue {

namespace {

// The "generate" pass: the OpenCL source of every kernel, for the launch chosen.
void generate(const Program& program, ExecutionPlan& plan) {
  for (size_t i = 0; i < plan.groups.size(); ++i)
    plan.kernels[i] = generate_kernel(program, plan.groups[i], plan.kernels[i].launch, "fugue_kernel");
}

}  // namespace

ExecutionPlan lower(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                    const PassObserver& observer) {
  ExecutionPlan plan;
  auto after = [&](const char* pass) {
    if (observer) observer(pass, plan);
  };

  // Basic blocks and the live sets of every block and operation.
  plan.dataflow = analyze_dataflow(program);
  after("dataflow");

  // Each operation's plan for this device: level, launch range, a partition per operand, cost.
  // (Kinds with storage were expanded into their parts when the program was loaded; the dataflow
  // already sees parts.)
  plan_operations(program, device, plan);
  after("plan operations");

  // Copies that may become buffer swaps: known before grouping, since a swap ends a kernel.
  eliminate_copies(program, options, plan);
  after("eliminate copies");

  // The longest runs of operations that may legally share a kernel (Hindemith's rule).
  group_operations(program, device, options, plan);
  after("group");

  // Within them, the kernels the device fits and the cost model prefers.
  choose_fusion(program, device, options, plan);
  after("fusion cost");

  // Temporaries that never reach global memory (registers, local memory); values stored, and why.
  promote(program, device, plan);
  after("promote");

  // Work-group sizes, group counts and walks.
  choose_launches(device, options, plan);
  after("choose launch");

  // OpenCL C for every kernel.
  generate(program, plan);
  after("generate");
  return plan;
}

void relaunch_kernel(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                     ExecutionPlan& plan, size_t kernel, int64_t max_local) {
  Launch launch = choose_group_launch(plan.groups.at(kernel), device, max_local);
  launch.sample_modulus = options.sample_modulus;
  launch.sample_residue = options.sample_residue;
  plan.kernels[kernel] = generate_kernel(program, plan.groups[kernel], launch, "fugue_kernel");
}

}  // namespace fugue
