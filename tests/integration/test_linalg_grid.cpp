// The linalg plugin's grid plans (tuning.h's Grid: a P x Q grid of work-items per matrix, each holding a
// block of it cyclically in registers) for potrf and getrf. GPUs take them for orders 33..128; on a CPU
// PoCL builds them slowly (a barrier a step, every step unrolled), so the table keeps them off there and
// these tests ask for them through FUGUE_LINALG_TUNING at small orders, under several grid shapes:
// factors against the CPU reference and LAPACK (pivots equal to dgetrf's), info on matrices that are not
// positive definite or are singular, upper factors, rectangular and complex matrices, variable orders.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

// Grids from order 5 to 24: square-ish (4 x 4 for 9..16) and two rows of work-items; for info and
// variable orders, blocks of at most 9 (so teams grow past the order's power of two). PoCL takes seconds
// to build each grid kernel, so each test takes few.
const char* const kGridTunings[] = {"register_order=2,row_order=4,grid_order=24", "register_order=2,row_order=4,grid_order=24,grid_rows=2"};
const char* const kSmallBlocks = "register_order=2,row_order=4,grid_order=24,grid_elements=9";
// getrf of 8-byte values (f64, c64) back in rows up to 16, f32 still in its grid.
const char* const kWideRows = "register_order=2,row_order=4,grid_order=24,lu_wide_row_order=16";

using test::LinalgTuning;
using test::shape_text;

}  // namespace

// explain names the grid, its shape and blocks, and the order against the table's limits.
TEST(LinalgGrid, ExplainSaysTheGrid) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 40, 40], "from": {"spd": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [10, 100, 60], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "linalg.potrf", "out": ["L"], "in": ["A"]},
             {"op": "linalg.getrf", "out": ["LU", "ipiv"], "in": ["B"]}],
    "outputs": {"L": "L.npy", "LU": "LU.npy", "ipiv": "ipiv.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  // getrf's blocked plan (above 32 in the table) off: its grid is what this test reads.
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=lu_blocked_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 8 x 8 work-items per matrix, each a 5 x 5 block of it cyclically in registers (order 40 in 33..128); "
                       "NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  // 100 rows: a team of 128 would hold blocks of 7 x 13 > 64, so 256 (16 x 16; 60 columns: blocks of 7 x 4).
  // getrf of f64 takes rows up to 32 (lu_wide_row_order), its grid from 33.
  EXPECT_NE(r.out.find("plan: grid: 16 x 16 work-items per matrix, each a 7 x 4 block of it cyclically in registers (order 100 in 33..128)"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=grid_rows=2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 2 x 64 work-items per matrix, each a 20 x 1 block"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=grid_rows=2,grid_rows=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 8 x 8 work-items per matrix, each a 5 x 5 block"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=grid_rows=3");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: grid_rows 3 is not a power of two"), std::string::npos) << r.out;
}

// getrf of values of 8 bytes or more takes rows up to lu_wide_row_order where that is above row_order (the
// H100's table: 32 both, so f32 takes rows at 32 as well); with row_order=16 f32 takes its grid and the
// wider values keep their rows, and lu_wide_row_order=0 gives them the grid too; more than team_max is refused.
TEST(LinalgGrid, WideValuesTakeRowsInGetrf) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 32, 32], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f32", "shape": [10, 32, 32], "from": {"random": {"seed": 1}}},
    "C": {"kind": "array", "dtype": "c64", "shape": [10, 20, 20], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "linalg.getrf", "out": ["LA", "pa"], "in": ["A"]},
             {"op": "linalg.getrf", "out": ["LB", "pb"], "in": ["B"]},
             {"op": "linalg.getrf", "out": ["LC", "pc"], "in": ["C"]}],
    "outputs": {"LA": "LA.npy", "LB": "LB.npy", "LC": "LC.npy"}})");
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: rows: a row per work-item, teams of 32 (order 32 in 9..32); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("plan: grid:"), std::string::npos) << "f32 takes rows at 32 too\n" << r.out;
  EXPECT_NE(r.out.find("plan: rows: a row per work-item, teams of 32 (order 20 in 9..32)"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=row_order=16");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: rows: a row per work-item, teams of 32 (order 32 in 9..32); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 8 x 4 work-items per matrix, each a 4 x 8 block of it cyclically in registers (order 32 in 17..128)"),
            std::string::npos)
      << "f32 takes its grid\n" << r.out;
  EXPECT_NE(r.out.find("plan: rows: a row per work-item, teams of 32 (order 20 in 9..32)"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=row_order=16,lu_wide_row_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: rows:"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=lu_wide_row_order=512");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: expected lu_wide_row_order <= team_max (a row per work-item of a team), found 512 and 256"),
            std::string::npos)
      << r.out;
}

// Cholesky in grids: lower and upper, f64, f32 and c64, orders with blocks cut short at the edge; the
// factor within the reference's tolerance and LAPACK's, info 0.
TEST(LinalgGrid, PotrfMatchesTheReferenceAndLapack) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* tuning : kGridTunings) {
    LinalgTuning scoped(tuning);
    for (const auto& [n, dtype, lower] : std::vector<std::tuple<int64_t, std::string, bool>>{
             {5, "f64", true}, {12, "f64", false}, {9, "f32", true}, {11, "c64", false}, {7, "c128", true}}) {
      const std::string what = std::string(tuning) + ", " + dtype + " n=" + std::to_string(n) + (lower ? " lower" : " upper") + " (seed " +
                               std::to_string(seed) + ")";
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": )" + shape_text(6, n, n) + R"(, "from": {"spd": {"seed": )" +
                                                 std::to_string(seed + n) + R"(, "cond": 100}}}},
        "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": )" + (lower ? "true" : "false") + R"(}}],
        "outputs": {"L": "L.npy", "info": "info.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      const bool single = dtype == "f32" || dtype == "c64";
      test::expect_same(out, test::run_reference(program), single ? 2e-5 : 1e-12, what);
      if (dtype != "f64") continue;
      for (int64_t e = 0; e < 6; ++e) {
        std::vector<double> f(static_cast<size_t>(n * n));
        for (int64_t i = 0; i < n * n; ++i) f[i] = out.at("A").get(e * n * n + i);
        ASSERT_EQ(LAPACKE_dpotrf(LAPACK_ROW_MAJOR, lower ? 'L' : 'U', static_cast<lapack_int>(n), f.data(), static_cast<lapack_int>(n)), 0);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const double want = (lower ? j <= i : j >= i) ? f[i * n + j] : 0;
            EXPECT_NEAR(out.at("L").get(e * n * n + i * n + j), want, 1e-12) << what << ", matrix " << e << " (" << i << ", " << j << ")";
          }
        EXPECT_EQ(out.at("info").get(e), 0) << what;
      }
    }
  }
}

// LU in grids: square, tall and wide, f64 (pivots equal to dgetrf's) and c64 (tall), against the reference.
TEST(LinalgGrid, GetrfMatchesTheReferenceAndLapacksPivots) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* tuning : {kGridTunings[0], kGridTunings[1], kWideRows}) {
    LinalgTuning scoped(tuning);
    for (const auto& [m, n, dtype] : std::vector<std::tuple<int64_t, int64_t, std::string>>{
             {10, 10, "f64"}, {9, 6, "f64"}, {6, 11, "f64"}, {5, 5, "f32"}, {11, 6, "c64"}}) {
      const std::string what = std::string(tuning) + ", " + dtype + " " + std::to_string(m) + "x" + std::to_string(n) + " (seed " +
                               std::to_string(seed) + ")";
      const int64_t count = 8, k = std::min(m, n);
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": )" + shape_text(count, m, n) + R"(, "from": {"random": {"seed": )" +
                                                 std::to_string(seed + m * 100 + n) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
        "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "A": "A.npy"}})");
      auto out = test::run_on_device(program);
      const bool single = dtype == "f32" || dtype == "c64";
      test::expect_same(out, test::run_reference(program), single ? 1e-4 : 1e-11, what);
      if (dtype != "f64") continue;
      for (int64_t e = 0; e < count; ++e) {
        std::vector<double> f(static_cast<size_t>(m * n));
        for (int64_t i = 0; i < m * n; ++i) f[i] = out.at("A").get(e * m * n + i);
        std::vector<lapack_int> ipiv(static_cast<size_t>(k));
        ASSERT_EQ(LAPACKE_dgetrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(m), static_cast<lapack_int>(n), f.data(), static_cast<lapack_int>(n),
                                 ipiv.data()),
                  0);
        for (int64_t s = 0; s < k; ++s) EXPECT_EQ(out.at("ipiv").get(e * k + s), ipiv[s]) << what << ", matrix " << e << ", step " << s;
        for (int64_t i = 0; i < m * n; ++i) EXPECT_NEAR(out.at("LU").get(e * m * n + i), f[i], 1e-11) << what << ", matrix " << e;
      }
    }
  }
}

// info in grids: matrices that are not positive definite (potrf) and exactly singular ones (getrf, the
// factorization completing), beside regular ones; variable orders, a bad one among them. All against
// the reference, info against LAPACK's.
TEST(LinalgGrid, InfoAndVariableOrders) {
  test::TempDir dir;
  for (const char* tuning : {kSmallBlocks}) {
    LinalgTuning scoped(tuning);
    const int64_t n = 10, count = 4;
    // Matrix e spoiled at pivot 3 e - 1 (e >= 1): a negative diagonal (potrf), a zero column (getrf).
    auto value = [&](bool zero_column) {
      return [=](int64_t e, int64_t i, int64_t j) -> double {
        const int64_t bad = e == 0 ? -1 : 3 * e - 1;
        if (zero_column) return j == bad ? 0.0 : (i == j ? 2.0 * n : 1.0 / (1 + i + 2 * j));
        return i == j ? (i == bad ? -1.0 : 2.0 * n) : 1.0 / (1 + i + j);
      };
    };
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "S": {"kind": "array", "dtype": "f64", "shape": [4, 10, 10], "value": )" + test::matrix_values(count, n, n, value(false)) + R"(},
      "G": {"kind": "array", "dtype": "f64", "shape": [4, 10, 10], "value": )" + test::matrix_values(count, n, n, value(true)) + R"(},
      "P": {"kind": "array", "dtype": "f64", "shape": [5, 10, 10], "from": {"spd": {"seed": 3}}},
      "orders": {"kind": "array", "dtype": "i32", "shape": [5], "value": [10, 7, 0, 11, 6]}},
      "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["S"]},
               {"op": "linalg.getrf", "out": ["LU", "ipiv", "ginfo"], "in": ["G"]},
               {"op": "linalg.potrf_vbatched", "out": ["LV", "vinfo"], "in": ["P", "orders"], "attrs": {"lower": false}},
               {"op": "linalg.getrf_vbatched", "out": ["LUV", "vipiv", "vginfo"], "in": ["P", "orders"]}],
      "outputs": {"L": "L.npy", "info": "info.npy", "LU": "LU.npy", "ipiv": "ipiv.npy", "ginfo": "ginfo.npy", "S": "S.npy", "G": "G.npy",
                  "LV": "LV.npy", "vinfo": "vinfo.npy", "LUV": "LUV.npy", "vipiv": "vipiv.npy", "vginfo": "vginfo.npy"}})");
    auto out = test::run_on_device(program);
    test::expect_same(out, test::run_reference(program), 1e-11, tuning);
    for (int64_t e = 0; e < count; ++e) {
      std::vector<double> s(static_cast<size_t>(n * n)), g(static_cast<size_t>(n * n));
      for (int64_t i = 0; i < n * n; ++i) {
        s[i] = out.at("S").get(e * n * n + i);
        g[i] = out.at("G").get(e * n * n + i);
      }
      std::vector<lapack_int> ipiv(static_cast<size_t>(n));
      const lapack_int potrf_info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', static_cast<lapack_int>(n), s.data(), static_cast<lapack_int>(n));
      const lapack_int getrf_info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, static_cast<lapack_int>(n), static_cast<lapack_int>(n), g.data(),
                                                   static_cast<lapack_int>(n), ipiv.data());
      EXPECT_EQ(out.at("info").get(e), potrf_info) << tuning << ", matrix " << e;
      EXPECT_EQ(out.at("ginfo").get(e), getrf_info) << tuning << ", matrix " << e;
      EXPECT_EQ(potrf_info == 0, e == 0);
      EXPECT_EQ(getrf_info == 0, e == 0);
    }
    EXPECT_EQ(out.at("vinfo").get(3), -1) << tuning;
    EXPECT_EQ(out.at("vginfo").get(3), -1) << tuning;
  }
}

// Subnormal pivots in a grid: the multipliers divide rather than multiply by a reciprocal that would
// overflow (as LAPACK's getf2), so the factors stay finite and the pivots are the reference's; a
// Cholesky of a scaled matrix is the scaled factor.
TEST(LinalgGrid, TinyAndHugeMatrices) {
  test::TempDir dir;
  LinalgTuning scoped(kGridTunings[0]);
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "S": {"kind": "array", "dtype": "f64", "shape": [6, 9, 9], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
    "P": {"kind": "array", "dtype": "f64", "shape": [6, 9, 9], "from": {"spd": {"seed": 5, "cond": 10}}}},
    "body": [{"op": "array.mul", "out": ["A"], "in": ["S", 1e-310]},
             {"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]},
             {"op": "array.mul", "out": ["H"], "in": ["P", 1e160]},
             {"op": "linalg.potrf", "out": ["L", "pinfo"], "in": ["H"]},
             {"op": "linalg.potrf", "out": ["L1"], "in": ["P"]}],
    "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "L": "L.npy", "pinfo": "pinfo.npy", "L1": "L1.npy"}})");
  auto out = test::run_on_device(program);
  auto ref = test::run_reference(program);
  for (int64_t i = 0; i < out.at("LU").elements(); ++i) ASSERT_TRUE(std::isfinite(out.at("LU").get(i))) << "element " << i;
  for (int64_t i = 0; i < out.at("ipiv").elements(); ++i) EXPECT_EQ(out.at("ipiv").get(i), ref.at("ipiv").get(i)) << "pivot " << i;
  double worst = 0, norm = 0;
  for (int64_t i = 0; i < out.at("L").elements(); ++i) {
    worst = std::max(worst, std::fabs(out.at("L").get(i) / 1e80 - out.at("L1").get(i)));
    norm = std::max(norm, std::fabs(out.at("L1").get(i)));
  }
  EXPECT_LT(worst, 1e-13 * norm);
  for (int64_t e = 0; e < 6; ++e) EXPECT_EQ(out.at("pinfo").get(e), 0);
}

// A factorization in a grid followed by its solve on the same matrices, all four operations in one
// kernel (the grids' teams of 16 are the solves'; `fugue explain` shows it): X against the reference's,
// and the product A X against B.
TEST(LinalgGrid, FactorThenSolve) {
  test::TempDir dir;
  for (const char* tuning : kGridTunings) {
    LinalgTuning scoped(tuning);
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [5, 10, 10], "from": {"spd": {"seed": 8, "cond": 100}}},
      "B": {"kind": "array", "dtype": "f64", "shape": [5, 10, 2], "from": {"random": {"seed": 9, "low": -1, "high": 1}}}},
      "body": [{"op": "linalg.potrf", "out": ["L"], "in": ["A"]},
               {"op": "linalg.potrs", "out": ["Y"], "in": ["L", "B"]},
               {"op": "linalg.getrf", "out": ["LU", "ipiv"], "in": ["A"]},
               {"op": "linalg.getrs", "out": ["X"], "in": ["LU", "ipiv", "B"]}],
      "outputs": {"Y": "Y.npy", "X": "X.npy", "A": "A.npy", "B": "B.npy"}})");
    auto out = test::run_on_device(program);
    test::expect_same(out, test::run_reference(program), 1e-10, tuning);
    for (const char* x : {"X", "Y"})
      for (int64_t e = 0; e < 5; ++e)
        for (int64_t i = 0; i < 10; ++i)
          for (int64_t c = 0; c < 2; ++c) {
            double ax = 0;
            for (int64_t j = 0; j < 10; ++j) ax += out.at("A").get(e * 100 + i * 10 + j) * out.at(x).get(e * 20 + j * 2 + c);
            EXPECT_NEAR(ax, out.at("B").get(e * 20 + i * 2 + c), 1e-10) << tuning << ", " << x << ", matrix " << e;
          }
  }
}
