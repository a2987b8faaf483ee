// promote.h: the "promote" pass. Decides where each value a kernel touches lives: a value written in
// the kernel element by element and dead after its last operation stays in a register and is never
// allocated; one still live, written outside the element loop, or read beyond its own element in
// the kernel (then into a second buffer, swapped in after the kernel) is stored to global memory,
// with the reason.
//
// Before: kernels (plan.groups) with their operations. After: each group's global reads, stored,
// promoted and second-buffer values, its wide reads (and the 2-D grid they walk), and the run-time
// length that bounds its iteration space.
//
// A batched kernel (one entry per work-group) keeps a value that crosses its segments in local memory,
// one entry's worth, and copies the inputs of its block-level operations there too while the device's
// local memory allows (they read an entry again and again).
#pragma once
#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

void promote(const Program& program, const DeviceInfo& device, ExecutionPlan& plan);

}  // namespace fugue
