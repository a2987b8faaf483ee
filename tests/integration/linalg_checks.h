// linalg_checks.h: what the linalg integration tests share: matrices written into a program's JSON
// text, solutions compared with LAPACK's, products with BLAS's, and FUGUE_LINALG_TUNING for a scope.
#pragma once
#include <cblas.h>
#include <stdlib.h>

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

// FUGUE_LINALG_TUNING set for the scope.
class LinalgTuning {
 public:
  explicit LinalgTuning(const char* value) { setenv("FUGUE_LINALG_TUNING", value, 1); }
  ~LinalgTuning() { unsetenv("FUGUE_LINALG_TUNING"); }
};

// The JSON shape [count, m, n].
inline std::string shape_text(int64_t count, int64_t m, int64_t n) {
  return "[" + std::to_string(count) + ", " + std::to_string(m) + ", " + std::to_string(n) + "]";
}

// max |D - (alpha op(A) op(B) + beta C)| over `count` products, the right side from BLAS's dgemm: A, B,
// C and D as a run wrote them (row-major, A [k, m] where ta, B [n, k] where tb).
inline double gemm_error_against_blas(const HostArray& a, const HostArray& b, const HostArray& c, const HostArray& d, int64_t count, int64_t m,
                                      int64_t n, int64_t k, bool ta, bool tb, double alpha, double beta) {
  double worst = 0;
  for (int64_t e = 0; e < count; ++e) {
    std::vector<double> av(static_cast<size_t>(m * k)), bv(static_cast<size_t>(k * n)), cv(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m * k; ++i) av[i] = a.get(e * m * k + i);
    for (int64_t i = 0; i < k * n; ++i) bv[i] = b.get(e * k * n + i);
    for (int64_t i = 0; i < m * n; ++i) cv[i] = c.get(e * m * n + i);
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), alpha, av.data(), static_cast<int>(ta ? m : k), bv.data(), static_cast<int>(tb ? k : n), beta, cv.data(),
                static_cast<int>(n));
    for (int64_t i = 0; i < m * n; ++i) worst = std::max(worst, std::fabs(d.get(e * m * n + i) - cv[i]));
  }
  return worst;
}

}  // namespace fugue::test
