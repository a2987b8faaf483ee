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

// How many times `part` occurs in `text` (plans in explain's output).
inline size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The JSON shape [count, m, n].
inline std::string shape_text(int64_t count, int64_t m, int64_t n) {
  return "[" + std::to_string(count) + ", " + std::to_string(m) + ", " + std::to_string(n) + "]";
}

// The program text D = 0.5 op(A) op(B) - 2 C over `count` products of m x k by k x n (A [count, k, m]
// where trans_a is not "N", B [count, n, k] where trans_b is not "N"), A, B and C random from `seed`,
// every array an output: the product's check against dgemm with alpha 0.5, beta -2.
inline std::string gemm_program(const std::string& dtype, int64_t count, int64_t m, int64_t n, int64_t k, const std::string& trans_a,
                                const std::string& trans_b, uint64_t seed) {
  const std::string a_shape = trans_a != "N" ? shape_text(count, k, m) : shape_text(count, m, k);
  const std::string b_shape = trans_b != "N" ? shape_text(count, n, k) : shape_text(count, k, n);
  auto random = [&](const std::string& shape, uint64_t s, const char* range) {
    return R"({"kind": "array", "dtype": ")" + dtype + R"(", "shape": )" + shape + R"(, "from": {"random": {"seed": )" + std::to_string(s) + range + "}}}";
  };
  return R"({"fugue": 1, "symbols": {"A": )" + random(a_shape, seed, R"(, "low": -1, "high": 1)") + R"(, "B": )" +
         random(b_shape, seed + 1, R"(, "low": -1, "high": 1)") + R"(, "C": )" + random(shape_text(count, m, n), seed + 2, "") + R"(},
    "body": [{"op": "linalg.gemm", "out": ["P"], "in": ["A", "B"], "attrs": {"trans_a": ")" + trans_a + R"(", "trans_b": ")" + trans_b +
         R"(", "alpha": 0.5}},
             {"op": "array.mul", "out": ["E"], "in": ["C", -2]},
             {"op": "array.add", "out": ["D"], "in": ["E", "P"]}],
    "outputs": {"D": "D.npy", "A": "A.npy", "B": "B.npy", "C": "C.npy"}})";
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
