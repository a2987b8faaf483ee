#include "runtime/array_comparison.h"

#include <algorithm>
#include <cmath>
#include <complex>
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

bool has_nan(std::complex<double> z) { return std::isnan(z.real()) || std::isnan(z.imag()); }

// Complex elements as complex numbers: |a - e| <= tolerance * max(1, |e|), the error's size against
// the value's (a part near 0 beside a large one is held to the large one's scale).
std::string compare_complex(const HostArray& actual, const HostArray& expected, double tolerance) {
  for (int64_t i = 0; i < expected.elements(); ++i) {
    const std::complex<double> a = actual.get_complex(i), e = expected.get_complex(i);
    if (has_nan(a) && has_nan(e)) continue;
    if (a == e) continue;  // infinities too
    if (!(std::abs(a - e) <= tolerance * std::max(1.0, std::abs(e)))) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "element %lld: (%.17g, %.17g), expected (%.17g, %.17g) (tolerance %g)",
                    static_cast<long long>(i), a.real(), a.imag(), e.real(), e.imag(), tolerance);
      return buf;
    }
  }
  return {};
}
}  // namespace

namespace {

// A kind with storage compares part by part; "" when both are plain arrays or every part agrees.
template <class Compare>
std::string compare_parts(const HostArray& actual, const HostArray& expected, Compare compare) {
  if (actual.kind_name != expected.kind_name || actual.parts.size() != expected.parts.size())
    return "a " + (actual.compound() ? actual.kind_name : std::string("plain array")) + ", expected a " +
           (expected.compound() ? expected.kind_name : std::string("plain array"));
  for (size_t k = 0; k < expected.parts.size(); ++k)
    if (std::string problem = compare(actual.parts[k], expected.parts[k]); !problem.empty())
      return "part " + std::to_string(k) + ": " + problem;
  return {};
}

}  // namespace

std::string compare_arrays(const HostArray& actual, const HostArray& expected, double tolerance) {
  if (actual.compound() || expected.compound())
    return compare_parts(actual, expected, [&](const HostArray& a, const HostArray& e) { return compare_arrays(a, e, tolerance); });
  if (auto problem = same_layout(actual, expected); !problem.empty()) return problem;
  if (dtype_is_complex(expected.dtype)) return compare_complex(actual, expected, tolerance);
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
  if (actual.compound() || expected.compound())
    return compare_parts(actual, expected, [](const HostArray& a, const HostArray& e) { return compare_bitwise(a, e); });
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
