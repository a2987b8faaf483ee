// The linalg operations on complex matrices (c64, c128) against BLAS and LAPACK (CBLAS's zgemm, LAPACKE's
// zgesv, zpotrf, zposv, the independent oracles): products with every transpose and conjugate transpose,
// Gauss-Jordan solves with and without pivoting (Hermitian positive definite systems from the spd
// generator for the latter), Cholesky factors and solves, in every plan: registers, rows, teams in local
// memory, the core's workspace.
#include <gtest/gtest.h>
#include <cblas.h>
#include <lapacke.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <iterator>
#include <tuple>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

using Z = std::complex<double>;

std::string shape(int64_t count, int64_t m, int64_t n) {
  return "[" + std::to_string(count) + ", " + std::to_string(m) + ", " + std::to_string(n) + "]";
}

std::vector<Z> matrix(const HostArray& h, int64_t e, int64_t elements) {
  std::vector<Z> out(static_cast<size_t>(elements));
  for (int64_t i = 0; i < elements; ++i) out[i] = h.get_complex(e * elements + i);
  return out;
}

double eps_of(const char* dtype) {
  return std::string(dtype) == "c64" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

}  // namespace

// |C - zgemm's| below 8 k eps max|A| max|B| (inputs in the unit square).
TEST(Linalg, ComplexGemmMatchesBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> sizes = {{1, 1, 1}, {3, 4, 2}, {8, 8, 8}, {17, 13, 5}, {40, 70, 33}};
  // Six of the nine transpose pairs, each size with half of them (alternating with the size and dtype), so
  // that every op of A and of B meets every size class across the two dtypes.
  const std::vector<std::pair<const char*, const char*>> pairs = {{"N", "N"}, {"T", "C"}, {"C", "T"}, {"C", "N"}, {"N", "C"}, {"T", "T"}};
  for (const char* dtype : {"c128", "c64"})
    for (size_t size = 0; size < sizes.size(); ++size)
      for (size_t pair = 0; pair < pairs.size(); ++pair) {
        if ((pair + size + (std::string(dtype) == "c64")) % 2) continue;
        const auto& [m, n, k] = sizes[size];
        const char *ta = pairs[pair].first, *tb = pairs[pair].second;
          const bool a_t = std::string(ta) != "N", b_t = std::string(tb) != "N";
          const int64_t count = m <= 8 ? 50 : 3;
          const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                                   " " + ta + tb + " (seed " + std::to_string(seed) + ")";
          Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
            "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + (a_t ? shape(count, k, m) : shape(count, m, k)) +
                                                     R"(, "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -1, "high": 1}}},
            "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + (b_t ? shape(count, n, k) : shape(count, k, n)) +
                                                     R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
            "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"], "attrs": {"trans_a": ")" + ta + R"(", "trans_b": ")" + tb +
                                                     R"(", "alpha": -0.5}}],
            "outputs": {"C": "C.npy", "A": "A.npy", "B": "B.npy"}})");
          auto out = test::run_on_device(program);
          double worst = 0;
          for (int64_t e = 0; e < count; ++e) {
            const std::vector<Z> a = matrix(out.at("A"), e, m * k), b = matrix(out.at("B"), e, k * n), c = matrix(out.at("C"), e, m * n);
            std::vector<Z> want(static_cast<size_t>(m * n));
            const Z alpha(-0.5), beta(0);
            auto op = [](const char* t) { return std::string(t) == "N" ? CblasNoTrans : std::string(t) == "T" ? CblasTrans : CblasConjTrans; };
            cblas_zgemm(CblasRowMajor, op(ta), op(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &alpha, a.data(),
                        static_cast<int>(a_t ? m : k), b.data(), static_cast<int>(b_t ? k : n), &beta, want.data(), static_cast<int>(n));
            for (int64_t i = 0; i < m * n; ++i) worst = std::max(worst, std::abs(c[i] - want[i]));
          }
          EXPECT_LT(worst, 8.0 * k * eps_of(dtype)) << "against CBLAS's zgemm, " << what;
        }
}

// gesv on random complex systems and gesv_nopiv on Hermitian positive definite ones beside LAPACK's
// zgesv: relative to the largest element of LAPACK's solution, below 10 n eps cond(A) (cond from zgesdd's
// singular values); 450 x 450 puts A in the core's workspace on PoCL.
TEST(Linalg, ComplexGesvMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1}, {2, 2}, {3, 4}, {5, 3}, {9, 1}, {18, 16}, {33, 2}, {100, 3}, {450, 1}};
  for (const char* tuning : {"", "loop_order=0"})  // the GPUs' rows at 9
  for (const char* op : {"linalg.gesv", "linalg.gesv_nopiv"})
    for (const char* dtype : {"c128", "c64"})
      for (const auto& [n, k] : sizes) {
        if (*tuning && n != 9) continue;
        test::LinalgTuning scope(tuning);
        const bool pivoting = std::string(op) == "linalg.gesv";
        const int64_t count = n <= 18 ? 100 : n <= 100 ? 5 : 1;
        const std::string what = std::string(op) + " " + dtype + " n=" + std::to_string(n) + ", k=" + std::to_string(k) + " (seed " +
                                 std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
        const std::string a_from = pivoting ? R"({"random": {"seed": )" + std::to_string(seed + n) + R"(, "low": -1, "high": 1}})"
                                            : R"({"spd": {"seed": )" + std::to_string(seed + n) + R"(, "cond": 100}})";
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, n, n) + R"(, "from": )" + a_from + R"(},
          "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, n, k) +
                                                   R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
          "body": [{"op": ")" + op + R"(", "out": ["X", "info"], "in": ["A", "B"]}],
          "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
        auto out = test::run_on_device(program);
        double worst = 0;
        for (int64_t e = 0; e < count; ++e) {
          EXPECT_EQ(out.at("info").get(e), 0) << what << ", matrix " << e;
          std::vector<Z> a = matrix(out.at("A"), e, n * n), b = matrix(out.at("B"), e, n * k), copy = a;
          const std::vector<Z> x = matrix(out.at("X"), e, n * k);
          std::vector<double> sv(static_cast<size_t>(n));
          std::vector<lapack_int> ipiv(static_cast<size_t>(n));
          ASSERT_EQ(LAPACKE_zgesdd(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(n), static_cast<lapack_int>(n),
                                   reinterpret_cast<lapack_complex_double*>(copy.data()), static_cast<lapack_int>(n), sv.data(), nullptr,
                                   static_cast<lapack_int>(n), nullptr, static_cast<lapack_int>(n)),
                    0);
          ASSERT_EQ(LAPACKE_zgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k),
                                  reinterpret_cast<lapack_complex_double*>(a.data()), static_cast<lapack_int>(n), ipiv.data(),
                                  reinterpret_cast<lapack_complex_double*>(b.data()), static_cast<lapack_int>(k)),
                    0);
          double scale = 0, diff = 0;
          for (int64_t i = 0; i < n * k; ++i) {
            scale = std::max(scale, std::abs(b[i]));
            diff = std::max(diff, std::abs(x[i] - b[i]));
          }
          worst = std::max(worst, diff / (scale * eps_of(dtype) * sv.front() / sv.back()));
        }
        EXPECT_LT(worst, 10.0 * n) << "against LAPACK's zgesv, " << what;
      }
}

// potrf and posv on Hermitian positive definite matrices beside LAPACK's zpotrf and zposv, lower and
// upper, in every plan (registers up to 8, rows up to 16, teams above; then potrf blocked in panels of 8
// from order 9): the factor within 100 n eps of LAPACK's (cond 100), ||A - L L^H|| / (n eps ||A||) below
// 4, and X within 50 n eps cond of zposv's.
TEST(Linalg, ComplexCholeskyMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* tuning : {"", "blocked_order=8,blocked_panel=8", "loop_order=0"})
  for (const char* dtype : {"c128", "c64"})
    for (const int64_t n : {1, 3, 8, 12, 33, 70})
      for (const bool lower : {true, false}) {
        const bool rows = std::string(tuning) == "loop_order=0";  // the GPUs' rows plans (potrf's and posv's), 12 only
        if (rows && n != 12) continue;
        if (!rows && !lower && n % 2 == 0 && n != 8) continue;  // upper on the odd sizes and 8: every plan meets both
        if (*tuning && n <= 8) continue;               // registers: the same plan
        // The table's plans take the orders 1, 8 and 33 in c128 and 3, 12 and 70 in c64 (half the builds,
        // which are the suite's time on PoCL); the blocked plan takes both.
        if (!*tuning && (n == 1 || n == 8 || n == 33) != (std::string(dtype) == "c128")) continue;
        test::LinalgTuning scope(tuning);
        const int64_t count = n <= 16 ? 100 : 5, k = 2;
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + (lower ? " lower" : " upper") + " (seed " +
                                 std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
        const std::string flag = lower ? "true" : "false";
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, n, n) +
                                                   R"(, "from": {"spd": {"seed": )" + std::to_string(seed + n) + R"(, "cond": 100}}},
          "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, n, k) +
                                                   R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
          "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": )" + flag + R"(}},
                   {"op": "linalg.posv", "out": ["X", "xinfo"], "in": ["A", "B"], "attrs": {"lower": )" + flag + R"(}}],
          "outputs": {"L": "L.npy", "info": "info.npy", "X": "X.npy", "xinfo": "xinfo.npy", "A": "A.npy", "B": "B.npy"}})");
        auto out = test::run_on_device(program);
        const double eps = eps_of(dtype);
        double worst_factor = 0, worst_backward = 0, worst_x = 0;
        for (int64_t e = 0; e < count; ++e) {
          EXPECT_EQ(out.at("info").get(e), 0) << what << ", matrix " << e;
          EXPECT_EQ(out.at("xinfo").get(e), 0) << what << ", matrix " << e;
          const std::vector<Z> a = matrix(out.at("A"), e, n * n), l = matrix(out.at("L"), e, n * n), x = matrix(out.at("X"), e, n * k);
          std::vector<Z> f = a, af = a, bf = matrix(out.at("B"), e, n * k);
          ASSERT_EQ(LAPACKE_zpotrf(LAPACK_ROW_MAJOR, lower ? 'L' : 'U', static_cast<lapack_int>(n),
                                   reinterpret_cast<lapack_complex_double*>(f.data()), static_cast<lapack_int>(n)),
                    0);
          double residual = 0, norm = 0;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
              const bool in_triangle = lower ? j <= i : j >= i;
              worst_factor = std::max(worst_factor, std::abs(l[i * n + j] - (in_triangle ? f[i * n + j] : Z(0))));
              Z product = 0;  // (L L^H)(i, j), or (U^H U)(i, j)
              for (int64_t s = 0; s < n; ++s)
                product += lower ? l[i * n + s] * std::conj(l[j * n + s]) : std::conj(l[s * n + i]) * l[s * n + j];
              residual += std::norm(a[i * n + j] - product);
              norm += std::norm(a[i * n + j]);
            }
          worst_backward = std::max(worst_backward, std::sqrt(residual) / (static_cast<double>(n) * eps * std::sqrt(norm)));
          ASSERT_EQ(LAPACKE_zposv(LAPACK_ROW_MAJOR, lower ? 'L' : 'U', static_cast<lapack_int>(n), static_cast<lapack_int>(k),
                                  reinterpret_cast<lapack_complex_double*>(af.data()), static_cast<lapack_int>(n),
                                  reinterpret_cast<lapack_complex_double*>(bf.data()), static_cast<lapack_int>(k)),
                    0);
          double scale = 0, diff = 0;
          for (int64_t i = 0; i < n * k; ++i) {
            scale = std::max(scale, std::abs(bf[i]));
            diff = std::max(diff, std::abs(x[i] - bf[i]));
          }
          worst_x = std::max(worst_x, diff / scale);
        }
        EXPECT_LT(worst_factor, 100.0 * n * eps) << "the factor against LAPACK's zpotrf, " << what;
        EXPECT_LT(worst_backward, 4.0) << "||A - L L^H||, " << what;
        EXPECT_LT(worst_x, 50.0 * n * eps * 100) << "X against LAPACK's zposv, " << what;
      }
}

// getrf then getrs (one kernel) on complex systems G = A + M (A Hermitian positive definite of cond 100,
// M's parts within 0.1), in every plan and with trans N, T and C: the pivots equal zgetrf's (c128; in
// c64 two candidates within its rounding may swap places now and then), ||P G - L U||_F / (k eps ||G||_F)
// below 4, info 0, and X within 1000 n eps cond of LAPACK's zgesv on op(G) (cond(G) up to ten times A's);
// then getrf blocked in panels of 8 from order 9.
TEST(Linalg, ComplexLuMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::tuple<int64_t, int64_t, const char*>> cases = {{1, 1, "N"},  {3, 2, "C"},  {8, 3, "T"},  {12, 1, "C"},
                                                                        {16, 2, "N"}, {33, 3, "C"}, {40, 1, "T"}, {70, 2, "C"}};
  for (const char* tuning : {"", "lu_blocked_order=8,blocked_panel=8"})
  for (const char* dtype : {"c128", "c64"})
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto& [n, k, trans] = cases[i];
      if (*tuning && (n <= 8 || n == 16 || n == 40)) continue;  // registers: the same plan; blocked: 12, 33 and 70 are enough
      // The table's plans take each case in one dtype, c128 and c64 by turns (half the builds, which are
      // the suite's time on PoCL); the blocked plan takes both.
      if (!*tuning && (i + (std::string(dtype) == "c64" ? 1 : 0)) % 2) continue;
      test::LinalgTuning scope(tuning);
      const int64_t count = n <= 16 ? 60 : 4;
      const std::string what = std::string(dtype) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " trans " + trans + " (seed " +
                               std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      const std::string d = std::string(R"("dtype": ")") + dtype + R"(", )";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", )" + d + R"("shape": )" + shape(count, n, n) + R"(, "from": {"spd": {"seed": )" + std::to_string(seed + n) + R"(, "cond": 100}}},
        "M": {"kind": "array", )" + d + R"("shape": )" + shape(count, n, n) + R"(, "from": {"random": {"seed": )" + std::to_string(seed + 7) + R"(, "low": -0.1, "high": 0.1}}},
        "B": {"kind": "array", )" + d + R"("shape": )" + shape(count, n, k) + R"(, "from": {"random": {"seed": )" + std::to_string(seed + k) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "array.add", "out": ["G"], "in": ["A", "M"]},
                 {"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["G"]},
                 {"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"], "attrs": {"trans": ")" + trans + R"("}}],
        "outputs": {"G": "G.npy", "B": "B.npy", "LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "X": "X.npy"}})");
      int64_t launches = 0;
      auto out = test::run_on_device(program, std::nullopt, {}, &launches);
      if (*tuning) EXPECT_EQ(launches, 2) << "the producer and getrs, blocked getrf's kernels apart, " << what;
      else EXPECT_EQ(launches, 1) << "getrf, getrs and the producer in one kernel, " << what;
      const double eps = eps_of(dtype);
      double backward = 0, forward = 0;
      int64_t pivots_differ = 0;
      for (int64_t e = 0; e < count; ++e) {
        EXPECT_EQ(out.at("info").get(e), 0) << what << ", matrix " << e;
        const std::vector<Z> g = matrix(out.at("G"), e, n * n), lu = matrix(out.at("LU"), e, n * n), b = matrix(out.at("B"), e, n * k),
                             x = matrix(out.at("X"), e, n * k);
        // P G - L U, P G rebuilt from the pivots.
        std::vector<Z> pg = g;
        for (int64_t s = 0; s < n; ++s) {
          const int64_t p = static_cast<int64_t>(out.at("ipiv").get(e * n + s)) - 1;
          ASSERT_TRUE(p >= s && p < n) << what << ", pivot " << s;
          for (int64_t j = 0; j < n; ++j) std::swap(pg[s * n + j], pg[p * n + j]);
        }
        double residual = 0, norm = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            Z product = 0;
            for (int64_t t = 0; t <= std::min(i, j); ++t) product += (t == i ? Z(1) : lu[i * n + t]) * lu[t * n + j];
            residual += std::norm(pg[i * n + j] - product);
            norm += std::norm(pg[i * n + j]);
          }
        backward = std::max(backward, std::sqrt(residual / norm) / (n * eps));
        // LAPACK's pivots and solution of op(G) X = B.
        std::vector<Z> f = g, y = b, h(static_cast<size_t>(n * n));
        std::vector<lapack_int> ipiv(static_cast<size_t>(n));
        ASSERT_EQ(LAPACKE_zgetrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(n), reinterpret_cast<lapack_complex_double*>(f.data()),
                                 static_cast<lapack_int>(n), ipiv.data()),
                  0);
        bool same = true;
        for (int64_t s = 0; s < n; ++s) same = same && out.at("ipiv").get(e * n + s) == ipiv[s];
        pivots_differ += !same;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            h[i * n + j] = trans[0] == 'N' ? g[i * n + j] : trans[0] == 'T' ? g[j * n + i] : std::conj(g[j * n + i]);
        ASSERT_EQ(LAPACKE_zgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k), reinterpret_cast<lapack_complex_double*>(h.data()),
                                static_cast<lapack_int>(n), ipiv.data(), reinterpret_cast<lapack_complex_double*>(y.data()), static_cast<lapack_int>(k)),
                  0);
        for (int64_t i = 0; i < n * k; ++i) forward = std::max(forward, std::abs(x[i] - y[i]) / (1 + std::abs(y[i])));
      }
      EXPECT_LT(backward, 4.0) << "||P G - L U||_F / (n eps ||G||_F), " << what;
      if (std::string(dtype) == "c64") EXPECT_LE(pivots_differ, count / 10 + 1) << "pivots unlike zgetrf's, " << what;
      else EXPECT_EQ(pivots_differ, 0) << "pivots unlike zgetrf's, " << what;
      EXPECT_LT(forward, 1000.0 * n * eps * 10) << "X against LAPACK's zgesv, " << what;
    }
}

// gemv with trans N, T and C, one work-item and teams: |y - zgemv's| below 8 n eps (inputs in the unit
// square, alpha -2).
TEST(Linalg, ComplexGemvMatchesBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::tuple<int64_t, int64_t, const char*>> cases = {{3, 5, "N"}, {6, 4, "C"}, {20, 7, "T"}, {70, 33, "C"}, {40, 50, "N"}};
  for (const char* dtype : {"c128", "c64"})
    for (const auto& [m, n, trans] : cases) {
      const bool t = trans[0] != 'N';
      const int64_t count = 12, len_x = t ? m : n, len_y = t ? n : m;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " trans " + trans + " (seed " + std::to_string(seed) + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, m, n) + R"(, "from": {"random": {"seed": )" +
                                                 std::to_string(seed) + R"(, "low": -1, "high": 1}}},
        "x": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [12, )" + std::to_string(len_x) + R"(], "from": {"random": {"seed": )" +
                                                 std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.gemv", "out": ["y"], "in": ["A", "x"], "attrs": {"trans": ")" + trans + R"(", "alpha": -2}}],
        "outputs": {"A": "A.npy", "x": "x.npy", "y": "y.npy"}})");
      auto out = test::run_on_device(program);
      double worst = 0;
      for (int64_t e = 0; e < count; ++e) {
        const std::vector<Z> a = matrix(out.at("A"), e, m * n), x = matrix(out.at("x"), e, len_x), y = matrix(out.at("y"), e, len_y);
        std::vector<Z> want(static_cast<size_t>(len_y));
        const Z alpha(-2), beta(0);
        cblas_zgemv(CblasRowMajor, trans[0] == 'N' ? CblasNoTrans : trans[0] == 'T' ? CblasTrans : CblasConjTrans, static_cast<int>(m),
                    static_cast<int>(n), &alpha, a.data(), static_cast<int>(n), x.data(), 1, &beta, want.data(), 1);
        for (int64_t i = 0; i < len_y; ++i) worst = std::max(worst, std::abs(y[i] - want[i]));
      }
      EXPECT_LT(worst, 8.0 * std::max(m, n) * eps_of(dtype)) << "against CBLAS's zgemv, " << what;
    }
}

// geqrf then orgqr (one kernel) on complex random matrices in every plan, square and tall, and gels
// beside LAPACK's zgeqrf and zgels, by quantities that are well conditioned (each below 10):
// - ||A - Q R||_F / (m eps ||A||_F) and ||Q^H Q - I||_F / (m eps);
// - the first step, which depends on A's first column alone, as zgeqrf's (the same reflectors: a real
//   diagonal -sign(re alpha) norm): QR's column 0 and tau[0], over m eps;
// - X optimal: ||A^H (B - A X)||_F / (m eps ||A||_F (||A||_F ||X||_F + ||B||_F));
// - the least residual as zgels's: | ||B - A X|| - ||B - A X_lapack|| | / (m eps (||A||_F ||X||_F + ||B||_F)).
TEST(Linalg, ComplexQrMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::tuple<int64_t, int64_t, int64_t>> cases = {{1, 1, 1}, {3, 2, 1}, {6, 6, 2}, {8, 5, 1}, {12, 12, 1}, {20, 7, 2}, {40, 33, 1}, {70, 40, 2}};
  // Each plan takes each case in one dtype, c128 and c64 by turns, and the blocked plan the other way
  // round: every case meets both at half the builds (PoCL's builds are the suite's time).
  // The third: a column per work-item in registers (GPUs' plan from order 9 to their row order).
  const char* const tunings[] = {"", "qr_blocked_order=8,blocked_panel=8", "loop_order=0,qr_column_order=64"};
  for (size_t p = 0; p < std::size(tunings); ++p)
  for (const char* dtype : {"c128", "c64"})
    for (size_t i = 0; i < cases.size(); ++i) {
      if ((p + i + (std::string(dtype) == "c64" ? 1 : 0)) % 2) continue;
      const char* tuning = tunings[p];
      const auto& [m, n, k] = cases[i];
      if (p == 2 && (std::max(m, n + k) <= 8 || std::max(m, n + k) > 32)) continue;  // complex values: columns up to half of 64
      test::LinalgTuning scope(tuning);
      const int64_t count = m <= 16 ? 40 : 4;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " + std::to_string(seed) +
                               ", FUGUE_LINALG_TUNING=" + tuning + ")";
      const std::string d = std::string(R"("dtype": ")") + dtype + R"(", )";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", )" + d + R"("shape": )" + shape(count, m, n) + R"(, "from": {"random": {"seed": )" + std::to_string(seed + m) + R"(, "low": -1, "high": 1}}},
        "B": {"kind": "array", )" + d + R"("shape": )" + shape(count, m, k) + R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]},
                 {"op": "linalg.orgqr", "out": ["Q"], "in": ["QR", "tau"]},
                 {"op": "linalg.gels", "out": ["X", "info"], "in": ["A", "B"]}],
        "outputs": {"A": "A.npy", "B": "B.npy", "QR": "QR.npy", "tau": "tau.npy", "Q": "Q.npy", "X": "X.npy", "info": "info.npy"}})");
      auto out = test::run_on_device(program);
      const double eps = eps_of(dtype);
      double backward = 0, orthogonality = 0, first = 0, optimality = 0, least = 0;
      auto frobenius = [](const std::vector<Z>& v) {
        double sum = 0;
        for (const Z& z : v) sum += std::norm(z);
        return std::sqrt(sum);
      };
      // B - A X.
      auto residual_of = [&](const std::vector<Z>& a, const std::vector<Z>& b, const std::vector<Z>& x) {
        std::vector<Z> r = b;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t c = 0; c < k; ++c)
            for (int64_t j = 0; j < n; ++j) r[i * k + c] -= a[i * n + j] * x[j * k + c];
        return r;
      };
      for (int64_t e = 0; e < count; ++e) {
        const std::vector<Z> a = matrix(out.at("A"), e, m * n), qr = matrix(out.at("QR"), e, m * n), q = matrix(out.at("Q"), e, m * n),
                             tau = matrix(out.at("tau"), e, n), b = matrix(out.at("B"), e, m * k), x = matrix(out.at("X"), e, n * k);
        EXPECT_EQ(out.at("info").get(e), 0) << what << ", matrix " << e;
        double residual = 0, qq = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            Z product = 0;  // (Q R)(i, j)
            for (int64_t s = 0; s <= j; ++s) product += q[i * n + s] * qr[s * n + j];
            residual += std::norm(a[i * n + j] - product);
          }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            Z product = 0;  // (Q^H Q)(i, j)
            for (int64_t s = 0; s < m; ++s) product += std::conj(q[s * n + i]) * q[s * n + j];
            qq += std::norm(product - Z(i == j ? 1 : 0));
          }
        const double norm_a = frobenius(a);
        backward = std::max(backward, std::sqrt(residual) / (m * eps * norm_a));
        orthogonality = std::max(orthogonality, std::sqrt(qq) / (m * eps));
        std::vector<Z> f = a, t(static_cast<size_t>(n));
        ASSERT_EQ(LAPACKE_zgeqrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), reinterpret_cast<lapack_complex_double*>(f.data()),
                                 static_cast<lapack_int>(n), reinterpret_cast<lapack_complex_double*>(t.data())),
                  0);
        for (int64_t i = 0; i < m; ++i) first = std::max(first, std::abs(qr[i * n] - f[i * n]) / (m * eps * (i ? 1 : std::abs(f[0]))));
        first = std::max(first, std::abs(tau[0] - t[0]) / (m * eps));
        // gels: optimality of X, and its residual against LAPACK's.
        const std::vector<Z> r = residual_of(a, b, x);
        std::vector<Z> ahr(static_cast<size_t>(n * k), Z(0));
        for (int64_t j = 0; j < n; ++j)
          for (int64_t c = 0; c < k; ++c)
            for (int64_t i = 0; i < m; ++i) ahr[j * k + c] += std::conj(a[i * n + j]) * r[i * k + c];
        const double scale = m * eps * (norm_a * frobenius(x) + frobenius(b));
        optimality = std::max(optimality, frobenius(ahr) / (norm_a * scale));
        std::vector<Z> g = a, y = b;
        ASSERT_EQ(LAPACKE_zgels(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(m), static_cast<lapack_int>(n), static_cast<lapack_int>(k),
                                reinterpret_cast<lapack_complex_double*>(g.data()), static_cast<lapack_int>(n),
                                reinterpret_cast<lapack_complex_double*>(y.data()), static_cast<lapack_int>(k)),
                  0);
        y.resize(static_cast<size_t>(n * k));  // X is y's first n rows
        least = std::max(least, std::fabs(frobenius(r) - frobenius(residual_of(a, b, y))) / scale);
      }
      EXPECT_LT(backward, 10.0) << "||A - Q R||_F / (m eps ||A||_F), " << what;
      EXPECT_LT(orthogonality, 10.0) << "||Q^H Q - I||_F / (m eps), " << what;
      EXPECT_LT(first, 10.0) << "the first step against zgeqrf's, " << what;
      EXPECT_LT(optimality, 10.0) << "||A^H (B - A X)||, " << what;
      EXPECT_LT(least, 10.0) << "the least residual against zgels's, " << what;
      std::printf("%s: backward %.2f, orthogonality %.2f, first step %.2f, optimality %.2f, least residual %.2f\n", what.c_str(), backward, orthogonality,
                  first, optimality, least);
    }
}

// gebrd on complex random matrices beside LAPACK's zgebrd, by quantities that are well conditioned (each
// below 10): ||A - Q B P^H||_F / (max(m, n) eps ||A||_F) with Q = H_0 ... H_n-1 (H_i = I - tauq_i v v^H,
// v below QP's diagonal) and P = G_0 ... G_n-2 (G_i = I - taup_i u u^H, u the conjugate of QP's row i
// right of the superdiagonal, as zgebrd stores it); ||Q^H Q - I||, ||P^H P - I|| over m eps; B's singular
// values (dbdsqr on the real d, e) against A's (zgesdd); step 0 (d, e, tauq, taup and row 0's stored
// reflector, which depend on A alone) as zgebrd's.
TEST(Linalg, ComplexGebrdMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{2, 2}, {3, 2}, {8, 8}, {12, 5}, {20, 20}, {40, 33}};
  for (const char* dtype : {"c128", "c64"})
    for (const auto& [m, n] : shapes) {
      const int64_t count = m <= 16 ? 30 : 4;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape(count, m, n) + R"(, "from": {"random": {"seed": )" +
                                                 std::to_string(seed + m * 100 + n) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.gebrd", "out": ["QP", "d", "e", "tauq", "taup"], "in": ["A"]}],
        "outputs": {"QP": "QP.npy", "d": "d.npy", "e": "e.npy", "tauq": "tauq.npy", "taup": "taup.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      EXPECT_EQ(out.at("d").dtype, std::string(dtype) == "c64" ? DType::F32 : DType::F64) << "d is real, " << what;
      const double eps = eps_of(dtype);
      double backward = 0, orthogonality = 0, singular = 0, first = 0;
      for (int64_t b = 0; b < count; ++b) {
        const std::vector<Z> a = matrix(out.at("A"), b, m * n), qp = matrix(out.at("QP"), b, m * n), tq = matrix(out.at("tauq"), b, n),
                             tp = matrix(out.at("taup"), b, n);
        std::vector<double> d(static_cast<size_t>(n)), e(static_cast<size_t>(n - 1));
        for (int64_t i = 0; i < n; ++i) d[i] = out.at("d").get(b * n + i);
        for (int64_t i = 0; i + 1 < n; ++i) e[i] = out.at("e").get(b * (n - 1) + i);
        // Q's first n columns and P, each reflector applied to the identity's columns, the last first.
        std::vector<Z> q(static_cast<size_t>(m * n), Z(0)), p(static_cast<size_t>(n * n), Z(0));
        for (int64_t i = 0; i < n; ++i) q[i * n + i] = p[i * n + i] = 1;
        for (int64_t k = n - 1; k >= 0; --k)
          for (int64_t c = 0; c < n; ++c) {
            Z dot = q[k * n + c];
            for (int64_t r = k + 1; r < m; ++r) dot += std::conj(qp[r * n + k]) * q[r * n + c];
            dot *= tq[k];
            q[k * n + c] -= dot;
            for (int64_t r = k + 1; r < m; ++r) q[r * n + c] -= dot * qp[r * n + k];
          }
        for (int64_t k = n - 2; k >= 0; --k)
          for (int64_t c = 0; c < n; ++c) {  // u = (0 .. 0, 1, conj(QP(k, k + 2 ..)))
            Z dot = p[(k + 1) * n + c];
            for (int64_t r = k + 2; r < n; ++r) dot += qp[k * n + r] * p[r * n + c];  // u^H p: conj(conj(stored))
            dot *= tp[k];
            p[(k + 1) * n + c] -= dot;
            for (int64_t r = k + 2; r < n; ++r) p[r * n + c] -= dot * std::conj(qp[k * n + r]);
          }
        double residual = 0, norm = 0, qq = 0, pp = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {  // (Q B P^H)(i, j) = sum_k Q(i, k) (d_k conj(P(j, k)) + e_k conj(P(j, k + 1)))
            Z sum = 0;
            for (int64_t k = 0; k < n; ++k)
              sum += q[i * n + k] * (d[k] * std::conj(p[j * n + k]) + (k + 1 < n ? e[k] * std::conj(p[j * n + k + 1]) : Z(0)));
            residual += std::norm(a[i * n + j] - sum);
            norm += std::norm(a[i * n + j]);
          }
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            Z sq = 0, sp = 0;
            for (int64_t r = 0; r < m; ++r) sq += std::conj(q[r * n + i]) * q[r * n + j];
            for (int64_t r = 0; r < n; ++r) sp += std::conj(p[r * n + i]) * p[r * n + j];
            qq += std::norm(sq - Z(i == j ? 1 : 0));
            pp += std::norm(sp - Z(i == j ? 1 : 0));
          }
        backward = std::max(backward, std::sqrt(residual / norm) / (std::max(m, n) * eps));
        orthogonality = std::max({orthogonality, std::sqrt(qq) / (m * eps), std::sqrt(pp) / (n * eps)});
        std::vector<double> sb = d, eb = e, sa(static_cast<size_t>(n));
        std::vector<Z> copy = a;
        ASSERT_EQ(LAPACKE_dbdsqr(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), 0, 0, 0, sb.data(), eb.data(), nullptr, 1, nullptr, 1, nullptr, 1), 0);
        ASSERT_EQ(LAPACKE_zgesdd(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(m), static_cast<lapack_int>(n), reinterpret_cast<lapack_complex_double*>(copy.data()),
                                 static_cast<lapack_int>(n), sa.data(), nullptr, static_cast<lapack_int>(m), nullptr, static_cast<lapack_int>(n)),
                  0);
        for (int64_t i = 0; i < n; ++i) singular = std::max(singular, std::fabs(sb[i] - sa[i]) / (std::max(m, n) * eps * std::sqrt(norm)));
        std::vector<Z> f = a, tq_l(static_cast<size_t>(n)), tp_l(static_cast<size_t>(n));
        std::vector<double> ld(static_cast<size_t>(n)), le(static_cast<size_t>(n));
        ASSERT_EQ(LAPACKE_zgebrd(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), reinterpret_cast<lapack_complex_double*>(f.data()),
                                 static_cast<lapack_int>(n), ld.data(), le.data(), reinterpret_cast<lapack_complex_double*>(tq_l.data()),
                                 reinterpret_cast<lapack_complex_double*>(tp_l.data())),
                  0);
        first = std::max({first, std::fabs(d[0] - ld[0]) / (m * eps * std::fabs(ld[0])), std::abs(tq[0] - tq_l[0]) / (m * eps)});
        // Step 0's G depends on A and H_0 alone: e[0], taup[0] and row 0's stored reflector as zgebrd's.
        // taup[0] = (beta - alpha) / beta of row 0 after H_0, whose elements carry errors of about eps
        // ||A||: its error grows as ||A|| / |beta| = ||A|| / |e[0]| (c64 2 x 2, e[0] = 0.041, ||A|| = 1.8:
        // 12.8 m eps).
        const double taup_scale = std::max(1.0, std::sqrt(norm) / std::max(std::fabs(le[0]), 1e-300));
        first = std::max({first, std::fabs(e[0] - le[0]) / (m * eps * std::sqrt(norm)), std::abs(tp[0] - tp_l[0]) / (m * eps * taup_scale)});
        for (int64_t j = 2; j < n; ++j) first = std::max(first, std::abs(qp[j] - f[j]) / (m * eps));
      }
      EXPECT_LT(backward, 10) << "||A - Q B P^H||_F / (max(m, n) eps ||A||_F), " << what;
      EXPECT_LT(orthogonality, 10) << "||Q^H Q - I||, ||P^H P - I||, " << what;
      EXPECT_LT(singular, 10) << "B's singular values against A's (LAPACK), " << what;
      EXPECT_LT(first, 10) << "d[0] and tauq[0] against zgebrd's, " << what;
      std::printf("%s: backward %.2f, orthogonality %.2f, singular values %.2f, first step %.2f\n", what.c_str(), backward, orthogonality, singular, first);
    }
}
