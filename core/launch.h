// launch.h: picks work-group size and group count for a plan on a device, from a small typed table of
// per-device defaults (GPU vs CPU), within the range the operation accepts.
#pragma once
#include "device_manager.h"
#include "kernel_generator.h"

namespace fugue {

struct LaunchTuning {
  int64_t element_local = 256;        // work-group size for ELEMENT level
  // Cap on groups (grid-stride beyond it); 0: one element per item. On the H100, 64 groups of 256 per
  // compute unit moved 2.61 TB/s for 2*x over 2^26 f32 against 1.97 TB/s with one element per item.
  int64_t element_groups_per_cu = 64;
  int64_t item_local = 256;           // ITEM level (reductions)
  int64_t item_groups_per_cu = 8;     // ITEM level: partial results per compute unit
  bool blocked_items = false;         // walk a work-item's elements as one contiguous run
};

LaunchTuning tuning_for(const DeviceInfo& device);

// `kernel_max_local`: the built kernel's CL_KERNEL_WORK_GROUP_SIZE when known (0: not yet).
Launch choose_launch(const fugue_plan& plan, const DeviceInfo& device, int64_t kernel_max_local = 0);

}  // namespace fugue
