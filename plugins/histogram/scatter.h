// scatter.h: histogram.scatter, the generic histogram h[f(a, i)] += v(a, i) with user functions: f gives
// each element's bin (an integer; outside 0..length-1 counts nothing), v its weight (a function, or a
// number: left out, 1, counting in i64); each takes the element's value, or its value and flat index.
// The functions are compiled into the counting kernel, which fuses with a's producers.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::histogram {

std::unique_ptr<sdk::Operation> scatter_operation();

}  // namespace fugue::histogram
