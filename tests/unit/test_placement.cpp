// The placement pass, without OpenCL: planned for a described device, a program is split by rows in
// proportion to the weights, or kept on the first device with the operation and operand that keep it.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/lower.h"
#include "passes/placement.h"
#include "runtime/split_run.h"
#include "test_support.h"

using namespace fugue;

namespace {

Placement place(const Program& program, const std::vector<double>& weights, double min_bytes = 0,
                int64_t halo_depth = 1) {
  const DeviceInfo device = read_device_description(test::source_root() / "devices" / "pocl-cpu.json");
  const ExecutionPlan plan = lower(program, device, PlanOptions{});
  return place_program(program, plan, weights, min_bytes, halo_depth);
}

Program kalman() {
  return load_program(test::source_root() / "examples" / "linalg" / "kalman_update.json", test::bundled_plugins());
}

}  // namespace

TEST(Placement, RowsFollowTheWeights) {
  const Program program = kalman();
  const Placement even = place(program, {2.0, 2.0});
  ASSERT_TRUE(even.split) << even.reason;
  EXPECT_EQ(even.rows, 1000);
  ASSERT_EQ(even.shares.size(), 2u);
  EXPECT_EQ(even.shares[0].first, 0);
  EXPECT_EQ(even.shares[0].count, 500);
  EXPECT_EQ(even.shares[1].first, 500);
  EXPECT_EQ(even.shares[1].count, 500);
  EXPECT_TRUE(even.is_split("P"));
  EXPECT_TRUE(even.is_split("info"));
  EXPECT_TRUE(even.whole_symbols.empty());

  const Placement uneven = place(program, {1.0, 3.0});
  ASSERT_TRUE(uneven.split);
  EXPECT_EQ(uneven.shares[0].count, 250);
  EXPECT_EQ(uneven.shares[1].count, 750);

  // Three devices: the remainders go to the largest fractions; every row once.
  const Placement three = place(program, {1.0, 1.0, 1.0});
  ASSERT_TRUE(three.split);
  int64_t next = 0;
  for (const auto& share : three.shares) {
    EXPECT_EQ(share.first, next);
    EXPECT_GE(share.count, 333);
    next += share.count;
  }
  EXPECT_EQ(next, 1000);

  // A device of almost no weight still gets a row; none is lost.
  const Placement tiny = place(program, {1e-9, 1.0});
  ASSERT_TRUE(tiny.split);
  EXPECT_EQ(tiny.shares[0].count, 1);
  EXPECT_EQ(tiny.shares[1].count, 999);
}

TEST(Placement, ReasonsForStayingOnOneDevice) {
  test::TempDir dir;
  const Placement one = place(kalman(), {1.0});
  EXPECT_FALSE(one.split);
  EXPECT_EQ(one.reason, "one device selected");

  const Placement small = place(kalman(), {1.0, 1.0}, 16 << 20);
  EXPECT_FALSE(small.split);
  EXPECT_NE(small.reason.find("small: the arrays split by rows hold 1.80 MB"), std::string::npos) << small.reason;
  EXPECT_TRUE(small.split_symbols.empty());

  // A reduction by a user's function: nothing says how the devices' parts would combine.
  const Program reduce = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64], "from": {"random": {"seed": 1}}},
    "f": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.maximum", "out": ["m"], "in": ["a", "b"]}],
          "result": "m"}},
    "body": [{"op": "array.reduce", "out": ["s"], "in": ["f", "x"]}], "outputs": {"s": "s.npy"}})");
  EXPECT_NE(place(reduce, {1.0, 1.0}).reason.find(
                "array.reduce s = (f, x): 's' is a scalar the device writes by an operation that does not say how "
                "its results over parts of the rows combine (fugue_plan.combine)"),
            std::string::npos)
      << place(reduce, {1.0, 1.0}).reason;

  const Program rows = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [6, 4], "from": {"random": {"seed": 1}}},
    "y": {"kind": "array", "dtype": "f32", "shape": [4, 6], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "array.mul", "out": ["a"], "in": ["x", 2]}, {"op": "array.mul", "out": ["b"], "in": ["y", 2]}],
    "outputs": {"a": "a.npy", "b": "b.npy"}})");
  const Placement mixed = place(rows, {1.0, 1.0});
  EXPECT_FALSE(mixed.split);
  EXPECT_NE(mixed.reason.find("has 4 rows where '"), std::string::npos) << mixed.reason;

  const Program few = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [2, 40], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.mul", "out": ["a"], "in": ["x", 2]}], "outputs": {"a": "a.npy"}})");
  EXPECT_NE(place(few, {1.0, 1.0, 1.0}).reason.find("' has 2 rows, fewer than the 3 devices"), std::string::npos);
  EXPECT_TRUE(place(few, {1.0, 1.0}).split);

  const Program none = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [0, 4], "from": {"fill": 1}}},
    "body": [{"op": "array.mul", "out": ["a"], "in": ["x", 2]}], "outputs": {"a": "a.npy"}})");
  EXPECT_NE(place(none, {1.0, 1.0}).reason.find("' has no rows"), std::string::npos) << place(none, {1.0, 1.0}).reason;

  // Inputs read whole (every row of D reads all of Y) or around their element are not split, even
  // though the operation writes its output by rows.
  const Program distances = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "X": {"kind": "array", "dtype": "f32", "shape": [64, 8], "from": {"random": {"seed": 1}}},
    "Y": {"kind": "array", "dtype": "f32", "shape": [64, 8], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "euclidean"}}],
    "outputs": {"D": "D.npy"}})");
  const Placement pairwise = place(distances, {1.0, 1.0});
  EXPECT_FALSE(pairwise.split);
  EXPECT_NE(pairwise.reason.find("pairwise.distance D = (X, Y): '"), std::string::npos) << pairwise.reason;
  EXPECT_NE(pairwise.reason.find("not entries or elements numbered from axis 0: not split by rows"), std::string::npos)
      << pairwise.reason;
  const Program stencil = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": {"random": {"seed": 1}}},
    "S": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, 0], "weight": 0.5}, {"offset": [1, 0], "weight": 0.5}]}},
    "body": [{"op": "stencil.apply", "out": ["y"], "in": ["S", "x"]}], "outputs": {"y": "y.npy"}})");
  const Placement halo = place(stencil, {1.0, 1.0});
  EXPECT_TRUE(halo.split) << halo.reason;

  // Red cells of a grid are not the red cells of a device's rows once the rows start at an odd one:
  // the mask's shape comes from an operand no kernel reads (NONE), which keeps it whole.
  const Program red = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "stencil.red", "out": ["m"], "in": ["x"]}, {"op": "array.mul", "out": ["y"], "in": ["x", 2]}],
    "outputs": {"m": "m.npy", "y": "y.npy"}})");
  const Placement mask = place(red, {1.0, 1.0});
  EXPECT_FALSE(mask.split);
  EXPECT_NE(mask.reason.find("stencil.red m = (x): 'x' is NONE, not entries or elements numbered from axis 0"),
            std::string::npos)
      << mask.reason;
}

// Stencils: each device holds a few reaches of its neighbours' rows (none past the ends of the whole
// where the reads stay inside, the first and last devices each other's where they wrap), never more
// than a share; a reach wider than a share, or reads that stay inside beside reads that wrap, keep
// the program on one device.
TEST(Placement, StencilsHoldTheirNeighboursRows) {
  test::TempDir dir;
  auto stencil = [&](const std::string& border, int reach, const std::string& second_border = "") {
    std::string text = R"({"fugue": 1, "symbols": {
      "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": {"random": {"seed": 1}}},
      "S": {"kind": "stencil", "dtype": "f32", "border": ")" + border + R"(",
            "points": [{"offset": [-)" + std::to_string(reach) + R"(, 0], "weight": 0.5}, {"offset": [1, 0], "weight": 0.5}]},
      "T": {"kind": "stencil", "dtype": "f32", "border": ")" + (second_border.empty() ? border : second_border) + R"(",
            "points": [{"offset": [0, 0], "weight": 0.5}, {"offset": [1, 0], "weight": 0.5}]}},
      "body": [{"op": "stencil.apply", "out": ["y"], "in": ["S", "x"]}, {"op": "array.mul", "out": ["z"], "in": ["y", 2]},
               {"op": "stencil.apply", "out": ["w"], "in": ["T", "z"]}],
      "outputs": {"w": "w.npy"}})";
    return test::load_text(dir, text);
  };
  const Program clamp = stencil("clamp", 1);
  const Placement two = place(clamp, {1.0, 1.0}, 0, 4);
  ASSERT_TRUE(two.split) << two.reason;
  EXPECT_FALSE(two.wrap);
  EXPECT_GE(two.reach, 1);
  EXPECT_EQ(two.ghost_rows, 4 * two.reach);
  EXPECT_EQ(two.traded, (std::vector<std::string>{"x", "z"}));
  EXPECT_EQ(two.shares[0].before, 0);
  EXPECT_EQ(two.shares[0].after, two.ghost_rows);
  EXPECT_EQ(two.shares[1].before, two.ghost_rows);
  EXPECT_EQ(two.shares[1].after, 0);
  EXPECT_EQ(two.shares[1].held(), 32 + two.ghost_rows);

  const Placement ring = place(stencil("periodic", 1), {1.0, 1.0, 1.0}, 0, 2);
  ASSERT_TRUE(ring.split) << ring.reason;
  EXPECT_TRUE(ring.wrap);
  for (const auto& share : ring.shares) {
    EXPECT_EQ(share.before, ring.ghost_rows);
    EXPECT_EQ(share.after, ring.ghost_rows);
  }
  // Never more than a share: the rows come from the next device alone.
  EXPECT_EQ(place(clamp, {1.0, 1.0}, 0, 1000).ghost_rows, 32);

  const Placement wide = place(stencil("clamp", 3), std::vector<double>(32, 1.0));
  EXPECT_FALSE(wide.split);
  EXPECT_NE(wide.reason.find("a device's share would be 2 rows, fewer than the "), std::string::npos) << wide.reason;

  const Placement mixed = place(stencil("zero", 1, "periodic"), {1.0, 1.0});
  EXPECT_FALSE(mixed.split);
  EXPECT_NE(mixed.reason.find("with reads past the ends wrapping around, where /body/0 stencil.apply"), std::string::npos)
      << mixed.reason;
}

// Scalars reduced over the rows (sums, extremes, norms) are combined from the devices' parts; scalars
// computed from scalars alone come out alike everywhere; a reduction beside neighbours' rows would
// count them twice.
TEST(Placement, ReductionsCombineTheDevicesParts) {
  test::TempDir dir;
  const Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 8], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}, {"op": "array.norm2", "out": ["n"], "in": ["x"]},
             {"op": "array.min", "out": ["lo"], "in": ["x"]}, {"op": "array.max", "out": ["hi"], "in": ["x"]},
             {"op": "array.sub", "out": ["range"], "in": ["hi", "lo"]},
             {"op": "array.div", "out": ["y"], "in": ["x", "n"]}],
    "outputs": {"s": "s.npy", "y": "y.npy", "range": "range.npy"}})");
  const Placement p = place(program, {1.0, 1.0});
  ASSERT_TRUE(p.split) << p.reason;
  EXPECT_EQ(p.combined, (std::map<std::string, uint32_t>{{"hi", FUGUE_COMBINE_MAX},
                                                         {"lo", FUGUE_COMBINE_MIN},
                                                         {"n", FUGUE_COMBINE_ROOT_SUM_SQUARES},
                                                         {"s", FUGUE_COMBINE_SUM}}));
  EXPECT_EQ(p.split_symbols, (std::vector<std::string>{"x", "y"}));
  // Each operation after which the devices meet must be worth the bar: 4 KB split, 4 combined scalars.
  EXPECT_TRUE(place(program, {1.0, 1.0}, 1024).split);
  const Placement meets = place(program, {1.0, 1.0}, 2048);
  EXPECT_FALSE(meets.split);
  EXPECT_NE(meets.reason.find("for each of the 4 places where the devices meet"), std::string::npos) << meets.reason;

  const Program stencil_sum = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": {"random": {"seed": 1}}},
    "S": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, 0], "weight": 0.5}, {"offset": [1, 0], "weight": 0.5}]}},
    "body": [{"op": "stencil.apply", "out": ["y"], "in": ["S", "x"]}, {"op": "array.sum", "out": ["s"], "in": ["y"]}],
    "outputs": {"s": "s.npy"}})");
  // A combined scalar written again by another operation would be combined again.
  const Program rescaled = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 8], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}, {"op": "array.mul", "out": ["s"], "in": ["s", 0.5]}],
    "outputs": {"s": "s.npy"}})");
  const Placement again = place(rescaled, {1.0, 1.0});
  EXPECT_FALSE(again.split);
  EXPECT_NE(again.reason.find("array.mul s = (s, 0.5): 's' is also a reduction's result"), std::string::npos)
      << again.reason;

  const Placement twice = place(stencil_sum, {1.0, 1.0});
  EXPECT_FALSE(twice.split);
  EXPECT_NE(twice.reason.find("'s' is reduced over rows, and every device also holds some of its neighbours' rows"),
            std::string::npos)
      << twice.reason;
}

// The whole's value from the devices' parts: sums in double precision (integers wrapping around in
// their dtype), extremes, the root of the sum of squares, complex sums.
TEST(Placement, PartsCombineAsTheirReductionSays) {
  auto scalar = [](DType dtype, auto value) {
    HostArray a;
    a.dtype = dtype;
    a.bytes.resize(sizeof(value));
    std::memcpy(a.bytes.data(), &value, sizeof(value));
    return a;
  };
  auto as = [](const HostArray& a, auto zero) {
    decltype(zero) v;
    std::memcpy(&v, a.bytes.data(), sizeof(v));
    return v;
  };
  const std::vector<HostArray> floats = {scalar(DType::F32, 3.0f), scalar(DType::F32, -4.0f), scalar(DType::F32, 12.0f)};
  EXPECT_EQ(as(combine_parts(floats, FUGUE_COMBINE_SUM), 0.0f), 11.0f);
  EXPECT_EQ(as(combine_parts(floats, FUGUE_COMBINE_MIN), 0.0f), -4.0f);
  EXPECT_EQ(as(combine_parts(floats, FUGUE_COMBINE_MAX), 0.0f), 12.0f);
  EXPECT_EQ(as(combine_parts(floats, FUGUE_COMBINE_ROOT_SUM_SQUARES), 0.0f), 13.0f);
  const std::vector<HostArray> bytes = {scalar(DType::U8, uint8_t{200}), scalar(DType::U8, uint8_t{100})};
  EXPECT_EQ(as(combine_parts(bytes, FUGUE_COMBINE_SUM), uint8_t{}), uint8_t{44});  // 300 wraps around
  const std::vector<HostArray> ints = {scalar(DType::I32, int32_t{-7}), scalar(DType::I32, int32_t{5})};
  EXPECT_EQ(as(combine_parts(ints, FUGUE_COMBINE_SUM), int32_t{}), -2);
  EXPECT_EQ(as(combine_parts(ints, FUGUE_COMBINE_MIN), int32_t{}), -7);
  const std::vector<HostArray> complexes = {scalar(DType::C64, std::complex<float>(1, 2)),
                                            scalar(DType::C64, std::complex<float>(-3, 0.5f))};
  EXPECT_EQ(as(combine_parts(complexes, FUGUE_COMBINE_SUM), std::complex<float>{}), std::complex<float>(-2, 2.5f));
  // NaN parts are ignored as the devices' fmin and fmax ignore NaN elements (a device whose rows are all
  // NaN gives NaN); all NaN stays NaN.
  const std::vector<HostArray> nan = {scalar(DType::F64, 1.0), scalar(DType::F64, std::nan(""))};
  EXPECT_EQ(as(combine_parts(nan, FUGUE_COMBINE_MAX), 0.0), 1.0);
  EXPECT_EQ(as(combine_parts({nan[1], nan[0]}, FUGUE_COMBINE_MIN), 0.0), 1.0);
  EXPECT_TRUE(std::isnan(as(combine_parts({nan[1], nan[1]}, FUGUE_COMBINE_MAX), 0.0)));
}

// An array the devices write by rows and a sparse product reads whole, only at the columns of its rows'
// entries (fugue_plan.read_at_columns): gathered by default, each device keeping current only the rows
// its rows of the matrix reach, and getting only those from the others.
TEST(Placement, GatheredArraysKeepOnlyTheRowsTheirReadersReach) {
  test::TempDir dir;
  const Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": {"poisson": {"grid": [100, 60]}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [6000], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.mul", "out": ["x2"], "in": ["x", 2]}, {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x2"]}],
    "outputs": {"y": "y.npy"}})");
  const Placement p = place(program, {1.0, 1.0, 1.0});
  ASSERT_TRUE(p.split) << p.reason;
  EXPECT_EQ(p.gathered, std::vector<std::string>{"x2"});
  EXPECT_EQ(p.windows, (std::map<std::string, std::vector<std::string>>{{"x2", {"A"}}}));
  EXPECT_FALSE(p.gather_always);

  // Rows 0..1999, 2000..3999 and 4000..5999 of the 5-point matrix of a 100 x 60 grid reach 60 rows either side.
  const Symbol& a = program.symbol("A");
  const HostArray whole = whole_value(program, a);
  const GatherWindows windows = gather_windows(p, [&](const std::string& matrix, size_t d) {
    EXPECT_EQ(matrix, "A");
    const auto [begin, end] = a.kind_object->columns(whole, a.metadata, p.shares[d].first, p.shares[d].count);
    return RowWindow{begin, end};
  });
  const std::vector<RowWindow>& w = windows.at("x2");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(std::make_pair(w[0].begin, w[0].end), std::make_pair(int64_t{0}, int64_t{2060}));
  EXPECT_EQ(std::make_pair(w[1].begin, w[1].end), std::make_pair(int64_t{1940}, int64_t{4060}));
  EXPECT_EQ(std::make_pair(w[2].begin, w[2].end), std::make_pair(int64_t{3940}, int64_t{6000}));
  EXPECT_EQ(rows_sent(p, w, 1, 0).begin, 2000);  // device 0 gets rows 2000..2059 of device 1's
  EXPECT_EQ(rows_sent(p, w, 1, 0).rows(), 60);
  EXPECT_EQ(rows_sent(p, w, 0, 2).rows(), 0);  // device 2 reaches nothing of device 0's
  EXPECT_EQ(rows_sent(p, w, 1, 1).rows(), 0);
  EXPECT_EQ(crossing_rows(p, w), 240);
  EXPECT_EQ(gathers_too_wide(program, p, windows), "");

  // Rows reaching every column (whole windows) move more than the split is worth.
  GatherWindows wide = windows;
  wide["x2"].assign(3, RowWindow{0, 6000});
  EXPECT_EQ(crossing_rows(p, wide.at("x2")), 12000);
  EXPECT_NE(gathers_too_wide(program, p, wide).find("the devices would exchange 12000 rows of 'x2' at each gather"), std::string::npos)
      << gathers_too_wide(program, p, wide);
}
