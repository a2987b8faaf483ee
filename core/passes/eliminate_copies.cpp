#include "passes/eliminate_copies.h"

namespace fugue {

bool is_identity_copy(const Statement& st) {
  return st.op->traits() & FUGUE_OP_IDENTITY && st.op->operands().size() == 2 && st.op->inputs().size() == 1 &&
         st.op->outputs().size() == 1;
}

namespace {

// Why the identity operation `p` cannot become a buffer swap (empty: it can).
std::string why_no_swap(const Program& program, const Dataflow& flow, const SymbolSet& loop_variables,
                        const PlannedOp& p) {
  const Statement& st = *p.statement;
  const std::string& target = st.operands[st.op->outputs()[0]];
  const std::string& source = st.operands[st.op->inputs()[0]];
  const Symbol& t = program.symbol(target);
  const Symbol& s = program.symbol(source);
  if (target == source) return "it copies '" + source + "' onto itself";
  if (s.compile_time()) return "its input '" + source + "' is a " + s.kind_text();
  if (s.compound() || t.compound()) return "'" + source + "' or '" + target + "' is a kind with parts";
  if (loop_variables.count(source))
    return "its input '" + source + "' is a loop variable, whose buffer the loop refills every iteration";
  if (s.kind != t.kind || s.dtype != t.dtype || s.shape != t.shape)
    return "'" + target + "' and '" + source + "' differ in kind, dtype or shape";
  if (flow.at(&st).live_out.count(source))
    return "'" + source + "' is still live after the copy, so its buffer cannot be given away";
  return "";
}

}  // namespace

void eliminate_copies(const Program& program, const PlanOptions& options, ExecutionPlan& plan) {
  SymbolSet loop_variables;  // only loop bodies define symbols before their ops
  for (const auto& block : plan.dataflow.blocks)
    loop_variables.insert(block.header_defs.begin(), block.header_defs.end());
  for (const auto& block : plan.dataflow.blocks)
    for (const Statement* st : block.ops)
      if (is_identity_copy(*st))
        plan.copy_refusals[st] = options.eliminate_copies
                                     ? why_no_swap(program, plan.dataflow, loop_variables, *plan.planned.at(st))
                                     : "copy elimination is off (--no-swap)";
}

}  // namespace fugue
