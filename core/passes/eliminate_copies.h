// eliminate_copies.h: the "eliminate copies" pass. A copy `x = t` by an identity operation can become
// a swap of the two buffers when t's value is dead afterwards: no data moves at all.
//
// It runs before grouping, because a swap ends the kernel being built; grouping then keeps a copy
// of a value the kernel holds in a register as a register move instead (cheaper still).
//
// Before: planned operations. After: plan.copy_refusals holds every identity copy, with "" when it
// may become a swap and otherwise why not.
#pragma once
#include "passes/execution_plan.h"

namespace fugue {

// Is `st` a copy: an IDENTITY operation with one input and one output?
bool is_identity_copy(const Statement& st);

void eliminate_copies(const Program& program, const PlanOptions& options, ExecutionPlan& plan);

}  // namespace fugue
