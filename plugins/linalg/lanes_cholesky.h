// lanes_cholesky.h: linalg.potrf of small real matrices on CPUs in lanes (lanes.h), V matrices a
// work-item side by side (kernels/lanes_cholesky.cl). L (or U), the zeros of the other triangle and info
// are the other plans'.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"

namespace fugue::linalg {

// Enqueues the factorization of operand `a` ([..., n, n]) into `l` (may be the same buffer) with info per
// matrix into `info`, lower (A = L L^T from A's lower triangle) or upper (A = U^T U from its upper one),
// `lanes` (lanes_for) matrices a work-item.
void lanes_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower,
                    int64_t lanes);

}  // namespace fugue::linalg
