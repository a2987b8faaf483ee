// lanes_qr.h: linalg.geqrf of small real matrices on CPUs as a kernel of its own that factors V matrices
// a work-item side by side in the lanes of one vector, V the device's native width (8 f64 or 16 f32
// with AVX-512): element (i, j) of V matrices is one vector, so every step of the factorization runs
// in the core's vector units whatever the order, where one matrix a work-item (the emitted plans) fills
// them only along its rows (kernels/lanes_qr.cl). It serves where geqrf runs alone (fugue_plan's
// own_kernels_alone): the emitted plan stays the one its producers and consumers join. R, tau and the
// reflectors are LAPACK's, as the other plans'.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// The lanes a work-item takes for values of `dtype` on the call's device: the native vector width (at
// most 16), 0 where the lanes plan does not serve (complex values, GPUs, widths below 2, orders above the
// table's lanes_order, variable sizes).
int64_t qr_lanes(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, bool vbatched);

// What explain adds to the emitted plan's text where the lanes serve alone.
std::string qr_lanes_text(const Tuning& t, int64_t order, int64_t lanes);

// Enqueues the factorization of operand `a` ([..., m, n]) into `qr` (may be the same buffer), with the
// reflectors' scalars `tau` ([..., min(m, n)]), `lanes` matrices a work-item.
void lanes_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau, int64_t lanes);

}  // namespace fugue::linalg
