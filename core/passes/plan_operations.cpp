#include "passes/plan_operations.h"

namespace fugue {

void plan_operations(const Program& program, const DeviceInfo& device, ExecutionPlan& plan) {
  for (const auto& block : plan.dataflow.blocks)
    for (const Statement* st : block.ops) {
      auto p = std::make_unique<PlannedOp>();
      plan_operation(program, *st, device, *p);
      plan.planned[st] = p.get();
      plan.ops.push_back(std::move(p));
    }
}

}  // namespace fugue
