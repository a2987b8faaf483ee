#include "runtime/array_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace fugue {

namespace {
std::string same_layout(const HostArray& actual, const HostArray& expected) {
  if (actual.dtype != expected.dtype)
    return "dtype " + std::string(dtype_name(actual.dtype)) + " vs expected " + std::string(dtype_name(expected.dtype));
  if (actual.shape != expected.shape)
    return "shape " + shape_string(actual.shape) + " vs expected " + shape_string(expected.shape);
  return {};
}
}  // namespace

std::string compare_arrays(const HostArray& actual, const HostArray& expected, double tolerance) {
  if (auto problem = same_layout(actual, expected); !problem.empty()) return problem;
  for (int64_t i = 0; i < expected.elements(); ++i) {
    double a = actual.get(i), e = expected.get(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::isinf(e) && a == e) continue;
    if (!(std::fabs(a - e) <= tolerance * std::max(1.0, std::fabs(e)))) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "element %lld: %.17g, expected %.17g (tolerance %g)", static_cast<long long>(i), a,
                    e, tolerance);
      return buf;
    }
  }
  return {};
}

std::string compare_bitwise(const HostArray& actual, const HostArray& expected) {
  if (auto problem = same_layout(actual, expected); !problem.empty()) return problem;
  const size_t size = dtype_size(expected.dtype);
  for (int64_t i = 0; i < expected.elements(); ++i)
    if (std::memcmp(actual.bytes.data() + i * size, expected.bytes.data() + i * size, size) != 0) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "element %lld: %.17g, then %.17g", static_cast<long long>(i), expected.get(i),
                    actual.get(i));
      return buf;
    }
  return {};
}

}  // namespace fugue
