// softmax.h: array.softmax and array.logsumexp along the last axis: y[..., j] = exp(x[..., j] - m) /
// sum_k exp(x[..., k] - m) and out[...] = m + log(sum_k exp(x[..., k] - m)), with m the row's largest
// element (so that nothing overflows).
//
// BLOCK level, one row per work-group (x and the result partitioned BATCH along the axis before the
// last): the group finds the row's maximum and its sum of exponentials with work-group combinations
// in local memory, then writes. Element-wise producers of x and consumers of the result fuse into the
// same kernel, the row kept in local memory by the core.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> softmax_operation();
std::unique_ptr<sdk::Operation> logsumexp_operation();

}  // namespace fugue::array
