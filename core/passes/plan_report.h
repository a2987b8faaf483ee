// plan_report.h: the text `fugue explain` prints: basic blocks with their live sets, every kernel with
// its operations, launch, promoted temporaries and traffic, the copies that became buffer swaps, each
// decision not to fuse with its reason, and the generated OpenCL source.
#pragma once
#include <string>

#include "runtime/executor.h"

namespace fugue {

// `executor` must have been prepared.
std::string explain_plan(const Program& program, const Executor& executor, const DeviceInfo& device);

}  // namespace fugue
