// lanes.cpp: see lanes.h.
#include "lanes.h"

#include <algorithm>

#include "fugue/sdk_device.hpp"
#include "scalars.h"

namespace fugue::linalg {

int64_t lanes_for(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, bool vbatched) {
  if (vbatched || Scalars(dtype).complex || call.device().type != FUGUE_DEVICE_CPU || m < 1 || n < 1 || std::max(m, n) > t.lanes_order) return 0;
  const int64_t width = std::min<int64_t>(sdk::native_vector_width(&call.device(), dtype), 16);
  return width >= 2 ? width : 0;
}

std::string lanes_text(const Tuning& t, int64_t order, int64_t lanes) {
  return "alone: lanes, " + std::to_string(lanes) + " matrices a work-item side by side in one vector, a kernel of its own (order " +
         std::to_string(order) + " <= lanes_order " + std::to_string(t.lanes_order) + ")";
}

}  // namespace fugue::linalg
