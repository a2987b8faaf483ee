// plan_report.h: the text `fugue explain` prints: basic blocks with their live sets, every kernel with
// its operations, launch, promoted temporaries and traffic, the copies that became buffer swaps, each
// decision not to fuse with its reason, and the generated OpenCL source.
#pragma once
#include <string>
#include <vector>

#include "runtime/executor.h"

namespace fugue {

// The plan as generated (plan.kernels: launch and source), built or not. Before a build the
// launch is the planner's choice; a build may lower the work-group size to the kernel's limit.
std::string explain_plan(const Program& program, const ExecutionPlan& plan, const DeviceInfo& device);
// The kernels an executor built (`executor` must have been prepared).
std::string explain_plan(const Program& program, const Executor& executor, const DeviceInfo& device);

// The plan as it stands after a pass, compactly: each operation's level, partitions and launch
// range; the copy verdicts; the legal runs; the kernels with their promotions and launches; the
// generated sources' sizes. What `fugue explain --passes` prints after every pass that changed it.
std::string describe_plan_state(const Program& program, const ExecutionPlan& plan);

}  // namespace fugue
