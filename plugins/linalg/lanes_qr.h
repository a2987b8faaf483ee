// lanes_qr.h: linalg.geqrf of small real matrices on CPUs in lanes (lanes.h), V matrices a work-item
// side by side (kernels/lanes_qr.cl). R, tau and the reflectors are LAPACK's, as the other plans'.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"

namespace fugue::linalg {

// Enqueues the factorization of operand `a` ([..., m, n]) into `qr` (may be the same buffer), with the
// reflectors' scalars `tau` ([..., min(m, n)]), `lanes` (lanes_for) matrices a work-item.
void lanes_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau, int64_t lanes);

}  // namespace fugue::linalg
