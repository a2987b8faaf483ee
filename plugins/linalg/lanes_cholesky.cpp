// lanes_cholesky.cpp: see lanes_cholesky.h.
#include "lanes_cholesky.h"

#include <string>

#include "lanes.h"
#include "lanes_cholesky_cl.h"
#include "matrices.h"

namespace fugue::linalg {

void lanes_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower,
                    int64_t lanes) {
  const fugue_type& ta = call.operand(a);
  const int64_t count = batch_count(ta), n = columns_of(ta);
  if (count == 0) return;
  cl_program program =
      lanes_program(call, s, "linalg.potrf", ta.dtype, kernel_source_lanes_cholesky, n, n, lanes, std::string("-DUPPER=") + (lower ? "0" : "1"));
  sdk::Kernel kernel(program, "cholesky_lanes");
  kernel.args(sdk::buffer(s, a), sdk::buffer(s, l), sdk::buffer(s, info), static_cast<cl_long>(count));
  enqueue_lanes(kernel, s, count, lanes, "linalg.potrf: lanes");
}

}  // namespace fugue::linalg
