// lanes_cholesky.cpp: see lanes_cholesky.h.
#include "lanes_cholesky.h"

#include <string>

#include "device_kernels.h"
#include "lanes_cholesky_cl.h"
#include "lanes_cl.h"
#include "matrices.h"

namespace fugue::linalg {

void lanes_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower,
                    int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  sdk::require_dtype(s, ta.dtype, "linalg.potrf");
  if (lanes < 2) throw sdk::Unsupported("linalg.potrf: its lanes plan does not serve this call (lanes_cholesky.h)");
  const int64_t count = batch_count(ta), n = columns_of(ta);
  if (count == 0 || n == 0) return;
  const std::string source = std::string(kernel_source_lanes) + kernel_source_lanes_cholesky;
  cl_program program = linalg_program(call, s, ta.dtype, source.c_str(),
                                      "-DV=" + std::to_string(lanes) + " -DLANE_INT=" + (ta.dtype == FUGUE_DTYPE_F64 ? "long" : "int") +
                                          " -DM=" + std::to_string(n) + " -DN=" + std::to_string(n) + " -DUPPER=" + (lower ? "0" : "1"));
  sdk::Kernel kernel(program, "cholesky_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, l), sdk::buffer(s, info), static_cast<cl_long>(count))
      .enqueue(s, static_cast<size_t>((count + lanes - 1) / lanes), 0, "linalg.potrf: lanes");
}

}  // namespace fugue::linalg
