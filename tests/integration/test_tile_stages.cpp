// Tile stages: a value read around its element in the kernel that computes it (a stencil of a stencil,
// a window sum of products) is kept in a local-memory tile instead of ending the kernel. Each
// work-group computes its tile stage by stage, the earlier stages over the tile widened by what the
// later ones read around their cells. The results must be those of one kernel per operation, bit for
// bit, for every border rule, for tiles that do not divide the grid, and for grids smaller than the
// widening; a value read at other tiles' cells and then written goes to a second buffer.
#include <gtest/gtest.h>

#include <cstdlib>

#include "load/program_loader.h"
#include "passes/launch.h"
#include "runtime/executor.h"
#include "test_support.h"

using namespace fugue;

namespace {

ExecutionPlan plan_of(const Program& program, PlanOptions options = {}) {
  return lower(program, test::test_device().info, options);
}

// Sets FUGUE_TUNING for the scope.
struct Tuning {
  explicit Tuning(const char* value) { setenv("FUGUE_TUNING", value, 1); }
  ~Tuning() { unsetenv("FUGUE_TUNING"); }
};

// Tile stages on (CPUs, the test device, leave them off by default), in tiles of 16 x 32 cells.
const char* kStagesOn = "stage_tile_rows=16,stage_tile_cols=32";

std::map<std::string, HostArray> unfused(const Program& program) {
  PlanOptions options;
  options.fuse = false;
  options.eliminate_copies = false;
  return test::run_on_device(program, std::nullopt, options);
}

// t = x * x; r = A t; s = B r; z = x - s * 0.25: two stencils of `border`, the first asymmetric with
// reach (2, 1), the second (1, 2), on a rows x cols grid.
std::string chain(const std::string& border, int64_t rows, int64_t cols, uint64_t seed) {
  const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  return R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": )" + shape + R"(, "from": {"random": {"seed": )" + std::to_string(seed) + R"(}}},
    "A": {"kind": "stencil", "dtype": "f32", "border": ")" + border + R"(",
          "points": [{"offset": [-2, 0], "weight": 0.5}, {"offset": [0, 1], "weight": -1.5}, {"offset": [0, 0], "weight": 2},
                     {"offset": [1, -1], "weight": 0.25}]},
    "B": {"kind": "stencil", "dtype": "f32", "border": ")" + border + R"(",
          "points": [{"offset": [0, -2], "weight": 0.75}, {"offset": [1, 2], "weight": -0.5}, {"offset": [-1, 0], "weight": 1}]}},
    "body": [{"op": "array.mul", "out": ["t"], "in": ["x", "x"]},
             {"op": "stencil.apply", "out": ["r"], "in": ["A", "t"]},
             {"op": "stencil.apply", "out": ["s"], "in": ["B", "r"]},
             {"op": "array.mul", "out": ["q"], "in": ["s", 0.25]},
             {"op": "array.sub", "out": ["z"], "in": ["x", "q"]}],
    "outputs": {"z": "z.npy", "r": "r.npy"}})";
}

}  // namespace

// The planner: one kernel in three stages, t and r in local-memory tiles, each stage widened by what
// the later ones read around their cells; r is stored too (an output), t never leaves the kernel.
TEST(TileStages, AStencilOfAStencilIsOneKernelInStages) {
  test::TempDir dir;
  Tuning on(kStagesOn);
  const Program program = test::load_text(dir, chain("clamp", 64, 48, 1));
  const ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << test::notes_text(plan.not_fused);
  const FusedGroup& g = plan.groups[0];
  EXPECT_EQ(g.stage_of, (std::vector<int>{0, 1, 2, 2, 2}));
  ASSERT_EQ(g.stage_reach.size(), 3u);
  using Reach = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(g.stage_reach, (Reach{{3, 3}, {1, 2}, {0, 0}}));  // stage 0: B's reach (1, 2) plus A's (2, 1)
  EXPECT_EQ(g.tile_values, (std::map<std::string, int>{{"r", 1}, {"t", 0}}));
  EXPECT_TRUE(g.stored.count("r"));
  EXPECT_FALSE(g.stored.count("t"));
  EXPECT_FALSE(g.global_reads.count("t"));
  EXPECT_EQ(plan.kernels[0].launch.work_dim, 2u);
  EXPECT_TRUE(plan.kernels[0].launch.tile_stages);
}

// Every border rule, tiles that do not divide the grid, grids smaller than the widening (one cell,
// one row): the fused result is the unfused one's bits, and the references' within rounding.
TEST(TileStages, EveryBorderAndAwkwardGridGivesTheUnfusedBits) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  Tuning tuning("stage_tile_rows=8,stage_tile_cols=16,element_local=64");
  for (const char* border : {"clamp", "zero", "periodic", "mirror"})
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 53}, {1, 1}, {1, 19}, {3, 2}, {16, 32}}) {
      SCOPED_TRACE(std::string(border) + " " + std::to_string(rows) + " x " + std::to_string(cols) + ", seed " +
                   std::to_string(seed));
      const Program program = test::load_text(dir, chain(border, rows, cols, seed));
      ASSERT_EQ(plan_of(program).groups.size(), 1u);
      const auto fused = test::run_on_device(program);
      test::expect_same(fused, unfused(program), 0, "tile stages vs one kernel per operation");
      test::expect_same(fused, test::run_reference(program), 1e-5, "tile stages vs the reference");
    }
}

// u is read at the cells of neighbouring tiles by the widened first stage, then updated in place by
// the last: the new u goes to a second buffer, so no work-group reads a neighbour's new value.
TEST(TileStages, AValueReadAtOtherTilesCellsThenWrittenGoesToASecondBuffer) {
  test::TempDir dir;
  Tuning tuning("stage_tile_rows=4,stage_tile_cols=8,element_local=32");
  const Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "u": {"kind": "array", "dtype": "f32", "shape": [45, 70], "from": {"random": {"seed": 3}}},
    "L": {"kind": "stencil", "dtype": "f32", "border": "periodic",
          "points": [{"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}, {"offset": [0, -1], "weight": 1},
                     {"offset": [0, 1], "weight": 1}, {"offset": [0, 0], "weight": -4}]}},
    "body": [{"for": "k", "count": 4, "body": [
      {"op": "array.mul", "out": ["t"], "in": ["u", 0.5]},
      {"op": "stencil.apply", "out": ["s"], "in": ["L", "t"]},
      {"op": "array.add", "out": ["u"], "in": ["u", "s"]}]}],
    "outputs": {"u": "u.npy"}})");
  const ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << test::notes_text(plan.not_fused);
  EXPECT_TRUE(plan.groups[0].shadowed.count("u"));
  EXPECT_NE(plan.groups[0].stored_why.at("u").find("other work-groups' tiles"), std::string::npos);
  const auto fused = test::run_on_device(program);
  test::expect_same(fused, unfused(program), 0, "tile stages vs one kernel per operation");
}

// s is written in the first stage, rewritten element by element in the second, and read around its
// cells in the third: every read finds the new value, also through read_at near the borders (where a
// cell of the tile beyond the second stage's reach still holds the old one).
TEST(TileStages, AValueRewrittenInALaterStageIsReadAtItsNewValue) {
  test::TempDir dir;
  Tuning tuning("stage_tile_cols=16,stage_tile_rows=8,element_local=64");
  for (const char* border : {"clamp", "periodic", "mirror"})
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{8, 16}, {10, 18}, {2, 2}, {40, 40}}) {
      SCOPED_TRACE(std::string(border) + " " + std::to_string(rows) + " x " + std::to_string(cols));
      const Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
        "x": {"kind": "array", "dtype": "f32", "shape": [)" + std::to_string(rows) + ", " + std::to_string(cols) + R"(], "from": {"random": {"seed": 1}}},
        "L": {"kind": "stencil", "dtype": "f32", "border": ")" + border + R"(",
              "points": [{"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}, {"offset": [0, -1], "weight": 1},
                         {"offset": [0, 1], "weight": 1}, {"offset": [0, 0], "weight": -4}]}},
        "body": [{"op": "array.mul", "out": ["s"], "in": ["x", 2]}, {"op": "array.mul", "out": ["p"], "in": ["x", 3]},
                 {"op": "stencil.apply", "out": ["q"], "in": ["L", "p"]}, {"op": "array.add", "out": ["s"], "in": ["s", "q"]},
                 {"op": "stencil.apply", "out": ["z"], "in": ["L", "s"]}],
        "outputs": {"z": "z.npy"}})");
      const ExecutionPlan plan = plan_of(program);
      ASSERT_EQ(plan.groups.size(), 1u) << test::notes_text(plan.not_fused);
      EXPECT_EQ(plan.groups[0].stage_of, (std::vector<int>{0, 0, 1, 1, 2}));
      test::expect_same(test::run_on_device(program), unfused(program), 0, "tile stages vs one kernel per operation");
    }
}

// A value of another shape with as many elements ([40, 24] beside a [24, 40] grid) is element-wise like
// any other and crosses stages in a tile; the grid's extents (arguments on CPUs) are the grid's.
TEST(TileStages, AValueOfAnotherShapeCrossesStages) {
  test::TempDir dir;
  for (const char* tuning : {"stage_tile_cols=16,stage_tile_rows=8,element_local=64",
                             "stage_tile_cols=16,stage_tile_rows=8,element_local=64,extent_args=0"}) {
    SCOPED_TRACE(tuning);
    Tuning on(tuning);
    const Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
      "x": {"kind": "array", "dtype": "f32", "shape": [24, 40], "from": {"random": {"seed": 1}}},
      "y": {"kind": "array", "dtype": "f32", "shape": [40, 24], "from": {"random": {"seed": 2}}},
      "L": {"kind": "stencil", "dtype": "f32", "border": "clamp",
            "points": [{"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}, {"offset": [0, -1], "weight": 1},
                       {"offset": [0, 1], "weight": 1}, {"offset": [0, 0], "weight": -4}]}},
      "body": [{"op": "array.mul", "out": ["a"], "in": ["y", 2]}, {"op": "array.mul", "out": ["t"], "in": ["x", 2]},
               {"op": "stencil.apply", "out": ["r"], "in": ["L", "t"]}, {"op": "array.add", "out": ["w"], "in": ["a", 1]}],
      "outputs": {"r": "r.npy", "w": "w.npy"}})");
    const ExecutionPlan plan = plan_of(program);
    ASSERT_EQ(plan.groups.size(), 1u) << test::notes_text(plan.not_fused);
    EXPECT_TRUE(plan.groups[0].tile_values.count("a"));
    test::expect_same(test::run_on_device(program), unfused(program), 0, "tile stages vs one kernel per operation");
  }
}

// The review's cases, each against one kernel per operation: widened cells two grids beyond a grid
// narrower than a tile (the wrap by one addition read past the buffer); a stage's stores lost on PoCL
// when the cells' places advanced by additions; a global array of another shape read with a halo in the
// same kernel taking the tiles' grid.
TEST(TileStages, ReviewCasesGiveTheUnfusedBits) {
  test::TempDir dir;
  const std::string L5 = R"({"kind": "stencil", "dtype": "f32", "border": "clamp", "points": [{"offset": [-1, 0], "weight": 1},
      {"offset": [1, 0], "weight": 1}, {"offset": [0, -1], "weight": 1}, {"offset": [0, 1], "weight": 1}, {"offset": [0, 0], "weight": -4}]})";
  auto array = [](const std::string& shape, int seed) {
    return R"({"kind": "array", "dtype": "f32", "shape": )" + shape + R"(, "from": {"random": {"seed": )" + std::to_string(seed) + "}}}";
  };
  struct Case {
    const char* tuning;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"stage_tile_cols=64,stage_tile_rows=32,extent_args=0",
       R"({"fugue": 1, "symbols": {"x": )" + array("[1, 40000]", 1) + R"(, "L": )" + L5 + R"(},
          "body": [{"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["z"], "in": ["L", "t"]}],
          "outputs": {"z": "z.npy"}})"},
      {"stage_tile_cols=16,stage_tile_rows=8",
       R"({"fugue": 1, "symbols": {"x": )" + array("[40, 40]", 2) + R"(,
          "A": {"kind": "stencil", "dtype": "f32", "border": "zero", "points": [{"offset": [-2, -2], "weight": 1}]},
          "B": {"kind": "stencil", "dtype": "f32", "border": "zero", "points": [{"offset": [2, 2], "weight": 1}, {"offset": [-2, -1], "weight": 2},
                {"offset": [0, 0], "weight": -1}]}},
          "body": [{"op": "array.mul", "out": ["t"], "in": ["x", 1]}, {"op": "stencil.apply", "out": ["s"], "in": ["A", "t"]},
                   {"op": "stencil.apply", "out": ["z"], "in": ["B", "s"]}],
          "outputs": {"s": "s.npy", "z": "z.npy"}})"},
      {"stage_tile_cols=16,stage_tile_rows=8",
       R"({"fugue": 1, "symbols": {"x": )" + array("[24, 40]", 3) + R"(, "y": )" + array("[40, 24]", 4) + R"(, "L": )" + L5 + R"(},
          "body": [{"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["r"], "in": ["L", "t"]},
                   {"op": "stencil.apply", "out": ["w"], "in": ["L", "y"]}],
          "outputs": {"r": "r.npy", "w": "w.npy"}})"},
  };
  for (size_t c = 0; c < cases.size(); ++c)
    for (const char* extents : {"", ",extent_args=0"}) {
      SCOPED_TRACE("case " + std::to_string(c) + extents);
      Tuning on((std::string(cases[c].tuning) + extents).c_str());
      const Program program = test::load_text(dir, cases[c].text);
      const ExecutionPlan plan = plan_of(program);
      ASSERT_EQ(plan.groups.size(), 1u) << test::notes_text(plan.not_fused);
      ASSERT_FALSE(plan.groups[0].stage_of.empty());
      if (c == 2) {
        EXPECT_EQ(plan.kernels[0].launch.grid_cols, 40);
      }
      test::expect_same(test::run_on_device(program), unfused(program), 0, "tile stages vs one kernel per operation");
    }
}

// What does not join a kernel in stages, each with its reason: a 1-D grid, a reduction, a value
// written again after a stage read it around its element, and stages turned off.
TEST(TileStages, RefusalsSayWhy) {
  test::TempDir dir;
  Tuning on(kStagesOn);
  auto program = [&](const std::string& symbols, const std::string& body) {
    return test::load_text(dir, R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body +
                                    R"(], "outputs": {"z": "z.npy"}})");
  };
  const std::string grid = R"("x": {"kind": "array", "dtype": "f32", "shape": [40, 30], "from": {"random": {"seed": 2}}},
    "L": {"kind": "stencil", "dtype": "f32", "border": "clamp", "points": [{"offset": [-1, 0], "weight": 1}, {"offset": [0, 1], "weight": 2}]})";
  auto reason = [&](const Program& p) { return test::notes_text(plan_of(p).not_fused); };

  const Program line = program(R"("x": {"kind": "array", "dtype": "f32", "shape": [300], "from": {"random": {"seed": 2}}},
    "L": {"kind": "stencil", "dtype": "f32", "border": "clamp", "points": [{"offset": [-1], "weight": 1}, {"offset": [1], "weight": 2}]})",
                               R"({"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["z"], "in": ["L", "t"]})");
  EXPECT_NE(reason(line).find("only a 2-D grid"), std::string::npos) << reason(line);

  const Program reduce = program(grid + R"(, "z": {"kind": "scalar", "dtype": "f32"})",
                                 R"({"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["s"], "in": ["L", "t"]},
                                    {"op": "array.sum", "out": ["z"], "in": ["s"]})");
  EXPECT_NE(reason(reduce).find("only element-wise operations join"), std::string::npos) << reason(reduce);
  test::expect_same(test::run_on_device(reduce, std::filesystem::path()), test::run_reference(reduce), 1e-4, "reduction after stages");

  const Program again = program(grid, R"({"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["s"], "in": ["L", "t"]},
                                         {"op": "array.add", "out": ["t"], "in": ["s", 1]}, {"op": "array.add", "out": ["z"], "in": ["t", "s"]})");
  EXPECT_NE(reason(again).find("reads around its elements from the local-memory tile"), std::string::npos) << reason(again);
  test::expect_same(test::run_on_device(again, std::filesystem::path()), test::run_reference(again), 1e-5, "write after a stage read");

  Tuning off("stage_tile_cols=0");
  const Program chained = program(grid, R"({"op": "array.mul", "out": ["t"], "in": ["x", 2]}, {"op": "stencil.apply", "out": ["z"], "in": ["L", "t"]})");
  EXPECT_NE(reason(chained).find("tile stages are off for this device"), std::string::npos) << reason(chained);
}

// NumPy as the oracle of a fused biharmonic smoothing step on a periodic grid: x - a * L(L(x)).
TEST(TileStages, BiharmonicStepMatchesNumPy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with NumPy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f64", "shape": [131, 97], "from": {"random": {"seed": )" + std::to_string(seed) + R"(}}},
    "x0": {"kind": "array", "dtype": "f64", "shape": [131, 97]},
    "L": {"kind": "stencil", "dtype": "f64", "border": "periodic",
          "points": [{"offset": [-1, 0], "weight": 1}, {"offset": [1, 0], "weight": 1}, {"offset": [0, -1], "weight": 1},
                     {"offset": [0, 1], "weight": 1}, {"offset": [0, 0], "weight": -4}]}},
    "body": [{"op": "array.copy", "out": ["x0"], "in": ["x"]},
             {"for": "k", "count": 3, "body": [
               {"op": "stencil.apply", "out": ["r"], "in": ["L", "x"]},
               {"op": "stencil.apply", "out": ["s"], "in": ["L", "r"]},
               {"op": "array.mul", "out": ["as"], "in": ["s", 0.01]},
               {"op": "array.sub", "out": ["x"], "in": ["x", "as"]}]}],
    "outputs": {"x0": "x0.npy", "x": "x.npy"}})");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(),
                           std::string("FUGUE_TUNING=") + kStagesOn);
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1]
x = np.load(d + '/x0.npy')
L = lambda v: np.roll(v, 1, 0) + np.roll(v, -1, 0) + np.roll(v, 1, 1) + np.roll(v, -1, 1) - 4 * v
for _ in range(3):
    x = x - 0.01 * L(L(x))
err = np.abs(np.load(d + '/x.npy') - x).max()
print('numpy agrees' if err < 1e-12 else 'max error %g' % err)
)");
  const std::string out = test::run_command(python + " " + (dir / "check.py").string() + " " + (dir / "out").string()).out;
  EXPECT_NE(out.find("numpy agrees"), std::string::npos) << "seed " << seed << ": " << out;
}

// ABI 2.9's launch builtins: a kernel in tile stages runs on a 2-D launch, which dimension 1's
// builtins describe; a 1-D kernel's dimension 1 is one item wide; the sub-group width is the device's.
TEST(TileStages, LaunchBuiltinsDescribeTheLaunch) {
  test::TempDir dir;
  Tuning on(kStagesOn);
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [50, 70], "from": {"random": {"seed": 2}}},
    "z": {"kind": "array", "dtype": "f32", "shape": [3501], "from": {"random": {"seed": 3}}}},
    "body": [{"op": "test.launch_shape", "out": ["flat"], "in": ["z"]},
             {"op": "test.box3", "out": ["b"], "in": ["x"]}, {"op": "test.box3", "out": ["bb"], "in": ["b"]},
             {"op": "test.launch_shape", "out": ["staged"], "in": ["bb"]}],
    "outputs": {"flat": "flat.npy", "staged": "staged.npy", "bb": "bb.npy"}})");
  const Program program = load_program(dir / "p.json", test::plugins_with_test_ops());
  const ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 2u) << test::notes_text(plan.not_fused);
  const Launch& staged = plan.kernels[1].launch;
  ASSERT_TRUE(staged.tile_stages);
  const DeviceInfo& device = test::test_device().info;
  const double width = device.subgroup_sizes.empty() ? 1.0 : static_cast<double>(device.subgroup_sizes.front());
  const auto out = test::run_on_device(program);
  for (int64_t i = 0; i < 50 * 70; i += 7) {
    ASSERT_EQ(out.at("flat").get(i + 1), 10000 + 100 * width + 7) << i;
    ASSERT_EQ(out.at("staged").get(i), 10000 * static_cast<double>(staged.local_dims[1]) + 100 * width + 7) << i;
  }
  const auto reference = test::run_reference(program);
  test::expect_same(out, {{"bb", reference.at("bb")}}, 1e-6, "box3 of box3 in tile stages");
}
