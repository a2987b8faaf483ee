#include "passes/execution_plan.h"

#include <algorithm>
#include <cstdio>

namespace fugue {

std::string bytes_text(double b) {
  char buf[64];
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3) std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

bool updates_by_atomics(const FusedGroup& group) {
  return std::any_of(group.ops.begin(), group.ops.end(), [](const PlannedOp* op) {
    return std::any_of(op->plan.partitions.begin(), op->plan.partitions.end(),
                       [](const abi::Partition& part) { return part.kind == FUGUE_PARTITION_SCATTER; });
  });
}

}  // namespace fugue
