// reduce.h: array.reduce(f, x; axis): x combined along one axis by a user function f(a, b) — any
// associative and commutative combination of two values of x's dtype that returns that dtype (the
// order in which elements meet is the device's). The axis is removed: a 1-D x gives a scalar.
//
// Three plans, by shape: a 1-D x is one reduction over the whole device (ITEM level: each work-item
// combines its elements, each work-group its items in local memory, a second kernel the groups'); long
// rows along the last axis take one work-group each (BLOCK level, x and the result BATCH); any other
// axis, or rows shorter than kLongRow, one work-item per result element (ELEMENT level, reading x
// with strides). Element-wise producers of a 1-D x and consumers of the result fuse with it.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> reduce_operation();

}  // namespace fugue::array
