// lanes_lu.cpp: see lanes_lu.h.
#include "lanes_lu.h"

#include <algorithm>
#include <string>

#include "lanes.h"
#include "lanes_lu_cl.h"
#include "matrices.h"

namespace fugue::linalg {

void lanes_lu(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t lu, uint32_t ipiv, uint32_t info, int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  const int64_t count = batch_count(ta), m = rows_of(ta), n = columns_of(ta);
  if (count == 0) return;
  cl_program program = lanes_program(call, s, "linalg.getrf", ta.dtype, kernel_source_lanes_lu, m, n, lanes, "-DK=" + std::to_string(std::min(m, n)));
  sdk::Kernel kernel(program, "lu_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, lu), sdk::buffer(s, ipiv), sdk::buffer(s, info), static_cast<cl_long>(count));
  enqueue_lanes(kernel, s, count, lanes, "linalg.getrf: lanes");
}

}  // namespace fugue::linalg
