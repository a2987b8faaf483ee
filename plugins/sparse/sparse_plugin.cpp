// sparse_plugin.cpp: the entry point of the sparse plugin: sparse matrices as kinds (csr, coo, ell, sell,
// dia, bdia, hyb, bcsr, bell, sbell, cocktail; layouts.h; sparse chooses among them), Matrix Market and SciPy .npz files and generators,
// conversions between the layouts (sparse.convert), y = alpha A x + beta y0 (sparse.spmv, sparse.spmm), the Ritz values of a
// Lanczos run (sparse.ritz) and the affinity matrix of an image (sparse.affinity).
#include <fugue/sdk.hpp>

#include "affinity.h"
#include "convert.h"
#include "layouts.h"
#include "matrix_generators.h"
#include "entry_formats.h"
#include "ritz.h"
#include "sparse_kind.h"
#include "sparse_tuner.h"
#include "spmv.h"

namespace {

void populate(fugue::sdk::Plugin& plugin) {
  using namespace fugue::sparse;
  for (Layout layout : every_layout()) plugin.add_kind(sparse_kind(layout));
  plugin.add_kind(sparse_chooser_kind());
  plugin.add_format(matrix_market_format());
  plugin.add_format(scipy_npz_format());
  for (auto& generator : matrix_generators()) plugin.add_generator(std::move(generator));
  plugin.add(spmv_operation());
  plugin.add(spmm_operation());
  plugin.add(ritz_operation());
  plugin.add(affinity_operation());
  plugin.add(convert_operation());
  plugin.add_tuner(sparse_tuner());
}

}  // namespace

FUGUE_SDK_PLUGIN("sparse", "0.1.0",
                 "Sparse matrices as kinds (csr, coo, ell, sell, dia, bdia, hyb, bcsr, bell, sbell, cocktail, and sparse choosing among them) read from Matrix Market or SciPy .npz files or made by generators (poisson, "
                 "banded, rmat, fem) in any of them, conversions between them, sparse matrix-vector and matrix-matrix products, the Ritz values and vectors of a "
                 "Lanczos run, and the affinity matrix of an image for normalized cuts",
                 populate)
