// lanes_lu.cpp: see lanes_lu.h.
#include "lanes_lu.h"

#include <algorithm>
#include <string>

#include "device_kernels.h"
#include "lanes_cl.h"
#include "lanes_lu_cl.h"
#include "matrices.h"

namespace fugue::linalg {

void lanes_lu(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t lu, uint32_t ipiv, uint32_t info, int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.getrf");
  if (lanes < 2) throw sdk::Unsupported("linalg.getrf: its lanes plan does not serve this call (lanes_lu.h)");
  const int64_t count = batch_count(ta), m = rows_of(ta), n = columns_of(ta);
  if (count == 0) return;
  const std::string source = std::string(kernel_source_lanes) + kernel_source_lanes_lu;
  cl_program program = linalg_program(call, s, ta.dtype, source.c_str(),
                                      "-DV=" + std::to_string(lanes) + " -DLANE_INT=" + (ta.dtype == FUGUE_DTYPE_F64 ? "long" : "int") +
                                          " -DM=" + std::to_string(m) + " -DN=" + std::to_string(n) + " -DK=" + std::to_string(std::min(m, n)));
  sdk::Kernel kernel(program, "lu_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, lu), sdk::buffer(s, ipiv), sdk::buffer(s, info), static_cast<cl_long>(count))
      .enqueue(s, static_cast<size_t>((count + lanes - 1) / lanes), 0, "linalg.getrf: lanes");
}

}  // namespace fugue::linalg
