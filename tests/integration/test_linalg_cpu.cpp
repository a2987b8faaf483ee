// The linalg plugin's plans for CPUs: gemm in blocks of one native vector (gemm_vectors.h, the width
// from the device, ABI 2.10) and potrf, getrf, potrs and getrs with one matrix per work-item and their
// loops kept (tuning.h's loop_plan). explain names them on a described CPU and not on a GPU; products
// match BLAS's at sizes that fill the vectors and sizes that do not, with every transposition, alpha and
// a fused beta C; factors and solves on this device (PoCL) join one kernel and match the reference.
// (test_linalg.cpp checks the factors against LAPACK in both the loop plans and the teams GPUs take.)
#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace

// A described CPU with vectors of 8 f64 (16 f32): gemm takes blocks of 8 rows of one vector, narrowed to
// small products (rows and columns); complex values keep blocks; the factorizations and solves take loops; a GPU takes
// neither; FUGUE_LINALG_TUNING turns both off and refuses fields out of range.
TEST(LinalgCpu, ExplainSaysVectorsAndLoops) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 64, 64], "from": {"random": {"seed": 1}}},
    "S": {"kind": "array", "dtype": "f32", "shape": [10, 4, 4], "from": {"random": {"seed": 2}}},
    "Z": {"kind": "array", "dtype": "c64", "shape": [10, 16, 16], "from": {"random": {"seed": 3}}},
    "P": {"kind": "array", "dtype": "f64", "shape": [10, 32, 32], "from": {"spd": {"seed": 4}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [10, 32, 2], "from": {"random": {"seed": 5}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "A"]},
             {"op": "linalg.gemm", "out": ["D"], "in": ["S", "S"]},
             {"op": "linalg.gemm", "out": ["E"], "in": ["Z", "Z"]},
             {"op": "linalg.potrf", "out": ["L"], "in": ["P"]},
             {"op": "linalg.potrs", "out": ["X"], "in": ["L", "B"]},
             {"op": "linalg.getrf", "out": ["LU", "ipiv"], "in": ["P"]},
             {"op": "linalg.getrs", "out": ["Y"], "in": ["LU", "ipiv", "B"]}],
    "outputs": {"C": "C.npy", "D": "D.npy", "E": "E.npy", "X": "X.npy", "Y": "Y.npy"}})");
  const std::string program = (dir / "p.json").string();
  auto r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* expected :
       {"plan: vectors: blocks of C of 8 x 8 (a double8 a row, the device's native width 8) per work-item, a team of 64 per product (64 blocks), "
        "k in order; CPU table",
        "plan: vectors: blocks of C of 4 x 4 (a float4 a row, the device's native width 16) per work-item, one work-item per product (1 block)",
        "plan: blocks of C of 4 x 4 per work-item, a team of 16 per product (16 blocks)",
        // Dot products in vectors of at most 4 (the device's native width is 8): a sum across a wider vector and
        // its longer tail cost more than the short rows gain.
        "plan: loops: one matrix per work-item, its loops kept, L in local memory, built 4 rows at a time from dot products along its rows "
        "in vectors of 4 (order 32 in 9..1024); CPU table",
        "plan: loops: one matrix per work-item, its loops kept, the solution in local memory (order 32 in 9..1024); CPU table",
        "plan: loops: one matrix per work-item, its loops kept, the matrix in local memory, rows swapped whole and updated along them (order 32 in "
        "9..1024); CPU table"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  // Off: the blocks and the teams GPUs take.
  r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + program, "FUGUE_LINALG_TUNING=vector_rows=0,loop_order=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: vectors"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("plan: loops"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: blocks of C of 4 x 4 per work-item, a team of 256 per product (256 blocks)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan: team: 32 work-items per matrix owning columns (order 32 > 16)"), std::string::npos) << r.out;
  // Products of up to half again the table's 8 rows take them all in one block (B read once), in a team
  // or spread over work-groups (a product this large, by default).
  test::write_text(dir / "ritz.json", R"({"fugue": 1, "symbols": {
    "S": {"kind": "array", "dtype": "f64", "shape": [300, 12], "from": {"random": {"seed": 1}}},
    "V": {"kind": "array", "dtype": "f64", "shape": [300, 1000], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "linalg.gemm", "out": ["X"], "in": ["S", "V"], "attrs": {"trans_a": "T"}}], "outputs": {"X": "X.npy"}})");
  r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + (dir / "ritz.json").string(), "FUGUE_LINALG_TUNING=spread_vectors=0");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: vectors: blocks of C of 12 x 8 (a double8 a row, the device's native width 8) per work-item, a team of 125 per product (125 blocks)"),
            std::string::npos)
      << r.out;
  r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + (dir / "ritz.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: spread vectors: C's 125 blocks of 12 x 8 (a double8 a row) in runs of 16 over 8 work-groups"), std::string::npos) << r.out;
  // Two rows a block: blocks of 2 x 8.
  r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + program, "FUGUE_LINALG_TUNING=vector_rows=2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: vectors: blocks of C of 2 x 8 (a double8 a row, the device's native width 8) per work-item, a team of 256"),
            std::string::npos)
      << r.out;
  // A GPU computes side by side: neither plan.
  r = test::run_fugue("explain --device-file " + device_file("nvidia-h100.json") + " " + program);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("plan: vectors"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("plan: loops"), std::string::npos) << r.out;
  for (const char* bad : {"vector_rows=17", "loop_order=2000", "vector_rows=-1"}) {
    r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + program, std::string("FUGUE_LINALG_TUNING=") + bad);
    EXPECT_EQ(r.code, 2) << bad << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string("FUGUE_LINALG_TUNING: \"") + bad + "\""), std::string::npos) << r.out;
  }
}

// A description that does not give the vector widths (written before ABI 2.10 asked) plans no vectors
// (gemm's blocks, potrf's dot products one value at a time); a width that is not a power of two is refused
// with its key.
TEST(LinalgCpu, DeviceFilesWithoutOrWithBadVectorWidths) {
  test::TempDir dir;
  std::string described = test::read_text(device_file("pocl-cpu.json"));
  ASSERT_NE(described.find("\"native_vector_width_double\": 8"), std::string::npos) << described;
  std::string without = described;
  for (const char* key : {"\n  \"native_vector_width_float\": 16,", "\n  \"native_vector_width_double\": 8,"}) {
    const size_t at = without.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    without.erase(at, std::string(key).size());
  }
  test::write_text(dir / "old.json", without);
  std::string bad = described;
  bad.replace(bad.find("\"native_vector_width_double\": 8"), std::string("\"native_vector_width_double\": 8").size(), "\"native_vector_width_double\": 6");
  test::write_text(dir / "bad.json", bad);
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 64, 64], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "A"]}], "outputs": {"C": "C.npy"}})");
  auto r = test::run_fugue("explain --device-file " + (dir / "old.json").string() + " " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("plan: blocks of C of 4 x 4 per work-item"), std::string::npos) << r.out;
  // potrf's dot products then take one value at a time.
  test::write_text(dir / "potrf.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [10, 32, 32], "from": {"spd": {"seed": 1}}}},
    "body": [{"op": "linalg.potrf", "out": ["L"], "in": ["A"]}], "outputs": {"L": "L.npy"}})");
  r = test::run_fugue("explain --device-file " + (dir / "old.json").string() + " " + (dir / "potrf.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("built 4 rows at a time from dot products along its rows one value at a time (order 32"), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + (dir / "bad.json").string() + " " + (dir / "p.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/native_vector_width_double: expected 0 (unknown) or a power of two up to 64, found 6"), std::string::npos) << r.out;
}

// D = 0.5 op(A) op(B) - 2 C in vectors on this device against dgemm: products that fill the blocks and
// ones that leave rows and columns over (clamped reads, guarded stores), every transposition, one to
// five rows a block and products of 9 and 12 rows in one block each, f64 and f32; beta C joins the
// product's kernel.
TEST(LinalgCpu, GemmInVectorsMatchesBlas) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // m, n, k, trans_a, trans_b
  const std::vector<std::tuple<int64_t, int64_t, int64_t, const char*, const char*>> cases = {
      {1, 1, 1, "N", "N"},   {3, 5, 7, "T", "N"},    {16, 16, 16, "N", "T"}, {17, 33, 9, "T", "T"},
      {64, 64, 64, "N", "N"}, {8, 100, 3, "N", "C"}, {33, 7, 65, "C", "N"}, {40, 48, 1, "T", "N"},
      {9, 70, 40, "T", "N"},  {12, 17, 5, "N", "T"}};  // all rows in one block: a Ritz product's shape, columns left over
  for (const char* tuning : {"", "vector_rows=1", "vector_rows=3", "vector_rows=5"})
    for (const char* dtype : {"f64", "f32"})
      for (size_t c = 0; c < cases.size(); ++c) {
        // Other row counts: f64, a block wider than the product, a part-filled one and full ones (each
        // case a kernel for PoCL to build).
        if (*tuning && (std::string(dtype) == "f32" || (c != 1 && c != 3 && c != 4))) continue;
        const auto& [m, n, k, ta, tb] = cases[c];
        LinalgTuning scope(tuning);
        const int64_t count = m * n * k > 10000 ? 4 : 20;
        const std::string what = std::string(dtype) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + ta + tb +
                                 " (seed " + std::to_string(seed) + ", FUGUE_LINALG_TUNING=" + tuning + ")";
        Program program = test::load_text(dir, test::gemm_program(dtype, count, m, n, k, ta, tb, seed + m + n + k));
        int64_t launches = 0;
        auto out = test::run_on_device(program, std::nullopt, {}, &launches);
        EXPECT_EQ(launches, 1) << "beta C joins the product, " << what;
        const double error = test::gemm_error_against_blas(out.at("A"), out.at("B"), out.at("C"), out.at("D"), count, m, n, k, ta[0] != 'N',
                                                           tb[0] != 'N', 0.5, -2);
        // |A|, |B| <= 1 and C in [0, 1): terms of at most 0.5, k of them, rounded in the dtype.
        const double eps = std::string(dtype) == "f32" ? 1.2e-7 : 2.3e-16;
        EXPECT_LT(error, 4 * (k + 4) * eps) << what;
      }
}

// The vector plan where explain says it: on this device's table (when the device gives its widths) the
// product of 64 is in vectors; variable sizes and C written over its input (which takes blocks) are
// right there too.
TEST(LinalgCpu, VectorsOnThisDeviceWithVariableSizesAndInPlace) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [5, 24, 24], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [5, 24, 24], "from": {"random": {"seed": 2, "low": -1, "high": 1}}},
    "sizes": {"kind": "array", "dtype": "i32", "shape": [5, 3], "value": [[24, 24, 24], [9, 17, 24], [1, 24, 3], [24, 5, 0], [30, 1, 1]]}},
    "body": [{"op": "linalg.gemm_vbatched", "out": ["C", "info"], "in": ["A", "B", "sizes"], "attrs": {"trans_b": "T", "alpha": 2}},
             {"op": "linalg.gemm", "out": ["A"], "in": ["A", "B"]}],
    "outputs": {"C": "C.npy", "info": "info.npy", "A": "A.npy"}})");
  Program program = test::load_text(dir, test::read_text(dir / "p.json"));
  test::expect_same(test::run_on_device(program), test::run_reference(program), 1e-12, "variable sizes, then A = A B");
  auto r = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  if (r.out.find("type: cpu") == std::string::npos && r.out.find("pthread") == std::string::npos) GTEST_SKIP() << "not a CPU device";
  EXPECT_NE(r.out.find("plan: vectors: blocks of C of 8 x "), std::string::npos) << r.out;
}

// Factors and their solves in the loop plans on this device: potrf (lower and upper) of a scaled
// matrix plus the identity, then potrs; getrf then getrs (each transposition): one kernel each with
// the producer, and the reference's results, f64 and c128, orders that are and are not powers of two.
TEST(LinalgCpu, LoopFactorsJoinTheirSolvesAndProducers) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* dtype : {"f64", "c128"})
    for (const int64_t n : {9, 20, 33})
      for (const char* trans : {"N", "T", "C"}) {
        const std::string what = std::string(dtype) + " n=" + std::to_string(n) + " trans " + trans + " (seed " + std::to_string(seed) + ")";
        const std::string lower = trans[0] == 'N' ? "true" : "false";
        Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
          "A": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(3, n, n) +
                                                   R"(, "from": {"spd": {"seed": )" + std::to_string(seed + n) + R"(, "cond": 50}}},
          "M": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(3, n, n) +
                                                   R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}},
          "B": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape_text(3, n, 2) +
                                                   R"(, "from": {"random": {"seed": )" + std::to_string(seed + 2) + R"(}}}},
          "body": [{"op": "array.mul", "out": ["S"], "in": ["A", 0.5]},
                   {"op": "linalg.potrf", "out": ["L", "info"], "in": ["S"], "attrs": {"lower": )" + lower + R"(}},
                   {"op": "linalg.potrs", "out": ["X"], "in": ["L", "B"], "attrs": {"lower": )" + lower + R"(}},
                   {"op": "array.add", "out": ["G"], "in": ["M", "A"]},
                   {"op": "linalg.getrf", "out": ["LU", "ipiv", "ginfo"], "in": ["G"]},
                   {"op": "linalg.getrs", "out": ["Y"], "in": ["LU", "ipiv", "B"], "attrs": {"trans": ")" + trans + R"("}}],
          "outputs": {"L": "L.npy", "info": "info.npy", "X": "X.npy", "LU": "LU.npy", "ipiv": "ipiv.npy", "ginfo": "ginfo.npy", "Y": "Y.npy"}})");
        int64_t launches = 0;
        auto out = test::run_on_device(program, std::nullopt, {}, &launches);
        EXPECT_LE(launches, 2) << "each factorization joins its producer and its solve, " << what;
        test::expect_same(out, test::run_reference(program), 1e-9, what);
      }
}

// The loop plans copy their matrix (the solvers: [A | B]) into storage of their own, so they say they read it once
// (fugue_plan.reads_once, ABI 2.17) and the core reads it where it is; gemm reads A and B again and again
// and gets them in local memory, and so does a factorization's A that a solve in its kernel reads too.
// On CPUs the kernels' work-groups each take a run of consecutive entries.
TEST(LinalgCpu, LoopFactorizationsReadTheirMatrixWhereItIs) {
  test::TempDir dir;
  auto explain = [&](const std::string& body) {
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": "f64", "shape": [10, 16, 16], "from": {"spd": {"seed": 1}}},
      "R": {"kind": "array", "dtype": "f64", "shape": [10, 16, 3], "from": {"random": {"seed": 2}}}},
      "body": [)" + body + R"(], "outputs": {"Y": "Y.npy"}})");
    // geqrf alone would take its lanes, a kernel of its own (lanes_qr.h): the loop plan's reads are this test's.
    auto r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + (dir / "p.json").string(), "FUGUE_LINALG_TUNING=lanes_order=0");
    EXPECT_EQ(r.code, 0) << r.out;
    return r.out;
  };
  const std::string held = "A (2.0 kB, an input read again and again)";
  for (const char* op : {R"({"op": "linalg.potrf", "out": ["Y"], "in": ["A"]})", R"({"op": "linalg.getrf", "out": ["Y", "ipiv"], "in": ["A"]})",
                         R"({"op": "linalg.geqrf", "out": ["Y", "tau"], "in": ["A"]})"}) {
    const std::string out = explain(op);
    EXPECT_NE(out.find("plan: loops"), std::string::npos) << op << "\n" << out;
    EXPECT_EQ(out.find(held), std::string::npos) << op << "\n" << out;
    EXPECT_NE(out.find("each takes a run of consecutive entries"), std::string::npos) << op << "\n" << out;
  }
  // The solvers' loop plans copy [A | B] (posv: A) into storage of their own first, too.
  const std::string held_b = "R (384 B, an input read again and again)";
  for (const char* op : {"gesv", "gesv_nopiv", "gels", "posv"}) {
    const std::string out = explain(std::string(R"({"op": "linalg.)") + op + R"(", "out": ["Y"], "in": ["A", "R"]})");
    EXPECT_NE(out.find("plan: loops"), std::string::npos) << op << "\n" << out;
    EXPECT_EQ(out.find(held), std::string::npos) << op << "\n" << out;
    if (std::string(op) != "posv") {
      EXPECT_EQ(out.find(held_b), std::string::npos) << op << "\n" << out;
    }
  }
  EXPECT_NE(explain(R"({"op": "linalg.gemm", "out": ["Y"], "in": ["A", "R"]})").find(held_b), std::string::npos) << "gemm holds B";
  EXPECT_NE(explain(R"({"op": "linalg.gemm", "out": ["Y"], "in": ["A", "A"]})").find(held), std::string::npos);
  // potrs takes A as its right-hand sides in potrf's kernel, and reads them again and again.
  const std::string both = explain(R"({"op": "linalg.potrf", "out": ["L"], "in": ["A"]}, {"op": "linalg.potrs", "out": ["Y"], "in": ["L", "A"]})");
  EXPECT_NE(both.find("Kernels (1)"), std::string::npos) << both;
  EXPECT_NE(both.find(held), std::string::npos) << "potrs reads A again and again in the kernel\n" << both;
  // Read where they are, the factors written over their matrices (A over A, B over B) match the reference.
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [50, 16, 16], "from": {"spd": {"seed": )" + std::to_string(test::fresh_seed()) + R"(}}}},
    "body": [{"op": "array.mul", "out": ["B"], "in": ["A", 2.0]}, {"op": "linalg.getrf", "out": ["B", "ipiv"], "in": ["B"]},
             {"op": "linalg.potrf", "out": ["A"], "in": ["A"]}],
    "outputs": {"A": "A.npy", "B": "B.npy", "ipiv": "ipiv.npy"}})");
  test::expect_same(test::run_on_device(program), test::run_reference(program), 1e-12, "factors over their matrices");
}

// potrf, getrf and geqrf of real matrices up to order 16 alone on this CPU take the lanes (lanes.h):
// explain says so on the described CPU and not on a GPU, and lanes_order=0 turns them off; alone they
// run no generated kernel, and joined by a producer the factorization keeps the emitted plan, one kernel; lanes_order above 16 is refused (the
// lanes' private arrays overflowed PoCL's work-item stacks). Results against LAPACK: test_linalg.cpp's
// default plan and test_linalg_qr.cpp's GeqrfLanesMatchLapack; here against the reference, on batches
// that leave the last work-item spare lanes, lower and upper, pivoting and singular.
TEST(LinalgCpu, LanesServeFactorizationsAlone) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::string lanes = "alone: lanes, 8 matrices a work-item side by side in one vector, a kernel of its own";
  for (const char* op : {R"({"op": "linalg.potrf", "out": ["Y", "info"], "in": ["A"], "attrs": {"lower": false}})",
                         R"({"op": "linalg.getrf", "out": ["Y", "ipiv", "info"], "in": ["A"]})", R"({"op": "linalg.geqrf", "out": ["Y", "tau"], "in": ["A"]})"}) {
    const std::string what = std::string(op) + " (seed " + std::to_string(seed) + ")";
    const std::string spd = R"({"spd": {"seed": )" + std::to_string(seed) + R"(, "cond": 100}})";
    auto program = [&](bool fused) {
      return R"({"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "f64", "shape": [21, 12, 12], "from": )" + spd + R"(}},
        "body": [)" + (fused ? std::string(R"({"op": "array.mul", "out": ["A"], "in": ["A", 2.0]}, )") : std::string()) + op + R"(],
        "outputs": {"Y": "Y.npy"}})";
    };
    test::write_text(dir / "alone.json", program(false));
    const std::string alone = (dir / "alone.json").string();
    auto r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + alone);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(lanes), std::string::npos) << what << "\n" << r.out;
    r = test::run_fugue("explain --device-file " + device_file("pocl-cpu.json") + " " + alone, "FUGUE_LINALG_TUNING=lanes_order=0");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.find("alone: lanes"), std::string::npos) << what << "\n" << r.out;
    r = test::run_fugue("explain --device-file " + device_file("nvidia-h100.json") + " " + alone);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(r.out.find("alone: lanes"), std::string::npos) << what << "\n" << r.out;
    r = test::run_fugue("explain " + alone, "FUGUE_LINALG_TUNING=lanes_order=17");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("FUGUE_LINALG_TUNING: expected lanes_order <= 16"), std::string::npos) << r.out;
    for (const bool fused : {false, true}) {
      Program p = test::load_text(dir, program(fused));
      int64_t launches = 0;
      auto out = test::run_on_device(p, std::nullopt, {}, &launches);
      // Generated kernels: none alone (the lanes are the plugin's own), one with the producer joined.
      EXPECT_EQ(launches, fused ? 1 : 0) << what << (fused ? ", the producer joined" : ", alone");
      test::expect_same(out, test::run_reference(p), 1e-12, what + (fused ? ", fused" : ", in lanes"));
    }
  }
  // Pivots in every lane, among them a matrix whose first column is zero (info 1) and one whose second is
  // (info 2), the factorization completing, f32: the reference's pivots, info and factors.
  std::string values = "[";
  uint64_t state = seed;
  for (int64_t e = 0; e < 19; ++e) {
    values += e ? ", [" : "[";
    for (int64_t i = 0; i < 5; ++i) {
      values += i ? ", [" : "[";
      for (int64_t j = 0; j < 5; ++j) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const double x = (e == 3 && j == 0) || (e == 11 && j == 1) ? 0.0 : static_cast<double>(state >> 40) / static_cast<double>(1ull << 24) - 0.5;
        values += (j ? ", " : "") + std::to_string(x);
      }
      values += "]";
    }
    values += "]";
  }
  values += "]";
  Program p = test::load_text(dir, R"({"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "f32", "shape": [19, 5, 5], "value": )" + values + R"(}},
    "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
    "outputs": {"LU": "LU.npy", "ipiv": "ipiv.npy", "info": "info.npy"}})");
  auto out = test::run_on_device(p);
  EXPECT_EQ(out.at("info").get(3), 1);
  EXPECT_EQ(out.at("info").get(11), 2);
  test::expect_same(out, test::run_reference(p), 1e-5, "getrf f32 in lanes (seed " + std::to_string(seed) + ")");
}
