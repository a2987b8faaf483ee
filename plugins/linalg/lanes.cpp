// lanes.cpp: see lanes.h.
#include "lanes.h"

#include <algorithm>

#include "device_kernels.h"
#include "lanes_cl.h"
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

cl_program lanes_program(const sdk::Call& call, const fugue_device_services& s, const std::string& op, fugue_dtype dtype,
                         const char* kernel_source, int64_t m, int64_t n, int64_t lanes, const std::string& options) {
  sdk::require_dtype(s, dtype, op);
  if (lanes < 2) throw sdk::Unsupported(op + ": its lanes plan does not serve this call (lanes.h)");
  const std::string source = std::string(kernel_source_lanes) + kernel_source;
  return linalg_program(call, s, dtype, source.c_str(),
                        "-DV=" + std::to_string(lanes) + " -DLANE_INT=" + (dtype == FUGUE_DTYPE_F64 ? "long" : "int") + " -DM=" +
                            std::to_string(m) + " -DN=" + std::to_string(n) + " " + options);
}

void enqueue_lanes(const sdk::Kernel& kernel, const fugue_device_services& s, int64_t count, int64_t lanes, const std::string& label) {
  kernel.enqueue(s, static_cast<size_t>((count + lanes - 1) / lanes), 0, label);
}

}  // namespace fugue::linalg
