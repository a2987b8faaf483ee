// linalg_plugin.cpp: the entry point of the linalg plugin: batched dense linear algebra on [..., m, n]
// arrays (the leading axes number the matrices), and the spd generator.
#include "fugue/sdk.hpp"
#include "gauss_jordan.h"
#include "gebrd.h"
#include "gels.h"
#include "gemm.h"
#include "gemv.h"
#include "geqrf.h"
#include "getrf.h"
#include "getrs.h"
#include "orgqr.h"
#include "posv.h"
#include "potrf.h"
#include "potrs.h"
#include "spd.h"
#include "trsm.h"

namespace {

void populate(fugue::sdk::Plugin& plugin) {
  using namespace fugue::linalg;
  plugin.add(gemm_operation());
  plugin.add(gemm_vbatched_operation());
  plugin.add(gemv_operation());
  plugin.add(potrf_operation());
  plugin.add(potrf_vbatched_operation());
  plugin.add(potrs_operation());
  plugin.add(posv_operation());
  plugin.add(getrf_operation());
  plugin.add(getrf_vbatched_operation());
  plugin.add(getrs_operation());
  plugin.add(gesv_operation());
  plugin.add(gesv_nopiv_operation());
  plugin.add(geqrf_operation());
  plugin.add(geqrf_vbatched_operation());
  plugin.add(gebrd_operation());
  plugin.add(gels_operation());
  plugin.add(orgqr_operation());
  plugin.add(trsm_operation());
  plugin.add(trsv_operation());
  plugin.add_generator(spd_generator());
}

}  // namespace

FUGUE_SDK_PLUGIN("linalg", "0.1.0",
                 "Batched dense linear algebra over many small matrices: products (gemm, gemv), Cholesky (potrf, potrs, posv) and "
                 "LU (getrf, getrs) factorizations and solves with LAPACK's pivots and info per matrix, Householder QR (geqrf, "
                 "orgqr), least squares (gels), bidiagonal reduction (gebrd), Gauss-Jordan solves with and without "
                 "pivoting (gesv, gesv_nopiv), triangular solves "
                 "(trsm, trsv); the spd generator of positive definite matrices",
                 populate)
