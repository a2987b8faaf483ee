// reduce.h: pairwise.reduce, D[i, j] = r(e(x_i0, y_j0) (+) e(x_i1, y_j1) (+) ... (+) e(x_ik-1, y_jk-1)) with
// user functions e (of two elements), (+) (combine: of two partial results, associative) and r (of the
// combined value; left out, D is the combined value): any measure a user writes from element operations,
// compiled into the same kernel as pairwise.distance's (one element of D per work-item, element-wise
// consumers of D joining it).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::pairwise {

std::unique_ptr<sdk::Operation> reduce_operation();

}  // namespace fugue::pairwise
