// The Lanczos programs of examples/lanczos (no reorthogonalization with the Cullum-Willoughby filter,
// selective, full), built from sparse.spmv, array.put, array.dot/norm2, sparse.ritz and linalg.gemm/gemv
// inside for loops with a convergence test: their Ritz values and vectors against NumPy's dense
// eigensolver on the same matrix, from a fresh random start; and sparse.ritz's and array.put's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/npy_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
namespace test = fugue::test;

namespace {

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// Checks theta, X and bound in `out` against the 6 smallest eigenpairs of A.mtx.
const char* kCheck = R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(d + 'A.mtx').toarray()
want = np.linalg.eigvalsh(A)[:6]
theta, X, bound = np.load(d + 'theta.npy'), np.load(d + 'X.npy'), np.load(d + 'bound.npy')
norm = np.abs(A).sum(1).max()
assert np.abs(theta - want).max() <= 1e-9 * norm, (theta, want)
unit = len(sys.argv) < 3  # 'directions': the vectors' lengths are not checked, only where they point
for i in range(6):
    x = X[i]
    if unit: assert abs(np.linalg.norm(x) - 1) <= 1e-6, (i, np.linalg.norm(x))
    else: x = x / np.linalg.norm(x)
    residual = np.linalg.norm(A @ x - theta[i] * x)
    assert residual <= (1.01 * bound[i] if unit else 0) + 1e-6 * norm, (i, residual, bound[i])
print('as numpy', int(np.load(d + 'steps.npy')))
)";

}  // namespace

TEST(Lanczos, EveryReorthogonalizationFindsTheSmallestEigenpairs) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  test::write_text(dir / "check.py", kCheck);
  for (const char* name : {"lanczos", "lanczos_selective", "lanczos_full"}) {
    std::string program = test::read_text(test::source_root() / "examples" / "lanczos" / (std::string(name) + ".json"));
    replace_once(program, R"("random": {"seed": 1,)", R"("random": {"seed": )" + std::to_string(seed % 1000000) + ",");
    replace_once(program, R"("outputs": {)", R"("outputs": {"A": "A.mtx", )");
    const fs::path file = dir / (std::string(name) + ".json"), out = dir / name;
    test::write_text(file, program);
    auto r = test::run_fugue("run " + file.string() + " --out " + out.string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.out;
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + out.string());
    EXPECT_NE(c.out.find("as numpy"), std::string::npos) << name << " (seed " << seed << "): " << c.out;
  }
}

// 600 steps without reorthogonalization, long after the smallest values converged (about 200 steps):
// lost orthogonality makes copies and spurious values, which the filter removes. The basis is no longer
// orthonormal, so a Ritz vector of a value Lanczos repeated is not of unit length (one was 0.006 long):
// only its direction is checked, as the example's doc says.
TEST(Lanczos, TheFilterKeepsALongRunWithoutReorthogonalizationRight) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "check.py", kCheck);
  std::string program = test::read_text(test::source_root() / "examples" / "lanczos" / "lanczos.json");
  replace_once(program, R"("wanted": {"kind": "const", "value": 6})", R"("wanted": {"kind": "const", "value": 7})");
  replace_once(program, R"("outputs": {)", R"("outputs": {"A": "A.mtx", )");
  test::write_text(dir / "long.json", program);
  auto r = test::run_fugue("run " + (dir / "long.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " directions");
  EXPECT_NE(c.out.find("as numpy 600"), std::string::npos) << c.out;
  // The same run unfiltered: a spurious value among the smallest (a ghost of the second, which shifts
  // the rest), which is what the filter is for.
  replace_once(program, R"("filter": "cullum_willoughby")", R"("filter": "none")");
  test::write_text(dir / "unfiltered.json", program);
  r = test::run_fugue("run " + (dir / "unfiltered.json").string() + " --out " + (dir / "unfiltered").string());
  ASSERT_EQ(r.code, 0) << r.out;
  c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "unfiltered").string() + " directions");
  EXPECT_EQ(c.out.find("as numpy"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("AssertionError"), std::string::npos) << c.out;
}

TEST(Lanczos, RitzAndPutRefuseWhatTheyCannotDo) {
  test::TempDir dir;
  const std::string symbols = R"("alpha": {"kind": "array", "dtype": "f64", "shape": [8], "from": {"random": {"seed": 1}}},
    "beta": {"kind": "array", "dtype": "f64", "shape": [8], "from": {"random": {"seed": 2}}},
    "V": {"kind": "array", "dtype": "f64", "shape": [8, 3], "from": {"zeros": {}}},
    "n": {"kind": "scalar", "dtype": "i64", "value": 9})";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"({"op": "sparse.ritz", "out": ["t", "S", "b", "c"], "in": ["alpha", "beta", 0], "attrs": {"count": 2}})",
       "operand steps: expected an integer in 1 .. 8, found 0"},
      {R"({"op": "sparse.ritz", "out": ["t", "S", "b", "c"], "in": ["alpha", "beta", "n"], "attrs": {"count": 9}})",
       "attribute count: expected 1 .. 8 (alpha's length), found 9"},
      {R"({"op": "sparse.ritz", "out": ["t", "S", "b", "c"], "in": ["alpha", "beta", "n"], "attrs": {"count": 2, "filter": "paige"}})",
       "attribute filter: expected \"cullum_willoughby\" or \"none\", found \"paige\""},
      {R"({"op": "sparse.ritz", "out": ["t", "S", "b", "c"], "in": ["alpha", "V", "n"], "attrs": {"count": 2}})",
       "operand beta: expected f64 array [8] (alpha's dtype and length)"},
      {R"({"op": "array.put", "out": ["V"], "in": ["V", "alpha", 1]})",
       "operand x: expected an array of h's shape without its first axis [3] or one value"},
      {R"({"op": "array.put", "out": ["V"], "in": ["V", 1, 0.5]})", "operand index"},
  };
  for (size_t k = 0; k < refused.size(); ++k) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + refused[k].first + R"(], "outputs": {}})");
    auto v = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(v.code, 2) << k << ": " << v.out;
    EXPECT_NE(v.out.find(refused[k].second), std::string::npos) << k << ": " << v.out;
  }
  // steps known only at run time: the run stops with the operation's message.
  test::write_text(dir / "late.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [
    {"op": "sparse.ritz", "out": ["t", "S", "b", "c"], "in": ["alpha", "beta", "n"], "attrs": {"count": 2}}], "outputs": {"t": "t.npy"}})");
  auto r = test::run_fugue("run " + (dir / "late.json").string() + " --out " + (dir / "out").string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("sparse.ritz: operand steps is 9, outside 1 .. 8"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "t.npy")) << "no partial output";
}

// T = s [[1, 1, 0], [1, 2, 1], [0, 1, 3]]: eigenvalues s (2 - sqrt 3, 2, 2 + sqrt 3) at any scale s (the
// Sturm counts square beta; at 4.6e307 the rows' sums, 4 s, pass the largest double while every element
// and eigenvalue fits); a NaN makes every output NaN, and nothing converges.
TEST(Lanczos, RitzAtAnyScaleAndAfterABreakdown) {
  test::TempDir dir;
  for (const char* scale : {"1e-200", "1e-160", "1", "1e160", "1e300", "4.6e307"}) {
    test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {
      "alpha": {"kind": "array", "dtype": "f64", "shape": [3], "from": {"arange": {"start": )") + scale + R"(, "step": )" + scale + R"(}}},
      "beta": {"kind": "array", "dtype": "f64", "shape": [3], "from": {"fill": )" + scale + R"(}}},
      "body": [{"op": "sparse.ritz", "out": ["theta", "S", "bound", "converged"], "in": ["alpha", "beta", 3], "attrs": {"count": 3, "filter": "none"}}],
      "outputs": {"theta": "theta.npy", "converged": "converged.npy"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << scale << ": " << r.out;
    const fugue::HostArray theta = fugue::load_npy(dir / "out" / "theta.npy", std::nullopt, std::nullopt);
    const double s = std::stod(scale), want[3] = {2 - std::sqrt(3.0), 2, 2 + std::sqrt(3.0)};
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(theta.get(i) / s, want[i], 1e-13) << scale << " value " << i;
    // beta_3 = s, as large as T: no residual is small at any scale.
    EXPECT_EQ(fugue::load_npy(dir / "out" / "converged.npy", std::nullopt, std::nullopt).get(0), 0) << scale;
  }
  test::write_text(dir / "nan.json", R"({"fugue": 1, "symbols": {
    "alpha": {"kind": "array", "dtype": "f32", "shape": [3], "from": {"fill": 1}}, "beta": {"kind": "array", "dtype": "f32", "shape": [3], "from": {"fill": 1}}},
    "body": [{"op": "array.div", "out": ["broken"], "in": ["alpha", 0]}, {"op": "array.mul", "out": ["broken"], "in": ["broken", 0]},
             {"op": "sparse.ritz", "out": ["theta", "S", "bound", "converged"], "in": ["broken", "beta", 3], "attrs": {"count": 2}}],
    "outputs": {"theta": "theta.npy", "S": "S.npy", "converged": "converged.npy"}})");
  auto r = test::run_fugue("run " + (dir / "nan.json").string() + " --out " + (dir / "nan").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const fugue::HostArray theta = fugue::load_npy(dir / "nan" / "theta.npy", std::nullopt, std::nullopt);
  const fugue::HostArray S = fugue::load_npy(dir / "nan" / "S.npy", std::nullopt, std::nullopt);
  const fugue::HostArray converged = fugue::load_npy(dir / "nan" / "converged.npy", std::nullopt, std::nullopt);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::isnan(theta.get(i)));
  EXPECT_TRUE(std::isnan(S.get(0)));
  EXPECT_EQ(converged.get(0), 0);
}

// What sparse.ritz counts as converged: never a value the output's dtype cannot hold (f32 T = [[-3e38,
// 3e38], [3e38, -3e38]] has -6e38, written as -infinity), and with T = 0 a bound only where it is 0 (one
// step with beta_1 = 1e-10: the values are +-1e-10, not T's 0).
TEST(Lanczos, RitzConvergesOnlyOnValuesItCanHold) {
  test::TempDir dir;
  struct Case {
    const char* dtype;
    const char* alpha;
    const char* beta;
    int steps;
  };
  for (const Case& c : {Case{"f32", "[-3e38, -3e38]", "[3e38, 0]", 2}, Case{"f64", "[0, 0]", "[1e-10, 0]", 1}}) {
    test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {
      "alpha": {"kind": "array", "dtype": ")") + c.dtype + R"(", "shape": [2], "value": )" + c.alpha + R"(},
      "beta": {"kind": "array", "dtype": ")" + c.dtype + R"(", "shape": [2], "value": )" + c.beta + R"(}},
      "body": [{"op": "sparse.ritz", "out": ["theta", "S", "bound", "converged"], "in": ["alpha", "beta", )" + std::to_string(c.steps) +
                                       R"(], "attrs": {"count": 1, "filter": "none"}}],
      "outputs": {"theta": "theta.npy", "converged": "converged.npy"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << c.dtype << ": " << r.out;
    EXPECT_EQ(fugue::load_npy(dir / "out" / "converged.npy", std::nullopt, std::nullopt).get(0), 0) << c.dtype;
  }
}
