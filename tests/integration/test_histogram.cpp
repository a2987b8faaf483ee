// The histogram plugin against NumPy (the independent oracle): histogram.even as np.histogram (counts
// equal exactly, f32 data binned in f32 against f32 edges as NumPy does, values on and next to the edges,
// NaN and infinities), with weights (within a bound); bincount as np.bincount; histogram2d as
// np.histogram2d; scatter with user functions as the same bins counted by NumPy; sizes 1, 17, 1000 and
// 4099, every value in one bin, bins past a work-group's copy. A histogram fuses with the element-wise
// operations producing its data (one kernel), and its counts start from zero on every run of a loop.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_support.h"

using namespace fugue;

namespace {

// Runs `program` (text) with fugue into dir/out, then `check` (Python, NumPy as np, the output folder as
// d), which prints "numpy agrees" when it does.
void expect_numpy_agrees(const test::TempDir& dir, const std::string& program, const std::string& check, const std::string& what) {
  const std::string python = test::numpy_python();
  test::write_text(dir / "p.json", program);
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << what << ": " << r.out;
  test::write_text(dir / "check.py", "import sys, numpy as np\nd = sys.argv[1] + '/'\n" + check + "\nprint('numpy agrees')\n");
  auto c = test::run_command(python + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_NE(c.out.find("numpy agrees"), std::string::npos) << what << ": " << c.out;
}

}  // namespace

TEST(Histogram, EvenBinsMatchNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* dtype : {"f32", "f64", "i32", "u8"})
    for (const int64_t n : {1, 17, 1000, 4099}) {
      const bool integer = dtype[0] != 'f';
      const std::string low = integer ? "2" : "-0.3", high = integer ? "200" : "0.7", bins = n == 4099 ? "3000" : "10";
      const std::string what = std::string(dtype) + " n=" + std::to_string(n) + " (seed " + std::to_string(seed) + ")";
      const std::string program = R"({"fugue": 1, "symbols": {
        "a": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": [)" + std::to_string(n) + R"(], "from": {"random": {"seed": )" +
                                  std::to_string(seed + n) + R"(, "low": )" + (integer ? "0" : "-0.5") + R"(, "high": )" + (integer ? "250" : "1") + R"(}}},
        "w": {"kind": "array", "dtype": "f64", "shape": [)" + std::to_string(n) + R"(], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": 0, "high": 1}}}},
        "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": )" + bins + R"(, "low": )" + low + R"(, "high": )" + high + R"(}},
                 {"op": "histogram.even", "out": ["hw"], "in": ["a", "w"], "attrs": {"bins": )" + bins + R"(, "low": )" + low + R"(, "high": )" + high + R"(}}],
        "outputs": {"a": "a.npy", "w": "w.npy", "h": "h.npy", "hw": "hw.npy"}})";
      expect_numpy_agrees(dir, program, R"(a, w = np.load(d + 'a.npy'), np.load(d + 'w.npy')
h, hw = np.load(d + 'h.npy'), np.load(d + 'hw.npy')
want, _ = np.histogram(a, )" + bins + R"(, range=()" + low + ", " + high + R"())
assert h.dtype == np.int64, h.dtype
assert (h == want).all(), ('counts', np.nonzero(h != want), h[h != want], want[h != want])
wantw, _ = np.histogram(a, )" + bins + R"(, range=()" + low + ", " + high + R"(), weights=w)
assert np.allclose(hw, wantw, rtol=1e-12, atol=1e-12), 'weights')",
                          what);
    }
}

// Values on the edges and one rounding either side of them, NaN and infinities, in f32 (binned in f32
// against f32 edges) and f64; a range of one point (widened by 0.5 each way); every value in one bin.
TEST(Histogram, EdgesAndSpecialValuesMatchNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "make.py", R"(import sys, numpy as np
for dt in ('float32', 'float64'):
    e = np.linspace(-1.0, 2.0, 8).astype(dt)
    v = np.concatenate([e, np.nextafter(e, np.inf), np.nextafter(e, -np.inf), [np.nan, np.inf, -np.inf, 0.1, 0.3, 1.0 / 3]]).astype(dt)
    np.save(sys.argv[1] + '/' + dt + '.npy', v)
)");
  auto m = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + dir.path().string());
  ASSERT_EQ(m.code, 0) << m.out;
  for (const char* dt : {"float32", "float64"}) {
    const std::string file = (dir / (std::string(dt) + ".npy")).string();
    const std::string program = R"({"fugue": 1, "symbols": {"a": {"kind": "array", "dtype": ")" + std::string(dt[5] == '3' ? "f32" : "f64") +
                                R"(", "from": ")" + file + R"("}, "one": {"kind": "array", "dtype": "f64", "shape": [3000], "from": {"fill": 0.25}}},
      "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 7, "low": -1, "high": 2}},
               {"op": "histogram.even", "out": ["p"], "in": ["a"], "attrs": {"bins": 3, "low": 1, "high": 1}},
               {"op": "histogram.even", "out": ["q"], "in": ["one"], "attrs": {"bins": 4, "low": 0, "high": 1}}],
      "outputs": {"h": "h.npy", "p": "p.npy", "q": "q.npy"}})";
    expect_numpy_agrees(dir, program, R"(a = np.load(')" + file + R"(')
assert (np.load(d + 'h.npy') == np.histogram(a, 7, range=(-1, 2))[0]).all(), (np.load(d + 'h.npy'), np.histogram(a, 7, range=(-1, 2))[0])
assert (np.load(d + 'p.npy') == np.histogram(a, 3, range=(1, 1))[0]).all(), 'a range of one point'
assert (np.load(d + 'q.npy') == [0, 3000, 0, 0]).all(), 'every value in one bin')",
                        dt);
  }
}

// f32 data over a range as wide as f32's (x - low overflows f32), where the kernel's f32 arithmetic had
// left the upper bins empty: the bins by their definition (f32 edges from np.linspace, the last bin
// closed), and as np.histogram finds them where it computes in f64 (bounds of 3.4e38; NumPy 1.x computes
// -3e38 to 2.9e38 in f32 and fails); the device and the reference (fugue run --reference).
TEST(Histogram, RangesAsWideAsF32MatchNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  const std::string program = R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [5000], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -3.4e38, "high": 3.4e38}}}},
    "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 7, "low": -3.4e38, "high": 3.4e38}},
             {"op": "histogram.even", "out": ["g"], "in": ["a"], "attrs": {"bins": 1000, "low": -3e38, "high": 2.9e38}}],
    "outputs": {"a": "a.npy", "h": "h.npy", "g": "g.npy"}})";
  const std::string check = R"(a = np.load(d + 'a.npy')
for name, bins, low, high in [('h', 7, -3.4e38, 3.4e38), ('g', 1000, -3e38, 2.9e38)]:
    e = np.linspace(low, high, bins + 1).astype(np.float32)
    inside = a[(a >= e[0]) & (a <= e[-1])]
    i = np.minimum(np.searchsorted(e, inside, side='right') - 1, bins - 1)
    got, want = np.load(d + name + '.npy'), np.bincount(i, minlength=bins)
    assert (got == want).all(), (name, got[got != want], want[got != want])
    assert got.sum() > 0.9 * len(a) * (high - low) / 6.8e38, (name, got.sum())
assert (np.load(d + 'h.npy') == np.histogram(a, 7, range=(-3.4e38, 3.4e38))[0]).all(), 'np.histogram')";
  expect_numpy_agrees(dir, program, check, "device (seed " + std::to_string(seed) + ")");
  test::write_text(dir / "p.json", program);
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --reference --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_NE(c.out.find("numpy agrees"), std::string::npos) << "reference (seed " << seed << "): " << c.out;
}

TEST(Histogram, BincountHistogram2dAndScatterMatchNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const int64_t n : {1, 17, 1000, 4099}) {
    const std::string N = std::to_string(n), what = "n=" + N + " (seed " + std::to_string(seed) + ")";
    const std::string program = R"({"fugue": 1, "symbols": {
      "idx": {"kind": "array", "dtype": "i64", "shape": [)" + N + R"(], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -5, "high": 300}}},
      "x": {"kind": "array", "dtype": "f32", "shape": [)" + N + R"(], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -0.2, "high": 1.2}}},
      "y": {"kind": "array", "dtype": "f64", "shape": [)" + N + R"(], "from": {"random": {"seed": )" + std::to_string(seed + 2) + R"(, "low": -2, "high": 2}}},
      "w": {"kind": "array", "dtype": "f32", "shape": [)" + N + R"(], "from": {"random": {"seed": )" + std::to_string(seed + 3) + R"(, "low": 0, "high": 1}}},
      "bin": {"kind": "function", "params": ["a", "i"], "body": [{"op": "array.mul", "out": ["s"], "in": ["a", 20]},
                                                                   {"op": "array.cast", "out": ["k"], "in": ["s"], "attrs": {"dtype": "i64"}},
                                                                   {"op": "array.div", "out": ["q"], "in": ["i", 3]},
                                                                   {"op": "array.mul", "out": ["m"], "in": ["q", 3]},
                                                                   {"op": "array.sub", "out": ["r"], "in": ["i", "m"]},
                                                                   {"op": "array.add", "out": ["b"], "in": ["k", "r"]}], "result": "b"},
      "square": {"kind": "function", "params": ["a"], "body": [{"op": "array.mul", "out": ["q"], "in": ["a", "a"]}], "result": "q"}},
      "body": [{"op": "histogram.bincount", "out": ["c"], "in": ["idx"], "attrs": {"length": 256}},
               {"op": "histogram.bincount", "out": ["cw"], "in": ["idx", "w"], "attrs": {"length": 256}},
               {"op": "histogram.histogram2d", "out": ["h2"], "in": ["x", "y"], "attrs": {"bins_x": 12, "bins_y": 7, "low_x": 0, "high_x": 1, "low_y": -1.5, "high_y": 1.5}},
               {"op": "histogram.scatter", "out": ["s"], "in": ["x", "bin"], "attrs": {"length": 24}},
               {"op": "histogram.scatter", "out": ["sv"], "in": ["x", "bin", "square"], "attrs": {"length": 24}}],
      "outputs": {"idx": "idx.npy", "x": "x.npy", "y": "y.npy", "w": "w.npy", "c": "c.npy", "cw": "cw.npy", "h2": "h2.npy", "s": "s.npy", "sv": "sv.npy"}})";
    expect_numpy_agrees(dir, program, R"(idx, x, y, w = (np.load(d + k + '.npy') for k in ('idx', 'x', 'y', 'w'))
inside = (idx >= 0) & (idx < 256)
assert (np.load(d + 'c.npy') == np.bincount(idx[inside], minlength=256)).all(), 'bincount'
assert np.allclose(np.load(d + 'cw.npy'), np.bincount(idx[inside], weights=w[inside], minlength=256), rtol=1e-5, atol=1e-5), 'weighted bincount'
h2, _, _ = np.histogram2d(x, y, bins=[12, 7], range=[[0, 1], [-1.5, 1.5]])
assert (np.load(d + 'h2.npy') == h2).all(), ('histogram2d', np.load(d + 'h2.npy'), h2)
b = (x * np.float32(20)).astype(np.int64) + np.arange(len(x)) % 3
ok = (b >= 0) & (b < 24)
assert (np.load(d + 's.npy') == np.bincount(b[ok], minlength=24)).all(), 'scatter counts'
assert np.allclose(np.load(d + 'sv.npy'), np.bincount(b[ok], weights=(x * x)[ok].astype(np.float64), minlength=24), rtol=1e-5, atol=1e-5), 'scatter weights')",
                        what);
  }
}

// histc(abs(x - y)): the histogram joins the kernel computing its data (x and y read once); its counts
// start from zero each time a loop runs it, while a later operation reads them in the next kernel.
TEST(Histogram, FusesWithItsProducersAndStartsFromZeroInLoops) {
  test::TempDir dir;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [10000], "from": {"random": {"seed": 1, "low": 0, "high": 1}}},
    "y": {"kind": "array", "dtype": "f32", "shape": [10000], "from": {"random": {"seed": 2, "low": 0, "high": 1}}},
    "total": {"kind": "array", "dtype": "i64", "shape": [16], "from": {"zeros": {}}}},
    "body": [{"for": "k", "count": 3, "body": [
               {"op": "array.sub", "out": ["d"], "in": ["x", "y"]},
               {"op": "array.abs", "out": ["e"], "in": ["d"]},
               {"op": "histogram.even", "out": ["h"], "in": ["e"], "attrs": {"bins": 16, "low": 0, "high": 1}},
               {"op": "array.add", "out": ["total"], "in": ["total", "h"]}]}],
    "outputs": {"h": "h.npy", "total": "total.npy"}})");
  int64_t launches = 0;
  auto out = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 6) << "per iteration: sub, abs and the histogram in one kernel, the sum in another";
  test::expect_same(out, test::run_reference(program), 0, "against the reference");
  int64_t sum = 0;
  for (int64_t k = 0; k < 16; ++k) {
    sum += static_cast<int64_t>(out.at("h").get(k));
    EXPECT_EQ(out.at("total").get(k), 3 * out.at("h").get(k)) << "bin " << k << ": each run counts from zero";
  }
  EXPECT_EQ(sum, 10000);
  auto r = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(r.out.find("zeroed before the kernel (outputs updated by atomics): {h}"), std::string::npos) << r.out;
}

// The grid-stride walk a GPU takes (several elements a trip, their loads issued before any is
// binned): histograms fused with their producers, bincount with weights and array.scatter_add give the
// reference's counts exactly, with runs of equal bins and without (FUGUE_HISTOGRAM_TUNING=runs=0).
TEST(Histogram, UnrolledWalksGiveTheReferenceCounts) {
  test::TempDir dir;
  Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [100003], "from": {"random": {"seed": 1, "low": 0, "high": 1}}},
    "y": {"kind": "array", "dtype": "f32", "shape": [100003], "from": {"random": {"seed": 2, "low": 0, "high": 1}}},
    "idx": {"kind": "array", "dtype": "i32", "shape": [100003], "from": {"random": {"seed": 3, "low": -2, "high": 40}}},
    "w": {"kind": "array", "dtype": "i64", "shape": [100003], "from": {"random": {"seed": 4, "low": 0, "high": 9}}},
    "s": {"kind": "array", "dtype": "i64", "shape": [40], "from": {"zeros": {}}}},
    "body": [{"op": "array.sub", "out": ["d"], "in": ["x", "y"]},
             {"op": "array.abs", "out": ["e"], "in": ["d"]},
             {"op": "histogram.even", "out": ["h"], "in": ["e"], "attrs": {"bins": 256, "low": 0, "high": 1}},
             {"op": "histogram.bincount", "out": ["b"], "in": ["idx", "w"], "attrs": {"length": 40}},
             {"op": "array.scatter_add", "out": ["s"], "in": ["s", "idx", "w"]}],
    "outputs": {"h": "h.npy", "b": "b.npy", "s": "s.npy"}})");
  const auto reference = test::run_reference(program);
  for (const char* runs : {"runs=1", "runs=0"})
    for (const char* tuning : {"blocked_items=0,element_unroll=4,item_local=64", "blocked_items=0,element_unroll=3,item_local=256"}) {
      ASSERT_EQ(setenv("FUGUE_TUNING", tuning, 1), 0);
      ASSERT_EQ(setenv("FUGUE_HISTOGRAM_TUNING", runs, 1), 0);
      auto out = test::run_on_device(program);
      unsetenv("FUGUE_TUNING");
      unsetenv("FUGUE_HISTOGRAM_TUNING");
      test::expect_same(out, reference, 0, std::string(tuning) + " " + runs);
    }
}

// Bad attributes and operands are refused with their names.
TEST(Histogram, BadCallsAreRefusedWithTheirPlace) {
  test::TempDir dir;
  auto refused = [&](const std::string& op, const std::string& message) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {
      "a": {"kind": "array", "dtype": "f32", "shape": [10], "from": {"fill": 1}},
      "w": {"kind": "array", "dtype": "f32", "shape": [11], "from": {"fill": 1}},
      "d": {"kind": "array", "dtype": "f64", "shape": [10], "from": {"fill": 1}}},
      "body": [)" + op + R"(], "outputs": {}})");
    auto r = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  };
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 0, "low": 0, "high": 1}})",
          "/body/0/attrs/bins: histogram.even: attribute bins: expected 1 to 67108864, found 0");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 4, "low": 2, "high": 1}})",
          "attributes low and high: low (2) must not exceed high (1)");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a", "w"], "attrs": {"bins": 4, "low": 0, "high": 1}})",
          "operand w: expected weights of a's shape [10] or one number, found f32 array [11]");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 4, "low": 0}})", "high");
  refused(R"({"op": "histogram.bincount", "out": ["h"], "in": ["a"], "attrs": {"length": 4}})", "operand 'idx' of histogram.bincount: expected dtype");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a", "w", "w"], "attrs": {"bins": 4, "low": 0, "high": 1}})",
          "1 to 2 operand(s) (a, w; the last 1 may be left out) for histogram.even");
  // Numbers the bins are found with must be finite in the data's arithmetic.
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 10000, "low": 0, "high": 1e-305}})",
          "attributes bins, low and high: 10000 bins over a range of 1e-305 are too narrow for f32 (bins / (high - low) overflows)");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["d"], "attrs": {"bins": 7, "low": -1e308, "high": 1e308}})",
          "/body/0: histogram.even: attributes low and high: the range -1e+308 to 1e+308 is wider than f64 holds (high - low overflows); narrow it");
  refused(R"({"op": "histogram.histogram2d", "out": ["h"], "in": ["d", "d"], "attrs": {"bins_x": 2, "bins_y": 2, "low_x": 0, "high_x": 1, "low_y": -1e308, "high_y": 1e308}})",
          "attributes low_y and high_y: the range -1e+308 to 1e+308 is wider than f64 holds (high - low overflows)");
  refused(R"({"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": 4, "low": -1e39, "high": 1e39}})",
          "attributes low and high: f32 data needs a range within f32's");
  refused(R"({"op": "histogram.histogram2d", "out": ["h"], "in": ["a", "a"], "attrs": {"bins_x": 10, "bins_y": 2, "low_x": 0, "high_x": 1e-308, "low_y": 0, "high_y": 1}})",
          "attributes bins_x, low_x and high_x: 10 bins over a range of");
}

// A histogram's counts start from zeros the core writes, so they cannot also be its data: refused with
// the statement (it gave wrong counts when allowed).
TEST(Histogram, CountsCannotAlsoBeTheData) {
  test::TempDir dir;
  test::write_text(dir / "self.json", R"({"fugue": 1, "symbols": {"h": {"kind": "array", "dtype": "i64", "shape": [4], "value": [0, 1, 1, 3]}},
    "body": [{"op": "histogram.bincount", "out": ["h"], "in": ["h"], "attrs": {"length": 4}}], "outputs": {"h": "h.npy"}})");
  auto r = test::run_fugue("run " + (dir / "self.json").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/body/0: histogram.bincount updates 'h' at positions its data decide, so it cannot also read it "
                       "(as its operand 'idx'): give the result a name of its own"),
            std::string::npos)
      << r.out;
}

// examples/histogram/contour.json, the seed's contour histogram, is one kernel (stencils, orientation,
// the pixel's region and cell, the histogram) and agrees with NumPy on a random picture: the Sobel
// response, the orientation sectors (but for values on a sector's edge), every pixel's bin exactly, and
// the 3,072 bins; the default picture (RubberWhale) runs.
TEST(Histogram, ContourExampleMatchesNumpy) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const std::string example = (test::source_root() / "examples" / "histogram" / "contour.json").string();
  auto e = test::run_fugue("explain " + example);
  ASSERT_EQ(e.code, 0) << e.out;
  EXPECT_NE(e.out.find("Kernels (1)"), std::string::npos) << e.out;
  test::write_text(dir / "make.py", "import sys, numpy as np\nnp.save(sys.argv[1], (np.random.default_rng(7).random((388, 584)) * 255).astype(np.float32))\n");
  auto m = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + (dir / "picture.npy").string());
  ASSERT_EQ(m.code, 0) << m.out;
  auto r = test::run_fugue("run " + example + " --set picture=" + (dir / "picture.npy").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d, p = sys.argv[1] + '/', np.load(sys.argv[2]).astype(np.float64)
q = np.pad(p, 1, mode='edge')
at = lambda dy, dx: q[1 + dy:1 + dy + p.shape[0], 1 + dx:1 + dx + p.shape[1]]
gx = -at(-1, -1) - 2 * at(0, -1) - at(1, -1) + at(-1, 1) + 2 * at(0, 1) + at(1, 1)
gy = -at(-1, -1) - 2 * at(-1, 0) - at(-1, 1) + at(1, -1) + 2 * at(1, 0) + at(1, 1)
response, orientation, bins, h = (np.load(d + k + '.npy') for k in ('response', 'orientation', 'bin', 'h'))
assert np.allclose(response, np.hypot(gx, gy), rtol=1e-5, atol=1e-3), 'response'
theta = np.arctan2(gy, gx)
sector = np.minimum((np.where(theta >= 0, theta, theta + np.pi) * (8 / np.pi)).astype(np.int64), 7)
assert (sector != orientation).mean() < 1e-3, ('orientations', (sector != orientation).mean())
rows, cols = np.indices(p.shape)
rh, rw = 97, 98
want_bin = ((rows // rh) * 6 + cols // rw) * 128 + orientation * 16 + ((rows % rh) * 4 // rh) * 4 + (cols % rw) * 4 // rw
assert (bins == want_bin).all(), 'bins'
want = np.bincount(want_bin.ravel(), weights=response.ravel().astype(np.float64), minlength=3072)
assert h.shape == (3072,) and np.allclose(h, want, rtol=1e-4, atol=1e-2), ('histogram', np.abs(h - want).max())
print('numpy agrees')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + (dir / "picture.npy").string());
  EXPECT_NE(c.out.find("numpy agrees"), std::string::npos) << c.out;
  auto d = test::run_fugue("run " + example + " --out " + (dir / "default").string());
  EXPECT_EQ(d.code, 0) << d.out;
}
