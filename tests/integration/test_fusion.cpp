// The fusion planner end to end: what it fuses, what it promotes, what becomes a buffer swap, what it
// refuses and why, and that none of it changes a result.
#include <gtest/gtest.h>

#include <cstdlib>

#include "errors.h"
#include "runtime/executor.h"
#include "passes/launch.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::load_text;

ExecutionPlan plan_of(const Program& program, PlanOptions options = {}) {
  return lower(program, test::test_device().info, options);
}

std::string notes(const std::vector<PlanNote>& list) { return test::notes_text(list); }

using test::expect_same;

const char* kGrid = R"("a": {"kind": "array", "dtype": "f32", "shape": [64, 48], "from": {"random": {"seed": 1}}},
    "u": {"kind": "array", "dtype": "f32", "shape": [64, 48], "from": {"random": {"seed": 2}}},
    "R": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, 0], "weight": 0.25}, {"offset": [1, 0], "weight": 0.25},
                     {"offset": [0, -1], "weight": 0.25}, {"offset": [0, 1], "weight": 0.25}]})";

}  // namespace

// Programs 6-8 of the thesis: the loop body is one kernel; f5, f6, r and f7 never reach global memory.
// Hindemith needed two kernels per iteration, since the final copy x = f7 writes x, which the stencil
// read beyond its own element: here the copy joins as a register move and x is written to a second
// buffer swapped in after the kernel, with or without copy elimination.
TEST(Fusion, JacobiRunsAsOneKernelPerIteration) {
  Program program = load_program(test::source_root() / "examples" / "jacobi.json", test::bundled_plugins());
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << notes(plan.not_fused);
  EXPECT_EQ(plan.groups[0].ops.size(), 5u);
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"f5", "f6", "r", "f7"}));
  EXPECT_EQ(plan.groups[0].stored, (SymbolSet{"x"}));
  EXPECT_EQ(plan.groups[0].shadowed, (SymbolSet{"x"}));
  EXPECT_TRUE(plan.swaps.empty());

  PlanOptions no_swap;
  no_swap.eliminate_copies = false;
  ExecutionPlan hindemith = plan_of(program, no_swap);
  ASSERT_EQ(hindemith.groups.size(), 1u) << notes(hindemith.not_fused);
  EXPECT_EQ(hindemith.groups[0].stored, (SymbolSet{"x"}));

  int64_t fused_launches = 0, hindemith_launches = 0, unfused_launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &fused_launches);
  auto two = test::run_on_device(program, std::nullopt, no_swap, &hindemith_launches);
  PlanOptions off;
  off.fuse = false;
  off.eliminate_copies = false;
  auto unfused = test::run_on_device(program, std::nullopt, off, &unfused_launches);
  EXPECT_EQ(fused_launches, 10);
  EXPECT_EQ(hindemith_launches, 10);
  EXPECT_EQ(unfused_launches, 50);
  auto reference = test::run_reference(program);
  expect_same(fused, reference, 1e-5, "fused vs reference");
  expect_same(fused, unfused, 1e-6, "fused vs unfused");
  expect_same(two, unfused, 1e-6, "two kernels vs unfused");
}

// Figure 5.3: c = a + b; d = c * c is one kernel reading a and b and writing d.
TEST(Fusion, AddThenSquareIsOneKernelTwoReadsOneWrite) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [10007], "from": {"random": {"seed": 1}}},
    "b": {"kind": "array", "dtype": "f32", "shape": [10007], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}, {"op": "array.mul", "out": ["d"], "in": ["c", "c"]}],
    "outputs": {"d": "d.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].global_reads, (SymbolSet{"a", "b"}));
  EXPECT_EQ(plan.groups[0].stored, (SymbolSet{"d"}));
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"c"}));
  EXPECT_DOUBLE_EQ(plan.groups[0].bytes_fused, 3 * 10007 * 4.0);
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-6, "fused vs reference");
}

// A reduction fuses with its element-wise producers: one pass over the data (plus the one-group finalize).
TEST(Fusion, MapThenReduceIsOnePass) {
  Program program = load_program(test::source_root() / "examples" / "fused_reduction.json", test::bundled_plugins());
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << notes(plan.not_fused);
  EXPECT_EQ(plan.groups[0].ops.size(), 3u);
  EXPECT_EQ(plan.groups[0].plan.level, FUGUE_LEVEL_ITEM);
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"ab", "abc"}));
  EXPECT_EQ(plan.groups[0].global_reads, (SymbolSet{"a", "b", "c"}));
  int64_t launches = 0;
  auto out = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 2) << "the pass and its finalize";
  expect_same(out, test::run_reference(program), 1e-4, "fused vs reference");
}

// A live-out temporary fuses but is stored, not promoted.
TEST(Fusion, LiveOutTemporaryIsStoredNotPromoted) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"random": {"seed": 1}}},
    "b": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"random": {"seed": 2}}}},
    "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}, {"op": "array.mul", "out": ["d"], "in": ["c", "c"]}],
    "outputs": {"c": "c.npy", "d": "d.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].stored, (SymbolSet{"c", "d"}));
  EXPECT_TRUE(plan.groups[0].promoted.empty());
  EXPECT_NE(plan.groups[0].stored_why.at("c").find("live after"), std::string::npos);
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-6, "fused vs reference");
}

// A value produced in a kernel and read with a halo in the same kernel: tests/integration/test_tile_stages.cpp.

// warp reads its image anywhere (WHOLE): an image produced element-wise in the same kernel cannot be.
TEST(Fusion, DifferingPartitionsAreNotFused) {
  test::TempDir dir;
  Program program = load_text(dir, std::string(R"({"fugue": 1, "symbols": {)") + kGrid + R"(},
    "body": [{"op": "array.mul", "out": ["img"], "in": ["a", 2]},
             {"op": "stencil.warp", "out": ["w"], "in": ["img", "u", "u"]}],
    "outputs": {"w": "w.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 2u);
  ASSERT_EQ(plan.not_fused.size(), 1u);
  EXPECT_NE(plan.not_fused[0].text.find("partitions differ"), std::string::npos) << plan.not_fused[0].text;
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-5, "device vs reference");
}

// An op writing the value it reads with a halo gets a second buffer, swapped in after the kernel.
TEST(Fusion, InPlaceStencilWritesASecondBuffer) {
  test::TempDir dir;
  Program program = load_text(dir, std::string(R"({"fugue": 1, "symbols": {)") + kGrid + R"(},
    "body": [{"for": "k", "count": 3, "body": [{"op": "stencil.apply", "out": ["a"], "in": ["R", "a"]}]}],
    "outputs": {"a": "a.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].shadowed, (SymbolSet{"a"}));
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-5, "device vs reference");
}

// A later op may overwrite, element by element, a value an earlier op of the kernel read with a halo
// (Horn and Schunck's u = ubar - Ix q, ubar = stencil(u)): the new value goes to a second buffer.
TEST(Fusion, OverwritingAValueReadWithAHaloWritesASecondBuffer) {
  test::TempDir dir;
  Program program = load_text(dir, std::string(R"({"fugue": 1, "symbols": {)") + kGrid + R"(},
    "body": [{"for": "k", "count": 3, "body": [
               {"op": "stencil.apply", "out": ["m"], "in": ["R", "a"]},
               {"op": "array.mul", "out": ["h"], "in": ["a", 0.5]},
               {"op": "array.sub", "out": ["a"], "in": ["m", "h"]},
               {"op": "array.mul", "out": ["b"], "in": ["a", 3]}]}],
    "outputs": {"a": "a.npy", "b": "b.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << (plan.not_fused.empty() ? "" : plan.not_fused[0].text);
  EXPECT_EQ(plan.groups[0].shadowed, (SymbolSet{"a"}));
  int64_t launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
  EXPECT_EQ(launches, 3);
  expect_same(fused, test::run_reference(program), 1e-5, "device vs reference");
}

// A copy whose input is still needed stays a kernel; the planner says why.
TEST(Fusion, CopyOfALiveValueIsNotASwap) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [100], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.copy", "out": ["b"], "in": ["a"]}, {"op": "array.add", "out": ["c"], "in": ["a", "b"]}],
    "outputs": {"c": "c.npy"}})");
  ExecutionPlan plan = plan_of(program);
  EXPECT_TRUE(plan.swaps.empty());
  ASSERT_EQ(plan.copies_kept.size(), 1u);
  EXPECT_NE(plan.copies_kept[0].text.find("still live"), std::string::npos) << plan.copies_kept[0].text;
  EXPECT_EQ(plan.groups.size(), 1u) << "the copy fuses with the add instead";
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-6, "device vs reference");
}

// --no-fuse: one kernel per operation, each with its reason.
TEST(Fusion, NoFuseGivesOneKernelPerOperation) {
  Program program = load_program(test::source_root() / "examples" / "fused_reduction.json", test::bundled_plugins());
  PlanOptions off;
  off.fuse = false;
  ExecutionPlan plan = plan_of(program, off);
  EXPECT_EQ(plan.groups.size(), 3u);
  ASSERT_EQ(plan.not_fused.size(), 2u);
  EXPECT_NE(plan.not_fused[0].text.find("--no-fuse"), std::string::npos);
}

// GPUs walk a 2-D grid read with a halo tile by tile; forced here (PoCL walks flat by default) on a grid
// that is no multiple of the tile, so edge tiles are partial.
TEST(Fusion, TiledWalkOfAGridGivesTheSameResult) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [61, 45], "from": {"random": {"seed": 4}}},
    "b": {"kind": "array", "dtype": "f32", "shape": [61, 45], "from": {"random": {"seed": 5}}},
    "R": {"kind": "stencil", "dtype": "f32", "border": "mirror",
          "points": [{"offset": [-1, 0], "weight": 0.2}, {"offset": [1, 0], "weight": 0.3},
                     {"offset": [0, -2], "weight": 0.1}, {"offset": [0, 1], "weight": 0.4}]}},
    "body": [{"for": "k", "count": 4, "body": [
      {"op": "stencil.apply", "out": ["s"], "in": ["R", "a"]},
      {"op": "array.sub", "out": ["t"], "in": ["b", "s"]},
      {"op": "array.mul", "out": ["a"], "in": ["t", 0.5]}]}],
    "outputs": {"a": "a.npy"}})");
  ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,grid_tile_cols=8,element_local=64", 1), 0);
  Launch launch;
  std::map<std::string, HostArray> tiled;
  try {
    ExecutionPlan plan = plan_of(program);
    // a, read with a halo, is written by the same kernel into its second buffer.
    ASSERT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(plan.groups[0].grid_rows, 61);
    EXPECT_EQ(plan.groups[0].shadowed, (SymbolSet{"a"}));
    launch = choose_group_launch(plan.groups[0], test::test_device().info);
    tiled = test::run_on_device(program, std::filesystem::path());
  } catch (...) {
    unsetenv("FUGUE_TUNING");
    throw;
  }
  unsetenv("FUGUE_TUNING");
  EXPECT_EQ(launch.tile_cols, 8);
  EXPECT_EQ(launch.tile_rows, 8);
  expect_same(tiled, test::run_reference(program), 1e-5, "tiled walk vs reference");
}

// Column strips (the GPU's walk of 2-D grids read with a halo, forced here): each work-item walks rows
// down its column; the result is the flat walk's, bit for bit, for strips and column blocks that do not
// divide the grid; so is that of tiles staged in local memory. A kernel reading three arrays, or a grid too small to fill the device with walkers,
// keeps the flat walk.
TEST(Fusion, ColumnStripsAndStagedTilesGiveTheFlatWalksBits) {
  test::TempDir dir;
  auto program_text = [](bool third) {
    return std::string(R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [600, 301], "from": {"random": {"seed": 4}}},
    "b": {"kind": "array", "dtype": "f32", "shape": [600, 301], "from": {"random": {"seed": 5}}},
    "c": {"kind": "array", "dtype": "f32", "shape": [600, 301], "from": {"random": {"seed": 6}}},
    "R": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, -1], "weight": 0.2}, {"offset": [1, 0], "weight": 0.3}, {"offset": [0, 0], "weight": -0.6},
                     {"offset": [0, -2], "weight": 0.1}, {"offset": [2, 1], "weight": 0.4}]}},
    "body": [{"for": "k", "count": 3, "body": [
      {"op": "stencil.apply", "out": ["s"], "in": ["R", "a"]},
      {"op": "array.sub", "out": ["t"], "in": ["b", "s"]},)") +
           (third ? R"({"op": "array.add", "out": ["t"], "in": ["t", "c"]},)" : "") + R"(
      {"op": "array.mul", "out": ["a"], "in": ["t", 0.5]}]}],
    "outputs": {"a": "a.npy"}})";
  };
  Program program = load_text(dir, program_text(false));
  Program three = load_text(dir, program_text(true));
  const auto flat = test::run_on_device(program, std::filesystem::path());
  ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,grid_strip_rows=3,element_local=64", 1), 0);
  Launch launch, three_launch;
  std::map<std::string, HostArray> strips;
  try {
    launch = choose_group_launch(plan_of(program).groups[0], test::test_device().info);
    three_launch = choose_group_launch(plan_of(three).groups[0], test::test_device().info);
    strips = test::run_on_device(program, std::filesystem::path());
  } catch (...) {
    unsetenv("FUGUE_TUNING");
    throw;
  }
  unsetenv("FUGUE_TUNING");
  // 200 strips x 301 columns of walkers fill a device of up to 29 compute units.
  const bool fills = 200 * 301 >= 2048 * static_cast<int64_t>(test::test_device().info.compute_units);
  EXPECT_EQ(launch.strip_rows, fills ? 3 : 0);
  if (fills) {
    EXPECT_EQ(launch.tile_cols, 64);
  }
  EXPECT_EQ(three_launch.strip_rows, 0) << "three arrays read: the flat walk";
  expect_same(strips, flat, 0, "strips vs the flat walk");
  expect_same(strips, test::run_reference(program), 1e-5, "strips vs reference");
  // Tiles staged in local memory (stencil.apply reads its grid TILE): the same bits again, for tiles
  // that do not divide the grid and several cells per work-item.
  ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,local_tile_cols=16,element_local=64,local_tile_passes=3", 1), 0);
  Launch staged_launch;
  std::map<std::string, HostArray> staged;
  try {
    staged_launch = choose_group_launch(plan_of(program).groups[0], test::test_device().info);
    staged = test::run_on_device(program, std::filesystem::path());
  } catch (...) {
    unsetenv("FUGUE_TUNING");
    throw;
  }
  unsetenv("FUGUE_TUNING");
  EXPECT_TRUE(staged_launch.stage_tiles());
  EXPECT_EQ(staged_launch.tile_rows, 12);  // 64 / 16 rows a pass, 3 passes
  expect_same(staged, flat, 0, "staged tiles vs the flat walk");
  // Too small a grid to keep the device busy with one walker per column and strip: the flat walk.
  Program small = load_text(dir, R"({"fugue": 1, "symbols": {
    "a": {"kind": "array", "dtype": "f32", "shape": [61, 45], "from": {"random": {"seed": 4}}},
    "R": {"kind": "stencil", "dtype": "f32", "border": "zero", "points": [{"offset": [-1, 0], "weight": 0.5}]}},
    "body": [{"op": "stencil.apply", "out": ["s"], "in": ["R", "a"]}], "outputs": {"s": "s.npy"}})");
  ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,grid_strip_rows=7", 1), 0);
  const Launch small_launch = choose_group_launch(plan_of(small).groups[0], test::test_device().info);
  unsetenv("FUGUE_TUNING");
  EXPECT_EQ(small_launch.strip_rows, 0);
}

// A 3-D grid read with a halo on a 3-D launch (a cell per work-item; forced here, off by default):
// the flat walk's bits, for work-groups that do not divide the grid.
TEST(Fusion, ThreeDLaunchGivesTheFlatWalksBits) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [37, 29, 45], "from": {"random": {"seed": 2}}},
    "L": {"kind": "stencil", "dtype": "f32", "border": "periodic",
          "points": [{"offset": [-1, 0, 0], "weight": 1}, {"offset": [1, 0, 0], "weight": 1}, {"offset": [0, -1, 0], "weight": 1},
                     {"offset": [0, 1, 0], "weight": 1}, {"offset": [0, 0, -1], "weight": 1}, {"offset": [0, 0, 1], "weight": 1},
                     {"offset": [0, 0, 0], "weight": -6}]}},
    "body": [{"for": "k", "count": 3, "body": [
      {"op": "stencil.apply", "out": ["r"], "in": ["L", "x"]},
      {"op": "array.mul", "out": ["ar"], "in": ["r", 0.1]},
      {"op": "array.add", "out": ["x"], "in": ["x", "ar"]}]}],
    "outputs": {"x": "x.npy"}})");
  const auto flat = test::run_on_device(program);
  ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,grid3_cols=16,grid3_rows=4,grid3_planes=2", 1), 0);
  Launch launch;
  std::map<std::string, HostArray> launched;
  try {
    launch = choose_group_launch(plan_of(program).groups[0], test::test_device().info);
    launched = test::run_on_device(program);
  } catch (...) {
    unsetenv("FUGUE_TUNING");
    throw;
  }
  unsetenv("FUGUE_TUNING");
  EXPECT_EQ(launch.work_dim, 3u);
  EXPECT_EQ(launch.group_dims[0] * launch.group_dims[1] * launch.group_dims[2], 3 * 8 * 19);
  expect_same(launched, flat, 0, "3-D launch vs the flat walk");
}

// The cost model: many values alive at once would spill, so the kernel is split, with the reason.
TEST(Fusion, RegisterPressureSplitsAKernel) {
  // 700 products of a, all alive until a chain of additions consumes them.
  std::string body, symbols = R"("a": {"kind": "array", "dtype": "f32", "shape": [256], "from": {"random": {"seed": 1}}})";
  const int count = 700;
  for (int k = 0; k < count; ++k)
    body += R"({"op": "array.mul", "out": ["p)" + std::to_string(k) + R"("], "in": ["a", )" + std::to_string(k) + "]},";
  body += R"({"op": "array.add", "out": ["s1"], "in": ["p0", "p1"]})";
  for (int k = 2; k < count; ++k)
    body += R"(,{"op": "array.add", "out": ["s)" + std::to_string(k) + R"("], "in": ["s)" + std::to_string(k - 1) +
            R"(", "p)" + std::to_string(k) + R"("]})";
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body +
                                       R"(], "outputs": {"s)" + std::to_string(count - 1) + R"(": "s.npy"}})");
  ExecutionPlan plan = plan_of(program);
  ASSERT_GE(plan.groups.size(), 2u);
  bool said_why = false;
  for (const auto& n : plan.not_fused) said_why |= n.text.find("registers") != std::string::npos;
  EXPECT_TRUE(said_why) << notes(plan.not_fused);
  for (const auto& g : plan.groups) EXPECT_LE(g.registers, test::test_device().info.is_cpu ? 512 : 128);
}

// The loop variable keeps its last value after the loop; a copy of it never becomes a swap (the loop
// refills its buffer every iteration).
TEST(Fusion, LoopVariableAfterTheLoopKeepsItsLastValue) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {},
    "body": [{"for": "i", "count": 3, "body": [{"op": "array.copy", "out": ["x"], "in": ["i"]}]},
             {"op": "array.add", "out": ["last"], "in": ["i", 100]}],
    "outputs": {"x": "x.npy", "last": "last.npy", "i": "i.npy"}})");
  ExecutionPlan plan = plan_of(program);
  EXPECT_TRUE(plan.swaps.empty());
  auto fused = test::run_on_device(program);
  EXPECT_EQ(fused.at("last").get(0), 102);
  EXPECT_EQ(fused.at("x").get(0), 2);
  EXPECT_EQ(fused.at("i").get(0), 2);
  expect_same(fused, test::run_reference(program), 0, "fused vs reference");
}

// An unset value is reported at the operation that reads it, also inside a fused kernel.
TEST(Fusion, ReadBeforeWriteNamesTheReadingOperation) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "n": {"kind": "scalar", "dtype": "i32", "value": 0},
    "a": {"kind": "array", "dtype": "f32", "shape": [16], "from": {"random": {"seed": 1}}}},
    "body": [{"for": "k", "count": "n", "body": [{"op": "array.mul", "out": ["d"], "in": ["a", 2]}]},
             {"op": "array.mul", "out": ["t"], "in": ["a", 3]},
             {"op": "array.add", "out": ["y"], "in": ["t", "d"]}],
    "outputs": {"y": "y.npy"}})");
  try {
    test::run_on_device(program);
    FAIL() << "expected a read-before-write error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/body/2"), std::string::npos) << e.what();
  }
}
