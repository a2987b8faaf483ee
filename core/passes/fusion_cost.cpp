#include "passes/fusion_cost.h"

#include "passes/kernel_builder.h"

namespace fugue {

void choose_fusion(const Program& program, const DeviceInfo& device, const PlanOptions& options, ExecutionPlan& plan) {
  for (const auto& block : plan.dataflow.blocks) {
    KernelBuilder builder(program, plan.dataflow, device, block);
    const Statement* first = nullptr;  // the kernel's first operation
    auto close = [&] {
      if (builder.empty()) return;
      FusedGroup g;
      builder.finish(g);
      // An operation left alone that runs faster as its own kernels (ABI 2.19) becomes a device-level
      // step: its plan was what it offered its neighbours, and none joined.
      if (g.ops.size() == 1 && g.ops.front()->plan.own_kernels_alone && options.own_kernels_alone) {
        Step step;
        step.kind = Step::Kind::Device;
        step.op = g.ops.front();
        plan.steps[step.op->statement] = step;
        plan.alone_own_kernels.push_back(step.op->statement);
        first = nullptr;
        return;
      }
      const size_t index = plan.groups.size();
      for (size_t i = 0; i < g.ops.size(); ++i) {
        Step step;
        step.kind = Step::Kind::Kernel;
        step.group = index;
        step.starts_group = i == 0;
        step.op = g.ops[i];
        plan.steps[g.ops[i]->statement] = step;
      }
      plan.groups.push_back(std::move(g));
      first = nullptr;
    };
    for (const Statement* st : block.ops) {
      auto step = plan.steps.find(st);
      if (step != plan.steps.end()) {  // a swap or a device-level operation
        close();
        if (step->second.kind == Step::Kind::Device)
          plan.not_fused.push_back({st, "a device-level operation enqueues its own kernels"});
        continue;
      }
      const PlannedOp& p = *plan.planned.at(st);
      if (!builder.empty()) {
        std::string why;
        if (!options.fuse) {
          why = "fusion is off (--no-fuse)";
        } else {
          // A kernel that is a prefix of a legal run is legal up to that run's end; any other (one
          // cut short for cost) is judged again.
          const size_t run = plan.legal_group_of.at(first);
          if (plan.legal_groups[run].front()->statement != first || plan.legal_group_of.at(st) != run)
            why = builder.why_illegal(p);
        }
        if (why.empty()) why = builder.why_unprofitable(p);
        if (!why.empty()) {
          close();
          plan.not_fused.push_back({st, why});
        }
      }
      if (builder.empty()) first = st;
      builder.add(p);
    }
    close();
  }
}

}  // namespace fugue
