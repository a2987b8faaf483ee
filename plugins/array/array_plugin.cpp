// array_plugin.cpp: the entry point of the array plugin, which registers every operation of the
// `array` family.
#include <memory>
#include <vector>

#include "arithmetic.h"
#include "cast.h"
#include "compact.h"
#include "comparisons.h"
#include "complex.h"
#include "fill.h"
#include "fugue/sdk.hpp"
#include "generators.h"
#include "put.h"
#include "rearrange.h"
#include "reduce.h"
#include "reshape.h"
#include "reductions.h"
#include "scatter.h"
#include "select.h"
#include "softmax.h"

namespace {

using fugue::sdk::Operation;
using fugue::sdk::Plugin;

void add_all(Plugin& plugin, std::vector<std::unique_ptr<Operation>> ops) {
  for (auto& op : ops) plugin.add(std::move(op));
}

void populate(Plugin& plugin) {
  using namespace fugue::array;
  add_all(plugin, arithmetic_operations());
  add_all(plugin, complex_operations());
  add_all(plugin, comparison_operations());
  plugin.add(std::make_unique<Select>());
  plugin.add(std::make_unique<Fill>());
  plugin.add(std::make_unique<Reshape>());
  plugin.add(std::make_unique<Cast>());
  add_all(plugin, reduction_operations());
  plugin.add(reduce_operation());
  plugin.add(scatter_add_operation());
  plugin.add(put_operation());
  plugin.add(transpose_operation());
  plugin.add(slice_operation());
  plugin.add(compact_operation());
  plugin.add(softmax_operation());
  plugin.add(logsumexp_operation());
  for (auto& g : generators()) plugin.add_generator(std::move(g));
}

}  // namespace

FUGUE_SDK_PLUGIN("array", "0.1.0",
                 "Element-wise arithmetic, comparisons, selection, fills, casts and reductions "
                 "over dense arrays of any rank",
                 populate)
