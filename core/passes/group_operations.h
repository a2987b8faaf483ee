// group_operations.h: the "group" pass (legality only). Walks each basic block in program order and
// cuts it into the longest runs of operations that may share a kernel by Hindemith's rule
// (KernelBuilder::why_illegal), recording why each cut was made. Device-level operations and the
// copies that become swaps are steps of their own; a copy of a value the run holds in a register
// joins it as a register move.
//
// Before: planned operations and copy verdicts. After: plan.legal_groups (with legal_group_of and
// legal_refusals), the Device and Swap steps, and the notes on swaps and kept copies.
#pragma once
#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

void group_operations(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                      ExecutionPlan& plan);

}  // namespace fugue
