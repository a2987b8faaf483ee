// row_reductions.h: reductions over D's rows that never store D.
// - pairwise.nearest: for each row i of X the k rows of Y nearest by a metric (d [n, k] ascending, index
//   [n, k] i64; ties broken by the lower index; NaN distances are never nearest, places left over hold
//   inf and index -1); k = 1 is the row-wise min and argmin.
// - pairwise.kernel_sum: y[i] = sum_j K(x_i, y_j) v[j], a kernel matrix times a vector (the core of
//   Gaussian processes and kernel density estimates).
// Plan: a batch entry per row of X, one work-item each (teams of one: many rows share a work-group),
// Y and v read whole; the k best kept sorted in the work-item's registers.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::pairwise {

std::unique_ptr<sdk::Operation> nearest_operation();
std::unique_ptr<sdk::Operation> kernel_sum_operation();

}  // namespace fugue::pairwise
