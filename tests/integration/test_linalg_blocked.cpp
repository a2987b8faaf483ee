// The blocked plans of potrf, getrf and geqrf (blocked_cholesky.h, blocked_lu.h, blocked_qr.h: kernels
// over the whole batch, panel by panel): explain names them above the table's orders on a GPU and where a
// CPU's loop plan does not fit local memory; entries that are not positive definite stop alone, lower and upper,
// real and complex, with the reference's factors; the factors written over their input; element-wise
// producers and solves around them run as kernels of their own and give the reference's results; bad
// panel widths are refused by name; QR over its input. (test_linalg.cpp, test_linalg_qr.cpp and
// test_linalg_complex.cpp check the factors and pivots against LAPACK at orders 9 to 460, square and not.)
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::LinalgTuning;
using test::shape_text;

std::string device_file(const char* name) { return (test::source_root() / "devices" / name).string(); }

// Positive definite matrices (diagonally dominant, Hermitian when complex: elements [re, im]) of order
// n, matrix e spoiled at pivot bad[e] (-1: none).
std::string spoiled(int64_t count, int64_t n, bool complex, const std::vector<int64_t>& bad) {
  std::string text = "[";
  char buf[64];
  for (int64_t e = 0; e < count; ++e) {
    text += e ? ", [" : "[";
    for (int64_t i = 0; i < n; ++i) {
      text += i ? ", [" : "[";
      for (int64_t j = 0; j < n; ++j) {
        const double re = i == j ? (i == bad[e] ? -1.0 : 2.0 * static_cast<double>(n)) : 1.0 / static_cast<double>(1 + i + j);
        const double im = i == j ? 0.0 : (i < j ? 0.25 : -0.25) * re;
        if (complex) std::snprintf(buf, sizeof buf, "[%.17g, %.17g]", re, im);
        else std::snprintf(buf, sizeof buf, "%.17g", re);
        text += (j ? ", " : "") + std::string(buf);
      }
      text += "]";
    }
    text += "]";
  }
  return text + "]";
}

}  // namespace

// The H100's table takes potrf's and geqrf's blocked plans above order 64, panels of 32, and getrf's above 32; the described PoCL CPU keeps its loops up to 1024 while the matrix fits three
// quarters of its local memory, then blocks; the variable-size potrf never takes it; blocked_order=0
// turns it off.
TEST(LinalgBlocked, ExplainSaysBlockedWhereTheTableSays) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [4, 64, 64], "from": {"spd": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [2, 256, 256], "from": {"spd": {"seed": 2}}},
    "C": {"kind": "array", "dtype": "f64", "shape": [1, 600, 600], "from": {"spd": {"seed": 3}}},
    "n": {"kind": "array", "dtype": "i32", "shape": [2], "value": [256, 100]}},
    "body": [{"op": "linalg.potrf", "out": ["LA"], "in": ["A"]},
             {"op": "linalg.potrf", "out": ["LB"], "in": ["B"], "attrs": {"lower": false}},
             {"op": "linalg.potrf", "out": ["LC"], "in": ["C"]},
             {"op": "linalg.potrf_vbatched", "out": ["LV"], "in": ["B", "n"]},
             {"op": "linalg.getrf", "out": ["UB", "pb"], "in": ["B"]},
             {"op": "linalg.getrf", "out": ["UA", "pa"], "in": ["A"]},
             {"op": "linalg.geqrf", "out": ["QB", "tb"], "in": ["B"]},
             {"op": "linalg.geqrf", "out": ["QC", "tc"], "in": ["C"]}],
    "outputs": {"LA": "LA.npy", "LB": "LB.npy", "LC": "LC.npy", "LV": "LV.npy", "UB": "UB.npy", "UA": "UA.npy"}})");
  const std::string program = (dir / "p.json").string();
  // explain on a described device, with FUGUE_LINALG_TUNING set to `tuning` (unless empty).
  const auto explain = [&](const char* device, const std::string& tuning = "") {
    return test::run_fugue("explain --device-file " + device_file(device) + " " + program, tuning.empty() ? "" : "FUGUE_LINALG_TUNING=" + tuning);
  };
  auto r = explain("nvidia-h100.json");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string blocked =
      "plan: blocked: panels of 32 columns over the whole batch, each factored, the rows below solved, the trailing triangles updated in 64 x 64 tiles, in L's "
      "storage, kernels of their own (order ";
  EXPECT_NE(r.out.find(blocked + "256 > 64); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(blocked + "600 > 64); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: grid: 16 x 8 work-items per matrix"), std::string::npos) << "order 64 keeps its grid\n" << r.out;
  // getrf blocked above 32 on the H100: order 256 and 64 blocked.
  const std::string lu_blocked = "plan: blocked: panels of 32 columns over the whole batch, each factored by ";
  EXPECT_NE(r.out.find(lu_blocked + "128 work-items a matrix, swaps and U's rows, then the rest updated in 64 x 64 tiles, kernels of their own (order 256 > 32); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  // f64 up to order 128: panels of 16.
  EXPECT_NE(r.out.find("plan: blocked: panels of 16 columns over the whole batch, each factored by 32 work-items a matrix, swaps and U's rows, then the rest "
                       "updated in 64 x 64 tiles, kernels of their own (order 64 > 32); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  const std::string qr_blocked = "plan: blocked: panels of 32 columns over the whole batch, each reflected by 256 work-items a matrix with its T, then "
                                 "applied to the columns right of it, 64 a work-group, kernels of their own (order ";
  EXPECT_NE(r.out.find(qr_blocked + "256 > 64); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(qr_blocked + "600 > 64); NVIDIA GPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("team: 256 work-items per matrix owning columns (order 256 > 32), the matrix in L's storage"), std::string::npos)
      << "the variable sizes keep their team\n" << r.out;
  r = explain("pocl-cpu.json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(blocked + "600: the loop plan's matrix exceeds local memory); CPU table"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("each reflected by 256 work-items a matrix with its T, then applied to the columns right of it, 64 a work-group, kernels of "
                       "their own (order 600: the loop plan's matrix exceeds local memory); CPU table"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: loops: one matrix per work-item, its loops kept, the matrix in local memory, factored as U = L^H along its rows (order "
                       "256 in 9..1024)"),
            std::string::npos)
      << r.out;
  r = explain("nvidia-h100.json", "lu_blocked_order=64");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(lu_blocked + "128 work-items a matrix, swaps and U's rows, then the rest updated in 64 x 64 tiles, kernels of their own (order 256 > 64); NVIDIA GPU table"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: grid: 16 x 8 work-items per matrix, each a 4 x 8 block"), std::string::npos) << "getrf of order 64 back in its grid\n" << r.out;
  r = explain("nvidia-h100.json", "blocked_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find(blocked), std::string::npos) << "potrf's blocked plan off\n" << r.out;
  r = explain("nvidia-h100.json", "blocked_panel=16");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: blocked: panels of 16 columns"), std::string::npos) << r.out;
  for (const char* bad : {"blocked_panel=12", "blocked_panel=0", "blocked_order=2000"}) {
    r = explain("nvidia-h100.json", bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string("FUGUE_LINALG_TUNING: \"") + bad + "\""), std::string::npos) << r.out;
  }
}

// Entries spoiled in the first panel, inside a later one, at the last pivot, or not at all, beside each
// other: info and the factors (their first info - 1 columns, or rows when upper) are the reference's,
// in f64 and c128, lower and upper, panels of 8 over orders that 8 divides and does not.
TEST(LinalgBlocked, FailuresStopTheirEntryAlone) {
  test::TempDir dir;
  LinalgTuning scope("blocked_order=8,blocked_panel=8");
  for (const char* dtype : {"f64", "c128"})
    for (const int64_t n : {20, 32})
      for (const bool lower : {true, false}) {
        const bool complex = std::string(dtype) == "c128";
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + (lower ? " lower" : " upper");
        const std::string values = spoiled(5, n, complex, {-1, 0, 5, 11, n - 1});
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(5, n, n) +
                                                   R"(, "value": )" + values + R"(}},
          "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": )" + (lower ? "true" : "false") + R"(}}],
          "outputs": {"L": "L.npy", "info": "info.npy"}})");
        const auto out = test::run_on_device(program);
        test::expect_same(out, test::run_reference(program), 1e-12, what);
        const int64_t want[] = {0, 1, 6, 12, n};
        for (int64_t e = 0; e < 5; ++e) EXPECT_EQ(out.at("info").get(e), want[e]) << what << ", matrix " << e;
      }
}

// The factor written over A (the same buffer in and out), then its solve; and a producer (A / 2 + I)
// before it: each its own kernel, the reference's results.
TEST(LinalgBlocked, OverItsInputBetweenAProducerAndASolve) {
  test::TempDir dir;
  LinalgTuning scope("blocked_order=8,blocked_panel=16");
  for (const bool lower : {true, false}) {
    const std::string flag = lower ? "true" : "false";
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [3, 40, 40], "from": {"spd": {"seed": 7, "cond": 30}}},
      "B": {"kind": "array", "dtype": "f64", "shape": [3, 40, 3], "from": {"random": {"seed": 8}}},
      "I": {"kind": "array", "dtype": "f64", "shape": [3, 40, 40], "from": {"spd": {"seed": 9, "cond": 1}}}},
      "body": [{"op": "array.mul", "out": ["H"], "in": ["A", 0.5]},
               {"op": "array.add", "out": ["S"], "in": ["H", "I"]},
               {"op": "linalg.potrf", "out": ["S", "info"], "in": ["S"], "attrs": {"lower": )" + flag + R"(}},
               {"op": "linalg.potrs", "out": ["X"], "in": ["S", "B"], "attrs": {"lower": )" + flag + R"(}}],
      "outputs": {"S": "S.npy", "info": "info.npy", "X": "X.npy"}})");
    test::expect_same(test::run_on_device(program), test::run_reference(program), 1e-10, lower ? "lower" : "upper");
  }
}

// LU written over its input (the same buffer in and out), beside a singular entry, then its solve: the
// reference's factors, pivots, info and solutions (the singular entry's are not finite).
TEST(LinalgBlocked, LuOverItsInputThenItsSolve) {
  test::TempDir dir;
  LinalgTuning scope("lu_blocked_order=8,blocked_panel=8");
  const int64_t n = 21;
  const std::string values = test::matrix_values(3, n, n, [](int64_t e, int64_t i, int64_t j) {
    // Diagonally dominant, so regular (the entry with a zero column aside) and well conditioned.
    return e == 2 && j == 9 ? 0.0
                            : std::sin(1.0 + static_cast<double>(i * i) * 7.1 + static_cast<double>(j) * 3.3 + static_cast<double>(e)) +
                                  (i == j ? 2.0 * static_cast<double>(n) : 0.0);
  });
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "G": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(3, n, n) + R"(, "value": )" + values + R"(},
    "B": {"kind": "array", "dtype": "f64", "shape": )" + shape_text(3, n, 2) + R"(, "from": {"random": {"seed": 4}}}},
    "body": [{"op": "linalg.getrf", "out": ["G", "ipiv", "info"], "in": ["G"]},
             {"op": "linalg.getrs", "out": ["X"], "in": ["G", "ipiv", "B"]}],
    "outputs": {"G": "G.npy", "ipiv": "ipiv.npy", "info": "info.npy", "X": "X.npy"}})");
  const auto out = test::run_on_device(program);
  const auto want = test::run_reference(program);
  EXPECT_EQ(out.at("info").get(2), 10);
  // The singular entry's solution is not finite: compare the factors of all and the others' solutions.
  test::expect_same({{"G", out.at("G")}, {"ipiv", out.at("ipiv")}, {"info", out.at("info")}},
                    {{"G", want.at("G")}, {"ipiv", want.at("ipiv")}, {"info", want.at("info")}}, 1e-9, "factors");
  for (int64_t e = 0; e < 2 * n * 2; ++e) EXPECT_NEAR(out.at("X").get(e), want.at("X").get(e), 1e-8) << "X element " << e;
}

// A complex pivot with an infinite part: the multipliers below it are x / p = 0, as LAPACK's and the
// reference's (scaling p by its larger part, as the reciprocal does against overflow, made them NaN),
// in the emitted plans and the blocked one. The infinity comes from a producer: (1e300 + 0i)^2.
TEST(LinalgBlocked, InfinitePivotsOfComplexLu) {
  test::TempDir dir;
  for (const char* tuning : {"", "lu_blocked_order=8,blocked_panel=8"})
    for (const auto& [m, n, row, col] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{9, 1, 0, 0}, {12, 12, 5, 3}}) {
      LinalgTuning scope(tuning);
      std::string values = "[[", big = "[[";
      for (int64_t i = 0; i < m; ++i) {
        values += i ? ", [" : "[";
        big += i ? ", [" : "[";
        for (int64_t j = 0; j < n; ++j) {
          const double re = std::sin(1.0 + 0.7 * static_cast<double>(i * n + j)), im = std::cos(2.0 + 1.3 * static_cast<double>(i + 3 * j));
          values += (j ? ", [" : "[") + std::to_string(re) + ", " + std::to_string(im) + "]";
          big += std::string(j ? ", " : "") + (i == row && j == col ? "[1e300, 0]" : "[1, 0]");
        }
        values += "]";
        big += "]";
      }
      values += "]]";
      big += "]]";
      const std::string what = std::to_string(m) + " x " + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning;
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "A": {"kind": "array", "dtype": "c128", "shape": )" + shape_text(1, m, n) + R"(, "value": )" + values + R"(},
        "S": {"kind": "array", "dtype": "c128", "shape": )" + shape_text(1, m, n) + R"(, "value": )" + big + R"(}},
        "body": [{"op": "array.mul", "out": ["T"], "in": ["S", "S"]},
                 {"op": "array.mul", "out": ["G"], "in": ["A", "T"]},
                 {"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["G"]}],
        "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy"}})");
      const auto out = test::run_on_device(program);
      const HostArray& lu = out.at("LU");
      int64_t nans = 0;
      for (int64_t e = 0; e < m * n; ++e) nans += std::isnan(lu.get_complex(e).real()) || std::isnan(lu.get_complex(e).imag()) ? 1 : 0;
      EXPECT_EQ(nans, 0) << what;
      // The matrix's own conditioning (its finite values): the factors within 1e-8 of the reference's.
      test::expect_same(out, test::run_reference(program), 1e-8, what);
    }
}

// QR written over its input (the same buffer in and out), wide, square and tall, f64 and c128, then Q
// formed from it: the reference's factors, taus and Q, panels of 8 (the last narrower, and for the wide
// matrix with columns right of it).
TEST(LinalgBlocked, QrOverItsInputThenQ) {
  test::TempDir dir;
  LinalgTuning scope("qr_blocked_order=8,blocked_panel=8");
  for (const char* dtype : {"f64", "c128"})
    for (const auto& [m, n] : {std::pair<int64_t, int64_t>{21, 21}, {30, 19}, {13, 29}}) {
      const std::string what = std::string(dtype) + " " + std::to_string(m) + " x " + std::to_string(n);
      const bool tall = m >= n;
      Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "G": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(3, m, n) + R"(, "from": {"random": {"seed": 6, "low": -1, "high": 1}}}},
        "body": [{"op": "linalg.geqrf", "out": ["G", "tau"], "in": ["G"]})" +
                                                 std::string(tall ? R"(, {"op": "linalg.orgqr", "out": ["Q"], "in": ["G", "tau"]}], "outputs": {"G": "G.npy", "tau": "tau.npy", "Q": "Q.npy"}})"
                                                                  : R"(], "outputs": {"G": "G.npy", "tau": "tau.npy"}})"));
      test::expect_same(test::run_on_device(program), test::run_reference(program), 1e-11, what);
    }
}

// A NaN or an infinity in one column: the blocked QR leaves finite whatever the reference leaves finite
// (the rows above a reflector never meet it: V's zeros are skipped, not multiplied, and a reflector with
// tau 0 changes nothing), in panels of 8 with columns right of the spoiled one's panel, and in panels of
// 64, whose first rows span two of the apply kernel's staged blocks of 32: a reflector of NaNs from
// column 40 (or 20) must leave rows 0..39 (0..19) of the columns right of the panel as the reference
// does, in both blocks.
TEST(LinalgBlocked, QrKeepsANanOrInfinityWhereTheReferenceHasIt) {
  test::TempDir dir;
  struct Case {
    const char* dtype;
    int64_t panel, m, n, row, col;
    const char* spoil;
  };
  // Panels of 64 hold f32 only (an f64 panel work-item's column would pass 64 registers).
  for (const auto& [dtype, panel, m, n, row, col, spoil] :
       {Case{"f64", 8, 12, 10, 5, 1, "-1"}, Case{"f64", 8, 12, 10, 4, 2, "1e300"}, Case{"f64", 8, 12, 10, 0, 3, "-1"},
        Case{"f64", 8, 12, 10, 11, 9, "1e300"}, Case{"f32", 64, 90, 80, 0, 40, "-1"}, Case{"f32", 64, 90, 80, 2, 20, "1e30"},
        Case{"f32", 64, 90, 80, 40, 70, "-1"}}) {
    LinalgTuning scope(("qr_blocked_order=8,blocked_panel=" + std::to_string(panel)).c_str());
    // The panel is as wide as asked (else the blocks this case is for would not be met).
    test::write_text(dir / "panel.json", R"({"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" +
                                             shape_text(1, m, n) + R"(, "from": {"random": {"seed": 1}}}}, "body": [{"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["A"]}], "outputs": {"QR": "QR.npy"}})");
    ASSERT_NE(test::run_fugue("explain " + (dir / "panel.json").string()).out.find("blocked: panels of " + std::to_string(panel) + " columns"),
              std::string::npos)
        << dtype << " panels of " << panel;
    std::string mask = "[[";
    for (int64_t i = 0; i < m; ++i) {
      mask += i ? ", [" : "[";
      for (int64_t j = 0; j < n; ++j) mask += std::string(j ? ", " : "") + (i == row && j == col ? spoil : "1");
      mask += "]";
    }
    mask += "]]";
    // sqrt(-1) is NaN; 1e300 (1e30 in f32) squared is infinite.
    const std::string spoiling = std::string(spoil) == "-1" ? R"({"op": "array.sqrt", "out": ["S"], "in": ["M"]})" : R"({"op": "array.mul", "out": ["S"], "in": ["M", "M"]})";
    const std::string what = std::string(dtype) + ", panels of " + std::to_string(panel) + ", element (" + std::to_string(row) + ", " + std::to_string(col) +
                             ") spoiled by " + spoil;
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(1, m, n) + R"(, "from": {"random": {"seed": 5}}},
      "M": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(1, m, n) + R"(, "value": )" + mask + R"(}},
      "body": [)" + spoiling + R"(, {"op": "array.mul", "out": ["B"], "in": ["A", "S"]},
               {"op": "linalg.geqrf", "out": ["QR", "tau"], "in": ["B"]}],
      "outputs": {"QR": "QR.npy", "tau": "tau.npy"}})");
    const auto out = test::run_on_device(program);
    const auto want = test::run_reference(program);
    int64_t finite = 0;
    for (int64_t e = 0; e < m * n; ++e) {
      const double w = want.at("QR").get(e), g = out.at("QR").get(e);
      if (!std::isfinite(w)) continue;
      ++finite;
      EXPECT_NEAR(g, w, (std::string(dtype) == "f32" ? 1e-3 : 1e-10) * (1 + std::fabs(w))) << what << ", element " << e;
    }
    EXPECT_GT(finite, 0) << what;
  }
}

// The blocked QR's panel holds a column's rows in a work-group: on the H100 a matrix of 1024 rows (f64)
// is blocked, one of 4096 rows stays in the teams, which take any height.
TEST(LinalgBlocked, VeryTallQrStaysInTeams) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [2, 1024, 100], "from": {"random": {"seed": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [2, 4096, 100], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "linalg.geqrf", "out": ["QA", "ta"], "in": ["A"]},
             {"op": "linalg.geqrf", "out": ["QB", "tb"], "in": ["B"]}],
    "outputs": {"QA": "QA.npy", "QB": "QB.npy"}})");
  const auto r = test::run_fugue("explain --device-file " + device_file("nvidia-h100.json") + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("each reflected by 256 work-items a matrix with its T, then applied to the columns right of it, 64 a work-group, kernels of "
                       "their own (order 1024 > 64)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan: team: 256 work-items per matrix owning columns (order 4096 > 8), in QR's storage"), std::string::npos) << r.out;
}

// Complex pivots whose larger part is below the smallest normal number (c64 1e-40, c128 1e-310): their
// reciprocal would overflow, so the multipliers and the scaled rows divide, as zgetf2 does (they had
// been NaN), in every plan: registers, a CPU's loops, teams, a grid and blocked. getrf and gesv (pivoting
// and not) give the reference's factors and solutions, all finite.
TEST(LinalgBlocked, TinyComplexPivotsAreDividedBy) {
  test::TempDir dir;
  const char* const tunings[] = {"", "loop_order=0", "register_order=2,row_order=4,grid_order=24", "lu_blocked_order=8,blocked_panel=8"};
  for (const char* tuning : tunings)
    for (const auto& [dtype, exponent] : {std::pair<const char*, const char*>{"c64", "e-40"}, {"c128", "e-310"}})
      for (int64_t n : {6, 12}) {
        LinalgTuning scope(tuning);
        // A = 10^exponent (M + 3 I), M's parts within 1; B = 10^exponent (1 + 0.5 i).
        std::string a = "[[", b = "[[";
        for (int64_t i = 0; i < n; ++i) {
          a += i ? ", [" : "[";
          b += std::string(i ? ", " : "") + "[[1" + exponent + ", 0.5" + exponent + "]]";
          for (int64_t j = 0; j < n; ++j) {
            const double re = std::sin(1.0 + 0.7 * static_cast<double>(i * n + j)) + (i == j ? 3 : 0), im = std::cos(2.0 + 1.3 * static_cast<double>(i + 3 * j));
            a += (j ? ", [" : "[") + std::to_string(re) + exponent + ", " + std::to_string(im) + exponent + "]";
          }
          a += "]";
        }
        a += "]]";
        b += "]]";
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + ", FUGUE_LINALG_TUNING=" + tuning;
        const std::string type = std::string(R"("kind": "array", "dtype": ")") + dtype + R"(", )";
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {)" + type + R"("shape": )" + shape_text(1, n, n) + R"(, "value": )" + a + R"(},
          "B": {)" + type + R"("shape": )" + shape_text(1, n, 1) + R"(, "value": )" + b + R"(}},
          "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]},
                   {"op": "linalg.gesv", "out": ["X", "xinfo"], "in": ["A", "B"]},
                   {"op": "linalg.gesv_nopiv", "out": ["Y", "yinfo"], "in": ["A", "B"]}],
          "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy", "X": "X.npy", "xinfo": "xinfo.npy", "Y": "Y.npy", "yinfo": "yinfo.npy"}})");
        const auto out = test::run_on_device(program);
        for (const char* name : {"X", "Y"}) {
          const HostArray& x = out.at(name);
          for (int64_t e = 0; e < n; ++e)
            EXPECT_TRUE(std::isfinite(x.get_complex(e).real()) && std::isfinite(x.get_complex(e).imag())) << what << ", " << name << " element " << e;
        }
        // The LU factors' U holds values of order scale: compared relative to it, X and the multipliers as they are.
        const auto want = test::run_reference(program);
        test::expect_same({{"X", out.at("X")}, {"Y", out.at("Y")}, {"ipiv", out.at("ipiv")}, {"info", out.at("info")}},
                          {{"X", want.at("X")}, {"Y", want.at("Y")}, {"ipiv", want.at("ipiv")}, {"info", want.at("info")}},
                          std::string(dtype) == "c64" ? 1e-3 : 1e-9, what);
        const HostArray &lu = out.at("LU"), &lu_want = want.at("LU");
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < i; ++j) {
            const std::complex<double> g = lu.get_complex(i * n + j), w = lu_want.get_complex(i * n + j);
            EXPECT_LT(std::abs(g - w), std::string(dtype) == "c64" ? 1e-3 : 1e-9) << what << ", L(" << i << ", " << j << ")";
          }
      }
}
