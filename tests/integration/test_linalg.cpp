// The linalg plugin against LAPACK (LAPACKE, the independent oracle) and its own reference: Cholesky
// factors of batches of every size class (one matrix per work-item in registers or, on CPUs, with loops;
// teams of work-items sharing a matrix in local memory, a work-group per matrix), lower and upper, f32 and f64; backward
// errors under a stated bound; info equal to LAPACK's on matrices that are not positive definite; an
// optional output left out; element-wise producers fused into the factorization's kernel.
#include <gtest/gtest.h>
#include <cblas.h>
#include <lapacke.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <iterator>
#include <tuple>
#include <vector>

#include "io/npy_io.h"
#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

// The device's table (on a CPU the lanes up to order 16, lanes.h, where the factorization runs alone,
// and loops above), then the plans GPUs take (registers up to order 8, rows and teams above: tuning.h's
// loop_plan and lanes_order off), then the blocked plans (blocked_cholesky.h, blocked_lu.h) from order
// 9, panels of 8 columns, so that orders from 9 to 460 take one to 58 panels, the last one narrower where
// 8 does not divide the order: every plan of potrf and getrf checked on a CPU.
const char* const kPlans[] = {"", "loop_order=0,lanes_order=0", "blocked_order=8,lu_blocked_order=8,blocked_panel=8"};

std::string potrf_program(int64_t count, int64_t n, const char* dtype, bool lower, uint64_t seed, double cond) {
  return R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " +
         std::to_string(n) + ", " + std::to_string(n) + R"(], "from": {"spd": {"seed": )" + std::to_string(seed) +
         R"(, "cond": )" + std::to_string(cond) + R"(}}}},
    "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": )" + (lower ? "true" : "false") +
         R"(}}],
    "outputs": {"L": "L.npy", "info": "info.npy", "A": "A.npy"}})";
}

// LAPACK's factor of matrix m of `a` (double precision), its other triangle zeroed, and its info.
std::vector<double> lapack_factor(const HostArray& a, int64_t m, int64_t n, bool lower, int* info) {
  std::vector<double> f(static_cast<size_t>(n * n));
  for (int64_t e = 0; e < n * n; ++e) f[e] = a.get(m * n * n + e);
  *info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, lower ? 'L' : 'U', static_cast<lapack_int>(n), f.data(), static_cast<lapack_int>(n));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c)
      if (lower ? c > r : c < r) f[r * n + c] = 0;
  return f;
}

}  // namespace

// Backward error ||A - L L^T||_F / (n eps ||A||_F) below 4 (f64: the factor in double; f32: in float),
// and the factor within a bound of LAPACK's, for sizes in every plan.
TEST(Linalg, PotrfMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // The device's table (on a CPU, loops above order 8), then the plans GPUs take (rows and teams), then blocked.
  // Each plan, dtype and order takes one triangle, alternating along the orders and between the dtypes, so
  // that every plan meets both triangles in both dtypes at half the builds (PoCL's builds are the suite's time).
  int64_t turn = 0;  // (order, triangle) pairs so far: the even orders' lower, the odd ones' upper (13 orders: the dtypes start apart)
  for (const char* tuning : kPlans)
  for (const char* dtype : {"f64", "f32"})
    // 460: over three quarters of PoCL's local memory (f64), so the team factors in the result's own storage, and
    // over the largest team, so each work-item owns two columns.
    for (const int64_t n : {1, 2, 3, 7, 8, 9, 16, 31, 32, 33, 64, 100, 460})
      for (const bool lower : {true, false}) {
        if (lower != (turn++ / 2 % 2 == 0)) continue;  // two turns an order
        test::LinalgTuning scope(tuning);
        const int64_t count = n <= 16 ? 300 : n <= 64 ? 20 : n <= 100 ? 3 : 1;
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + (lower ? " lower" : " upper") +
                                 " (seed " + std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
        Program program = test::load_text(dir, potrf_program(count, n, dtype, lower, seed, 1000));
        auto out = test::run_on_device(program);
        const HostArray &a = out.at("A"), &l = out.at("L"), &info = out.at("info");
        const bool f32 = std::string(dtype) == "f32";
        const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
        double worst = 0, worst_diff = 0;
        for (int64_t m = 0; m < count; ++m) {
          EXPECT_EQ(info.get(m), 0) << what << ", matrix " << m;
          double residual = 0, norm = 0;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double product = 0;  // (L L^T)_ij, or (U^T U)_ij
              for (int64_t k = 0; k < n; ++k)
                product += lower ? l.get(m * n * n + i * n + k) * l.get(m * n * n + j * n + k)
                                 : l.get(m * n * n + k * n + i) * l.get(m * n * n + k * n + j);
              const double aij = a.get(m * n * n + i * n + j);
              residual += (aij - product) * (aij - product);
              norm += aij * aij;
            }
          worst = std::max(worst, std::sqrt(residual) / (n * eps * std::sqrt(norm)));
          int lapack_info = 0;
          const std::vector<double> ref = lapack_factor(a, m, n, lower, &lapack_info);
          ASSERT_EQ(lapack_info, 0) << what;
          for (int64_t e = 0; e < n * n; ++e) worst_diff = std::max(worst_diff, std::fabs(l.get(m * n * n + e) - ref[e]));
        }
        EXPECT_LT(worst, 4.0) << "backward error, " << what;
        // cond 1000: the factor's elements are at most 1, its forward error about sqrt(cond) n eps.
        EXPECT_LT(worst_diff, std::sqrt(1000.0) * n * eps * 4) << "against LAPACK, " << what;
      }
}

// info is LAPACK's on matrices that are not positive definite, in every plan, beside matrices that are
// (a failure stops nothing else); the factor keeps its first info - 1 columns, as the reference.
TEST(Linalg, PotrfInfoIsLapacksAndStopsNothingElse) {
  test::TempDir dir;
  for (const char* tuning : kPlans)
  for (const int64_t n : {3, 12, 70}) {
    test::LinalgTuning scope(tuning);
    std::string values = "[";
    const int64_t count = 5;
    std::vector<double> all;
    for (int64_t m = 0; m < count; ++m) {
      // Diagonally dominant (positive definite), then spoiled at pivot m - 1 for m = 1, 2, at n / 2 + 1 for
      // m = 3 (past the first blocks of a loop plan, whose later rows still take the columns before it) and
      // at n - 1 for m = 4.
      const int64_t bad = m == 0 ? -1 : m == 4 ? n - 1 : m == 3 ? n / 2 + 1 : std::min<int64_t>(m - 1, n - 1);
      values += m ? ", [" : "[";
      for (int64_t i = 0; i < n; ++i) {
        values += i ? ", [" : "[";
        for (int64_t j = 0; j < n; ++j) {
          double v = i == j ? (i == bad ? -1.0 : 2.0 * n) : 1.0 / (1 + i + j);
          all.push_back(v);
          values += (j ? ", " : "") + std::to_string(v);
        }
        values += "]";
      }
      values += "]";
    }
    values += "]";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [5, )" + std::to_string(n) + ", " + std::to_string(n) +
                                               R"(], "value": )" + values + R"(}},
      "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"]}],
      "outputs": {"L": "L.npy", "info": "info.npy", "A": "A.npy"}})");
    auto out = test::run_on_device(program);
    test::expect_same(out, test::run_reference(program), 1e-12, "n=" + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning);
    for (int64_t m = 0; m < count; ++m) {
      int lapack_info = 0;
      lapack_factor(out.at("A"), m, n, true, &lapack_info);
      EXPECT_EQ(out.at("info").get(m), lapack_info) << "n=" << n << ", matrix " << m << ", FUGUE_LINALG_TUNING=" << tuning;
      if (m == 0) EXPECT_EQ(lapack_info, 0);
      else EXPECT_GT(lapack_info, 0);
    }
  }
}

// info may be left out of `out`; the other outputs must all be there. A producer joins the kernel.
TEST(Linalg, PotrfOptionalInfoAndFusedProducer) {
  test::TempDir dir;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [50, 6, 6], "from": {"spd": {"seed": 3}}}},
    "body": [{"op": "array.mul", "out": ["B"], "in": ["A", 4]},
             {"op": "linalg.potrf", "out": ["L"], "in": ["B"]}],
    "outputs": {"L": "L.npy", "A": "A.npy"}})");
  int64_t launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 1) << "array.mul joins the factorization's kernel";
  test::expect_same(fused, test::run_reference(program), 1e-5, "potrf(4 A)");
  // chol(4 A) = 2 chol(A)
  Program plain = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [50, 6, 6], "from": {"spd": {"seed": 3}}}},
    "body": [{"op": "linalg.potrf", "out": ["L"], "in": ["A"]}], "outputs": {"L": "L.npy"}})");
  auto half = test::run_on_device(plain);
  for (int64_t e = 0; e < half.at("L").elements(); ++e)
    ASSERT_NEAR(fused.at("L").get(e), 2 * half.at("L").get(e), 1e-5) << e;

  test::write_text(dir / "none.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [2, 2], "value": [[2, 1], [1, 2]]}},
    "body": [{"op": "linalg.potrf", "out": [], "in": ["A"]}], "outputs": {}})");
  auto r = test::run_fugue("validate " + (dir / "none.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/body/0/out: expected 1 to 2 operand(s) (L, info; the last 1 may be left out)"), std::string::npos)
      << r.out;
  test::write_text(dir / "flag.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [2, 2], "value": [[2, 1], [1, 2]]}},
    "body": [{"op": "linalg.potrf", "out": ["L"], "in": ["A"], "attrs": {"lower": 1}}], "outputs": {}})");
  r = test::run_fugue("validate " + (dir / "flag.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/body/0/attrs/lower: expected true or false, found an integer 1"), std::string::npos) << r.out;
}

namespace {

// LAPACK's LU of matrix e (m x n) of `a`, in double precision: the factors, pivots (1-based) and info.
std::vector<double> lapack_lu(const HostArray& a, int64_t e, int64_t m, int64_t n, std::vector<lapack_int>& ipiv, int* info) {
  std::vector<double> f(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m * n; ++i) f[i] = a.get(e * m * n + i);
  ipiv.assign(static_cast<size_t>(std::min(m, n)), 0);
  *info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), f.data(),
                         static_cast<lapack_int>(n), ipiv.data());
  return f;
}

using test::shape_text;

// ||P A - L U||_F / (k eps ||A||_F) of matrix e, P A rebuilt from the pivots.
double lu_backward_error(const HostArray& a, const HostArray& lu, const HostArray& ipiv, int64_t e, int64_t m, int64_t n, double eps) {
  const int64_t k = std::min(m, n);
  std::vector<double> pa(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m * n; ++i) pa[i] = a.get(e * m * n + i);
  for (int64_t s = 0; s < k; ++s) {
    const int64_t p = ipiv.get(e * k + s) - 1;
    for (int64_t j = 0; j < n; ++j) std::swap(pa[s * n + j], pa[p * n + j]);
  }
  double residual = 0, norm = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double product = 0;
      for (int64_t t = 0; t <= std::min({i, j, k - 1}); ++t)
        product += (t == i ? 1.0 : lu.get(e * m * n + i * n + t)) * lu.get(e * m * n + t * n + j);
      residual += (pa[i * n + j] - product) * (pa[i * n + j] - product);
      norm += pa[i * n + j] * pa[i * n + j];
    }
  return std::sqrt(residual) / (static_cast<double>(k) * eps * std::sqrt(norm));
}

}  // namespace

// LU of random matrices in every plan, square and not: f64 pivots equal LAPACK's and the factors within a
// bound of its; backward errors ||P A - L U|| / (k eps ||A||) below 4 in f64 and f32.
TEST(Linalg, GetrfMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1},  {2, 2},   {3, 3},   {7, 7},   {8, 8},   {5, 3},
                                                           {3, 8},  {9, 9},   {16, 16}, {12, 5},  {4, 16},  {17, 17},
                                                           {31, 31}, {32, 32}, {33, 33}, {40, 20}, {20, 45}, {20, 1},  {1, 20},  {64, 64}, {100, 100}, {460, 440}};
  // Each plan takes each shape in one dtype, f64 and f32 by turns, and the next plan the other way round:
  // every shape meets f64 (LAPACK's pivots) and f32 at half the builds (PoCL's builds are the suite's time).
  for (size_t p = 0; p < std::size(kPlans); ++p)
  for (const char* dtype : {"f64", "f32"})
    for (size_t i = 0; i < shapes.size(); ++i) {
      if ((p + i + (std::string(dtype) == "f32" ? 1 : 0)) % 2) continue;
      const char* tuning = kPlans[p];
      const auto& [m, n] = shapes[i];
      test::LinalgTuning scope(tuning);
      const int64_t count = std::max(m, n) <= 16 ? 300 : std::max(m, n) <= 64 ? 20 : std::max(m, n) <= 100 ? 3 : 1;
      const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " +
                               std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(count, m, n) +
                                                 R"(, "from": {"random": {"seed": )" + std::to_string(seed + m * 1000 + n) +
                                                 R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
        "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &a = out.at("A"), &lu = out.at("LU"), &ipiv = out.at("ipiv"), &info = out.at("info");
      const bool f32 = std::string(dtype) == "f32";
      const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst = 0, worst_diff = 0;
      int64_t pivots_differ = 0;
      for (int64_t e = 0; e < count; ++e) {
        EXPECT_EQ(info.get(e), 0) << what << ", matrix " << e;
        worst = std::max(worst, lu_backward_error(a, lu, ipiv, e, m, n, eps));
        std::vector<lapack_int> lapack_ipiv;
        int lapack_info = 0;
        const std::vector<double> ref = lapack_lu(a, e, m, n, lapack_ipiv, &lapack_info);
        bool same = true;
        for (int64_t s = 0; s < std::min(m, n); ++s) same = same && ipiv.get(e * std::min(m, n) + s) == lapack_ipiv[s];
        if (!same) {
          ++pivots_differ;
          continue;
        }
        for (int64_t i = 0; i < m * n; ++i) worst_diff = std::max(worst_diff, std::fabs(lu.get(e * m * n + i) - ref[i]));
      }
      EXPECT_LT(worst, 4.0) << "backward error, " << what;
      // f64: the same pivots as LAPACK's. f32: eliminating in single precision, two candidates within its
      // rounding of each other may swap places (a large matrix meets such a near tie now and then); the
      // backward error above holds whichever wins.
      if (f32) EXPECT_LE(pivots_differ, count / 10 + 1) << "pivots unlike LAPACK's, " << what;
      else EXPECT_EQ(pivots_differ, 0) << "pivots unlike LAPACK's, " << what;
      EXPECT_LT(worst_diff, 1e3 * std::max(m, n) * eps) << "against LAPACK, " << what;
    }
}

// One row chosen as the pivot step after step: matrix 0's last row leads column 0, and each row it
// swaps with leads the next column, so every step takes row m - 1 again (the blocked plan composes a
// panel's swaps into one permutation: a row taken twice within a panel); matrix 1 the same from the
// middle row; matrix 2 random. Pivots and factors are LAPACK's in every plan.
TEST(Linalg, GetrfTakesOneRowAgainAndAgain) {
  test::TempDir dir;
  // Beside kPlans: the blocked plan's own panels (16 columns for f64 at these orders).
  for (const char* tuning : {kPlans[0], kPlans[1], kPlans[2], "lu_blocked_order=8"})
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{40, 40}, {45, 37}, {37, 45}}) {
      test::LinalgTuning scope(tuning);
      const std::string values = test::matrix_values(3, m, n, [&](int64_t e, int64_t i, int64_t j) {
        const double noise = 0.01 * std::sin(1.0 + static_cast<double>(i * 31 + j * 7 + e));
        if (e == 2) return std::sin(0.37 * static_cast<double>(i * i * j) + 1.3 * static_cast<double>(j * j) + 0.7 * static_cast<double>(i));
        const int64_t leader = e == 0 ? m - 1 : m / 2;  // the row taken at step 0, and again at every step
        const int64_t order = i == leader ? 0 : i < leader ? i + 1 : i;  // the step at which row i leads
        return noise + (j == order ? (order == 0 ? 1.0 : 10.0) : 0.0);
      });
      const std::string what = std::to_string(m) + "x" + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning;
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(3, m, n) + R"(, "value": )" + values + R"(}},
        "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
        "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      const int64_t k = std::min(m, n);
      for (int64_t e = 0; e < 3; ++e) {
        std::vector<lapack_int> lapack_ipiv;
        int lapack_info = 0;
        const std::vector<double> ref = lapack_lu(out.at("A"), e, m, n, lapack_ipiv, &lapack_info);
        int64_t repeats = 0;
        for (int64_t s = 0; s < k; ++s) {
          EXPECT_EQ(out.at("ipiv").get(e * k + s), lapack_ipiv[s]) << what << ", matrix " << e << ", step " << s;
          repeats += s > 0 && lapack_ipiv[s] == lapack_ipiv[s - 1] ? 1 : 0;
        }
        if (e < 2) {
          EXPECT_GE(repeats, k / 3) << "the construction takes one row again and again, " << what;
        }
        double worst = 0;
        for (int64_t i = 0; i < m * n; ++i) worst = std::max(worst, std::fabs(out.at("LU").get(e * m * n + i) - ref[i]));
        EXPECT_LT(worst, 1e-11) << what << ", matrix " << e;
      }
    }
}

// info is LAPACK's on exactly singular matrices in every plan (the first zero pivot; the factorization
// completes), beside regular matrices, and the factors equal the reference's.
TEST(Linalg, GetrfInfoIsLapacks) {
  test::TempDir dir;
  for (const char* tuning : kPlans)
  for (const int64_t n : {3, 12, 40, 70}) {
    test::LinalgTuning scope(tuning);
    // Matrix e: column 5 (e - 1) zero (e = 1..3), matrix 4: its last row zero, matrix 0 regular.
    std::string values = "[";
    for (int64_t e = 0; e < 5; ++e) {
      values += e ? ", [" : "[";
      for (int64_t i = 0; i < n; ++i) {
        values += i ? ", [" : "[";
        for (int64_t j = 0; j < n; ++j) {
          const bool zero = (e >= 1 && e <= 3 && j == std::min<int64_t>((e - 1) * 5, n - 1)) || (e == 4 && i == n - 1);
          const double v = zero ? 0.0 : std::sin(1.0 + i * 7.1 + j * 3.3 + e);
          values += (j ? ", " : "") + std::to_string(v);
        }
        values += "]";
      }
      values += "]";
    }
    values += "]";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(5, n, n) + R"(, "value": )" + values + R"(}},
      "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
      "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "A": "A.npy"}})");
    auto out = test::run_on_device(program);
    // Singular matrices: the trailing factors grow ill-conditioned, hence the looser bound.
    test::expect_same(out, test::run_reference(program), 1e-6, "n=" + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning);
    for (int64_t e = 0; e < 5; ++e) {
      std::vector<lapack_int> lapack_ipiv;
      int lapack_info = 0;
      lapack_lu(out.at("A"), e, n, n, lapack_ipiv, &lapack_info);
      EXPECT_EQ(out.at("info").get(e), lapack_info) << "n=" << n << ", matrix " << e << ", FUGUE_LINALG_TUNING=" << tuning;
      EXPECT_EQ(lapack_info > 0, e >= 1) << "n=" << n << ", matrix " << e;
    }
  }
}

namespace {

// X of A X = B (or A^T X = B) for matrix e by LAPACK (gesv on a copy, A transposed for "T").
std::vector<double> lapack_solve(const HostArray& a, const HostArray& b, int64_t e, int64_t n, int64_t k, bool transposed) {
  std::vector<double> f(static_cast<size_t>(n * n)), x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) f[i * n + j] = a.get(e * n * n + (transposed ? j * n + i : i * n + j));
  for (int64_t i = 0; i < n * k; ++i) x[i] = b.get(e * n * k + i);
  std::vector<lapack_int> ipiv(static_cast<size_t>(n));
  EXPECT_EQ(LAPACKE_dgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k), f.data(),
                          static_cast<lapack_int>(n), ipiv.data(), x.data(), static_cast<lapack_int>(k)), 0);
  return x;
}

// The 1-norm condition number of matrix e, by LAPACK (getrf, then gecon's estimate).
double condition(const HostArray& a, int64_t e, int64_t n) {
  std::vector<double> f(static_cast<size_t>(n * n));
  double norm = 0;
  for (int64_t j = 0; j < n; ++j) {
    double column = 0;
    for (int64_t i = 0; i < n; ++i) column += std::fabs(a.get(e * n * n + i * n + j));
    norm = std::max(norm, column);
  }
  for (int64_t i = 0; i < n * n; ++i) f[static_cast<size_t>(i)] = a.get(e * n * n + i);
  std::vector<lapack_int> ipiv(static_cast<size_t>(n));
  const lapack_int ln = static_cast<lapack_int>(n);
  if (LAPACKE_dgetrf(LAPACK_ROW_MAJOR, ln, ln, f.data(), ln, ipiv.data()) != 0) return std::numeric_limits<double>::infinity();
  double rcond = 0;
  EXPECT_EQ(LAPACKE_dgecon(LAPACK_ROW_MAJOR, '1', ln, f.data(), ln, norm, &rcond), 0);
  return rcond > 0 ? 1 / rcond : std::numeric_limits<double>::infinity();
}

}  // namespace

// getrf then getrs, and potrf then potrs, share one kernel with the factors kept in local memory or
// registers; X matches LAPACK's gesv within a bound set by the condition number, in every plan.
TEST(Linalg, FactorThenSolveFusedMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // Each plan once with one right-hand side and once with three, each transposed once (PoCL takes
  // seconds to build the unrolled kernels of n <= 16).
  const std::vector<std::tuple<int64_t, int64_t, const char*>> cases = {
      {1, 1, "N"}, {3, 3, "T"}, {8, 1, "T"}, {8, 3, "N"}, {9, 3, "N"}, {16, 1, "T"}, {17, 1, "N"}, {17, 3, "T"}, {33, 1, "T"}, {40, 3, "N"}, {48, 1, "N"}, {70, 2, "T"}};
  for (const auto& [n, k, trans] : cases) {
    const int64_t count = n <= 16 ? 200 : 6;
    const std::string sizes = "n=" + std::to_string(n) + " k=" + std::to_string(k) + " (seed " + std::to_string(seed) + ")";
    {
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, n) + R"(, "from": {"spd": {"seed": )" +
                                                   std::to_string(seed + n) + R"(, "cond": 100}}},
          "B": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, k) + R"(, "from": {"random": {"seed": )" +
                                                   std::to_string(seed + k) + R"(, "low": -1, "high": 1}}},
          "M": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, n) + R"(, "from": {"random": {"seed": )" +
                                                   std::to_string(seed + 7) + R"(, "low": -0.1, "high": 0.1}}}},
          "body": [{"op": "array.add", "out": ["G"], "in": ["A", "M"]},
                   {"op": "linalg.getrf", "out": ["LU", "ipiv"], "in": ["G"]},
                   {"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"], "attrs": {"trans": ")" +
                                                   std::string(trans) + R"("}},
                   {"op": "linalg.potrf", "out": ["L"], "in": ["A"], "attrs": {"lower": )" +
                                                   (trans[0] == 'N' ? "true" : "false") + R"(}},
                   {"op": "linalg.potrs", "out": ["Y"], "in": ["L", "B"], "attrs": {"lower": )" +
                                                   (trans[0] == 'N' ? "true" : "false") + R"(}}],
          "outputs": {"X": "X.npy", "Y": "Y.npy", "A": "A.npy", "B": "B.npy", "G": "G.npy"}})");
        int64_t launches = 0;
        auto out = test::run_on_device(program, std::nullopt, {}, &launches);
        EXPECT_LE(launches, 2) << "each factorization joins its solve (and the producer), " << sizes;
        const std::string what = std::string("trans ") + trans + ", " + sizes;
        test::expect_same(out, test::run_reference(program), 1e-9, what);
        // Forward errors against LAPACK's within 10 n eps cond, each matrix by its own 1-norm condition number
        // (cond(A) = 100 in the 2-norm; G = A + M, M's elements within 0.1, can be far worse conditioned).
        const double eps = std::numeric_limits<double>::epsilon();
        double worst_x = 0, worst_y = 0;  // the errors over their bounds
        for (int64_t e = 0; e < count; ++e) {
          const std::vector<double> x = lapack_solve(out.at("G"), out.at("B"), e, n, k, trans[0] == 'T');
          const std::vector<double> y = lapack_solve(out.at("A"), out.at("B"), e, n, k, false);
          const double bound_x = 10.0 * n * eps * condition(out.at("G"), e, n), bound_y = 10.0 * n * eps * condition(out.at("A"), e, n);
          for (int64_t i = 0; i < n * k; ++i) {
            worst_x = std::max(worst_x, std::fabs(out.at("X").get(e * n * k + i) - x[i]) / (1 + std::fabs(x[i])) / bound_x);
            worst_y = std::max(worst_y, std::fabs(out.at("Y").get(e * n * k + i) - y[i]) / (1 + std::fabs(y[i])) / bound_y);
          }
        }
        EXPECT_LT(worst_x, 1.0) << "getrf + getrs against LAPACK's gesv (error over 10 n eps cond), " << what;
        EXPECT_LT(worst_y, 1.0) << "potrf + potrs against LAPACK's gesv (error over 10 n eps cond), " << what;
      }
    }
}

// Pivots outside 1..n make that matrix's X NaN and no other; refusals name the operand or attribute.
TEST(Linalg, GetrsBadPivotsAndRefusals) {
  test::TempDir dir;
  for (const int64_t n : {3, 20, 40}) {
    std::string pivots = "[";
    for (int64_t e = 0; e < 3; ++e) {
      pivots += e ? ", [" : "[";
      for (int64_t s = 0; s < n; ++s) pivots += (s ? ", " : "") + std::to_string(e == 1 && s == n / 2 ? (s % 2 ? 0 : n + 1) : n - s);
      pivots += "]";
    }
    pivots += "]";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "LU": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(3, n, n) + R"(, "from": {"spd": {"seed": 4}}},
      "ipiv": {"kind": "array", "dtype": "i32", "shape": [3, )" + std::to_string(n) + R"(], "value": )" + pivots + R"(},
      "B": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(3, n, 2) + R"(, "from": {"random": {"seed": 5}}}},
      "body": [{"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"]}],
      "outputs": {"X": "X.npy"}})");
    auto out = test::run_on_device(program);
    auto ref = test::run_reference(program);
    for (int64_t i = 0; i < n * 2 * 3; ++i) {
      const bool bad = i / (n * 2) == 1;
      EXPECT_EQ(std::isnan(out.at("X").get(i)), bad) << "n=" << n << ", element " << i;
      if (!bad) {
        EXPECT_NEAR(out.at("X").get(i), ref.at("X").get(i), 1e-9 * (1 + std::fabs(ref.at("X").get(i))));
      }
    }
  }
  auto refused = [&](const std::string& body, const std::string& message) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {
      "LU": {"kind": "array", "dtype": "f64", "shape": [4, 3, 3], "from": {"spd": {"seed": 4}}},
      "ipiv": {"kind": "array", "dtype": "i32", "shape": [4, 3], "from": {"fill": 1}},
      "B": {"kind": "array", "dtype": "f64", "shape": [4, 3, 2], "from": {"fill": 1}},
      "b": {"kind": "array", "dtype": "f64", "shape": [4, 3], "from": {"fill": 1}},
      "B32": {"kind": "array", "dtype": "f32", "shape": [4, 3, 2], "from": {"fill": 1}}},
      "body": [)" + body + R"(], "outputs": {}})");
    auto r = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  };
  refused(R"({"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"], "attrs": {"trans": "H"}})",
          "attribute trans: expected \"N\" (as stored), \"T\" (transposed) or \"C\" (conjugate transposed), found \"H\"");
  refused(R"({"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "b"]})",
          "operand B: expected right-hand sides [4, 3, k]");
  refused(R"({"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B32"]})", "operand B is f32, LU f64");
  refused(R"({"op": "linalg.getrs", "out": ["X"], "in": ["LU", "B", "B"]})", "/body/0");
  refused(R"({"op": "linalg.potrs", "out": ["X"], "in": ["LU", "b"]})", "operand B: expected right-hand sides [4, 3, k]");
  refused(R"({"op": "linalg.getrf", "out": ["LU2"], "in": ["LU"]})", "expected 2 to 3 operand(s)");
}

// Products in every blocking (one work-item up to 4 x 4, teams of blocks, 256 work-items sharing a
// matrix), transposed or not, against BLAS's dgemm / sgemm; beta C (an element-wise operation after the
// product) joins the product's kernel.
TEST(Linalg, GemmMatchesBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t m, n, k;
    const char *ta, *tb;
  };
  const std::vector<Case> cases = {{1, 1, 1, "N", "N"},    {2, 3, 4, "T", "N"},    {4, 4, 4, "N", "T"},   {8, 8, 8, "T", "T"},
                                   {16, 16, 16, "N", "N"}, {17, 13, 5, "N", "T"},  {32, 32, 32, "T", "N"}, {64, 64, 64, "N", "N"},
                                   {100, 70, 33, "T", "T"}};
  for (const char* dtype : {"f64", "f32"})
    for (const Case& c : cases) {
      const bool ta = c.ta[0] == 'T', tb = c.tb[0] == 'T', f32 = dtype[1] == '3';
      const int64_t count = c.m * c.n <= 256 ? 200 : 4;
      const std::string what = std::string(dtype) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
                               " " + c.ta + c.tb + " (seed " + std::to_string(seed) + ")";
      Program program = test::load_text(dir, test::gemm_program(std::string(dtype), count, c.m, c.n, c.k, c.ta, c.tb, seed));
      int64_t launches = 0;
      auto out = test::run_on_device(program, std::nullopt, {}, &launches);
      EXPECT_EQ(launches, 1) << "beta C joins the product's kernel, " << what;
      const double worst = test::gemm_error_against_blas(out.at("A"), out.at("B"), out.at("C"), out.at("D"), count, c.m, c.n, c.k, ta, tb, 0.5, -2.0);
      // |alpha A B| <= k / 2 and |beta C| <= 2: errors about k eps times those.
      const double eps = f32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      EXPECT_LT(worst, 4 * (c.k + 2) * eps * (c.k / 2.0 + 2)) << "against BLAS, " << what;
    }
  auto refused = [&](const std::string& attrs, const std::string& b_shape, const std::string& message) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [4, 3, 2], "from": {"fill": 1}},
      "B": {"kind": "array", "dtype": "f64", "shape": )" + b_shape + R"(, "from": {"fill": 1}}},
      "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"], "attrs": )" + attrs + R"(}], "outputs": {}})");
    auto r = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  };
  refused(R"({"trans_a": "H"})", "[4, 2, 5]",
          "attribute trans_a: expected \"N\" (as stored), \"T\" (transposed) or \"C\" (conjugate transposed), found \"H\"");
  refused("{}", "[4, 3, 5]", "op(A) has 2 columns but op(B) 3 rows");
  refused("{}", "[2, 2, 5]", "their batch axes (all but the last two) must be equal");
}

// trsm in all sixteen combinations of side, triangle, transposition and unit diagonal (each with another
// size, every plan met) and trsv, against BLAS's dtrsm / dtrsv; a solve after potrf joins its kernel.
TEST(Linalg, TriangularSolvesMatchBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<int64_t> sizes = {1, 3, 8, 12, 16, 17, 40, 5};
  for (int combo = 0; combo < 16; ++combo) {
    const bool right = combo & 1, lower = combo & 2, trans = combo & 4, unit = combo & 8;
    const int64_t n = sizes[combo % sizes.size()], other = 1 + combo % 3, count = n <= 16 ? 50 : 4;
    const int64_t rows = right ? other : n, cols = right ? n : other;
    const std::string what = std::string(right ? "R" : "L") + (lower ? " lower" : " upper") + (trans ? " T" : " N") +
                             (unit ? " unit" : "") + " n=" + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "S": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, n) + R"(, "from": {"spd": {"seed": )" +
                                               std::to_string(seed + combo) + R"(, "cond": 50}}},
      "B": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, rows, cols) + R"(, "from": {"random": {"seed": )" +
                                               std::to_string(seed + 100 + combo) + R"(, "low": -1, "high": 1}}}},
      "body": [{"op": "linalg.potrf", "out": ["A"], "in": ["S"], "attrs": {"lower": )" + (lower ? "true" : "false") + R"(}},
               {"op": "linalg.trsm", "out": ["X"], "in": ["A", "B"], "attrs": {"side": ")" + (right ? "R" : "L") +
                                               R"(", "lower": )" + (lower ? "true" : "false") + R"(, "trans": ")" + (trans ? "T" : "N") +
                                               R"(", "unit": )" + (unit ? "true" : "false") + R"(, "alpha": 1.5}}],
      "outputs": {"X": "X.npy", "A": "A.npy", "B": "B.npy"}})");
    int64_t launches = 0;
    auto out = test::run_on_device(program, std::nullopt, {}, &launches);
    EXPECT_EQ(launches, 1) << "trsm joins the factorization's kernel, " << what;
    double worst = 0;
    for (int64_t e = 0; e < count; ++e) {
      std::vector<double> a(static_cast<size_t>(n * n)), x(static_cast<size_t>(rows * cols));
      for (int64_t i = 0; i < n * n; ++i) a[i] = out.at("A").get(e * n * n + i);
      for (int64_t i = 0; i < rows * cols; ++i) x[i] = out.at("B").get(e * rows * cols + i);
      cblas_dtrsm(CblasRowMajor, right ? CblasRight : CblasLeft, lower ? CblasLower : CblasUpper, trans ? CblasTrans : CblasNoTrans,
                  unit ? CblasUnit : CblasNonUnit, static_cast<int>(rows), static_cast<int>(cols), 1.5, a.data(), static_cast<int>(n),
                  x.data(), static_cast<int>(cols));
      for (int64_t i = 0; i < rows * cols; ++i)
        worst = std::max(worst, std::fabs(out.at("X").get(e * rows * cols + i) - x[i]) / (1 + std::fabs(x[i])));
    }
    // Cholesky factors of cond-50 matrices are well conditioned; unit triangles of them less so (their
    // off-diagonal elements are the factor's, unscaled): a bound of 1e-9 holds both.
    EXPECT_LT(worst, 1e-9) << "against BLAS's dtrsm, " << what;
  }
  for (const int64_t n : {4, 20}) {
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f32", "shape": )" + shape_text(30, n, n) + R"(, "from": {"spd": {"seed": 9}}},
      "b": {"kind": "array", "dtype": "f32", "shape": [30, )" + std::to_string(n) + R"(], "from": {"random": {"seed": 10}}}},
      "body": [{"op": "linalg.trsv", "out": ["x"], "in": ["A", "b"], "attrs": {"lower": false, "trans": "T"}}],
      "outputs": {"x": "x.npy", "A": "A.npy", "b": "b.npy"}})");
    auto out = test::run_on_device(program);
    double worst = 0;
    for (int64_t e = 0; e < 30; ++e) {
      std::vector<float> a(static_cast<size_t>(n * n)), x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<float>(out.at("A").get(e * n * n + i));
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(out.at("b").get(e * n + i));
      cblas_strsv(CblasRowMajor, CblasUpper, CblasTrans, CblasNonUnit, static_cast<int>(n), a.data(), static_cast<int>(n), x.data(), 1);
      for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(out.at("x").get(e * n + i) - x[i]) / (1 + std::fabs(x[i])));
    }
    EXPECT_LT(worst, 1e-4) << "trsv against BLAS's strsv, n=" << n;
  }
  test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [4, 3, 3], "from": {"fill": 1}},
    "B": {"kind": "array", "dtype": "f64", "shape": [4, 3, 2], "from": {"fill": 1}}},
    "body": [{"op": "linalg.trsm", "out": ["X"], "in": ["A", "B"], "attrs": {"side": "R"}}], "outputs": {}})");
  auto r = test::run_fugue("validate " + (dir / "bad.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("operand B: with side \"R\" expected [..., m, 3] with A's batch axes"), std::string::npos) << r.out;
}

// C written over A or B (one name for both): every block is read before any is written, for one
// block per work-item and several; beyond what registers hold, a clear refusal.
TEST(Linalg, GemmOverItsInput) {
  test::TempDir dir;
  for (const int64_t n : {3, 16, 40, 128})
    for (const char* over : {"A", "B"}) {
      const std::string what = std::string("C over ") + over + ", n=" + std::to_string(n);
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + ", " + std::to_string(n) +
                                                 R"(], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
        "B": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + ", " + std::to_string(n) +
                                                 R"(], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
        "body": [{"op": "array.copy", "out": ["A0"], "in": ["A"]}, {"op": "array.copy", "out": ["B0"], "in": ["B"]},
                 {"op": "linalg.gemm", "out": [")" + std::string(over) + R"("], "in": ["A", "B"], "attrs": {"trans_b": "T"}}],
        "outputs": {")" + std::string(over) + R"(": "C.npy", "A0": "A0.npy", "B0": "B0.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &c = out.at(over), &a = out.at("A0"), &b = out.at("B0");
      double worst = 0;
      for (int64_t e = 0; e < 2; ++e)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t k = 0; k < n; ++k) sum += a.get(e * n * n + i * n + k) * b.get(e * n * n + j * n + k);
            worst = std::max(worst, std::fabs(c.get(e * n * n + i * n + j) - sum));
          }
      EXPECT_LT(worst, 1e-12 * n) << what;
    }
  test::write_text(dir / "big.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f32", "shape": [200, 200], "from": {"fill": 1}},
    "B": {"kind": "array", "dtype": "f32", "shape": [200, 200], "from": {"fill": 1}}},
    "body": [{"op": "linalg.gemm", "out": ["A"], "in": ["A", "B"]}], "outputs": {"A": "A.npy"}})");
  // In a team (the spread plans off) a product this large over its input is refused...
  auto r = test::run_fugue("run " + (dir / "big.json").string() + " --out " + (dir / "o").string(), "FUGUE_LINALG_TUNING=spread_tiles=0,spread_vectors=0");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("C is written over its input A or B, which is supported up to 16384 elements of C per matrix; this one has "
                       "40000: give C a name of its own"),
            std::string::npos)
      << r.out;
  // ...and runs where the device spreads a single product over work-groups (a kernel of its own, whose
  // output the core gives a buffer of its own).
  const auto plan = test::run_fugue("explain " + (dir / "big.json").string());
  if (plan.out.find("plan: spread") == std::string::npos) return;  // one compute unit: refused as above
  r = test::run_fugue("run " + (dir / "big.json").string() + " --out " + (dir / "o").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const HostArray c = fugue::load_npy(dir / "o" / "A.npy", std::nullopt, std::nullopt);
  for (int64_t e = 0; e < 200 * 200; ++e) ASSERT_EQ(c.get(e), 200.0) << "element " << e;
}

// Scaled far from 1: potrf's factor scales by the square root (every plan; the team plans scale the
// pivot column before multiplying, so nothing overflows), and getrf takes pivots below the smallest
// normal number by dividing, as LAPACK does, where the reciprocal would overflow.
TEST(Linalg, FactorizationsOfScaledMatrices) {
  test::TempDir dir;
  struct Case {
    const char* dtype;
    double scale;
  };
  for (const Case& c : {Case{"f32", 1e20}, Case{"f32", 1e-20}, Case{"f64", 1e160}, Case{"f64", 1e-170}})
    for (const int64_t n : {6, 12, 20, 40}) {
      char scale_buf[32];
      std::snprintf(scale_buf, sizeof scale_buf, "%g", c.scale);
      const std::string scale_text = scale_buf, what = std::string(c.dtype) + " scale " + scale_text + " n=" + std::to_string(n);
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "S": {"kind": "array", "dtype": ")" + std::string(c.dtype) + R"(", "shape": )" + shape_text(8, n, n) +
                                                 R"(, "from": {"spd": {"seed": 3, "cond": 10}}}},
        "body": [{"op": "array.mul", "out": ["A"], "in": ["S", )" + scale_text + R"(]},
                 {"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"]},
                 {"op": "linalg.potrf", "out": ["L1"], "in": ["S"]}],
        "outputs": {"L": "L.npy", "info": "info.npy", "L1": "L1.npy"}})");
      auto out = test::run_on_device(program);
      double worst = 0, norm = 0;
      const double root = std::sqrt(c.scale);
      for (int64_t e = 0; e < 8; ++e) EXPECT_EQ(out.at("info").get(e), 0) << what;
      for (int64_t i = 0; i < out.at("L").elements(); ++i) {
        worst = std::max(worst, std::fabs(out.at("L").get(i) / root - out.at("L1").get(i)));
        norm = std::max(norm, std::fabs(out.at("L1").get(i)));
      }
      EXPECT_LT(worst, (c.dtype[1] == '3' ? 1e-5 : 1e-13) * norm) << "potrf of scaled matrices, " << what;
    }
  for (const int64_t n : {4, 12, 20, 40}) {
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "S": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(8, n, n) + R"(, "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
      "body": [{"op": "array.mul", "out": ["A"], "in": ["S", 1e-310]},
               {"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
      "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "A": "A.npy"}})");
    auto out = test::run_on_device(program);
    auto ref = test::run_reference(program);
    for (int64_t i = 0; i < out.at("LU").elements(); ++i) ASSERT_TRUE(std::isfinite(out.at("LU").get(i))) << "n=" << n << ", element " << i;
    // Subnormal inputs carry few digits: the pivots are the reference's, the factors close to its.
    for (int64_t i = 0; i < out.at("ipiv").elements(); ++i) EXPECT_EQ(out.at("ipiv").get(i), ref.at("ipiv").get(i)) << "n=" << n;
  }
}

// alpha 0 gives zeros whatever A and B hold (BLAS's rule), in every blocking.
TEST(Linalg, GemmAlphaZeroReadsNothing) {
  test::TempDir dir;
  for (const int64_t n : {2, 16, 40}) {
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f32", "shape": )" + shape_text(3, n, n) + R"(, "from": {"fill": 1}},
      "B": {"kind": "array", "dtype": "f32", "shape": )" + shape_text(3, n, n) + R"(, "from": {"fill": 1}}},
      "body": [{"op": "array.div", "out": ["I"], "in": ["A", 0]},
               {"op": "linalg.gemm", "out": ["C"], "in": ["I", "B"], "attrs": {"alpha": 0}}],
      "outputs": {"C": "C.npy"}})");
    auto out = test::run_on_device(program);
    for (int64_t i = 0; i < out.at("C").elements(); ++i) ASSERT_EQ(out.at("C").get(i), 0.0) << "n=" << n << ", element " << i;
  }
}

// gemv against BLAS's dgemv, transposed or not, in one work-item and in teams; y written over x;
// an element-wise consumer joins the kernel.
TEST(Linalg, GemvMatchesBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t m, n;
    const char* trans;
    bool over;
  };
  for (const Case& c : {Case{3, 5, "N", false}, Case{8, 8, "T", true}, Case{20, 7, "T", false}, Case{70, 33, "N", false},
                        Case{40, 40, "N", true}, Case{300, 300, "T", true}}) {
    const bool t = c.trans[0] == 'T';
    const int64_t rows = t ? c.n : c.m, cols = t ? c.m : c.n, count = 6;
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + " " + c.trans + (c.over ? " over x" : "") + " (seed " +
                             std::to_string(seed) + ")";
    const std::string y = c.over ? "x" : "y";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, c.m, c.n) + R"(, "from": {"random": {"seed": )" +
                                             std::to_string(seed) + R"(, "low": -1, "high": 1}}},
      "x": {"kind": "array", "dtype": "f64", "shape": [)" + std::to_string(count) + ", " + std::to_string(cols) +
                                             R"(], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
      "body": [{"op": "array.copy", "out": ["x0"], "in": ["x"]},
               {"op": "linalg.gemv", "out": [")" + y + R"("], "in": ["A", "x"], "attrs": {"trans": ")" + c.trans + R"(", "alpha": 0.5}},
               {"op": "array.mul", "out": ["z"], "in": [")" + y + R"(", 4]}],
      "outputs": {"z": "z.npy", "A": "A.npy", "x0": "x0.npy"}})");
    int64_t launches = 0;
    auto out = test::run_on_device(program, std::nullopt, {}, &launches);
    if (!c.over) {
      EXPECT_EQ(launches, 1) << "the copy, gemv and its consumer share a kernel, " << what;
    }
    double worst = 0;
    for (int64_t e = 0; e < count; ++e) {
      std::vector<double> a(static_cast<size_t>(c.m * c.n)), x(static_cast<size_t>(cols)), ref(static_cast<size_t>(rows));
      for (int64_t i = 0; i < c.m * c.n; ++i) a[i] = out.at("A").get(e * c.m * c.n + i);
      for (int64_t i = 0; i < cols; ++i) x[i] = out.at("x0").get(e * cols + i);
      cblas_dgemv(CblasRowMajor, t ? CblasTrans : CblasNoTrans, static_cast<int>(c.m), static_cast<int>(c.n), 2.0, a.data(),
                  static_cast<int>(c.n), x.data(), 1, 0.0, ref.data(), 1);  // 4 * 0.5 = 2
      for (int64_t i = 0; i < rows; ++i) worst = std::max(worst, std::fabs(out.at("z").get(e * rows + i) - ref[i]));
    }
    EXPECT_LT(worst, 1e-13 * cols) << "against BLAS's dgemv, " << what;
  }
}

// The example batch of Kalman-filter updates (examples/linalg/kalman_update.json: gemm, potrf, potrs,
// gemv and element-wise operations) against NumPy's formula with an explicit inverse.
TEST(Linalg, KalmanExampleMatchesNumPy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with NumPy";
  test::TempDir dir;
  const std::string example = (test::source_root() / "examples" / "linalg" / "kalman_update.json").string();
  auto r = test::run_fugue("run " + example + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1] + '/'
P, H, R, x, z = (np.load(d + f + '.npy') for f in ('P', 'H', 'R', 'x', 'z'))
S = H @ P @ H.transpose(0, 2, 1) + R
K = P @ H.transpose(0, 2, 1) @ np.linalg.inv(S)
x1 = x + (K @ (z - (H @ x[..., None])[..., 0])[..., None])[..., 0]
P1 = P - K @ H @ P
ex = np.abs(np.load(d + 'x1.npy') - x1).max()
ep = np.abs(np.load(d + 'P1.npy') - P1).max()
info = np.load(d + 'info.npy')
print(f'x1 {ex:.3e} P1 {ep:.3e} info {info.max()}')
sys.exit(0 if ex < 1e-10 and ep < 1e-10 and not info.any() else 1)
)");
  auto check = test::run_command(python + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_EQ(check.code, 0) << check.out;
}
