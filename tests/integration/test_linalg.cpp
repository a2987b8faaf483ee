// The linalg plugin against LAPACK (LAPACKE, the independent oracle) and its own reference: Cholesky
// factors of batches of every size class (one matrix per work-item in registers, teams of work-items
// sharing a matrix in local memory, a work-group per matrix), lower and upper, f32 and f64; backward
// errors under a stated bound; info equal to LAPACK's on matrices that are not positive definite; an
// optional output left out; element-wise producers fused into the factorization's kernel.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

using namespace fugue;

namespace {

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
  for (const char* dtype : {"f64", "f32"})
    for (const int64_t n : {1, 2, 3, 7, 8, 9, 16, 31, 32, 33, 64, 100})
      for (const bool lower : {true, false}) {
        const int64_t count = n <= 16 ? 300 : n <= 64 ? 20 : 3;
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + (lower ? " lower" : " upper") +
                                 " (seed " + std::to_string(seed) + ")";
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
  for (const int64_t n : {3, 12, 70}) {
    std::string values = "[";
    const int64_t count = 5;
    std::vector<double> all;
    for (int64_t m = 0; m < count; ++m) {
      // Diagonally dominant (positive definite), then spoiled at pivot m - 1 for m >= 1 (m = 4: pivot n - 1).
      const int64_t bad = m == 0 ? -1 : m == 4 ? n - 1 : std::min<int64_t>(m - 1, n - 1);
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
    test::expect_same(out, test::run_reference(program), 1e-12, "n=" + std::to_string(n));
    for (int64_t m = 0; m < count; ++m) {
      int lapack_info = 0;
      lapack_factor(out.at("A"), m, n, true, &lapack_info);
      EXPECT_EQ(out.at("info").get(m), lapack_info) << "n=" << n << ", matrix " << m;
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
