// The placement pass, without OpenCL: planned for a described device, a program is split by rows in
// proportion to the weights, or kept on the first device with the operation and operand that keep it.
#include <gtest/gtest.h>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/lower.h"
#include "passes/placement.h"
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

  const Program sum = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}], "outputs": {"s": "s.npy"}})");
  EXPECT_EQ(place(sum, {1.0, 1.0}).reason, "/body/0 array.sum s = (x): 's' is a scalar the device writes: one value over all rows");

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
