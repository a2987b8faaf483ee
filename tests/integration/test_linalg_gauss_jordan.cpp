// linalg.gesv_nopiv (Gauss-Jordan without pivoting) against LAPACK's dgesv (LAPACKE, the independent
// oracle) on positive definite systems of every plan: the augmented matrix in registers, teams with A in
// local memory, and A in the core's workspace (above three quarters of PoCL's local memory); an
// element-wise producer joins the kernel; exactly zero pivots give info and NaNs, the others unaffected.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

// Relative to the largest element of LAPACK's solution, differences below 50 n eps cond (cond 100).
TEST(Linalg, GesvNopivMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // (n, k): registers up to 8 columns in all, STAP's 18 x 18 with 16, and 450 x 450 over the local limit in f64.
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},  {2, 1},   {3, 2},   {4, 4},   {7, 1},   {8, 3},  {9, 1},
                                                          {16, 4}, {18, 16}, {31, 1},  {32, 32}, {33, 2},  {64, 1}, {100, 3},
                                                          {450, 2}};
  // The device's table (on a CPU, loops above order 8), then the GPUs' rows (9 to 16; to 32 as NVIDIA's
  // row takes them: 18 with 16 right-hand sides, rows 18 to 31 of its team idle) and teams. (Rows of 31
  // and 32 would build for 23 s and 263 s on PoCL, every step unrolled between barriers.)
  for (const char* tuning : {"", "loop_order=0", "loop_order=0,row_order=32"})
  for (const char* dtype : {"f64", "f32"})
    for (const auto& [n, k] : sizes) {
      const std::string tu = tuning;
      if (tu == "loop_order=0" && n != 9 && n != 16 && n != 33) continue;
      if (tu == "loop_order=0,row_order=32" && n != 18) continue;
      test::LinalgTuning scope(tuning);
      const int64_t count = n <= 16 ? 200 : n <= 64 ? 20 : 2;
      const std::string what = std::string(dtype) + " n=" + std::to_string(n) + ", k=" + std::to_string(k) + " (seed " +
                               std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " +
                                                 std::to_string(n) + ", " + std::to_string(n) + R"(], "from": {"spd": {"seed": )" +
                                                 std::to_string(seed + n) + R"(, "cond": 100}}},
        "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " +
                                                 std::to_string(n) + ", " + std::to_string(k) + R"(], "from": {"random": {"seed": )" +
                                                 std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.gesv_nopiv", "out": ["X", "info"], "in": ["A", "B"]}],
        "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &a = out.at("A"), &b = out.at("B"), &x = out.at("X"), &info = out.at("info");
      const double eps = std::string(dtype) == "f32" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst = 0;
      for (int64_t e = 0; e < count; ++e) {
        EXPECT_EQ(info.get(e), 0) << what << ", matrix " << e;
        std::vector<double> af(static_cast<size_t>(n * n)), bf(static_cast<size_t>(n * k));
        std::vector<lapack_int> ipiv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n * n; ++i) af[i] = a.get(e * n * n + i);
        for (int64_t i = 0; i < n * k; ++i) bf[i] = b.get(e * n * k + i);
        ASSERT_EQ(LAPACKE_dgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k), af.data(),
                                static_cast<lapack_int>(n), ipiv.data(), bf.data(), static_cast<lapack_int>(k)),
                  0);
        worst = std::max(worst, test::relative_difference(x, e * n * k, bf));
      }
      EXPECT_LT(worst, 50.0 * n * eps * 100) << "against LAPACK's dgesv, " << what;
    }
}

// The STAP shape with a producer: X = (A + A) \ B is one kernel, X = (2 A)^-1 B; zero pivots (a zero
// leading element; a singular leading 2 x 2 block) give info and NaNs beside a regular matrix. In the
// GPUs' rows too, with 8 right-hand sides (f64 with 16 takes teams).
TEST(Linalg, GesvNopivFusedAndZeroPivots) {
  test::TempDir dir;
  for (const char* tuning : {"", "loop_order=0,row_order=32"}) {  // a CPU's loops, the GPUs' rows
    test::LinalgTuning scope(tuning);
    const std::string k = *tuning ? "8" : "16";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [64, 18, 18], "from": {"spd": {"seed": 3}}},
      "B": {"kind": "array", "dtype": "f64", "shape": [64, 18, )" + k + R"(], "from": {"random": {"seed": 4}}}},
      "body": [{"op": "array.add", "out": ["A2"], "in": ["A", "A"]},
               {"op": "linalg.gesv_nopiv", "out": ["X"], "in": ["A2", "B"]}],
      "outputs": {"X": "X.npy"}})");
    int64_t launches = 0;
    auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
    EXPECT_EQ(launches, 1) << "array.add joins the solver's kernel";
    test::expect_same(fused, test::run_reference(program), 1e-9, "gesv_nopiv(A + A, B)");

    const std::string values = test::matrix_values(3, 10, 10, [](int64_t e, int64_t i, int64_t j) {
      if (e == 1 && i == 0 && j == 0) return 0.0;  // first pivot zero: info 1
      if (e == 2 && i < 2 && j < 2) return i == 0 && j == 0 ? 1.0 : i == 1 && j == 1 ? 4.0 : 2.0;  // [[1, 2], [2, 4]]: info 2
      return i == j ? 4.0 : 1.0 / (1.0 + i + j);
    });
    Program zeros = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [3, 10, 10], "value": )" + values + R"(},
      "B": {"kind": "array", "dtype": "f64", "shape": [3, 10, 2], "from": {"random": {"seed": 6}}}},
      "body": [{"op": "linalg.gesv_nopiv", "out": ["X", "info"], "in": ["A", "B"]}],
      "outputs": {"X": "X.npy", "info": "info.npy"}})");
    auto out = test::run_on_device(zeros);
    EXPECT_EQ(out.at("info").get(0), 0);
    EXPECT_EQ(out.at("info").get(1), 1);
    EXPECT_EQ(out.at("info").get(2), 2);
    for (int64_t i = 0; i < 20; ++i) {
      EXPECT_FALSE(std::isnan(out.at("X").get(i))) << "the regular matrix, element " << i;
      EXPECT_TRUE(std::isnan(out.at("X").get(20 + i)) && std::isnan(out.at("X").get(40 + i))) << "element " << i;
    }
    test::expect_same(out, test::run_reference(zeros), 1e-10, std::string("gesv_nopiv against its reference, ") + tuning);
  }
}

// gesv (partial pivoting) on random systems in a CPU's plan, one matrix per work-item with its loops kept
// ([A | B] in local memory, the table's plan above order 8), and in the GPUs': rows (a row of [A | B] per
// work-item, to 16 or 32) and teams (loop_order=0, row_order=32).
// X against LAPACK's dgesv relative to its largest element, below 10 n eps cond(A) with cond from
// LAPACK's estimate; an exactly singular matrix (a zero column, a zero row) gives info as dgetrf's and
// NaNs, its neighbours unaffected.
TEST(Linalg, GesvInLoopsAndTeamsMatchesLapack) {
  using test::LinalgTuning;
  using test::shape_text;
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* tuning : {"", "loop_order=0", "loop_order=0,row_order=32"}) {  // loops; rows to 16 and teams; rows to 32
    LinalgTuning scoped(tuning);
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{{9, 1}, {20, 3}, {33, 2}}) {
      const int64_t count = 6;
      const std::string what = std::string("[") + tuning + "] n=" + std::to_string(n) + ", k=" + std::to_string(k) + " (seed " + std::to_string(seed) + ")";
      // Matrix 1 has a zero column 3, matrix 2 a zero row 5: both exactly singular.
      const std::string values = test::matrix_values(count, n, n, [&](int64_t e, int64_t i, int64_t j) {
        if ((e == 1 && j == 3) || (e == 2 && i == 5)) return 0.0;
        return std::sin(1.0 + static_cast<double>(seed % 1000) + 0.7 * e + 1.3 * i + 2.9 * j * j + i * j);
      });
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, n) + R"(, "value": )" + values + R"(},
        "B": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(count, n, k) + R"(, "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.gesv", "out": ["X", "info"], "in": ["A", "B"]}],
        "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &a = out.at("A"), &b = out.at("B"), &x = out.at("X"), &info = out.at("info");
      for (int64_t e = 0; e < count; ++e) {
        std::vector<double> af(static_cast<size_t>(n * n)), bf(static_cast<size_t>(n * k));
        std::vector<lapack_int> ipiv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n * n; ++i) af[i] = a.get(e * n * n + i);
        for (int64_t i = 0; i < n * k; ++i) bf[i] = b.get(e * n * k + i);
        const double anorm = LAPACKE_dlange(LAPACK_ROW_MAJOR, '1', static_cast<lapack_int>(n), static_cast<lapack_int>(n), af.data(), static_cast<lapack_int>(n));
        const lapack_int lapack_info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k), af.data(),
                                                     static_cast<lapack_int>(n), ipiv.data(), bf.data(), static_cast<lapack_int>(k));
        EXPECT_EQ(lapack_info != 0, e == 1 || e == 2) << what << ", matrix " << e;
        EXPECT_EQ(info.get(e), lapack_info) << what << ", matrix " << e;
        if (lapack_info != 0) {
          for (int64_t i = 0; i < n * k; ++i) EXPECT_TRUE(std::isnan(x.get(e * n * k + i))) << what << ", matrix " << e;
          continue;
        }
        double rcond = 0;
        ASSERT_EQ(LAPACKE_dgecon(LAPACK_ROW_MAJOR, '1', static_cast<lapack_int>(n), af.data(), static_cast<lapack_int>(n), anorm, &rcond), 0);
        const double eps = std::numeric_limits<double>::epsilon();
        EXPECT_LT(test::relative_difference(x, e * n * k, bf), 10.0 * n * eps / rcond) << what << ", matrix " << e << " (cond " << 1 / rcond << ")";
      }
    }
  }
}
