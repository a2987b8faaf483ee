// histogram_plugin.cpp: the entry point of the histogram plugin: histograms of arrays, counts or sums of
// weights, privatized per work-group (counting.h).
#include "bincount.h"
#include "even.h"
#include "fugue/sdk.hpp"
#include "histogram2d.h"
#include "scatter.h"

namespace {

void populate(fugue::sdk::Plugin& plugin) {
  using namespace fugue::histogram;
  plugin.add(even_operation());
  plugin.add(bincount_operation());
  plugin.add(histogram2d_operation());
  plugin.add(scatter_operation());
}

}  // namespace

FUGUE_SDK_PLUGIN("histogram", "0.1.0",
                 "Histograms as NumPy computes them: equal bins over a range (even), integer bins (bincount), pairs over a grid of bins "
                 "(histogram2d), and bins and weights from user functions (scatter); counts in i64 or sums of weights, each work-group "
                 "counting into its own copy in local memory where the bins fit",
                 populate)
