// lower.h: the planner, as a pipeline of passes from a loaded program to generated kernels (lower.cpp
// reads top to bottom). Planning needs a device's description, not a device: `fugue explain
// --device-file` plans for a saved one, and nothing is compiled here.
#pragma once
#include <functional>

#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

// Called after each pass with the pass's name ("dataflow", "plan operations", ...) and the plan so far.
using PassObserver = std::function<void(const char* pass, const ExecutionPlan& plan)>;

ExecutionPlan lower(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                    const PassObserver& observer = {});

// Kernel `kernel` of `plan` built with a work-group limit (CL_KERNEL_WORK_GROUP_SIZE) below its
// launch: chooses its launch again within `max_local` and generates it again.
void relaunch_kernel(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                     ExecutionPlan& plan, size_t kernel, int64_t max_local);

}  // namespace fugue
