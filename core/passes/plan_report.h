// plan_report.h: the text `fugue explain` prints: basic blocks with their live sets, every kernel with
// its operations, launch, promoted temporaries and traffic, the copies that became buffer swaps, each
// decision not to fuse with its reason, and the generated OpenCL source.
#pragma once
#include <string>
#include <vector>

#include "runtime/executor.h"

namespace fugue {

// A kernel of the plan as generated (its launch and source), built or not.
struct ExplainedKernel {
  const FusedGroup* group = nullptr;
  GeneratedKernel kernel;
};

// Every kernel of `plan` generated for `device`, nothing built: the launch is the planner's choice
// before any driver has a say (a build may lower the work-group size to the kernel's limit).
std::vector<ExplainedKernel> generate_kernels(const Program& program, const ExecutionPlan& plan, const DeviceInfo& device);

std::string explain_plan(const Program& program, const ExecutionPlan& plan, const std::vector<ExplainedKernel>& kernels,
                         const DeviceInfo& device);
// The kernels an executor built (`executor` must have been prepared).
std::string explain_plan(const Program& program, const Executor& executor, const DeviceInfo& device);

}  // namespace fugue
