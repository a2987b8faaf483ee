// plan_operations.h: the "plan operations" pass. Asks each operation's plugin for its plan on the
// device (level, launch range, a partition per operand) and its cost, and checks them.
//
// Before: the dataflow's blocks of statements. After: plan.ops and plan.planned hold a PlannedOp for
// every operation statement, in block order.
#pragma once
#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

void plan_operations(const Program& program, const DeviceInfo& device, ExecutionPlan& plan);

}  // namespace fugue
