// linalg_checks.h: what the linalg integration tests share: matrices written into a program's JSON
// text, and solutions compared with LAPACK's.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "test_support.h"

namespace fugue::test {

// The JSON text of a [count, m, n] array whose element (e, i, j) is value(e, i, j), every digit kept.
inline std::string matrix_values(int64_t count, int64_t m, int64_t n, const std::function<double(int64_t, int64_t, int64_t)>& value) {
  std::string text = "[";
  char buf[32];
  for (int64_t e = 0; e < count; ++e) {
    text += e ? ", [" : "[";
    for (int64_t i = 0; i < m; ++i) {
      text += i ? ", [" : "[";
      for (int64_t j = 0; j < n; ++j) {
        std::snprintf(buf, sizeof buf, "%.17g", value(e, i, j));
        text += (j ? ", " : "") + std::string(buf);
      }
      text += "]";
    }
    text += "]";
  }
  return text + "]";
}

// max_i |x[offset + i] - want[i]| / max_i |want[i]|: a solution against LAPACK's, relative to its size.
inline double relative_difference(const HostArray& x, int64_t offset, const std::vector<double>& want) {
  double scale = 0, diff = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    diff = std::max(diff, std::fabs(x.get(offset + static_cast<int64_t>(i)) - want[i]));
  }
  return diff / scale;
}

}  // namespace fugue::test
