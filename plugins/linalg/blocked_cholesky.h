// blocked_cholesky.h: linalg.potrf for large orders as kernels over the whole batch, panel by panel
// (MAGMA's blocked batched Cholesky, right-looking): for each panel of NB columns, one kernel factors
// every entry's diagonal block (a row per work-item, in registers), one solves the rows below it
// against the block (a work-group per 16 to 64 rows, a row per work-item), and one subtracts the
// panel's rows times their conjugate transposes from the trailing lower triangle, in tiles of 64 x 64
// (32 x 32 where local memory is short) (kernels/blocked_cholesky.cl). The factor is formed in L's storage, so a matrix of
// any order fits; no other operation joins these kernels. An entry that is not positive definite stops
// there (info), the others go on.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// The columns a panel takes for order n and values of `dtype` on the call's device: the table's
// blocked_panel, halved until the kernels' local memory fits the device and a row fits 128 four-byte
// registers (at least 8), at most n.
int64_t panel_columns(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype);

// The DEVICE-level plan (operands a, l, info and any others: no partitions) and its text for explain.
sdk::Plan blocked_cholesky_plan(const sdk::Call& call, const Tuning& t, int64_t n, fugue_dtype dtype);

// Enqueues the factorization of operand `a` ([..., n, n]) into `l` (may be the same buffer) with `info`
// (i32 per entry), lower or upper as potrf's attribute says.
void blocked_cholesky(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t l, uint32_t info, bool lower);

}  // namespace fugue::linalg
