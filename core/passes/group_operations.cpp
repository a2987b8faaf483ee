#include "passes/group_operations.h"

#include "passes/eliminate_copies.h"
#include "passes/kernel_builder.h"

namespace fugue {

void group_operations(const Program& program, const DeviceInfo& device, const PlanOptions& options,
                      ExecutionPlan& plan) {
  for (const auto& block : plan.dataflow.blocks) {
    KernelBuilder builder(program, plan.dataflow, device, block);
    std::vector<const PlannedOp*> run;
    auto close = [&] {
      if (run.empty()) return;
      FusedGroup ignored;
      builder.finish(ignored);
      for (const PlannedOp* op : run) plan.legal_group_of[op->statement] = plan.legal_groups.size();
      plan.legal_groups.push_back(std::move(run));
      run.clear();
    };
    auto join = [&](const PlannedOp& p) {
      builder.add(p);
      run.push_back(&p);
    };
    for (const Statement* st : block.ops) {
      const PlannedOp& p = *plan.planned.at(st);
      const bool identity = is_identity_copy(*st);
      // A copy of a value this run holds in a register is a register move: fuse it. Otherwise a
      // swap avoids moving any data at all.
      if (identity && options.fuse && builder.in_register(st->operands[st->op->inputs()[0]]) &&
          builder.why_illegal(p).empty()) {
        plan.copies_kept.push_back({st, "fused as a register move: its input is a register of the kernel"});
        join(p);
        continue;
      }
      if (identity) {
        const std::string& why = plan.copy_refusals.at(st);
        if (why.empty()) {
          close();
          Step step;
          step.kind = Step::Kind::Swap;
          step.op = &p;
          step.target = st->operands[st->op->outputs()[0]];
          step.source = st->operands[st->op->inputs()[0]];
          plan.steps[st] = step;
          plan.swaps.push_back({st, "'" + step.target + "' takes the buffer of '" + step.source +
                                        "' (and the other way round): '" + step.source + "' is dead after the copy"});
          continue;
        }
        plan.copies_kept.push_back({st, why});
      }
      if (p.level() == FUGUE_LEVEL_DEVICE) {
        close();
        Step step;
        step.kind = Step::Kind::Device;
        step.op = &p;
        plan.steps[st] = step;
        continue;
      }
      if (!builder.empty()) {
        std::string why = options.fuse ? builder.why_illegal(p) : "fusion is off (--no-fuse)";
        if (!why.empty()) {
          close();
          plan.legal_refusals[st] = why;
        }
      }
      join(p);
    }
    close();
  }
}

}  // namespace fugue
