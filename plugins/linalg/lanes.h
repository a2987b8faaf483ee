// lanes.h: the plans that factor small real matrices on CPUs a native vector's width of them a work-item,
// side by side in the lanes of one vector (8 f64 or 16 f32 with AVX-512): element (i, j) of the
// work-item's matrices is one vector, so every step of a factorization runs in the core's vector units
// whatever the order, where one matrix a work-item (the emitted plans) fills them only along its rows.
// Each factorization's kernel is its own (lanes_qr.h, lanes_cholesky.h); this says when they serve and
// what explain says of them. They are kernels of their own, so they serve where the operation runs alone
// (fugue_plan's own_kernels_alone): the emitted plan stays the one its producers and consumers join.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// The lanes a work-item takes for m x n matrices of `dtype` on the call's device: the native vector width
// (at most 16, OpenCL's widest vector), 0 where the lanes do not serve (complex values, GPUs, widths
// below 2, empty matrices, orders max(m, n) above the table's lanes_order, variable sizes).
int64_t lanes_for(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, bool vbatched);

// What explain adds to the emitted plan's text where the lanes serve alone.
std::string lanes_text(const Tuning& t, int64_t order, int64_t lanes);

// The program of a lanes kernel of operation `op` for m x n matrices of `dtype`, `lanes` (lanes_for) a
// work-item: kernels/lanes.cl before `kernel_source`, its options (-DV, -DLANE_INT, -DM, -DN) before
// `options`. Throws Unsupported where `lanes` is below 2 (the lanes do not serve the call).
cl_program lanes_program(const sdk::Call& call, const fugue_device_services& s, const std::string& op, fugue_dtype dtype,
                         const char* kernel_source, int64_t m, int64_t n, int64_t lanes, const std::string& options);

// Enqueues a lanes kernel over `count` matrices, `lanes` a work-item, under `label`.
void enqueue_lanes(const sdk::Kernel& kernel, const fugue_device_services& s, int64_t count, int64_t lanes, const std::string& label);

}  // namespace fugue::linalg
