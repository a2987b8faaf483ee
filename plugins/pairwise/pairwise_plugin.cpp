// pairwise_plugin.cpp: the entry point of the pairwise plugin: distances and kernel values between the
// rows of two arrays.
#include "fugue/sdk.hpp"
#include "pairwise_ops.h"
#include "pairwise_tuner.h"
#include "reduce.h"
#include "row_reductions.h"

namespace {

void populate(fugue::sdk::Plugin& plugin) {
  plugin.add(fugue::pairwise::distance_operation());
  plugin.add(fugue::pairwise::kernel_operation());
  plugin.add(fugue::pairwise::nearest_operation());
  plugin.add(fugue::pairwise::kernel_sum_operation());
  plugin.add(fugue::pairwise::reduce_operation());
  plugin.add_tuner(fugue::pairwise::pairwise_tuner());
}

}  // namespace

FUGUE_SDK_PLUGIN("pairwise", "0.1.0",
                 "Pairwise distances (euclidean, sqeuclidean, manhattan, chebyshev, minkowski, chi2, canberra, cosine) and kernel values "
                 "(linear, polynomial, gaussian, sigmoid, intersection) between the rows of two arrays, as SciPy's cdist and "
                 "scikit-learn's kernels define them; the nearest rows and kernel sums without storing the matrix",
                 populate)
