// blocked_qr.h: linalg.geqrf for large matrices as kernels over the whole batch, panel by panel (LAPACK's
// blocked geqrf, batched as MAGMA's): for each panel of NB columns, one kernel reflects every entry's
// panel (its rows from the diagonal down, a work-group a matrix, each work-item a column's rows in
// registers, the column sums met in local memory) and forms its block reflector's triangular factor T
// (larft), and one applies the block reflector to the columns right of the panel, C - V T^H (V^H C)
// (larfb, a work-item a column) (kernels/blocked_qr.cl). The factors are formed in QR's storage, so
// matrices of any shape fit; T goes through a scratch buffer of the core's; no other operation joins
// these kernels. R, tau and the reflectors are LAPACK's, as the other plans'.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"
#include "fugue/sdk_device.hpp"
#include "tuning.h"

namespace fugue::linalg {

// Whether the panel of m x n matrices of `dtype` fits the call's device: it holds a column's m rows in a
// work-group (v in local memory, the rows in registers), so very tall matrices take the other plans.
bool blocked_qr_fits(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype);

// The DEVICE-level plan of geqrf of m x n matrices of `dtype` (no partitions) and its text for explain.
sdk::Plan blocked_qr_plan(const sdk::Call& call, const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype);

// Enqueues the factorization of operand `a` ([..., m, n]) into `qr` (may be the same buffer), with the
// reflectors' scalars `tau` ([..., min(m, n)]).
void blocked_qr(const sdk::Call& call, const fugue_device_services& s, uint32_t a, uint32_t qr, uint32_t tau);

}  // namespace fugue::linalg
