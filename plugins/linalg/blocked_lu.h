// blocked_lu.h: linalg.getrf for large matrices as kernels over the whole batch, panel by panel
// (MAGMA's blocked batched LU, right-looking, with partial pivoting as LAPACK's getrf): for each panel
// of NB columns, one kernel factors every entry's panel (its rows from the diagonal down, a work-group
// a matrix holding them in registers, the pivots found by a reduction in local memory), one applies
// the panel's swaps to the other columns and solves U's rows of the panel (a work-item a column), and
// one subtracts L's panel times U's rows from the trailing matrix in tiles of 64 x 64 (32 x 32 where
// local memory is short) (kernels/blocked_lu.cl). The factors are formed in LU's storage, so matrices of
// any shape fit; no other operation joins these kernels. Exactly singular entries set info and go on,
// as LAPACK's.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// The DEVICE-level plan of getrf of m x n matrices of `dtype` (no partitions) and its text for explain.
sdk::Plan blocked_lu_plan(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype);

// Enqueues the factorization of operand `a` ([..., m, n]) into `lu` (may be the same buffer), with the
// pivots `ipiv` ([..., min(m, n)], 1-based) and `info` (i32 per entry).
void blocked_lu(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t lu, uint32_t ipiv, uint32_t info);

}  // namespace fugue::linalg
