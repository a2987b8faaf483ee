// fusion_cost.h: the "fusion cost" pass. Within the legal runs of the group pass, decides which
// operations really share a kernel: one joins the kernel being built when the kernel with it still
// fits the device (registers, local memory) and the cost model says one kernel is faster than two
// (bytes saved against parallelism lost, KernelBuilder::why_unprofitable). A kernel cut short for
// cost may then reach into the next legal run when the rule allows it there.
//
// Before: legal runs and the non-kernel steps. After: plan.groups (operations, merged plan, traffic,
// registers), a Kernel step for each of their operations, and plan.not_fused: why each operation
// that could follow another starts a kernel of its own.
#pragma once
#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

void choose_fusion(const Program& program, const DeviceInfo& device, const PlanOptions& options, ExecutionPlan& plan);

}  // namespace fugue
