// linalg.posv (its factor never leaving the kernel) and linalg.gesv against LAPACK's dposv and dgesv (LAPACKE, the independent
// oracle) on positive definite systems of every plan: registers, teams with the factor and solution in
// local memory, and the factor in the core's workspace (above three quarters of PoCL's local memory);
// lower and upper; matrices that are not positive definite (singular, for gesv) get LAPACK's info and
// NaNs, the others unaffected.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

std::string spd_system(const char* op, const char* dtype, int64_t count, int64_t n, int64_t k, uint64_t seed, bool lower) {
  return R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " + std::to_string(n) +
         ", " + std::to_string(n) + R"(], "from": {"spd": {"seed": )" + std::to_string(seed) + R"(, "cond": 100}}},
    "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " + std::to_string(n) +
         ", " + std::to_string(k) + R"(], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
    "body": [{"op": ")" + op + R"(", "out": ["X", "info"], "in": ["A", "B"], "attrs": {"lower": )" + (lower ? "true" : "false") + R"(}}],
    "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})";
}

}  // namespace

// Relative to the largest element of LAPACK's solution, differences below 50 n eps cond (cond 100).
TEST(Linalg, PosvMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},  {2, 1},  {3, 2},  {8, 3},   {9, 1},  {16, 4},
                                                          {18, 16}, {33, 2}, {64, 1}, {100, 3}, {450, 2}};
  // The device's table (on a CPU, loops above order 8), then the rows (9 to 16) and teams GPUs take, and
  // the rows up to 32 as NVIDIA's row takes them (18 with 16 right-hand sides).
  for (const char* tuning : {"", "loop_order=0", "loop_order=0,row_order=32"})
  for (const char* dtype : {"f64", "f32"})
    for (const auto& [n, k] : sizes)
      for (const bool lower : {true, false}) {
        if (!lower && n % 2 == 0 && n != 8 && n != 18) continue;  // upper on the odd sizes, 8 (registers) and 18 (rows): each plan meets both
        if (*tuning && (n <= 8 || n == 450)) continue;  // registers, and 450 (too large for the loops' local memory): the same plan
        if (std::string(tuning).find("row_order") != std::string::npos && n != 18) continue;
        if (std::string(tuning) == "loop_order=0" && n == 18 && !lower) continue;
        test::LinalgTuning scope(tuning);
        const int64_t count = n <= 16 ? 200 : n <= 64 ? 20 : 2;
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                                 (lower ? " lower" : " upper") + " (seed " + std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
        Program program = test::load_text(dir, spd_system("linalg.posv", dtype, count, n, k, seed + n, lower));
        auto out = test::run_on_device(program);
        const HostArray &a = out.at("A"), &b = out.at("B"), &x = out.at("X"), &info = out.at("info");
        const double eps = std::string(dtype) == "f32" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
        double worst = 0;
        for (int64_t e = 0; e < count; ++e) {
          EXPECT_EQ(info.get(e), 0) << what << ", matrix " << e;
          std::vector<double> af(static_cast<size_t>(n * n)), bf(static_cast<size_t>(n * k));
          for (int64_t i = 0; i < n * n; ++i) af[i] = a.get(e * n * n + i);
          for (int64_t i = 0; i < n * k; ++i) bf[i] = b.get(e * n * k + i);
          ASSERT_EQ(LAPACKE_dposv(LAPACK_ROW_MAJOR, lower ? 'L' : 'U', static_cast<lapack_int>(n), static_cast<lapack_int>(k), af.data(),
                                  static_cast<lapack_int>(n), bf.data(), static_cast<lapack_int>(k)),
                    0);
          worst = std::max(worst, test::relative_difference(x, e * n * k, bf));
        }
        EXPECT_LT(worst, 50.0 * n * eps * 100) << "against LAPACK's dposv, " << what;
      }
}

// info as potrf's and NaN for the matrices that are not positive definite, in registers, loops (CPUs)
// and teams, beside positive definite ones that are unaffected; a producer joins the kernel.
TEST(Linalg, PosvInfoAndFusedProducer) {
  test::TempDir dir;
  for (const char* tuning : {"", "loop_order=0"})
  for (const int64_t n : {4, 12, 40}) {
    test::LinalgTuning scope(tuning);
    // Matrix 1: its leading minor of order 3 made indefinite; matrix 0 positive definite.
    const std::string values = test::matrix_values(2, n, n, [](int64_t e, int64_t i, int64_t j) {
      return e == 1 && i == 2 && j == 2 ? -1.0 : i == j ? 4.0 : 1.0 / (2.0 + i + j);
    });
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + ", " + std::to_string(n) + R"(], "value": )" + values + R"(},
      "B": {"kind": "array", "dtype": "f64", "shape": [2, )" + std::to_string(n) + R"(, 2], "from": {"random": {"seed": 3}}}},
      "body": [{"op": "array.mul", "out": ["A3"], "in": ["A", 3]},
               {"op": "linalg.posv", "out": ["X", "info"], "in": ["A3", "B"]}],
      "outputs": {"X": "X.npy", "info": "info.npy"}})");
    int64_t launches = 0;
    auto out = test::run_on_device(program, std::nullopt, {}, &launches);
    EXPECT_EQ(launches, 1) << "array.mul joins posv's kernel, n=" << n;
    EXPECT_EQ(out.at("info").get(0), 0) << n;
    EXPECT_EQ(out.at("info").get(1), 3) << n;
    for (int64_t i = 0; i < 2 * n; ++i) {
      EXPECT_FALSE(std::isnan(out.at("X").get(i))) << "the positive definite matrix, n=" << n << ", element " << i;
      EXPECT_TRUE(std::isnan(out.at("X").get(2 * n + i))) << "n=" << n << ", element " << i;
    }
    test::expect_same(out, test::run_reference(program), 1e-10, "posv(3 A) against its reference, n=" + std::to_string(n));
  }
}

// gesv (Gauss-Jordan with LAPACK's partial pivoting) beside LAPACK's dgesv on random systems of every
// plan, relative to the largest element of LAPACK's solution, below 10 n eps cond(A) (cond from the
// singular values); 450 x 450 puts A in the core's workspace on PoCL in f64.
TEST(Linalg, GesvMatchesLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1},  {2, 1},   {3, 2},  {4, 4},  {7, 1},   {9, 1},
                                                          {16, 4}, {18, 16}, {33, 2}, {64, 1}, {100, 3}, {450, 2}};
  for (const char* tuning : {"", "loop_order=0"})  // the table's plans, then the GPUs' rows at 9 and 16
  for (const char* dtype : {"f64", "f32"})
    for (const auto& [n, k] : sizes) {
      if (*tuning && n != 9 && n != 16) continue;
      test::LinalgTuning scope(tuning);
      const int64_t count = n <= 16 ? 200 : n <= 64 ? 20 : 2;
      const std::string what = std::string(dtype) + " n=" + std::to_string(n) + ", k=" + std::to_string(k) + " (seed " +
                               std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " +
                                                 std::to_string(n) + ", " + std::to_string(n) + R"(], "from": {"random": {"seed": )" +
                                                 std::to_string(seed + n) + R"(, "low": -1, "high": 1}}},
        "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(count) + ", " +
                                                 std::to_string(n) + ", " + std::to_string(k) + R"(], "from": {"random": {"seed": )" +
                                                 std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.gesv", "out": ["X", "info"], "in": ["A", "B"]}],
        "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
      auto out = test::run_on_device(program);
      const HostArray &a = out.at("A"), &b = out.at("B"), &x = out.at("X"), &info = out.at("info");
      const double eps = std::string(dtype) == "f32" ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
      double worst = 0;
      for (int64_t e = 0; e < count; ++e) {
        EXPECT_EQ(info.get(e), 0) << what << ", matrix " << e;
        std::vector<double> af(static_cast<size_t>(n * n)), bf(static_cast<size_t>(n * k)), sv(static_cast<size_t>(n)), copy;
        std::vector<lapack_int> ipiv(static_cast<size_t>(n));
        for (int64_t i = 0; i < n * n; ++i) af[i] = a.get(e * n * n + i);
        for (int64_t i = 0; i < n * k; ++i) bf[i] = b.get(e * n * k + i);
        copy = af;
        ASSERT_EQ(LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'N', static_cast<lapack_int>(n), static_cast<lapack_int>(n), copy.data(),
                                 static_cast<lapack_int>(n), sv.data(), nullptr, static_cast<lapack_int>(n), nullptr,
                                 static_cast<lapack_int>(n)),
                  0);
        ASSERT_EQ(LAPACKE_dgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(k), af.data(),
                                static_cast<lapack_int>(n), ipiv.data(), bf.data(), static_cast<lapack_int>(k)),
                  0);
        worst = std::max(worst, test::relative_difference(x, e * n * k, bf) / (eps * sv.front() / sv.back()));
      }
      EXPECT_LT(worst, 10.0 * n) << "against LAPACK's dgesv, " << what;
    }
}

// info is LAPACK's on exactly singular matrices (dgesv's: the first exactly zero U(k, k)), in registers
// and in teams, beside regular matrices that are unaffected; X of the singular ones is NaN.
TEST(Linalg, GesvInfoIsLapacks) {
  test::TempDir dir;
  for (const int64_t n : {3, 12, 40}) {
    // Matrix 1: column min(5, n - 1) zero; matrix 2: its last row zero; matrix 0 regular.
    const std::string values = test::matrix_values(3, n, n, [n](int64_t e, int64_t i, int64_t j) {
      const bool zero = (e == 1 && j == std::min<int64_t>(5, n - 1)) || (e == 2 && i == n - 1);
      return zero ? 0.0 : std::sin(0.7 * i * i + 1.3 * j + 0.11 * i * j + e) + (i == j ? 2.0 : 0.0);
    });
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [3, )" + std::to_string(n) + ", " + std::to_string(n) + R"(], "value": )" + values + R"(},
      "B": {"kind": "array", "dtype": "f64", "shape": [3, )" + std::to_string(n) + R"(, 1], "from": {"random": {"seed": 3}}}},
      "body": [{"op": "linalg.gesv", "out": ["X", "info"], "in": ["A", "B"]}],
      "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}})");
    auto out = test::run_on_device(program);
    for (int64_t e = 0; e < 3; ++e) {
      std::vector<double> af(static_cast<size_t>(n * n)), bf(static_cast<size_t>(n));
      for (int64_t i = 0; i < n * n; ++i) af[i] = out.at("A").get(e * n * n + i);  // as the program read the text
      std::vector<lapack_int> ipiv(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) bf[i] = out.at("B").get(e * n + i);
      const lapack_int lapack_info = LAPACKE_dgesv(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), 1, af.data(),
                                                   static_cast<lapack_int>(n), ipiv.data(), bf.data(), 1);
      EXPECT_EQ(out.at("info").get(e), lapack_info) << "n=" << n << ", matrix " << e;
      for (int64_t i = 0; i < n; ++i) {
        if (lapack_info == 0) EXPECT_NEAR(out.at("X").get(e * n + i), bf[i], 1e-9 * (1 + std::fabs(bf[i]))) << "n=" << n << ", matrix " << e;
        else EXPECT_TRUE(std::isnan(out.at("X").get(e * n + i))) << "n=" << n << ", matrix " << e;
      }
    }
    EXPECT_EQ(out.at("info").get(0), 0) << n;
    EXPECT_GT(out.at("info").get(1), 0) << n;
    EXPECT_GT(out.at("info").get(2), 0) << n;
  }
}

// The solvers' plans on an H100 by order and width: posv takes potrf's rows (9 to 32, B's row beside A's);
// gesv and gesv_nopiv a row of [A | B] per work-item where values are of 4 bytes or B is at most half as
// wide as A, else teams (STAP's 18 x 18 with 16 in f64); the tests' setting gives PoCL the rows.
TEST(Linalg, SolversTakeRowsOnGpus) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 16, 16], "from": {"spd": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [10, 16, 4], "from": {"random": {"seed": 2}}},
    "S": {"kind": "array", "dtype": "f64", "shape": [10, 18, 18], "from": {"spd": {"seed": 3}}},
    "T": {"kind": "array", "dtype": "f64", "shape": [10, 18, 16], "from": {"random": {"seed": 4}}},
    "S4": {"kind": "array", "dtype": "f32", "shape": [10, 18, 18], "from": {"spd": {"seed": 5}}},
    "T4": {"kind": "array", "dtype": "f32", "shape": [10, 18, 16], "from": {"random": {"seed": 6}}}},
    "body": [{"op": "linalg.posv", "out": ["X1"], "in": ["A", "B"]},
             {"op": "linalg.gesv", "out": ["X2"], "in": ["A", "B"]},
             {"op": "linalg.gesv_nopiv", "out": ["X3"], "in": ["S", "T"]},
             {"op": "linalg.gesv_nopiv", "out": ["X4"], "in": ["S4", "T4"]},
             {"op": "linalg.posv", "out": ["X5"], "in": ["S", "T"]}],
    "outputs": {"X1": "X1.npy", "X2": "X2.npy", "X3": "X3.npy", "X4": "X4.npy", "X5": "X5.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  const std::string rows = "plan: rows: a row per work-item, teams of ";
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(rows + "16 (order 16 in 9..32), B's row in registers beside A's, both solves by rows; NVIDIA GPU table"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(rows + "32 (order 18 in 9..32), B's row in registers beside A's"), std::string::npos) << "posv, 16 right-hand sides\n" << r.out;
  EXPECT_NE(r.out.find(rows + "16 (order 16 in 9..32), [A | B]'s row in registers, two barriers a step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(rows + "32 (order 18 in 9..32), [A | B]'s row in registers, one barrier a step"), std::string::npos) << "f32\n" << r.out;
  EXPECT_NE(r.out.find("plan: team: 64 work-items per matrix owning columns (order 34 > 8), A in local memory"), std::string::npos)
      << "f64, B nearly as wide as A\n" << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=row_order=8");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: rows:"), std::string::npos) << r.out;
  const std::string pocl = (test::source_root() / "devices" / "pocl-cpu.json").string();
  r = test::run_fugue("explain --device-file " + pocl + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=loop_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(rows + "16 (order 16 in 9..16), B's row in registers beside A's"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(rows + "16 (order 16 in 9..16), [A | B]'s row in registers, two barriers a step"), std::string::npos) << r.out;
}
