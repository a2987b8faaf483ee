// lanes_qr.cpp: see lanes_qr.h.
#include "lanes_qr.h"

#include <algorithm>
#include <string>

#include "householder.h"
#include "lanes.h"
#include "lanes_qr_cl.h"
#include "matrices.h"

namespace fugue::linalg {

void lanes_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau, int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  const int64_t count = batch_count(ta), m = rows_of(ta), n = columns_of(ta);
  const ReflectorLimits limits = reflector_limits(ta.dtype);
  if (count == 0) return;
  cl_program program = lanes_program(call, s, "linalg.geqrf", ta.dtype, kernel_source_lanes_qr, m, n, lanes,
                                     "-DK=" + std::to_string(std::min(m, n)) + " -DNORM_LO=" + limits.lo + " -DNORM_HI=" + limits.hi +
                                         " -DNORM_TINY=" + limits.tiny + " -DNORM_BIG=" + limits.big);
  sdk::Kernel kernel(program, "qr_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, qr), sdk::buffer(s, tau), static_cast<cl_long>(count));
  enqueue_lanes(kernel, s, count, lanes, "linalg.geqrf: lanes");
}

}  // namespace fugue::linalg
