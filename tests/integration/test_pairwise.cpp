// The pairwise plugin against SciPy's cdist (every metric it shares: euclidean, sqeuclidean, cityblock,
// chebyshev, minkowski, canberra, cosine) and NumPy's formulas for chi2 and scikit-learn's kernels, on
// sizes 1, 17, 1000 and 4099 (non-square: 4099 x 17 and 17 x 4099), rows of 1, 3 and 64, f32 and f64;
// a kernel's consumer joins its kernel; bad attributes are refused with their names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.h"

using namespace fugue;

namespace {

void expect_scipy_agrees(const test::TempDir& dir, const std::string& program, const std::string& check, const std::string& what) {
  test::write_text(dir / "p.json", program);
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << what << ": " << r.out;
  test::write_text(dir / "check.py", "import sys, numpy as np\nfrom scipy.spatial.distance import cdist\nd = sys.argv[1] + '/'\n" + check +
                                         "\nprint('scipy agrees')\n");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_NE(c.out.find("scipy agrees"), std::string::npos) << what << ": " << c.out;
}

bool have_scipy() { return test::run_command(test::numpy_python() + " -c 'import scipy'").code == 0; }

}  // namespace

TEST(Pairwise, DistancesAndKernelsMatchScipy) {
  if (test::numpy_python().empty() || !have_scipy()) GTEST_SKIP() << "no python3 with numpy and scipy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Size {
    int64_t n, m, k;
  };
  for (const char* dtype : {"f64", "f32"})
    for (const Size& s : {Size{1, 1, 1}, Size{17, 17, 3}, Size{1000, 33, 64}, Size{4099, 17, 3}, Size{17, 4099, 64}}) {
      const std::string what = std::string(dtype) + " " + std::to_string(s.n) + " x " + std::to_string(s.m) + " x " + std::to_string(s.k) + " (seed " +
                               std::to_string(seed) + ")";
      auto rows = [&](const char* name, int64_t count, uint64_t sd) {
        return "\"" + std::string(name) + R"(": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(count) + ", " +
               std::to_string(s.k) + R"(], "from": {"random": {"seed": )" + std::to_string(sd) + R"(, "low": 0, "high": 1}}})";
      };
      std::string body, outputs = R"("X": "X.npy", "Y": "Y.npy")";
      const char* metrics[] = {"euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski", "chi2", "canberra", "cosine"};
      for (const char* m : metrics) {
        body += std::string(body.empty() ? "" : ", ") + R"({"op": "pairwise.distance", "out": [")" + m + R"("], "in": ["X", "Y"], "attrs": {"metric": ")" + m +
                R"(")" + (std::string(m) == "minkowski" ? R"(, "p": 3)" : "") + "}}";
        outputs += std::string(", \"") + m + "\": \"" + m + ".npy\"";
      }
      const char* kinds[] = {"linear", "polynomial", "gaussian", "sigmoid", "intersection"};
      for (const char* k : kinds) {
        body += std::string(", ") + R"({"op": "pairwise.kernel", "out": ["k_)" + k + R"("], "in": ["X", "Y"], "attrs": {"kind": ")" + k + R"(", "gamma": 0.7, "alpha": 0.5, "degree": 2}})";
        outputs += std::string(", \"k_") + k + "\": \"k_" + k + ".npy\"";
      }
      const std::string program = R"({"fugue": 1, "symbols": {)" + rows("X", s.n, seed + s.n) + ", " + rows("Y", s.m, seed + s.m + 1) +
                                  R"(}, "body": [)" + body + R"(], "outputs": {)" + outputs + "}}";
      const std::string tol = std::string(dtype) == "f32" ? "rtol=2e-5, atol=2e-5" : "rtol=1e-12, atol=1e-12";
      // Each size as the device plans it (an element per work-item here), then in CPUs' blocks in vectors.
      for (const char* tuning : {"", "vectors=1"}) {
        ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", tuning, 1), 0);
        expect_scipy_agrees(dir, program, R"(X, Y = np.load(d + 'X.npy').astype(np.float64), np.load(d + 'Y.npy').astype(np.float64)
def same(name, want):
    got = np.load(d + name + '.npy')
    assert np.allclose(got, want, )" + tol + R"(, equal_nan=True), (name, np.abs(got - want).max())
for name, metric in (('euclidean', 'euclidean'), ('sqeuclidean', 'sqeuclidean'), ('manhattan', 'cityblock'), ('chebyshev', 'chebyshev'),
                     ('canberra', 'canberra'), ('cosine', 'cosine')):
    same(name, cdist(X, Y, metric))
same('minkowski', cdist(X, Y, 'minkowski', p=3))
num, den = (X[:, None, :] - Y[None, :, :]) ** 2, X[:, None, :] + Y[None, :, :]
same('chi2', np.where(den != 0, num / np.where(den != 0, den, 1), 0).sum(-1))
dot = X @ Y.T
same('k_linear', dot)
same('k_polynomial', (0.7 * dot + 0.5) ** 2)
same('k_gaussian', np.exp(-0.7 * cdist(X, Y, 'sqeuclidean')))
same('k_sigmoid', np.tanh(0.7 * dot + 0.5))
same('k_intersection', np.minimum(X[:, None, :], Y[None, :, :]).sum(-1)))",
                            what + (*tuning ? std::string(" ") + tuning : std::string()));
        unsetenv("FUGUE_PAIRWISE_TUNING");
      }
    }
}

// The tiled plan: every blocking, layout, depth and prefetch (FUGUE_PAIRWISE_TUNING; the ELEMENT plan as rows=0) gives SciPy's
// distances on sizes that are multiples of no tile (77 x 131 rows of 37 coordinates: a partial chunk
// of 16 too), and the same values as each other; explain names the blocking.
TEST(Pairwise, EveryBlockingGivesTheSameDistances) {
  if (test::numpy_python().empty() || !have_scipy()) GTEST_SKIP() << "no python3 with numpy and scipy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    const char* dtype;
    std::vector<const char*> blockings;
    std::vector<const char*> metrics;
  };
  const std::vector<Case> cases = {
      {"f64", {"rows=0,cols=0", "rows=16,cols=16,depth=32", "rows=96,cols=32,prefetch=1", "rows=32,cols=64,layout=contiguous,depth=32,prefetch=1", "vectors=1"},
       {"euclidean", "manhattan", "chebyshev", "minkowski", "chi2", "canberra", "cosine"}},
      {"f32", {"rows=0,cols=0", "rows=64,cols=64", "rows=48,cols=48,layout=contiguous,prefetch=1", "rows=128,cols=112", "vectors=1"},
       {"sqeuclidean", "chi2", "cosine", "chebyshev", "canberra", "minkowski"}}};
  for (const Case& c : cases) {
    auto rows = [&](const char* name, int64_t count, uint64_t sd) {
      return "\"" + std::string(name) + R"(": {"kind": "array", "dtype": ")" + c.dtype + R"(", "shape": [)" + std::to_string(count) +
             R"(, 37], "from": {"random": {"seed": )" + std::to_string(sd) + R"(, "low": 0, "high": 1}}})";
    };
    std::string body, outputs = R"("X": "X.npy", "Y": "Y.npy")", check;
    for (const char* m : c.metrics) {
      body += std::string(body.empty() ? "" : ", ") + R"({"op": "pairwise.distance", "out": [")" + m + R"("], "in": ["X", "Y"], "attrs": {"metric": ")" + m +
              R"(", "p": 3}})";
      outputs += std::string(", \"") + m + "\": \"" + m + ".npy\"";
      check += std::string("same('") + m + "')\n";
    }
    body += R"(, {"op": "pairwise.kernel", "out": ["gaussian"], "in": ["X", "Y"], "attrs": {"kind": "gaussian", "gamma": 0.5}})";
    outputs += R"(, "gaussian": "gaussian.npy")";
    const std::string program = R"({"fugue": 1, "symbols": {)" + rows("X", 77, seed) + ", " + rows("Y", 131, seed + 1) + R"(}, "body": [)" + body +
                                R"(], "outputs": {)" + outputs + "}}";
    test::write_text(dir / "p.json", program);
    const std::string tol = std::string(c.dtype) == "f32" ? "rtol=2e-5, atol=2e-5" : "rtol=1e-12, atol=1e-12";
    std::string first;
    for (const char* blocking : c.blockings) {
      const std::string what = std::string(c.dtype) + " " + blocking + " (seed " + std::to_string(seed) + ")";
      ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", blocking, 1), 0);
      auto explained = test::run_fugue("explain " + (dir / "p.json").string());
      const std::string rows_of = std::string(blocking).substr(5, std::string(blocking).find(',') - 5);
      if (std::string(blocking) == "vectors=1") {
        EXPECT_NE(explained.out.find("of D per work-item, "), std::string::npos) << what << ": " << explained.out;
        EXPECT_NE(explained.out.find(" coordinates a vector, no local memory (FUGUE_PAIRWISE_TUNING=vectors=1)"), std::string::npos) << what << ": "
                                                                                                                                  << explained.out;
      } else if (rows_of != "0") {
        EXPECT_NE(explained.out.find("tiles of " + rows_of + " x "), std::string::npos) << what << ": " << explained.out;
        EXPECT_NE(explained.out.find(std::string("(FUGUE_PAIRWISE_TUNING=") + blocking + ")"), std::string::npos) << what << ": " << explained.out;
      }
      const std::string out = (dir / blocking).string();
      auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + out);
      unsetenv("FUGUE_PAIRWISE_TUNING");
      ASSERT_EQ(r.code, 0) << what << ": " << r.out;
      if (first.empty()) first = out;
      test::write_text(dir / "check.py", "import sys, numpy as np\nfrom scipy.spatial.distance import cdist\nd, first = sys.argv[1] + '/', sys.argv[2] + '/'\n"
                                             "X, Y = np.load(d + 'X.npy').astype(np.float64), np.load(d + 'Y.npy').astype(np.float64)\n"
                                             "num, den = (X[:, None, :] - Y[None, :, :]) ** 2, X[:, None, :] + Y[None, :, :]\n"
                                             "want = {'chi2': np.where(den != 0, num / np.where(den != 0, den, 1), 0).sum(-1), "
                                             "'minkowski': cdist(X, Y, 'minkowski', p=3), 'manhattan': cdist(X, Y, 'cityblock'), "
                                             "'gaussian': np.exp(-0.5 * cdist(X, Y, 'sqeuclidean'))}\n"
                                             "def same(name):\n"
                                             "    got = np.load(d + name + '.npy')\n"
                                             "    w = want[name] if name in want else cdist(X, Y, name)\n"
                                             "    assert got.shape == (77, 131) and np.allclose(got, w, " + tol + "), (name, np.abs(got - w).max())\n"
                                             "    assert np.allclose(got, np.load(first + name + '.npy'), " + tol + "), (name, 'differs from the first blocking')\n" +
                                             check + "same('gaussian')\nprint('scipy agrees')\n");
      auto checked = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + out + " " + first);
      EXPECT_NE(checked.out.find("scipy agrees"), std::string::npos) << what << ": " << checked.out;
    }
  }
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "rows=40,cols=16", 1), 0);
  auto bad = test::run_fugue("explain " + (dir / "p.json").string());
  unsetenv("FUGUE_PAIRWISE_TUNING");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("FUGUE_PAIRWISE_TUNING: \"rows=40\""), std::string::npos) << bad.out;
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "depth=32,colour=red", 1), 0);
  bad = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(bad.out.find("unknown field \"colour\""), std::string::npos) << bad.out;
  // One side on a product too small for tiles by default: the other from the device's row; a row named
  // in any case, anywhere in the list, under the fields that follow it or not.
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "rows=16", 1), 0);
  auto one_side = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(one_side.out.find("tiles of 16 x "), std::string::npos) << one_side.out;
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "layout=contiguous,row=CPU,vectors=0", 1), 0);
  auto named = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(named.out.find("(contiguous)"), std::string::npos) << named.out;
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "rows=32,row=CPU", 1), 0);  // the CPU row's vectors, its tiles' sides given
  named = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(named.out.find("tiles of 32 x 32"), std::string::npos) << named.out;
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "vectors=2", 1), 0);
  bad = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(bad.out.find("FUGUE_PAIRWISE_TUNING: \"vectors=2\": expected vectors=0 or vectors=1"), std::string::npos) << bad.out;
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "depth=32,vectors=1", 1), 0);
  bad = test::run_fugue("explain " + (dir / "p.json").string());
  unsetenv("FUGUE_PAIRWISE_TUNING");
  EXPECT_NE(bad.out.find("FUGUE_PAIRWISE_TUNING: vectors=1 and \"depth=32\": blocks in vectors take none of the tiles' fields"), std::string::npos)
      << bad.out;
  // Past 2^23, a side narrower than a tile shrinks the block to it (rounded up to 16); where the padding
  // would still be more than 4 times D, an element per work-item. CPUs take blocks in vectors, which
  // pad a few rows at most.
  for (const auto& [m, device, want] : {std::tuple<int, const char*, std::string>{3, "nvidia-h100.json", "tiles 5 times D: an element per work-item"},
                                        {20, "nvidia-h100.json", "tiles of 128 x 32"},
                                        {3, "pocl-cpu.json", "coordinates a vector, no local memory (CPU row)"}}) {
    test::write_text(dir / "narrow.json", R"({"fugue": 1, "symbols": {
      "X": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"zeros": {}}},
      "Y": {"kind": "array", "dtype": "f32", "shape": [)" + std::to_string(m) + R"(, 128], "from": {"zeros": {}}}},
      "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"]}], "outputs": {"D": "D.npy"}})");
    auto narrow = test::run_fugue("explain --device-file " + (test::source_root() / "devices" / device).string() + " " + (dir / "narrow.json").string());
    EXPECT_NE(narrow.out.find(want), std::string::npos) << m << " on " << device << ": " << narrow.out.substr(0, 2000);
  }
  // There, tiles asked for in place of the vectors would be the padded ones: an element per work-item.
  auto tiles = test::run_fugue("explain --device-file " + (test::source_root() / "devices" / "pocl-cpu.json").string() + " " + (dir / "narrow.json").string(),
                               "FUGUE_PAIRWISE_TUNING=vectors=0");
  EXPECT_NE(tiles.out.find("one element of D per work-item, its rows read from global memory (FUGUE_PAIRWISE_TUNING=vectors=0)"), std::string::npos)
      << tiles.out.substr(0, 2000);
  // nearest's fields (candidates, dot) leave the other operations' vectors alone; with vectors=1 they are refused.
  auto nearest_field = test::run_fugue("explain --device-file " + (test::source_root() / "devices" / "pocl-cpu.json").string() + " " +
                                           (dir / "narrow.json").string(),
                                       "FUGUE_PAIRWISE_TUNING=dot=0");
  EXPECT_NE(nearest_field.out.find("coordinates a vector, no local memory (FUGUE_PAIRWISE_TUNING=dot=0)"), std::string::npos) << nearest_field.out.substr(0, 2000);
  nearest_field = test::run_fugue("explain " + (dir / "narrow.json").string(), "FUGUE_PAIRWISE_TUNING=candidates=2,vectors=1");
  EXPECT_NE(nearest_field.out.find("FUGUE_PAIRWISE_TUNING: vectors=1 and \"candidates=2\": blocks in vectors take none of the tiles' fields"),
            std::string::npos)
      << nearest_field.out;
}

// pairwise.nearest's and kernel_sum's tiled plans under several blockings, rows and columns multiples of
// no tile: the distances and indices of a full stable sort, exactly (f64 data of small integers: many
// exact ties, which must go to the lower index), and K v as NumPy computes it.
// The "blocking" attribute pins blockings in one program: each side and the most lopsided shapes of the
// seed's 36 and the sides of 112 and 128 give SciPy's D (rows and columns that are multiples of no tile;
// fugue tune pairwise runs all 64), and a bad one is refused naming the attribute.
TEST(Pairwise, TheBlockingAttributeGivesTheSameDistances) {
  if (test::numpy_python().empty() || !have_scipy()) GTEST_SKIP() << "no python3 with numpy and scipy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  std::string body, outputs = R"("X": "X.npy", "Y": "Y.npy")";
  for (const char* b_text : {"16x16", "32x32", "48x48", "64x64", "80x80", "96x96", "16x96", "96x16", "80x48", "32x64", "112x112", "128x128", "128x16"}) {
      const std::string b = b_text;
      body += std::string(body.empty() ? "" : ", ") + R"({"op": "pairwise.distance", "out": ["D)" + b + R"("], "in": ["X", "Y"], "attrs": {"metric": "manhattan", "blocking": ")" + b + R"("}})";
      outputs += R"(, "D)" + b + R"(": "D)" + b + R"(.npy")";
    }
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [77, 37], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": 0, "high": 1}}},
    "Y": {"kind": "array", "dtype": "f32", "shape": [131, 37], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": 0, "high": 1}}}},
    "body": [)" + body + R"(], "outputs": {)" + outputs + "}}");
  auto explained = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(explained.out.find("tiles of 80 x 48 per 16 x 16 work-group, 5 x 3 per work-item"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("(attribute blocking)"), std::string::npos) << explained.out;
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, glob, numpy as np
from scipy.spatial.distance import cdist
d = sys.argv[1] + '/'
want = cdist(np.load(d + 'X.npy').astype(np.float64), np.load(d + 'Y.npy').astype(np.float64), 'cityblock')
files = sorted(glob.glob(d + 'D*.npy'))
assert len(files) == 13, len(files)
for f in files:
    assert np.abs(np.load(f) - want).max() <= 2e-5 * max(1, np.abs(want).max()), f
print('13 as scipy')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_NE(c.out.find("13 as scipy"), std::string::npos) << "seed " << seed << ": " << c.out;
  test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [7, 3], "from": {"zeros": {}}}},
    "body": [{"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X", "X"], "attrs": {"blocking": "64x100"}}], "outputs": {}})");
  auto bad = test::run_fugue("validate " + (dir / "bad.json").string());
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("attribute blocking: expected \"ROWSxCOLS\" with each 16, 32, 48, 64, 80, 96, 112 or 128"), std::string::npos) << bad.out;
}

TEST(Pairwise, TiledNearestMatchesAStableSortAndKernelSumsNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  // Each blocking with one or two of the counts 1, 7 and 128 (each count meets both forms of the sweep):
  // every run builds the sweep's kernels anew, tens of seconds each on PoCL.
  const std::tuple<const char*, const char*, int> cases[] = {
      {"euclidean", "rows=16,cols=16", 1}, {"euclidean", "rows=16,cols=16", 128}, {"manhattan", "rows=32,cols=96", 7},
      {"manhattan", "rows=32,cols=96", 1}, {"chi2", "rows=48,cols=32,layout=contiguous", 128},
      // Two candidates a row at a time: a tile whose rows have more (every tile until the lists fill) takes rounds.
      {"euclidean", "rows=32,cols=32,candidates=2", 7},
      // CPUs' blocks in vectors (19 coordinates: vectors and the rest one at a time).
      {"euclidean", "vectors=1", 128}, {"manhattan", "vectors=1", 1}, {"chi2", "vectors=1", 7}};
  for (const auto& [metric, blocking, count] : cases) {
        const std::string what = std::string(metric) + " " + blocking + " count " + std::to_string(count) + " (seed " + std::to_string(seed) + ")";
        auto rows = [&](const char* name, int64_t n, uint64_t sd) {
          return "\"" + std::string(name) + R"(0": {"kind": "array", "dtype": "f64", "shape": [)" + std::to_string(n) +
                 R"(, 19], "from": {"random": {"seed": )" + std::to_string(sd) + R"(, "low": 0, "high": 4}}})";
        };
        test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + rows("X", 70, seed) + ", " + rows("Y", 333, seed + 1) +
                                             R"(, "v": {"kind": "array", "dtype": "f64", "shape": [333], "from": {"random": {"seed": 5, "low": -1, "high": 1}}}},
          "body": [{"op": "array.floor", "out": ["X"], "in": ["X0"]}, {"op": "array.floor", "out": ["Y"], "in": ["Y0"]},
                   {"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"metric": ")" + metric + R"(", "count": )" +
                                                 std::to_string(count) + R"(}},
                   {"op": "pairwise.kernel_sum", "out": ["ks"], "in": ["X", "Y", "v"], "attrs": {"kind": "gaussian", "gamma": 0.01}}],
          "outputs": {"X": "X.npy", "Y": "Y.npy", "v": "v.npy", "d": "d.npy", "index": "index.npy", "ks": "ks.npy"}})");
        ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", blocking, 1), 0);
        auto explained = test::run_fugue("explain " + (dir / "p.json").string());
        auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
        unsetenv("FUGUE_PAIRWISE_TUNING");
        // Euclidean distances rank candidates by the dot form first (nearest_dot.h); the others as they are.
        const std::string plan = std::string(blocking) == "vectors=1"  ? "best kept in d and index, a band of rows walking Y in order; blocks of"
                                 : std::string(metric) == "euclidean" ? "candidates a row by |x|^2 + |y|^2 - 2 x.y"
                                                                      : "best of its columns kept in d and index";
        EXPECT_NE(explained.out.find(plan), std::string::npos) << what << ": " << explained.out;
        if (std::string(blocking) == "vectors=1") {
          EXPECT_NE(explained.out.find("K v summed along each row, a band of rows walking Y in order; blocks of"), std::string::npos) << what << ": " << explained.out;
        }
        ASSERT_EQ(r.code, 0) << what << ": " << r.out;
        test::write_text(dir / "check.py", std::string("import sys, numpy as np\nd = sys.argv[1] + '/'\nmetric = '") + metric + "'\ncount = " +
                                               std::to_string(count) + R"(
X, Y = np.load(d + 'X.npy'), np.load(d + 'Y.npy')
a, b = X[:, None, :], Y[None, :, :]
if metric == 'euclidean': D = np.sqrt(((a - b) ** 2).sum(-1))
elif metric == 'manhattan': D = np.abs(a - b).sum(-1)
else: D = np.where(a + b != 0, (a - b) ** 2 / np.where(a + b != 0, a + b, 1), 0).sum(-1)
order = np.argsort(D, axis=1, kind='stable')[:, :count]
got_d, got_i = np.load(d + 'd.npy'), np.load(d + 'index.npy')
assert np.allclose(got_d, np.take_along_axis(D, order, 1), rtol=1e-12, atol=1e-12), np.abs(got_d - np.take_along_axis(D, order, 1)).max()
K = np.exp(-0.01 * ((a - b) ** 2).sum(-1))
assert np.allclose(np.load(d + 'ks.npy'), K @ np.load(d + 'v.npy'), rtol=1e-12, atol=1e-12), 'kernel_sum'
if metric != 'chi2':  # sums of small integers: exact, so ties are exact and go to the lower index
    assert np.array_equal(got_i, order), np.argwhere(got_i != order)[:3]
print('sorted alike')
)");
        auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
        EXPECT_NE(c.out.find("sorted alike"), std::string::npos) << what << ": " << c.out;
      }
}

// pairwise.nearest of euclidean distances by the dot form (|x|^2 + |y|^2 - 2 x.y ranks candidates, their
// distances then computed as (x - y)^2 sums) gives exactly the difference form's d and index: on uniform
// rows (f32, f64); rows offset by 1000 (whose norms' rounding would dwarf the distances, had the rows not
// been centred on Y's first row); rows of Y around rows of X at distances 1 + 1e-5 i, which the dot
// form's rounding (rows spread over 100 in each coordinate) ranks at random (a bound too small fails
// here); near-duplicates and exact duplicates at the edge of the lists; NaN and inf coordinates; rows of
// 1e19 whose norms overflow f32 (one in Y leaves every row undecided); rows of 1e-20, whose squares
// underflow; sums at f32's overflow edge, where the dot-form values of all rows but one overflow and
// their distances do not (sqeuclidean; fails without the check that g is finite); and a list of all of
// Y's rows, one of norm 2.25e38. Counts 9, and 1 and 40 on uniform rows and 40 on the sphere's
// (candidates 17, 9, 50 a row), tiles of 16 x 16 and 32 x 48 (contiguous), and two candidates waiting a
// row at a time (rounds).
TEST(Pairwise, NearestByTheDotFormIsTheDifferenceForms) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  test::write_text(dir / "make.py", R"(import sys, numpy as np
d, rng = sys.argv[1] + '/', np.random.default_rng(int(sys.argv[2]))
def save(name, x, y): np.save(d + 'X' + name + '.npy', x); np.save(d + 'Y' + name + '.npy', y)
u = lambda n, t=np.float32: rng.random((n, 40)).astype(t)
save('uniform', u(300), u(700))
save('wide', u(300, np.float64), u(700, np.float64))
save('offset', (1000 + u(300, np.float64)).astype(np.float32), (1000 + u(700, np.float64)).astype(np.float32))
x, y = u(300), u(700)
y[:300] = x + rng.normal(0, 1e-4, x.shape).astype(np.float32) * (rng.random((300, 1)) < 0.5)  # near-duplicates, some exact
y[300:400] = y[0]; y[400:420] = y[5]                                                               # exact ties
save('near', x, y.astype(np.float32))
x, y = 30 + 100 * u(300, np.float64), 30 + 100 * u(700, np.float64)
for b in range(5):  # 60 rows of Y at distances 1 + 1e-5 i from row b of X, in random directions
    v = rng.normal(size=(60, 40)); v /= np.linalg.norm(v, axis=1, keepdims=True)
    y[60 * b:60 * b + 60] = x[b] + v * (1 + 1e-5 * rng.permutation(60))[:, None]
save('sphere', x.astype(np.float32), y.astype(np.float32))
x, y = u(300), u(700)
x[3, 7] = np.nan; x[4, 0] = np.inf; y[10, 2] = np.nan; y[11, 5] = np.inf; y[12, 5] = -np.inf
save('special', x, y)
x, y = u(300), u(700)
x[:6] *= 1e19; y[:3] *= 1e19
save('huge', x, y)
save('tiny', u(300) * np.float32(1e-20), u(700) * np.float32(1e-20))
f = np.float32  # sums at f32's overflow edge: g of every row overflows, the distances do not (review)
p, q, c = f(2.0**63 - 2.0**45), f(2.0**62.5), f(np.sqrt(0.75 * 2.0**103))
x = np.zeros((1, 300), f); x[0, 0] = p; x[0, 1] = q; x[0, 2:] = c
y = np.zeros((11, 300), f); y[1:, 1] = q; y[10, 0] = -p  # (row 0 at the origin, which the rows are centred on)
for r in range(9): y[r + 1, 0] = -(p + f((2 + r) * 2.0**39))
save('edge', x, y)
y = rng.random((10, 4)).astype(f); y[7] = [1.5e19, 0, 0, 0]  # every row a candidate, one of norm 2.25e38
save('full', y[7:8].copy(), y)
)");
  auto made = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + dir.path().string() + " " + std::to_string(seed));
  ASSERT_EQ(made.code, 0) << made.out;
  std::string symbols, body, outputs;
  for (const char* data : {"uniform", "wide", "offset", "sphere", "near", "special", "huge", "tiny", "edge", "full"}) {
    const std::string name = data, dtype = name == "wide" ? "f64" : "f32";
    const std::string n = name == "edge" || name == "full" ? "1" : "300", m = name == "edge" ? "11" : name == "full" ? "10" : "700",
                      k = name == "edge" ? "300" : name == "full" ? "4" : "40";
    symbols += std::string(symbols.empty() ? "" : ", ") + R"("X)" + name + R"(": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + n + ", " + k +
               R"(], "from": "X)" + name + R"(.npy"}, "Y)" + name + R"(": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + m + ", " + k +
               R"(], "from": "Y)" + name + R"(.npy"})";
    for (int count : {1, 2, 9, 40}) {
      // (each count's programs take PoCL a while to build; 40 of the sphere's 60 keep 50 candidates, so a
      // bound too small there passes rows whose rounding left some of the 40 out; the edge's 2 nearest keep
      // 10 of 11, the full one's 2 all 10)
      if (name == "edge" || name == "full" ? count != 2 : count == 2 || (count != 9 && name != "uniform" && !(name == "sphere" && count == 40)))
        continue;
      const std::string tag = name + std::to_string(count);
      body += std::string(body.empty() ? "" : ", ") + R"({"op": "pairwise.nearest", "out": ["d)" + tag + R"(", "i)" + tag + R"("], "in": ["X)" + name +
              R"(", "Y)" + name + R"("], "attrs": {"count": )" + std::to_string(count) + (name == "edge" ? R"(, "metric": "sqeuclidean")" : "") + "}}";
      outputs += std::string(outputs.empty() ? "" : ", ") + R"("d)" + tag + R"(": "d)" + tag + R"(.npy", "i)" + tag + R"(": "i)" + tag + R"(.npy")";
    }
  }
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body + R"(], "outputs": {)" + outputs + "}}");
  test::write_text(dir / "check.py", R"(import sys, glob, os, numpy as np
a, b = sys.argv[1], sys.argv[2]
files = sorted(os.path.basename(f) for f in glob.glob(a + '/*.npy'))
assert len(files) == 26, len(files)
for f in files:
    x, y = np.load(a + '/' + f), np.load(b + '/' + f)
    assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == 'f'), (f, np.argwhere(x != y)[:3])
print('the same', len(files))
)");
  for (const char* blocking : {"rows=16,cols=16", "rows=32,cols=48,layout=contiguous,candidates=2"}) {
    auto run = [&](const std::string& tuning, const std::string& out) {
      EXPECT_EQ(setenv("FUGUE_PAIRWISE_TUNING", tuning.c_str(), 1), 0);
      auto explained = test::run_fugue("explain " + (dir / "p.json").string());
      auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / out).string() + " --profile " + (dir / (out + ".trace.json")).string());
      unsetenv("FUGUE_PAIRWISE_TUNING");
      EXPECT_EQ(r.code, 0) << tuning << ": " << r.out;
      return explained.out;
    };
    const std::string by_dot = run(blocking, "dot"), by_difference = run(std::string(blocking) + ",dot=0", "difference");
    EXPECT_NE(by_dot.find("candidates a row by |x|^2 + |y|^2 - 2 x.y"), std::string::npos) << by_dot;
    EXPECT_EQ(by_difference.find("|x|^2"), std::string::npos) << by_difference;
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "dot").string() + " " + (dir / "difference").string());
    EXPECT_NE(c.out.find("the same 26"), std::string::npos) << blocking << " (seed " << seed << "): " << c.out;
    // With tiles of 16 x 16 Y's 700 rows are 44 tiles: the few rows the sphere's near ties leave undecided
    // are swept again in slices of Y, and their lists merged.
    if (std::string(blocking) == "rows=16,cols=16")
      EXPECT_NE(test::read_text(dir / "dot.trace.json").find("pairwise.nearest merge"), std::string::npos) << "seed " << seed;
  }
  // On the H100 the dot form's sweep stages 32 coordinates at a time (the table's dot_depth), the
  // difference form's 16.
  for (const char* metric : {"euclidean", "manhattan"}) {
    test::write_text(dir / "h100.json", R"({"fugue": 1, "symbols": {
      "X": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"zeros": {}}},
      "Y": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"zeros": {}}}},
      "body": [{"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X", "Y"], "attrs": {"count": 16, "metric": ")" + std::string(metric) + R"("}}], "outputs": {}})");
    auto h100 = test::run_fugue("explain --device-file " + (test::source_root() / "devices" / "nvidia-h100.json").string() + " " + (dir / "h100.json").string());
    const std::string want = std::string(metric) == "euclidean" ? "24 candidates a row by |x|^2 + |y|^2 - 2 x.y on tensor cores (mma.sync m16n8k8 tf32), then (x - y)^2 sums where a bound decides; tiles of 96 x 96 in 8 warps, 32 coordinates at a time (NVIDIA GPU row)"
                                                                : "16 best of its columns kept in d and index, a tile's values that enter them inserted by the row's work-item; tiles of 96 x 96 per 16 x 16 work-group, 6 x 6 per work-item (strided), 16 coordinates at a time";
    EXPECT_NE(h100.out.find(want), std::string::npos) << h100.out;
  }
  // The FP32 units' sweep with mma=0, and wherever the tiles are not multiples of 32 or the architecture
  // is not sm_90 (where the tensor cores' sweep was measured).
  const std::string h100 = (test::source_root() / "devices" / "nvidia-h100.json").string();
  const std::string fp32 = "24 candidates a row by |x|^2 + |y|^2 - 2 x.y, then (x - y)^2 sums where a rounding bound decides; tiles of 96 x 96 per 16 x 16 work-group";
  test::write_text(dir / "h100.json", R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"zeros": {}}},
    "Y": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"zeros": {}}}},
    "body": [{"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X", "Y"], "attrs": {"count": 16}}], "outputs": {}})");
  auto r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "h100.json").string(), "FUGUE_PAIRWISE_TUNING=mma=0");
  EXPECT_NE(r.out.find(fp32), std::string::npos) << r.out;
  r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "h100.json").string(), "FUGUE_PAIRWISE_TUNING=rows=80,cols=96");
  EXPECT_NE(r.out.find("tiles of 80 x 96 per 16 x 16 work-group"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tensor cores"), std::string::npos) << r.out;
  std::string sm80 = test::read_text(h100);
  sm80.replace(sm80.find("\"architecture\": \"sm_90\""), std::string("\"architecture\": \"sm_90\"").size(), "\"architecture\": \"sm_80\"");
  test::write_text(dir / "sm80.json", sm80);
  r = test::run_fugue("explain --device-file " + (dir / "sm80.json").string() + " " + (dir / "h100.json").string());
  EXPECT_NE(r.out.find(fp32), std::string::npos) << r.out;
  for (const auto& [setting, message] : std::vector<std::pair<std::string, std::string>>{
           {"mma=2", "FUGUE_PAIRWISE_TUNING: \"mma=2\": expected mma=0 or mma=1"},
           {"vectors=1,mma=1", "FUGUE_PAIRWISE_TUNING: vectors=1 and \"mma=1\": blocks in vectors take none of the tiles' fields"}}) {
    r = test::run_fugue("explain --device-file " + h100 + " " + (dir / "h100.json").string(), "FUGUE_PAIRWISE_TUNING='" + setting + "'");
    EXPECT_EQ(r.code, 2) << setting << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << setting << ": " << r.out;
  }
}

// exp(-D) after a distance joins its kernel; refusals name the attribute or operand.
TEST(Pairwise, ConsumersJoinAndBadCallsAreRefused) {
  test::TempDir dir;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [50, 4], "from": {"random": {"seed": 1, "low": 0, "high": 1}}},
    "Y": {"kind": "array", "dtype": "f32", "shape": [30, 4], "from": {"random": {"seed": 2, "low": 0, "high": 1}}}},
    "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "sqeuclidean"}},
             {"op": "array.neg", "out": ["N"], "in": ["D"]},
             {"op": "array.exp", "out": ["K"], "in": ["N"]}],
    "outputs": {"K": "K.npy"}})");
  int64_t launches = 0;
  auto out = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 1);
  test::expect_same(out, test::run_reference(program), 1e-5, "exp(-D)");
  auto refused = [&](const std::string& op, const std::string& message) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {
      "X": {"kind": "array", "dtype": "f32", "shape": [5, 4], "from": {"fill": 1}},
      "Y": {"kind": "array", "dtype": "f32", "shape": [3, 5], "from": {"fill": 1}},
      "Z": {"kind": "array", "dtype": "f32", "shape": [3, 4], "from": {"fill": 1}}},
      "body": [)" + op + R"(], "outputs": {}})");
    auto r = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  };
  refused(R"({"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"]})", "operand Y: expected rows of X's length [m, 4], found f32 array [3, 5]");
  refused(R"({"op": "pairwise.distance", "out": ["D"], "in": ["X", "Z"], "attrs": {"metric": "hamming"}})",
          "attribute metric: expected one of euclidean, sqeuclidean, manhattan, chebyshev, minkowski, chi2, canberra, cosine, found \"hamming\"");
  refused(R"({"op": "pairwise.distance", "out": ["D"], "in": ["X", "Z"], "attrs": {"metric": "minkowski", "p": 0.5}})",
          "attribute p: expected a finite number, at least 1, found 0.5");
  refused(R"({"op": "pairwise.kernel", "out": ["D"], "in": ["X", "Z"], "attrs": {"kind": "rbf"}})",
          "attribute kind: expected one of linear, polynomial, gaussian, sigmoid, intersection, found \"rbf\"");
}

// nearest (counts 1, 8 and all of Y's rows) against a full stable sort of SciPy's cdist (the indices
// equal wherever the distances around them are apart by more than the rounding), and kernel_sum against
// NumPy's K v; f32 and f64; sizes 1 to 1000 rows.
TEST(Pairwise, NearestAndKernelSumsMatchScipy) {
  if (test::numpy_python().empty() || !have_scipy()) GTEST_SKIP() << "no python3 with numpy and scipy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t n, m, k, count;
    const char* metric;
  };
  for (const char* dtype : {"f64", "f32"})
    for (const Case& c : {Case{1, 1, 1, 1, "euclidean"}, Case{17, 40, 3, 8, "manhattan"}, Case{300, 1000, 16, 1, "cosine"}, Case{5, 9, 4, 9, "chi2"}}) {
      const std::string what = std::string(dtype) + " " + c.metric + " n=" + std::to_string(c.n) + " m=" + std::to_string(c.m) + " count=" +
                               std::to_string(c.count) + " (seed " + std::to_string(seed) + ")";
      auto rows = [&](const char* name, int64_t count, uint64_t sd) {
        return "\"" + std::string(name) + R"(": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(count) + ", " +
               std::to_string(c.k) + R"(], "from": {"random": {"seed": )" + std::to_string(sd) + R"(, "low": 0, "high": 1}}})";
      };
      const std::string program = R"({"fugue": 1, "symbols": {)" + rows("X", c.n, seed + c.n) + ", " + rows("Y", c.m, seed + c.m + 1) +
                                  R"(, "v": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(c.m) +
                                  R"(], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -1, "high": 1}}}},
        "body": [{"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"metric": ")" + c.metric + R"(", "count": )" +
                                  std::to_string(c.count) + R"(}},
                 {"op": "pairwise.kernel_sum", "out": ["y"], "in": ["X", "Y", "v"], "attrs": {"kind": "gaussian", "gamma": 1.5}}],
        "outputs": {"X": "X.npy", "Y": "Y.npy", "v": "v.npy", "d": "d.npy", "index": "index.npy", "y": "y.npy"}})";
      const std::string tol = std::string(dtype) == "f32" ? "2e-5" : "1e-12";
      expect_scipy_agrees(dir, program, R"(X, Y, v = (np.load(d + k + '.npy').astype(np.float64) for k in ('X', 'Y', 'v'))
metric = ')" + std::string(c.metric) + R"('
if metric == 'chi2':
    num, den = (X[:, None, :] - Y[None, :, :]) ** 2, X[:, None, :] + Y[None, :, :]
    D = np.where(den != 0, num / np.where(den != 0, den, 1), 0).sum(-1)
else:
    D = cdist(X, Y, metric if metric != 'manhattan' else 'cityblock')
count = )" + std::to_string(c.count) + R"(
order = np.argsort(D, axis=1, kind='stable')[:, :count]
want = np.take_along_axis(D, order, axis=1)
got_d, got_i = np.load(d + 'd.npy'), np.load(d + 'index.npy')
assert got_i.dtype == np.int64
assert np.allclose(got_d, want, rtol=)" + tol + R"(, atol=)" + tol + R"(), ('distances', np.abs(got_d - want).max())
srt = np.sort(D, axis=1)
for i in range(D.shape[0]):
    for q in range(count):
        gaps = np.abs(srt[i] - want[i, q])
        if (gaps < 10 * )" + tol + R"( * (1 + abs(want[i, q]))).sum() == 1:  # a clear place: the index must be SciPy's
            assert got_i[i, q] == order[i, q], (i, q, got_i[i, q], order[i, q])
        assert abs(D[i, got_i[i, q]] - want[i, q]) <= 10 * )" + tol + R"( * (1 + abs(want[i, q])), ('index of a tie', i, q)
K = np.exp(-1.5 * cdist(X, Y, 'sqeuclidean'))
assert np.allclose(np.load(d + 'y.npy'), K @ v, rtol=)" + tol + R"( * 10, atol=)" + tol + R"( * 10), ('kernel sum', np.abs(np.load(d + 'y.npy') - K @ v).max()))",
                          what);
    }
}

// pairwise.reduce with user functions gives the built-in metrics (checked against SciPy above) when the
// functions write them: manhattan as e = |x - y|, (+) = +, no r; euclidean with r = sqrt; chebyshev
// with (+) = max; and the reference agrees.
TEST(Pairwise, ReduceWithUserFunctionsGivesTheMetrics) {
  test::TempDir dir;
  for (const char* dtype : {"f64", "f32"}) {
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "X": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [37, 6], "from": {"random": {"seed": 3, "low": 0, "high": 1}}},
      "Y": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [23, 6], "from": {"random": {"seed": 4, "low": 0, "high": 1}}},
      "absdiff": {"kind": "function", "params": ["x", "y"], "body": [{"op": "array.sub", "out": ["d"], "in": ["x", "y"]}, {"op": "array.abs", "out": ["a"], "in": ["d"]}], "result": "a"},
      "square": {"kind": "function", "params": ["x", "y"], "body": [{"op": "array.sub", "out": ["d"], "in": ["x", "y"]}, {"op": "array.mul", "out": ["q"], "in": ["d", "d"]}], "result": "q"},
      "add": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"},
      "max": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.maximum", "out": ["s"], "in": ["a", "b"]}], "result": "s"},
      "root": {"kind": "function", "params": ["c"], "body": [{"op": "array.sqrt", "out": ["r"], "in": ["c"]}], "result": "r"}},
      "body": [{"op": "pairwise.reduce", "out": ["M"], "in": ["X", "Y", "absdiff", "add"]},
               {"op": "pairwise.reduce", "out": ["E"], "in": ["X", "Y", "square", "add", "root"]},
               {"op": "pairwise.reduce", "out": ["C"], "in": ["X", "Y", "absdiff", "max"]},
               {"op": "pairwise.distance", "out": ["M0"], "in": ["X", "Y"], "attrs": {"metric": "manhattan"}},
               {"op": "pairwise.distance", "out": ["E0"], "in": ["X", "Y"], "attrs": {"metric": "euclidean"}},
               {"op": "pairwise.distance", "out": ["C0"], "in": ["X", "Y"], "attrs": {"metric": "chebyshev"}}],
      "outputs": {"M": "M.npy", "E": "E.npy", "C": "C.npy", "M0": "M0.npy", "E0": "E0.npy", "C0": "C0.npy"}})");
    auto out = test::run_on_device(program);
    const double tol = std::string(dtype) == "f32" ? 1e-5 : 1e-13;
    test::expect_same(out, test::run_reference(program), tol, std::string("device against the reference, ") + dtype);
    for (const auto& [user, builtin] : {std::pair<const char*, const char*>{"M", "M0"}, {"E", "E0"}, {"C", "C0"}})
      for (int64_t i = 0; i < 37 * 23; ++i)
        EXPECT_NEAR(out.at(user).get(i), out.at(builtin).get(i), tol * 4) << dtype << " " << user << " element " << i;
  }
}

// Edge cases a review found: f32 minkowski with a large p and cosine of tiny values accumulate in f64
// (as SciPy), cosine is clipped to [0, 2] (a row's distance to itself is 0, not -1e-7), intersection
// propagates NaN (as NumPy's minimum), chi2's x + y = 0 with x != y is inf (only 0/0 is 0); f32 data
// refuses attributes beyond f32's range, and pairwise.reduce refuses a number for r.
TEST(Pairwise, EdgeCasesFromReview) {
  test::TempDir dir;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [3, 2], "value": [[0, 0], [1e-25, 2e-25], [0.3, 0.3]]},
    "Y": {"kind": "array", "dtype": "f32", "shape": [3, 2], "value": [[0.1, 0.05], [2e-25, 1e-25], [0.3, 0.3]]},
    "Z": {"kind": "array", "dtype": "f64", "shape": [1, 2], "value": [[0, 1]]},
    "P": {"kind": "array", "dtype": "f64", "shape": [1, 2], "value": [[2, 3]]},
    "C1": {"kind": "array", "dtype": "f64", "shape": [1, 2], "value": [[1, 2]]},
    "C2": {"kind": "array", "dtype": "f64", "shape": [1, 2], "value": [[-1, 2]]},
    "Z3": {"kind": "array", "dtype": "f64", "shape": [1, 2], "value": [[0, 3]]}},
    "body": [{"op": "array.div", "out": ["N"], "in": ["Z", "Z"]},
             {"op": "pairwise.distance", "out": ["M"], "in": ["X", "Y"], "attrs": {"metric": "minkowski", "p": 50}},
             {"op": "pairwise.distance", "out": ["Cos"], "in": ["X", "Y"], "attrs": {"metric": "cosine"}},
             {"op": "pairwise.kernel", "out": ["I"], "in": ["N", "P"], "attrs": {"kind": "intersection"}},
             {"op": "pairwise.kernel", "out": ["It"], "in": ["P", "N"], "attrs": {"kind": "intersection"}},
             {"op": "pairwise.distance", "out": ["Chi"], "in": ["C1", "C2"], "attrs": {"metric": "chi2"}},
             {"op": "pairwise.distance", "out": ["MV"], "in": ["X", "Y"], "attrs": {"metric": "minkowski", "p": 50, "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["CosV"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "blocking": "vectors"}},
             {"op": "pairwise.kernel", "out": ["IV"], "in": ["N", "P"], "attrs": {"kind": "intersection", "blocking": "vectors"}},
             {"op": "pairwise.kernel", "out": ["ItV"], "in": ["P", "N"], "attrs": {"kind": "intersection", "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["ChiV"], "in": ["C1", "C2"], "attrs": {"metric": "chi2", "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["Chi0"], "in": ["Z", "Z3"], "attrs": {"metric": "chi2", "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["Can0"], "in": ["Z", "Z3"], "attrs": {"metric": "canberra", "blocking": "vectors"}}],
    "outputs": {"M": "M.npy", "Cos": "Cos.npy", "I": "I.npy", "It": "It.npy", "Chi": "Chi.npy", "MV": "MV.npy", "CosV": "CosV.npy", "IV": "IV.npy",
                "ItV": "ItV.npy", "ChiV": "ChiV.npy", "Chi0": "Chi0.npy", "Can0": "Can0.npy"}})");
  auto out = test::run_on_device(program);
  for (const std::string v : {"", "V"}) {  // as the device plans it (an element per work-item), and in blocks in vectors
    EXPECT_NEAR(out.at("M" + v).get(0), 0.1, 1e-6) << "minkowski p = 50 of (0.1, 0.05) " << v;
    EXPECT_GE(out.at("Cos" + v).get(2 * 3 + 2), 0.0) << "a row's cosine distance to itself " << v;
    EXPECT_NEAR(out.at("Cos" + v).get(1 * 3 + 1), 0.2, 1e-6) << "cosine of tiny rows " << v;
    EXPECT_TRUE(std::isnan(out.at("I" + v).get(0)) && std::isnan(out.at("It" + v).get(0))) << "intersection with NaN " << v;
    EXPECT_TRUE(std::isinf(out.at("Chi" + v).get(0))) << "chi2 of x + y = 0, x != y " << v;
  }
  // 0/0 coordinates add 0 in a vector's lane: (0, 1) against (0, 3).
  EXPECT_EQ(out.at("Chi0").get(0), 1.0);
  EXPECT_EQ(out.at("Can0").get(0), 0.5);
  test::expect_same(out, test::run_reference(program), 1e-5, "against the reference");
  test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [2, 2], "from": {"fill": 1}},
    "e": {"kind": "function", "params": ["x", "y"], "body": [{"op": "array.mul", "out": ["p"], "in": ["x", "y"]}], "result": "p"},
    "c": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"}},
    "body": [{"op": "pairwise.kernel", "out": ["K"], "in": ["X", "X"], "attrs": {"kind": "sigmoid", "alpha": 1e39}}], "outputs": {}})");
  auto r = test::run_fugue("validate " + (dir / "bad.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("attribute alpha: f32 data needs a value within f32's"), std::string::npos) << r.out;
  test::write_text(dir / "bad2.json", R"({"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [2, 2], "from": {"fill": 1}},
    "e": {"kind": "function", "params": ["x", "y"], "body": [{"op": "array.mul", "out": ["p"], "in": ["x", "y"]}], "result": "p"},
    "c": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"}},
    "body": [{"op": "pairwise.reduce", "out": ["D"], "in": ["X", "X", "e", "c", 5]}], "outputs": {}})");
  r = test::run_fugue("validate " + (dir / "bad2.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("operand r: expected a function of the combined value, or nothing; found the number 5"), std::string::npos) << r.out;
}

// EXPECTs that each output `names` of `out` is its reference's within bound(name, expected value), NaN
// where the reference is NaN, the same infinity where it is infinite; `what` says the case.
static void expect_within(const std::map<std::string, HostArray>& out, const std::map<std::string, HostArray>& ref, const std::vector<std::string>& names,
                   const std::function<double(const std::string&, double)>& bound, const std::string& what) {
  for (const std::string& name : names) {
    const HostArray &a = out.at(name), &e = ref.at(name);
    ASSERT_EQ(a.elements(), e.elements()) << name << "; " << what;
    for (int64_t q = 0; q < e.elements(); ++q) {
      const double av = a.get(q), ev = e.get(q);
      if (std::isnan(ev)) EXPECT_TRUE(std::isnan(av)) << name << "[" << q << "]: " << av << ", expected NaN; " << what;
      else if (std::isinf(ev)) EXPECT_EQ(av, ev) << name << "[" << q << "]; " << what;
      else EXPECT_LE(std::fabs(av - ev), bound(name, ev)) << name << "[" << q << "]: " << av << ", expected " << ev << "; " << what;
    }
  }
}

// f32 data of a wide measure (cosine, minkowski) accumulates in f32 in the tiled plans and computes again
// in f64 only the pairs whose sums overflowed or lost their terms to underflow: rows of 1e25 and 1e-25,
// zero rows (NaN for cosine, as SciPy's), and for p = 50 rows of 1e4 and 1e-4 (|x - y|^50 overflows f32
// from 5.8 and f64, as SciPy's, from 1.4e6) give the reference's values to f32's precision, relative to
// each value however small; distances and the 3 nearest alike.
TEST(Pairwise, WideMeasuresInTilesRecomputeWhatF32Loses) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::string what = "seed " + std::to_string(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  auto rows = [&](int64_t n, int64_t k, const std::map<int64_t, double>& scale) {
    std::string text = "[";
    for (int64_t i = 0; i < n; ++i) {
      text += i ? ", [" : "[";
      for (int64_t s = 0; s < k; ++s) {
        const auto it = scale.find(i);
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.9g", (it == scale.end() ? 1.0 : it->second) * uniform(rng) * 10);
        text += (s ? ", " : "") + std::string(buf);
      }
      text += "]";
    }
    return text + "]";
  };
  const std::string x = rows(37, 19, {{3, 1e25}, {5, 1e-25}, {7, 0.0}}), y = rows(41, 19, {{2, 1e22}, {4, 1e-22}, {6, 0.0}});
  const std::string x50 = rows(37, 19, {{3, 1e4}, {5, 1e-4}}), y50 = rows(41, 19, {{2, 1e3}, {4, 1e-3}, {6, 0.0}});
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [37, 19], "value": )" + x + R"(},
    "Y": {"kind": "array", "dtype": "f32", "shape": [41, 19], "value": )" + y + R"(},
    "X50": {"kind": "array", "dtype": "f32", "shape": [37, 19], "value": )" + x50 + R"(},
    "Y50": {"kind": "array", "dtype": "f32", "shape": [41, 19], "value": )" + y50 + R"(}},
    "body": [{"op": "pairwise.distance", "out": ["Cos"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "blocking": "16x32"}},
             {"op": "pairwise.distance", "out": ["M50"], "in": ["X50", "Y50"], "attrs": {"metric": "minkowski", "p": 50, "blocking": "32x16"}},
             {"op": "pairwise.distance", "out": ["M3"], "in": ["X", "Y"], "attrs": {"metric": "minkowski", "p": 3, "blocking": "16x16"}},
             {"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X50", "Y50"], "attrs": {"metric": "minkowski", "p": 50, "count": 3, "blocking": "16x16"}},
             {"op": "pairwise.distance", "out": ["CosV"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["M50V"], "in": ["X50", "Y50"], "attrs": {"metric": "minkowski", "p": 50, "blocking": "vectors"}},
             {"op": "pairwise.distance", "out": ["M3V"], "in": ["X", "Y"], "attrs": {"metric": "minkowski", "p": 3, "blocking": "vectors"}}],
    "outputs": {"Cos": "Cos.npy", "M50": "M50.npy", "M3": "M3.npy", "d": "d.npy", "i": "i.npy", "CosV": "CosV.npy", "M50V": "M50V.npy", "M3V": "M3V.npy"}})");
  auto out = test::run_on_device(program);
  auto ref = test::run_reference(program);
  // Cosine's f32 sums: absolute.
  expect_within(out, ref, {"Cos", "M50", "M3", "d", "CosV", "M50V", "M3V"},
                [](const std::string& name, double ev) { return name.rfind("Cos", 0) == 0 ? 2e-5 : 2e-5 * std::fabs(ev); }, what);
  // Near-duplicates: cosine distances below 2^-8 are computed in f64, so that they keep their value and
  // their order (in f32 1 - x.y / (|x| |y|) left rounding: 6e-8 for 1.6e-10, the 5th nearest second).
  Program near = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [2, 4], "value": [[1, 2, 3, 4], [0.5, 0.25, 1, 2]]},
    "Y": {"kind": "array", "dtype": "f32", "shape": [7, 4], "value": [[1.0003, 2, 3, 4], [1, 2.0001, 3, 4], [1, 2, 3.0002, 4], [1, 2, 3, 4.0004],
                                                                      [1.0001, 2, 3, 4], [1, 2, 3, 4.0001], [0.5, 0.25, 1, 2.0001]]}},
    "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "blocking": "16x16"}},
             {"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "count": 7, "blocking": "16x16"}},
             {"op": "pairwise.distance", "out": ["DV"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "blocking": "vectors"}},
             {"op": "pairwise.nearest", "out": ["dV", "iV"], "in": ["X", "Y"], "attrs": {"metric": "cosine", "count": 7, "blocking": "vectors"}}],
    "outputs": {"D": "D.npy", "d": "d.npy", "i": "i.npy", "DV": "DV.npy", "dV": "dV.npy", "iV": "iV.npy"}})");
  out = test::run_on_device(near);
  ref = test::run_reference(near);
  for (const auto& [name, expected] : {std::pair{"D", "D"}, {"d", "d"}, {"DV", "D"}, {"dV", "d"}})
    for (int64_t q = 0; q < ref.at(expected).elements(); ++q)
      EXPECT_LE(std::fabs(out.at(name).get(q) - ref.at(expected).get(q)), 1e-5 * std::fabs(ref.at(expected).get(q)))
          << "near-duplicates, " << name << "[" << q << "]: " << out.at(name).get(q) << ", expected " << ref.at(expected).get(q);
  for (const char* name : {"i", "iV"})
    for (int64_t q = 0; q < ref.at("i").elements(); ++q)
      EXPECT_EQ(out.at(name).get(q), ref.at("i").get(q)) << "near-duplicates' order, " << name << "[" << q << "]";
}

// n rows of k values drawn uniformly from [low, high), and rows as a JSON array of f32-exact decimals.
static std::vector<std::vector<double>> random_rows(std::mt19937_64& rng, size_t n, int64_t k, double low, double high) {
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<std::vector<double>> rows(n, std::vector<double>(static_cast<size_t>(k)));
  for (auto& row : rows)
    for (double& v : row) v = uniform(rng);
  return rows;
}
static std::string rows_text(const std::vector<std::vector<double>>& rows) {
  std::string t = "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    t += i ? ", [" : "[";
    for (size_t s = 0; s < rows[i].size(); ++s) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.9g", rows[i][s]);
      t += (s ? ", " : "") + std::string(buf);
    }
    t += "]";
  }
  return t + "]";
}

// chi2's and canberra's f32 quotients by NVIDIA's reciprocal instruction (the NVIDIA row's
// division=native), here its range and flushes emulated (division=emulated): the pairs whose
// denominators leave the reciprocal's range come out not finite and are computed again in f64, so every
// value is the reference's to f32's rounding of its terms: rows of 1e36 (chi2's squares overflow f32),
// coordinates of 2e38 and 1.5e38 (beyond 2^126: canberra's 2e38 / 2e38 is 1, not 0, and 2e38 against
// 1.5e38 is 1/7 though |x| + |y| overflows f32), rows of 1e-39 (subnormal), zero rows (0/0 adds 0) and
// x = -y (chi2's inf, kept).
TEST(Pairwise, NativeQuotientsRecomputeWhatTheirRangeLoses) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::string what = "seed " + std::to_string(seed);
  std::mt19937_64 rng(seed);
  const int64_t k = 19;
  auto x = random_rows(rng, 37, k, 0.0, 10.0), y = random_rows(rng, 41, k, 0.0, 10.0);
  for (int64_t s = 0; s < k; ++s) {
    x[3][s] *= 1e36;
    x[5][s] *= 1e-39;
    x[7][s] = 0;
    y[2][s] *= 1e35;
    y[4][s] *= 1e-39;
    y[6][s] = 0;
    y[8][s] = -x[1][s];
  }
  x[9][0] = 2e38;  // against y[10]: x + y overflows, x - y = 0; against y[11]: (x - y)^2 overflows
  y[10][0] = 2e38;
  y[11][0] = 1.5e38;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [37, 19], "value": )" + rows_text(x) + R"(},
    "Y": {"kind": "array", "dtype": "f32", "shape": [41, 19], "value": )" + rows_text(y) + R"(}},
    "body": [{"op": "pairwise.distance", "out": ["Chi"], "in": ["X", "Y"], "attrs": {"metric": "chi2", "blocking": "16x32"}},
             {"op": "pairwise.distance", "out": ["Can"], "in": ["X", "Y"], "attrs": {"metric": "canberra", "blocking": "32x16"}}],
    "outputs": {"Chi": "Chi.npy", "Can": "Can.npy"}})");
  // NVIDIA's instruction, its range and flushes written out (division=emulated): PoCL's own reciprocal is exact.
  ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", "division=emulated", 1), 0);
  auto out = test::run_on_device(program);
  const auto explained = test::run_fugue("explain " + (dir / "p.json").string(), "FUGUE_PAIRWISE_TUNING=division=emulated");
  unsetenv("FUGUE_PAIRWISE_TUNING");
  auto ref = test::run_reference(program);
  // f32 sums of terms of either sign (y[8] = -x[1] makes x + y of both): within f32's rounding of the
  // terms' magnitudes; infinite where the reference is.
  auto quotient = [](double n, double d) { return n == 0 ? 0.0 : n / d; };
  for (const char* name : {"Chi", "Can"})
    for (size_t i = 0; i < x.size(); ++i)
      for (size_t j = 0; j < y.size(); ++j) {
        double magnitude = 0;
        for (int64_t s = 0; s < k; ++s) {
          const double a = static_cast<float>(x[i][s]), b = static_cast<float>(y[j][s]);
          magnitude += std::fabs(name[1] == 'h' ? quotient((a - b) * (a - b), a + b) : quotient(std::fabs(a - b), std::fabs(a) + std::fabs(b)));
        }
        const double got = out.at(name).get(static_cast<int64_t>(i * y.size() + j)), want = ref.at(name).get(static_cast<int64_t>(i * y.size() + j));
        if (std::isinf(want)) EXPECT_EQ(got, want) << name << "(" << i << ", " << j << "); " << what;
        else EXPECT_LE(std::fabs(got - want), 2e-5 * magnitude + 1e-30) << name << "(" << i << ", " << j << "): " << got << ", expected " << want << "; " << what;
      }
  EXPECT_TRUE(std::isinf(out.at("Chi").get(1 * 41 + 8))) << "chi2 of x = -y";
  EXPECT_EQ(out.at("Can").get(7 * 41 + 6), 0.0) << "canberra of two zero rows";
  EXPECT_NEAR(out.at("Can").get(9 * 41 + 6), 1.0 + (k - 1), 1e-5) << "canberra of 2e38 against 0";
  EXPECT_EQ(explained.code, 0) << explained.out;
  size_t mentions = 0;
  const std::string emulated = "quotients by an emulated rcp.approx.ftz, pairs not finite again in f64";
  for (size_t at = explained.out.find(emulated); at != std::string::npos; at = explained.out.find(emulated, at + 1)) ++mentions;
  EXPECT_EQ(mentions, 2u) << explained.out;
  // Exact division, and native division off NVIDIA's GPUs, take no reciprocal; a bad value is refused by name.
  for (const char* division : {"exact", "native"}) {
    const auto exact = test::run_fugue("explain " + (dir / "p.json").string(), std::string("FUGUE_PAIRWISE_TUNING=division=") + division);
    EXPECT_EQ(exact.out.find("rcp.approx"), std::string::npos) << exact.out;
  }
  const auto refused = test::run_fugue("explain " + (dir / "p.json").string(), "FUGUE_PAIRWISE_TUNING=division=fast");
  EXPECT_NE(refused.out.find("FUGUE_PAIRWISE_TUNING: \"division=fast\": expected division=native, division=exact or division=emulated"),
            std::string::npos)
      << refused.out;
  // On an H100 the table's NVIDIA row divides f32 quotients by the reciprocal in tiles of 128 x 64; f64
  // data keeps the dear measures' 64 x 96 and divides; minkowski's f32 takes 128 x 64 too, without it.
  test::write_text(dir / "h100.json", R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [8192, 128], "from": {"zeros": {}}},
    "Y": {"kind": "array", "dtype": "f64", "shape": [8192, 128], "from": {"zeros": {}}}},
    "body": [{"op": "pairwise.distance", "out": ["C"], "in": ["X", "X"], "attrs": {"metric": "chi2"}},
             {"op": "pairwise.distance", "out": ["C64"], "in": ["Y", "Y"], "attrs": {"metric": "canberra"}},
             {"op": "pairwise.distance", "out": ["M"], "in": ["X", "X"], "attrs": {"metric": "minkowski", "p": 3}}], "outputs": {}})");
  const auto h100 = test::run_fugue("explain --device-file " + (test::source_root() / "devices" / "nvidia-h100.json").string() + " " +
                                    (dir / "h100.json").string());
  const std::string tiles = " per 16 x 16 work-group, ", in_memory = " (strided), 16 coordinates at a time in local memory (NVIDIA GPU row)";
  EXPECT_NE(h100.out.find("tiles of 128 x 64" + tiles + "8 x 4 per work-item" + in_memory +
                          "; quotients by rcp.approx.ftz, pairs not finite again in f64"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("tiles of 64 x 96" + tiles + "4 x 6 per work-item" + in_memory + "\n"), std::string::npos) << h100.out;
  EXPECT_NE(h100.out.find("tiles of 128 x 64" + tiles + "8 x 4 per work-item" + in_memory + "\n"), std::string::npos) << h100.out;
}

// The pairs that fail a wide measure's guard are recomputed after the block is stored, each marked by a
// bit of its place in the work-item's block: blocks of 8 x 8 (the last place, bit 63: row 127 of X and
// of Y, near-duplicates) and the contiguous layouts, whose runs are stored as vectors first (3 and 4
// values). Rows of 1e25 overflow the f32 norms, a zero row of Y gives NaN, as SciPy's.
TEST(Pairwise, GuardedPairsAreRecomputedAfterTheBlock) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::string what = "seed " + std::to_string(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.5, 1.0);
  const int64_t k = 19;
  auto x = random_rows(rng, 130, k, 0.5, 1.0), y = random_rows(rng, 131, k, 0.5, 1.0);
  for (int64_t s = 0; s < k; ++s) {
    y[127][s] = x[127][s] * (1 + 1e-3 * uniform(rng));  // cosine near 1e-7: below 2^-8
    y[3][s] = x[100][s] * (1 + 1e-3 * uniform(rng));
    x[126][s] *= 1e25;                                   // |x|^2 overflows f32
    y[120][s] = 0;                                        // NaN
  }
  const std::string symbols = R"("X": {"kind": "array", "dtype": "f32", "shape": [130, 19], "value": )" + rows_text(x) +
                              R"(}, "Y": {"kind": "array", "dtype": "f32", "shape": [131, 19], "value": )" + rows_text(y) + "}";
  for (const char* tuning : {"rows=128,cols=128", "rows=64,cols=48,layout=contiguous", "rows=32,cols=64,layout=contiguous"}) {
    Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {)" + symbols + R"(},
      "body": [{"op": "pairwise.distance", "out": ["Cos"], "in": ["X", "Y"], "attrs": {"metric": "cosine"}},
               {"op": "pairwise.distance", "out": ["M3"], "in": ["X", "Y"], "attrs": {"metric": "minkowski", "p": 3}}],
      "outputs": {"Cos": "Cos.npy", "M3": "M3.npy"}})");
    ASSERT_EQ(setenv("FUGUE_PAIRWISE_TUNING", tuning, 1), 0);
    auto out = test::run_on_device(program);
    unsetenv("FUGUE_PAIRWISE_TUNING");
    auto ref = test::run_reference(program);
    // Cosine's distances below 2^-8 in f64 (relative), the others f32's sums (absolute).
    expect_within(out, ref, {"Cos", "M3"},
                  [](const std::string& name, double ev) { return name == "Cos" ? (ev < 0x1p-8 ? 1e-5 * ev : 2e-5) : 2e-5 * std::fabs(ev); },
                  std::string(tuning) + ", " + what);
  }
}
