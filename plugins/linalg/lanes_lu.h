// lanes_lu.h: linalg.getrf of small real matrices on CPUs in lanes (lanes.h), V matrices a work-item
// side by side (kernels/lanes_lu.cl). LU, the pivots (LAPACK's) and info are the other plans'.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"

namespace fugue::linalg {

// Enqueues the factorization of operand `a` ([..., m, n]) into `lu` (may be the same buffer), with the
// pivots `ipiv` ([..., min(m, n)], 1-based) and `info` per matrix, `lanes` (lanes_for) matrices a
// work-item.
void lanes_lu(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t lu, uint32_t ipiv, uint32_t info, int64_t lanes);

}  // namespace fugue::linalg
