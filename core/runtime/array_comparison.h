// array_comparison.h: device results against reference results, within an operation's tolerance.
#pragma once
#include <string>

#include "program/host_array.h"

namespace fugue {

// Empty when `actual` matches `expected`: the same dtype and shape, and per element
// |a - e| <= tolerance * max(1, |e|) (NaN matches NaN, an infinity itself). Otherwise a message naming
// the first element that differs, both values and the tolerance.
std::string compare_arrays(const HostArray& actual, const HostArray& expected, double tolerance);

// Empty when the two arrays hold the same bytes; otherwise the first element that differs.
std::string compare_bitwise(const HostArray& actual, const HostArray& expected);

}  // namespace fugue
