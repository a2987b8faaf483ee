// device_kernels.h: what the linalg plugin's DEVICE-level plans share (blocked_cholesky.h, blocked_lu.h):
// their plan, the reason explain gives for them, and their programs built from kernels/*.cl with
// kernels/scalars.cl's arithmetic before them.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"

namespace fugue::linalg {

// A DEVICE-level plan (no operand partitioned: the kernels take whole buffers) with explain's text.
sdk::Plan device_plan(const sdk::Call& call, std::string variant);

// Why a blocked plan serves order n: above `limit`, or the loop plan's matrix exceeds local memory.
std::string blocked_reason(int64_t n, int64_t limit);

// The program of `kernel_source` for values of `dtype` on the call's device, through the core's cache:
// doubles enabled where needed, scalars.cl first, its options (-DT, -DR, -DCOMPLEX, -DSMALLEST) and
// -DUNROLL (0 on CPUs, where PoCL 3.1 wrote outside the buffers with the kernels' loops unrolled) set
// before `options`.
cl_program linalg_program(const sdk::Call& call, const fugue_device_services& s, fugue_dtype dtype, const char* kernel_source,
                          const std::string& options);

// Throws Unsupported when the device's work-groups are smaller than `items`, naming the operation and the
// tuning field (`field`=0) that takes another plan.
void require_work_group(const fugue_device_services& s, int64_t items, const std::string& op, const std::string& field);

}  // namespace fugue::linalg
