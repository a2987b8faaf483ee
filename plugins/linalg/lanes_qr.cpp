// lanes_qr.cpp: see lanes_qr.h.
#include "lanes_qr.h"

#include <algorithm>
#include <string>

#include "device_kernels.h"
#include "householder.h"
#include "lanes_cl.h"
#include "lanes_qr_cl.h"
#include "matrices.h"
#include "scalars.h"

namespace fugue::linalg {

void lanes_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau, int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.geqrf");
  if (lanes < 2) throw sdk::Unsupported("linalg.geqrf: its lanes plan does not serve this call (lanes_qr.h)");
  const int64_t count = batch_count(ta), m = rows_of(ta), n = columns_of(ta);
  if (count == 0 || m == 0 || n == 0) return;
  const ReflectorLimits limits = reflector_limits(ta.dtype);
  const bool doubles = ta.dtype == FUGUE_DTYPE_F64;
  const std::string source = std::string(kernel_source_lanes) + kernel_source_lanes_qr;
  cl_program program = linalg_program(call, s, ta.dtype, source.c_str(),
                                      "-DV=" + std::to_string(lanes) + " -DLANE_INT=" + (doubles ? "long" : "int") + " -DM=" + std::to_string(m) +
                                          " -DN=" + std::to_string(n) + " -DK=" + std::to_string(std::min(m, n)) + " -DNORM_LO=" + limits.lo +
                                          " -DNORM_HI=" + limits.hi + " -DNORM_TINY=" + limits.tiny + " -DNORM_BIG=" + limits.big);
  sdk::Kernel kernel(program, "qr_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, qr), sdk::buffer(s, tau), static_cast<cl_long>(count))
      .enqueue(s, static_cast<size_t>((count + lanes - 1) / lanes), 0, "linalg.geqrf: lanes");
}

}  // namespace fugue::linalg
