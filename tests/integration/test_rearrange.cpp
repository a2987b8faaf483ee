// array.transpose and array.slice against NumPy (np.transpose, x[index] evaluated by NumPy itself; an
// empty slice fused between its producer and a sum), and
// as producers of batched factorizations: a batch stored with the batch axis last, or every other matrix
// of a larger array, read straight into potrf's and getrf's kernel (non-contiguous batch layouts), checked
// against NumPy and SciPy.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_support.h"

namespace fugue {
namespace {

std::string python_output(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buf[256];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  if (pipe) pclose(pipe);
  return out;
}

// Each case: an operation, its attribute and the NumPy expression of x it must equal.
struct Case {
  const char* op;
  const char* attrs;
  const char* numpy;
};

const Case kCases[] = {
    {"transpose", R"({})", "np.transpose(x)"},
    {"transpose", R"({"axes": "2, 0, 1"})", "np.transpose(x, (2, 0, 1))"},
    {"transpose", R"j({"axes": "(0, -1, 1)"})j", "np.transpose(x, (0, 2, 1))"},
    {"slice", R"({"index": "::2"})", "x[::2]"},
    {"slice", R"({"index": "::-1, 1:6:3, -2:"})", "x[::-1, 1:6:3, -2:]"},
    {"slice", R"({"index": "..., 3"})", "x[..., 3]"},
    {"slice", R"({"index": "-1, ..., ::-2"})", "x[-1, ..., ::-2]"},
    {"slice", R"({"index": "-100:100:4, 5:-100:-2"})", "x[-100:100:4, 5:-100:-2]"},
    {"slice", R"({"index": "4:2"})", "x[4:2]"},  // empty
    {"slice", R"({"index": "[1:, 2,]"})", "x[1:, 2]"},
    {"slice", R"({"index": "::9223372036854775800, 0:99999999999999999999"})", "x[::9223372036854775800, 0:99999999999999999999]"},
    {"slice", R"({"index": "- 2:, ::-9223372036854775807"})", "x[-2:, ::-9223372036854775807]"},
    {"slice", R"({"index": "::-1, 3:3"})", "x[::-1, 3:3]"},  // empty, no division by its zero extent
    {"transpose", R"({"axes": "1, 2, 0,"})", "np.transpose(x, (1, 2, 0))"},
};

TEST(Rearrange, TransposesAndSlicesAgreeWithNumpy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  const uint64_t seed = test::fresh_seed();
  for (const char* dtype : {"f64", "i32", "c64"}) {
    test::TempDir dir;
    std::string body, outputs = R"("x": "x.npy")", checks;
    int k = 0;
    for (const Case& c : kCases) {
      const std::string y = "y" + std::to_string(k++);
      body += std::string(body.empty() ? "" : ",\n") + R"({"op": "array.)" + c.op + R"(", "out": [")" + y + R"("], "in": ["x"], "attrs": )" +
              c.attrs + "}";
      outputs += R"(, ")" + y + R"(": ")" + y + R"(.npy")";
      checks += "check('" + y + "', " + c.numpy + ")\n";
    }
    // An empty slice of a producer's values, summed: all three in one kernel, which must still build
    // (the slice writes its value though no work-item runs it).
    body += R"(, {"op": "array.mul", "out": ["x2"], "in": ["x", 2]}, {"op": "array.slice", "out": ["e"], "in": ["x2"], "attrs": {"index": "2:2"}},
               {"op": "array.sum", "out": ["es"], "in": ["e"]})";
    outputs += R"(, "es": "es.npy")";
    checks += "check('es', np.array((x * 2)[2:2].sum()))\n";
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": ")" + std::string(dtype) +
                                         R"(", "shape": [6, 7, 5], "from": {"random": {"seed": )" + std::to_string(seed % 100000) +
                                         R"(, "low": -100, "high": 100}}}},
      "body": [)" + body + R"(], "outputs": {)" + outputs + "}}");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << r.out;
    test::write_text(dir / "check.py", "import sys, numpy as np\nd = sys.argv[1]\nx = np.load(d + '/x.npy')\nbad = []\n"
                                       "def check(name, want):\n"
                                       "    got = np.load(d + '/' + name + '.npy')\n"
                                       "    if got.shape != want.shape or not np.array_equal(got, want): bad.append(name)\n" +
                                           checks + "print('numpy agrees' if not bad else 'differ: ' + ' '.join(bad))\n");
    const std::string out = python_output(python + " " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_NE(out.find("numpy agrees"), std::string::npos) << dtype << ", seed " << seed << ": " << out;
  }
}

// A batch of SPD matrices stored with the batch axis last ([n, n, batch], as a structure of arrays), made
// by a transpose of its own kernel and read back into potrf by another transpose; every other matrix of
// a batch, flipped both ways, into getrf. Each rearrangement joins the factorization's kernel: the
// programs run in as many kernels as the factorizations and the transposes before them.
TEST(Rearrange, FeedBatchedFactorizationsInTheirKernel) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const int n : {3, 8, 13}) {
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
      "S": {"kind": "array", "dtype": "f64", "shape": [41, )" + std::to_string(n) + ", " + std::to_string(n) +
                                         R"(], "from": {"spd": {"seed": )" + std::to_string(seed % 100000) + R"(, "cond": 100}}}},
      "body": [{"op": "array.transpose", "out": ["Soa"], "in": ["S"], "attrs": {"axes": "1, 2, 0"}},
               {"op": "array.transpose", "out": ["A"], "in": ["Soa"], "attrs": {"axes": "2, 0, 1"}},
               {"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": true}},
               {"op": "array.slice", "out": ["E"], "in": ["S"], "attrs": {"index": "1::2, ::-1, ::-1"}},
               {"op": "linalg.getrf", "out": ["LU", "ipiv", "info2"], "in": ["E"]}],
      "outputs": {"S": "S.npy", "Soa": "Soa.npy", "L": "L.npy", "info": "info.npy", "LU": "LU.npy", "ipiv": "ipiv.npy"}})");
    auto explain = test::run_fugue("explain " + (dir / "p.json").string());
    ASSERT_EQ(explain.code, 0) << explain.out;
    EXPECT_NE(explain.out.find("Kernels (3)"), std::string::npos) << explain.out;
    EXPECT_NE(explain.out.find("2 operations at BLOCK level over 41 batch entries"), std::string::npos) << explain.out;
    EXPECT_NE(explain.out.find("2 operations at BLOCK level over 20 batch entries"), std::string::npos) << explain.out;
    // And where work-items hold entries side by side (a GPU's teams).
    auto gpu = test::run_fugue("explain " + (dir / "p.json").string() + " --device-file " +
                               (test::source_root() / "devices" / "nvidia-h200.json").string());
    ASSERT_EQ(gpu.code, 0) << gpu.out;
    EXPECT_NE(gpu.out.find("Kernels (3)"), std::string::npos) << gpu.out;
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << r.out;
    test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.linalg as sl
d = sys.argv[1]
S = np.load(d + '/S.npy')
assert np.array_equal(np.load(d + '/Soa.npy'), np.transpose(S, (1, 2, 0))), 'the structure of arrays'
L, n = np.load(d + '/L.npy'), S.shape[-1]
assert (np.load(d + '/info.npy') == 0).all(), 'potrf info'
assert np.abs(L - np.linalg.cholesky(S)).max() <= 1e-12 * np.abs(S).max(), 'potrf'
LU, ipiv = np.load(d + '/LU.npy'), np.load(d + '/ipiv.npy')
for e, lu, piv in zip(S[1::2, ::-1, ::-1], LU, ipiv):
    want, wpiv = sl.lu_factor(e)
    assert (piv == wpiv + 1).all(), 'getrf pivots'
    assert np.abs(lu - want).max() <= 1e-11 * max(1, np.abs(want).max()), 'getrf'
print('numpy agrees')
)");
    const std::string out = python_output(python + " " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_NE(out.find("numpy agrees"), std::string::npos) << "n = " << n << ", seed " << seed << ": " << out;
  }
}

}  // namespace
}  // namespace fugue
