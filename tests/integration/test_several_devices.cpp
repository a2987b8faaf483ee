// Several devices (--device 0:0,0:1): PoCL made to show two CPU devices (POCL_DEVICES), a program split
// by rows gives what one device gives, fused and unfused; programs that cannot be split, or are too
// small to be worth it, stay on the first device and `explain` says why; bad lists are refused.
#include <gtest/gtest.h>

#include "failing_device.h"
#include "io/npy_io.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

// Two PoCL CPU devices; split_bytes=0 splits even the small programs of these tests.
const std::string kTwoDevices = "POCL_DEVICES='pthread pthread'";
const std::string kSplitAll = kTwoDevices + " FUGUE_TUNING=split_bytes=0";

// Runs `program` (a path) with `args`, its outputs into `out`.
test::CliResult run(const fs::path& program, const fs::path& out, const std::string& args, const std::string& env) {
  return test::run_fugue("run " + program.string() + " --out " + out.string() + " " + args, env);
}

// potrf(A * s) with a consumer: element-wise operations fused into the batched kernel, 1001 entries.
const char* kScaledCholesky = R"({"fugue": 1, "symbols": {
  "A": {"kind": "array", "dtype": "f64", "shape": [1001, 8, 8], "from": {"spd": {"seed": 4, "cond": 20}}},
  "s": {"kind": "scalar", "dtype": "f64", "value": 0.5}},
  "body": [{"op": "array.mul", "out": ["B"], "in": ["A", "s"]},
           {"op": "linalg.potrf", "out": ["L", "info"], "in": ["B"]},
           {"op": "array.mul", "out": ["C"], "in": ["L", 2]}],
  "outputs": {"C": "C.npy", "info": "info.npy", "A": "A.npy"}})";

}  // namespace

TEST(SeveralDevices, SplitByRowsGivesWhatOneDeviceGives) {
  test::TempDir dir;
  const fs::path kalman = test::source_root() / "examples" / "linalg" / "kalman_update.json";
  auto one = run(kalman, dir / "one", "--device 0:0", kTwoDevices);
  ASSERT_EQ(one.code, 0) << one.out;
  auto two = run(kalman, dir / "two", "--device 0:0,0:1 --stats", kSplitAll);
  ASSERT_EQ(two.code, 0) << two.out;
  // Devices of one model weigh the same: 500 rows each; every array of the program is split.
  EXPECT_NE(two.out.find("1000 rows split"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("0:0 pthread"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("rows 0..499 (500,"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("rows 500..999 (500,"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("split by rows (1.80 MB): H, HP, HPHt, Hx, KHP, Kt, L, P, P1, R, S, dx, info, x, x1, y, z"),
            std::string::npos)
      << two.out;
  EXPECT_NE(two.out.find("device 0:1 pthread"), std::string::npos) << two.out;
  test::expect_same_npy_files(dir / "two", dir / "one", 1e-12);
}

TEST(SeveralDevices, FusedAndUnfusedSplitsMatchOneDevice) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  auto one = run(dir / "p.json", dir / "one", "--device 0:0", kTwoDevices);
  ASSERT_EQ(one.code, 0) << one.out;
  for (const std::string flags : {"", "--no-fuse"}) {
    const fs::path out = dir / ("two" + flags);
    auto two = run(dir / "p.json", out, "--device 0:0,0:1 --stats " + flags, kSplitAll);
    ASSERT_EQ(two.code, 0) << two.out;
    EXPECT_NE(two.out.find("rows 0..500 (501,"), std::string::npos) << two.out;
    EXPECT_NE(two.out.find("rows 501..1000 (500,"), std::string::npos) << two.out;
    // Fused: one kernel per device (the scaling, the factorization and the doubling); unfused: three.
    const size_t kernels_each = flags.empty() ? 1 : 3;
    size_t rows = 0, at = 0;  // the --stats tables' rows: one per kernel
    while ((at = two.out.find("\n/body/", at)) != std::string::npos) ++rows, ++at;
    EXPECT_EQ(rows, 2 * kernels_each) << two.out;
    test::expect_same_npy_files(out, dir / "one", 1e-12);
  }
}

TEST(SeveralDevices, WhatCannotBeSplitStaysOnTheFirstDevice) {
  test::TempDir dir;
  // A reduction by a user's function: a scalar the device writes, with nothing to say how parts combine.
  test::write_text(dir / "sum.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [4096], "from": {"random": {"seed": 1}}},
    "f": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}],
          "result": "c"}},
    "body": [{"op": "array.mul", "out": ["y"], "in": ["x", 2]}, {"op": "array.reduce", "out": ["s"], "in": ["f", "y"]}],
    "outputs": {"s": "s.npy", "y": "y.npy"}})");
  auto sum = test::run_fugue("explain " + (dir / "sum.json").string() + " --device 0:0,0:1", kSplitAll);
  ASSERT_EQ(sum.code, 0) << sum.out;
  EXPECT_NE(sum.out.find("placement on 2 devices: all on 0:0"), std::string::npos) << sum.out;
  EXPECT_NE(sum.out.find("/body/1 array.reduce s = (f, y): 's' is a scalar the device writes"), std::string::npos)
      << sum.out;
  // Its run on two devices is the run on one.
  auto one = run(dir / "sum.json", dir / "one", "--device 0:0", kTwoDevices);
  auto two = run(dir / "sum.json", dir / "two", "--device 0:0,0:1", kSplitAll);
  ASSERT_EQ(one.code, 0) << one.out;
  ASSERT_EQ(two.code, 0) << two.out;
  test::expect_same_npy_files(dir / "two", dir / "one", 0);

  // A read around each element by an operation that does not say how it treats the ends.
  test::write_text(dir / "median.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "stencil.median3", "out": ["y"], "in": ["x"]}], "outputs": {"y": "y.npy"}})");
  auto median = test::run_fugue("explain " + (dir / "median.json").string() + " --device 0:0,0:1", kSplitAll);
  ASSERT_EQ(median.code, 0) << median.out;
  EXPECT_NE(median.out.find("placement on 2 devices: all on 0:0"), std::string::npos) << median.out;
  EXPECT_NE(median.out.find("'x' is ELEMENTWISE with halo (1, 1), read around each element by an operation that "
                            "does not say how it treats the arrays' ends"),
            std::string::npos)
      << median.out;

  // Small work: below split_bytes (512 MB by default) a second device costs more than it brings.
  test::write_text(dir / "chol.json", kScaledCholesky);
  auto small = test::run_fugue("explain " + (dir / "chol.json").string() + " --device 0:0,0:1", kTwoDevices);
  ASSERT_EQ(small.code, 0) << small.out;
  EXPECT_NE(small.out.find("all on 0:0"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("small: the arrays split by rows hold 2.05 MB, less than 536.87 MB"), std::string::npos)
      << small.out;
  // In a loop the arrays are gone through as many times: 1 MB ten times stays, a thousand times splits.
  for (const int count : {10, 1000}) {
    test::write_text(dir / "loop.json", R"({"fugue": 1, "symbols": {
      "x": {"kind": "array", "dtype": "f32", "shape": [1024, 256], "from": {"random": {"seed": 1}}}},
      "body": [{"for": "i", "count": )" + std::to_string(count) + R"(, "body": [{"op": "array.mul", "out": ["x"], "in": ["x", 0.5]}]}],
      "outputs": {"x": "x.npy"}})");
    auto loop = test::run_fugue("explain " + (dir / "loop.json").string() + " --device 0:0,0:1", kTwoDevices);
    ASSERT_EQ(loop.code, 0) << loop.out;
    if (count == 10)
      EXPECT_NE(loop.out.find("small: the arrays split by rows hold 1.05 MB (gone through at most 10 times a run), less than"),
                std::string::npos) << loop.out;
    else
      EXPECT_NE(loop.out.find("placement on 2 devices: 1024 rows split"), std::string::npos) << loop.out;
  }
}

// Stencils split by rows: each device holds some of its neighbours' rows and trades them when its
// kernels have read them stale. Jacobi's clamped borders (no rows past the ends of the whole), the
// periodic 5-point stencil (the first and last devices hold each other's), and a chain of two stencils
// in one kernel (reach 2), fused and not, over two and three devices: the same values as one device.
TEST(SeveralDevices, StencilsTradeNeighbourRows) {
  test::TempDir dir;
  const fs::path examples = test::source_root() / "examples";
  struct Case {
    fs::path program;
    std::string sets;
    std::string tuning;  // FUGUE_TUNING beyond split_bytes=0
    std::string devices;
    std::string halo;    // in explain's account
    long long trades;    // by run --stats
  };
  const std::string three = "POCL_DEVICES='pthread pthread pthread' FUGUE_TUNING=split_bytes=0";
  const std::vector<Case> cases = {
      // 10 iterations reading x one row beyond: with 8 rows held, traded once (before the 9th).
      {examples / "jacobi.json", "", "", "0:0,0:1", "each device also holds 8 rows of each neighbour's (none past the ends", 1},
      {examples / "jacobi.json", "", ",halo_depth=1", "0:0,0:1", "each device also holds 1 rows", 9},
      {examples / "jacobi.json", "--no-fuse", ",halo_depth=1", "0:0,0:1", "each device also holds 1 rows", 9},
      // Three devices, uneven shares (43, 43, 42), the middle one holding rows on both sides, the ends none.
      {examples / "jacobi.json", "", ",halo_depth=2", "0:0,0:1,0:2", "each device also holds 2 rows", 4},
      // 96 rows over three devices, wrapping around: 32 each.
      {examples / "bench" / "stencil5.json", "--set side=96 --set iterations=7", ",halo_depth=3", "0:0,0:1,0:2",
       "each device also holds 3 rows of each neighbour's (the first and last devices each other's", 2},
      // Two Laplacians in one kernel (tile stages) reach 2 rows: 4 rows held last two iterations.
      {examples / "bench" / "stencil_chain.json", "--set side=64 --set iterations=5",
       ",halo_depth=2,stage_tile_rows=16,stage_tile_cols=32", "0:0,0:1",
       "kernels read up to 2 rows beyond their own; each device also holds 4 rows", 2},
      // As two kernels (PoCL's default) and unfused, 1 row each: 2 rows last the first iteration's pair.
      {examples / "bench" / "stencil_chain.json", "--set side=64 --set iterations=5", ",halo_depth=2", "0:0,0:1",
       "kernels read up to 1 rows beyond their own; each device also holds 2 rows", 4},
      {examples / "bench" / "stencil_chain.json", "--set side=64 --set iterations=5 --no-fuse", ",halo_depth=2",
       "0:0,0:1", "kernels read up to 1 rows beyond their own; each device also holds 2 rows", 4},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.program.filename().string() + " " + c.sets + c.tuning + " on " + c.devices);
    const fs::path one = dir / ("one" + std::to_string(n)), split = dir / ("split" + std::to_string(n));
    ++n;
    const std::string env = (c.devices == "0:0,0:1,0:2" ? three : kSplitAll) + c.tuning;
    auto single = run(c.program, one, "--device 0:0 " + c.sets, env);
    ASSERT_EQ(single.code, 0) << single.out;
    auto several = run(c.program, split, "--device " + c.devices + " --stats " + c.sets, env);
    ASSERT_EQ(several.code, 0) << several.out;
    EXPECT_NE(several.out.find(c.halo), std::string::npos) << several.out;
    EXPECT_NE(several.out.find("neighbours' rows traded " + std::to_string(c.trades) + " times"), std::string::npos)
        << several.out;
    test::expect_same_npy_files(split, one, 0);
  }
}

// Reductions over split rows: each device reduces its rows, the parts are combined and handed back to
// every device before anything reads them. Halving until the largest magnitude is small (an `if` and
// a `break` on a maximum, 13 iterations), and a program normalizing by sums, norms and extremes.
TEST(SeveralDevices, ReductionsCombineTheDevicesParts) {
  test::TempDir dir;
  test::write_text(dir / "norms.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [999, 7], "from": {"random": {"seed": 5, "low": -2, "high": 3}}},
    "w": {"kind": "array", "dtype": "f64", "shape": [999], "from": {"random": {"seed": 6}}},
    "k": {"kind": "array", "dtype": "i32", "shape": [999], "from": {"random": {"seed": 7, "low": -50, "high": 50}}}},
    "body": [{"op": "array.norm2", "out": ["n"], "in": ["x"]}, {"op": "array.div", "out": ["y"], "in": ["x", "n"]},
             {"op": "array.min", "out": ["lo"], "in": ["y"]}, {"op": "array.max", "out": ["hi"], "in": ["y"]},
             {"op": "array.sub", "out": ["range"], "in": ["hi", "lo"]},
             {"op": "array.dot", "out": ["ww"], "in": ["w", "w"]}, {"op": "array.sum", "out": ["ks"], "in": ["k"]}],
    "outputs": {"y": "y.npy", "range": "range.npy", "n": "n.npy", "ww": "ww.npy", "ks": "ks.npy"}})");
  struct Case {
    fs::path program;
    std::string args;
    std::string combined;  // the --stats count
    double tolerance;
  };
  const std::vector<Case> cases = {
      {test::source_root() / "examples" / "halving_until_small.json", "", "reductions combined 13 times", 1e-15},
      {dir / "norms.json", "", "reductions combined 5 times", 1e-6},
      {dir / "norms.json", "--no-fuse", "reductions combined 5 times", 1e-6},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.program.filename().string() + " " + c.args);
    const fs::path one = dir / ("one" + std::to_string(n)), split = dir / ("split" + std::to_string(n));
    ++n;
    auto single = run(c.program, one, "--device 0:0 " + c.args, kTwoDevices);
    ASSERT_EQ(single.code, 0) << single.out;
    auto several = run(c.program, split, "--device 0:0,0:1 --stats " + c.args, kSplitAll);
    ASSERT_EQ(several.code, 0) << several.out;
    EXPECT_NE(several.out.find("combined from every device's part, then handed back to each: "), std::string::npos)
        << several.out;
    EXPECT_NE(several.out.find(c.combined), std::string::npos) << several.out;
    test::expect_same_npy_files(split, one, c.tolerance);
  }
}

// Sparse matrix-vector products split by rows (ABI 2.13 split_rows, and the kinds' rows): each device
// holds its rows of A as a matrix of its own in A's layout, its rows of y0 and y, and x whole; the
// element-wise operations on y and a dot product of the result join, the dot's parts combined. Every
// layout, an irregular (power-law) matrix and a real one read from a file, over three devices of uneven
// shares: what one device gives.
TEST(SeveralDevices, SparseProductsSplitByRows) {
  test::TempDir dir;
  const std::string three = "POCL_DEVICES='pthread pthread pthread' FUGUE_TUNING=split_bytes=0";
  const std::vector<std::pair<std::string, std::string>> sources = {
      {"rmat", R"({"rmat": {"scale": 10, "edges": 12, "seed": 5}})"},
      {"file", "\"" + (test::source_root() / ".." / "shared" / "data" / "matrices" / "bcsstk13.mtx").string() + "\""}};
  const std::vector<std::string> layouts = {"csr", "coo", "ell", "sell", "dia", "bdia", "hyb", "bcsr", "bell", "sbell", "cocktail", "auto"};
  for (const auto& [name, source] : sources) {
    std::string symbols, body, outputs;
    for (const auto& layout : layouts) {
      if (name == "file" && (layout == "dia" || layout == "bdia" || layout == "ell" || layout == "bell")) continue;  // too padded
      if (name == "rmat" && (layout == "dia" || layout == "bdia" || layout == "ell" || layout == "bell")) continue;
      const std::string kind = layout == "auto" ? R"("sparse", "format": "auto")" : "\"" + layout + "\"";
      symbols += R"("A_)" + layout + R"(": {"kind": )" + kind + R"(, "dtype": "f64", "from": )" + source +
                 (layout == "sell"       ? R"(, "slice": 4, "sigma": 16)"
                  : layout == "bcsr"     ? R"(, "block": [4, 8])"
                  : layout == "cocktail" ? R"(, "diagonal_fill": 0.5, "block_fill": 0.3, "block": [2, 4], "width": 2, "slice": 4)"
                                         : "") +
                 "},\n";
      body += R"({"op": "sparse.spmv", "out": ["y_)" + layout + R"("], "in": ["A_)" + layout + R"(", "x", "y0"], "attrs": {"alpha": 2, "beta": -1}},
               {"op": "array.sub", "out": ["r_)" + layout + R"("], "in": ["b", "y_)" + layout + R"("]},
               {"op": "array.dot", "out": ["rr_)" + layout + R"("], "in": ["r_)" + layout + R"(", "r_)" + layout + R"("]},)";
      outputs += R"("r_)" + layout + R"(": "r_)" + layout + R"(.npy", "rr_)" + layout + R"(": "rr_)" + layout + R"(.npy", )";
    }
    const int64_t n = name == "rmat" ? 1024 : 2003;
    const std::string length = std::to_string(n);
    test::write_text(dir / (name + ".json"), R"({"fugue": 1, "symbols": {)" + symbols +
                                                 R"("x": {"kind": "array", "dtype": "f64", "shape": [)" + length +
                                                 R"(], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
      "y0": {"kind": "array", "dtype": "f64", "shape": [)" + length + R"(], "from": {"random": {"seed": 2}}},
      "b": {"kind": "array", "dtype": "f64", "shape": [)" + length + R"(], "from": {"random": {"seed": 3}}}},
      "body": [)" + body.substr(0, body.size() - 1) + R"(], "outputs": {)" + outputs.substr(0, outputs.size() - 2) + "}}");
    for (const std::string flags : {"", "--no-fuse"}) {
      SCOPED_TRACE(name + " " + flags);
      const fs::path one = dir / (name + "one" + flags), split = dir / (name + "three" + flags);
      auto single = run(dir / (name + ".json"), one, "--device 0:0 " + flags, three);
      ASSERT_EQ(single.code, 0) << single.out;
      auto several = run(dir / (name + ".json"), split, "--device 0:0,0:1,0:2 --stats " + flags, three);
      ASSERT_EQ(several.code, 0) << several.out;
      EXPECT_NE(several.out.find(std::to_string(n) + " rows split by the devices' weights"), std::string::npos) << several.out;
      EXPECT_NE(several.out.find("A_csr"), std::string::npos) << several.out;
      EXPECT_NE(several.out.find("whole on every device: x"), std::string::npos) << several.out;
      test::expect_same_npy_files(split, one, 1e-12);
    }
  }
}

// An x the devices compute, element by element on their rows, and a product reads whole: each device
// holds a whole copy and keeps current the rows its rows of the matrix reach (their columns), got from
// the others after each write. A power iteration (x an input, normalized by a combined norm) and
// conjugate gradients (the direction p), over three devices: what one device gives. A matrix whose rows
// reach every column (R-MAT) runs on one device unless FUGUE_TUNING=gather_rows=1.
TEST(SeveralDevices, SparseProductsGatherTheRowsTheDevicesWrite) {
  test::TempDir dir;
  const std::string three = "POCL_DEVICES='pthread pthread pthread' FUGUE_TUNING=split_bytes=0";
  test::write_text(dir / "power.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "sparse", "format": "auto", "dtype": "f64", "from": {"poisson": {"grid": [120, 100]}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [12000], "from": {"random": {"seed": 1}}}},
    "body": [{"for": "i", "count": 30, "body": [
      {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
      {"op": "array.norm2", "out": ["n"], "in": ["y"]},
      {"op": "array.div", "out": ["x"], "in": ["y", "n"]}]}],
    "outputs": {"x": "x.npy", "n": "n.npy"}})");
  // A x = b from x = 0: r = p = b; then alpha = r.r / p.Ap, x += alpha p, r -= alpha Ap, p = r + beta p.
  test::write_text(dir / "cg.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": {"poisson": {"grid": [97, 83]}}},
    "b": {"kind": "array", "dtype": "f64", "shape": [8051], "from": {"random": {"seed": 2}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [8051], "from": {"zeros": {}}}},
    "body": [{"op": "array.copy", "out": ["r"], "in": ["b"]}, {"op": "array.copy", "out": ["p"], "in": ["b"]},
             {"op": "array.dot", "out": ["rs"], "in": ["r", "r"]},
             {"for": "k", "count": 40, "body": [
               {"op": "sparse.spmv", "out": ["Ap"], "in": ["A", "p"]},
               {"op": "array.dot", "out": ["pAp"], "in": ["p", "Ap"]},
               {"op": "array.div", "out": ["alpha"], "in": ["rs", "pAp"]},
               {"op": "array.mul", "out": ["ap"], "in": ["p", "alpha"]}, {"op": "array.add", "out": ["x"], "in": ["x", "ap"]},
               {"op": "array.mul", "out": ["aAp"], "in": ["Ap", "alpha"]}, {"op": "array.sub", "out": ["r"], "in": ["r", "aAp"]},
               {"op": "array.dot", "out": ["rs_new"], "in": ["r", "r"]},
               {"op": "array.div", "out": ["beta"], "in": ["rs_new", "rs"]},
               {"op": "array.mul", "out": ["bp"], "in": ["p", "beta"]}, {"op": "array.add", "out": ["p"], "in": ["r", "bp"]},
               {"op": "array.dot", "out": ["rs"], "in": ["r", "r"]}]}],
    "outputs": {"x": "x.npy", "rs": "rs.npy"}})");
  test::write_text(dir / "rmat.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": {"rmat": {"scale": 12, "edges": 8, "seed": 3}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [4096], "from": {"random": {"seed": 1}}}},
    "body": [{"for": "i", "count": 10, "body": [
      {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
      {"op": "array.norm2", "out": ["n"], "in": ["y"]},
      {"op": "array.div", "out": ["x"], "in": ["y", "n"]}]}],
    "outputs": {"x": "x.npy", "n": "n.npy"}})");
  struct Case {
    std::string program, args, tuning, gathered;
  };
  // The 5-point matrix of a grid of 100 columns reaches 100 rows either side: a device between two gets
  // 200 rows, the first and last 100 each (83 for CG's grid).
  for (const Case& c : {Case{"power.json", "", "", "rows gathered 30 times; 400 of 'x' cross between devices a gather"},
                        Case{"cg.json", "", "", "rows gathered 41 times; 332 of 'p' cross between devices a gather"},
                        Case{"cg.json", "--no-fuse", "", "rows gathered 41 times; 332 of 'p' cross"},
                        Case{"rmat.json", "", "", "not split after all: the devices would exchange "},
                        Case{"rmat.json", "", ",gather_rows=1", "rows gathered 10 times; "}}) {
    SCOPED_TRACE(c.program + " " + c.args + c.tuning);
    const fs::path one = dir / ("one" + c.program + c.args + c.tuning), split = dir / ("three" + c.program + c.args + c.tuning);
    auto single = run(dir / c.program, one, "--device 0:0 " + c.args, three);
    ASSERT_EQ(single.code, 0) << single.out;
    auto several = run(dir / c.program, split, "--device 0:0,0:1,0:2 --stats " + c.args, three + c.tuning);
    ASSERT_EQ(several.code, 0) << several.out;
    EXPECT_NE(several.out.find(c.gathered), std::string::npos) << several.out;
    if (c.gathered.find("not split") == std::string::npos) {
      EXPECT_NE(several.out.find("gathered: every device holds a whole copy of "), std::string::npos) << several.out;
    }
    test::expect_same_npy_files(split, one, 1e-10);
  }
}

// A matrix given part by part ("parts"), cut by rows as one read from a file is; an x the device writes
// is gathered for the product, and explain says so.
TEST(SeveralDevices, SparseMatricesGivenPartByPartSplitAndWrittenXIsGathered) {
  test::TempDir dir;
  test::write_text(dir / "parts.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f32", "shape": [5, 4], "nnz": 7, "parts": {
      "row_ptr": {"value": [0, 2, 2, 4, 6, 7]}, "col": {"value": [0, 3, 1, 2, 0, 3, 1]},
      "data": {"value": [1, 2, 3, 4, 5, 6, 7]}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [4], "value": [1, -2, 3, 0.5]}},
    "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
  auto split = run(dir / "parts.json", dir / "split", "--device 0:0,0:1 --stats", kSplitAll);
  ASSERT_EQ(split.code, 0) << split.out;
  EXPECT_NE(split.out.find("5 rows split"), std::string::npos) << split.out;
  const HostArray y = load_npy(dir / "split" / "y.npy", DType::F32, Shape{5});
  const std::vector<double> expected = {1 * 1 + 2 * 0.5, 0, 3 * -2 + 4 * 3, 5 * 1 + 6 * 0.5, 7 * -2};
  ASSERT_EQ(y.elements(), 5);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(y.get(i), expected[static_cast<size_t>(i)]) << i;

  test::write_text(dir / "power.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": {"poisson": {"grid": [40, 40]}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [1600], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.mul", "out": ["x2"], "in": ["x", 2]}, {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x2"]}],
    "outputs": {"y": "y.npy"}})");
  // The product reads x2 only at its rows' columns: gathered by default, each device getting the rows its
  // rows reach.
  auto power = test::run_fugue("explain " + (dir / "power.json").string() + " --device 0:0,0:1", kSplitAll);
  ASSERT_EQ(power.code, 0) << power.out;
  EXPECT_NE(power.out.find("placement on 2 devices: 1600 rows split"), std::string::npos) << power.out;
  EXPECT_NE(power.out.find("gathered: every device holds a whole copy of x2, read whole by the operations that say their rows; read "
                           "only at the columns of A's entries"),
            std::string::npos) << power.out;
  EXPECT_NE(power.out.find("the rows of x2, after each write"), std::string::npos) << power.out;
}

TEST(SeveralDevices, BenchTimesTheSplitRun) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  auto bench = test::run_fugue("bench " + (dir / "p.json").string() + " --device 0:0,0:1 --repeat 2 --json -", kSplitAll);
  ASSERT_EQ(bench.code, 0) << bench.out;
  EXPECT_NE(bench.out.find("on 2 devices, 2 repetitions"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("wall ms: median"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("\"rows\":501"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("\"rows\":500"), std::string::npos) << bench.out;
}

// A device failing mid-run (0:1, whose rows hold the negative number faulty.negative refuses) stops the
// run: the other device, met at a trade of neighbours' rows or at a reduction's combination, is
// released rather than left waiting; the error names the failing device and the statement; the exit
// code is 1 and no output is written. With no negative number the same programs split and give one
// device's results.
TEST(SeveralDevices, ADeviceFailingMidRunStopsEveryDevice) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  test::write_failing_programs(dir.path(), seed);
  const std::string env = kSplitAll + ",halo_depth=1";
  const std::string bounded = env + " timeout 120";  // a device left waiting would hang: fail instead
  int n = 0;
  for (const std::string program : {"trade.json", "combine.json"})
    for (const std::string flags : {"", " --no-fuse"}) {
      SCOPED_TRACE(program + flags);
      const std::string tag = std::to_string(n++);
      const std::string p = (dir / program).string() + flags;
      auto one = test::run_fugue(test::failing_plugin() + " run " + p + " --device 0:0 --out " +
                                     (dir / ("one" + tag)).string() + " --set x=" + (dir / "ok.npy").string(),
                                 kTwoDevices);
      ASSERT_EQ(one.code, 0) << one.out;
      auto two = test::run_fugue(test::failing_plugin() + " run " + p + " --device 0:0,0:1 --stats --out " +
                                     (dir / ("two" + tag)).string() + " --set x=" + (dir / "ok.npy").string(),
                                 bounded);
      ASSERT_EQ(two.code, 0) << two.out;
      EXPECT_NE(two.out.find("rows 32..63 (32,"), std::string::npos) << two.out;
      EXPECT_NE(two.out.find(program == "trade.json" ? "neighbours' rows traded 2 times" : "reductions combined 1 times"),
                std::string::npos)
          << two.out;
      test::expect_same_npy_files(dir / ("two" + tag), dir / ("one" + tag), 0);

      const fs::path out = dir / ("bad" + tag);
      auto bad = test::run_fugue(test::failing_plugin() + " run " + p + " --device 0:0,0:1 --out " + out.string() +
                                     " --set x=" + (dir / "bad.npy").string(),
                                 bounded);
      EXPECT_EQ(bad.code, 1) << bad.out;
      EXPECT_NE(bad.out.find("device 0:1 (pthread"), std::string::npos) << bad.out;
      EXPECT_NE(bad.out.find(program + ":/body/0"), std::string::npos) << bad.out;
      EXPECT_NE(bad.out.find("faulty.negative refuses negative numbers"), std::string::npos) << bad.out;
      EXPECT_EQ(bad.out.find("another device failed"), std::string::npos) << "the first failure is the one said: " << bad.out;
      EXPECT_FALSE(fs::exists(out)) << "nothing written";
    }
}

TEST(SeveralDevices, BadDeviceListsAreRefused) {
  test::TempDir dir;
  test::write_text(dir / "p.json", kScaledCholesky);
  const std::string p = (dir / "p.json").string();
  auto twice = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,0:0", kTwoDevices);
  EXPECT_EQ(twice.code, 2) << twice.out;
  EXPECT_NE(twice.out.find("device '0:0,0:0': 0:0 (pthread"), std::string::npos) << twice.out;
  EXPECT_NE(twice.out.find("is named twice"), std::string::npos) << twice.out;
  auto missing = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,3:7", kTwoDevices);
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_NE(missing.out.find("no device 3:7"), std::string::npos) << missing.out;
  auto empty = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device 0:0,", kTwoDevices);
  EXPECT_EQ(empty.code, 2) << empty.out;
  EXPECT_NE(empty.out.find("an empty entry in the list"), std::string::npos) << empty.out;
  auto gpus = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device gpu:all", kTwoDevices);
  EXPECT_EQ(gpus.code, 2) << gpus.out;
  EXPECT_NE(gpus.out.find("no gpu device"), std::string::npos) << gpus.out;
  auto profile = test::run_fugue("run " + p + " --out " + (dir / "o").string() + " --device cpu:all --profile " +
                                     (dir / "t.json").string(),
                                 kSplitAll);
  EXPECT_EQ(profile.code, 2) << profile.out;
  EXPECT_NE(profile.out.find("--profile records one device"), std::string::npos) << profile.out;
  EXPECT_FALSE(fs::exists(dir / "o")) << "nothing written";
}
