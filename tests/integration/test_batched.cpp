// Batched kernels: a BLOCK-level operation with BATCH operands (one entry per work-group) and the
// element-wise operations fused around it, entries kept in local memory; what joins, what is refused and
// why, and that fusing changes no result. array.softmax and array.logsumexp are the operations, checked
// against their references and NumPy.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <tuple>

#include "device/device_description.h"
#include "load/program_loader.h"
#include "passes/lower.h"
#include "passes/plan_report.h"
#include "linalg_checks.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::load_text;

ExecutionPlan plan_of(const Program& program, PlanOptions options = {}) {
  return lower(program, test::test_device().info, options);
}

ExecutionPlan plan_for(const Program& program, const char* device) {
  return lower(program, read_device_description(test::source_root() / "devices" / (std::string(device) + ".json")),
               PlanOptions{});
}

std::string notes(const ExecutionPlan& plan) { return test::notes_text(plan.not_fused); }

using test::expect_same;

// softmax(x * scale + bias) and logsumexp of the same rows, [rows, cols] of `dtype`.
std::string scaled_rows(int64_t rows, int64_t cols, const char* dtype, uint64_t seed, const std::string& extra_body = "",
                        const std::string& outputs = R"("y": "y.npy", "l": "l.npy")") {
  const std::string shape = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
  return R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": ")" + std::string(dtype) + R"(", "shape": )" + shape +
         R"(, "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -8, "high": 8}}},
    "bias": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         R"(, "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}},
    "scale": {"kind": "scalar", "dtype": ")" + dtype + R"(", "value": 1.5}},
    "body": [{"op": "array.mul", "out": ["t"], "in": ["x", "scale"]},
             {"op": "array.add", "out": ["u"], "in": ["t", "bias"]},
             {"op": "array.softmax", "out": ["y"], "in": ["u"]},
             {"op": "array.logsumexp", "out": ["l"], "in": ["u"]})" +
         extra_body + R"(],
    "outputs": {)" + outputs + "}}";
}


}  // namespace

// The producers of softmax's input join its kernel: t stays in registers, u in local memory (the row
// is read three times), and neither reaches global memory; logsumexp of the same rows joins too.
TEST(Batched, SoftmaxOfAnElementwiseProducerIsOneKernel) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  Program program = load_text(dir, scaled_rows(37, 300, "f32", seed));
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << notes(plan);
  const FusedGroup& g = plan.groups[0];
  EXPECT_EQ(g.plan.level, FUGUE_LEVEL_BLOCK);
  EXPECT_EQ(g.entries, 37);
  EXPECT_EQ(g.global_reads, (SymbolSet{"bias", "scale", "x"}));
  EXPECT_EQ(g.stored, (SymbolSet{"l", "y"}));
  EXPECT_EQ(g.promoted, (SymbolSet{"t", "u"}));
  ASSERT_EQ(g.local_values.count("u"), 1u);
  EXPECT_EQ(g.local_values.at("u"), 300);
  EXPECT_EQ(plan.kernels[0].source.find("g_u"), std::string::npos) << "u must never reach global memory";

  int64_t launches = 0, unfused_launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
  PlanOptions off;
  off.fuse = false;
  auto unfused = test::run_on_device(program, std::nullopt, off, &unfused_launches);
  EXPECT_EQ(launches, 1);
  EXPECT_EQ(unfused_launches, 4);
  expect_same(fused, test::run_reference(program), 1e-4, "fused vs reference (seed " + std::to_string(seed) + ")");
  expect_same(fused, unfused, 1e-5, "fused vs unfused (seed " + std::to_string(seed) + ")");
}

// Element-wise consumers join after the block: softmax's result crosses into their loop through local
// memory, and is stored only because it is an output.
TEST(Batched, ElementwiseConsumersJoinAfterTheBlock) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  Program program = load_text(
      dir, scaled_rows(16, 1000, "f64", seed, R"(, {"op": "array.mul", "out": ["z"], "in": ["y", "y"]},
                       {"op": "array.sub", "out": ["w"], "in": ["l", 1]})",
                       R"("z": "z.npy", "w": "w.npy")"));
  ExecutionPlan plan = plan_of(program);
  ASSERT_EQ(plan.groups.size(), 1u) << notes(plan);
  const FusedGroup& g = plan.groups[0];
  EXPECT_EQ(g.stored, (SymbolSet{"w", "z"}));
  EXPECT_EQ(g.promoted, (SymbolSet{"l", "t", "u", "y"}));
  EXPECT_EQ(g.local_values.count("y"), 1u);
  EXPECT_EQ(g.local_values.count("l"), 1u);
  PlanOptions off;
  off.fuse = false;
  expect_same(test::run_on_device(program), test::run_on_device(program, std::nullopt, off), 1e-12,
              "fused vs unfused (seed " + std::to_string(seed) + ")");
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-11, "fused vs reference");
}

// What cannot share a batched kernel, each with its reason: a whole-array reduction (ITEM level), a
// stencil reading the result with a halo, a batch of other entries, and entries too large for local memory.
TEST(Batched, RefusalsSayWhy) {
  test::TempDir dir;
  Program reduce = load_text(dir, scaled_rows(8, 64, "f32", 1, R"(, {"op": "array.sum", "out": ["s"], "in": ["y"]})",
                                              R"("s": "s.npy")"));
  ExecutionPlan plan = plan_of(reduce);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_NE(notes(plan).find("ITEM level"), std::string::npos) << notes(plan);

  Program stencil = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [32, 32], "from": {"random": {"seed": 1}}},
    "S": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, 0], "weight": 0.5}, {"offset": [1, 0], "weight": 0.5}]}},
    "body": [{"op": "array.softmax", "out": ["y"], "in": ["x"]},
             {"op": "stencil.apply", "out": ["z"], "in": ["S", "y"]}],
    "outputs": {"z": "z.npy"}})");
  plan = plan_of(stencil);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_NE(notes(plan).find("produces it in this kernel, one entry per work-group"), std::string::npos) << notes(plan);
  expect_same(test::run_on_device(stencil), test::run_reference(stencil), 1e-4, "stencil of softmax");

  Program other_rows = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [6, 40], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.softmax", "out": ["y"], "in": ["x"]},
             {"op": "array.logsumexp", "out": ["l"], "in": ["x"]},
             {"op": "array.softmax", "out": ["z"], "in": ["l"]}],
    "outputs": {"y": "y.npy", "z": "z.npy"}})");
  plan = plan_of(other_rows);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_NE(notes(plan).find("it has 1 batch entries, the kernel 6"), std::string::npos) << notes(plan);

  // Rows of 20,000 f32 (80 kB) fit PoCL's local memory, not the H100's 48 kB: there the producer stays apart,
  // and softmax reads its row from global memory (too large to stage).
  Program wide = load_text(dir, scaled_rows(4, 20000, "f32", 1, "", R"("y": "y.npy")"));
  plan = plan_for(wide, "nvidia-h100");
  EXPECT_NE(notes(plan).find("in local memory, over the device's"), std::string::npos) << notes(plan);
  for (const auto& g : plan.groups)
    if (g.plan.level == FUGUE_LEVEL_BLOCK) {
      EXPECT_TRUE(g.staged.empty());
    }
  EXPECT_EQ(plan_for(wide, "pocl-cpu").groups.size(), 1u);
}

// Rows too short for a work-group each share one side by side, a team of work-items per row (the
// operation's body is written for a team: fugue_plan.entry_teams): one work-item per row (thread model)
// or a few (hybrid), rows that do not fill the last round, several rounds per work-group; the same values
// as the reference and as one kernel per operation.
TEST(Batched, ShortRowsShareAWorkGroupInTeams) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    int64_t rows, cols;
    const char* tuning;
  };
  // (CPUs give every entry a work-group of its own: block_team_items asks for entries side by side.)
  for (const Case& c : {Case{5000, 5, "block_team_items=64"}, Case{1001, 40, "block_team_items=64"}, Case{77, 3, "block_team_items=8"},
                        Case{333, 40, "block_team_items=8"}, Case{9, 1, "block_team_items=64"}}) {
    const std::string what = std::to_string(c.rows) + " rows of " + std::to_string(c.cols) + " " + c.tuning +
                             " (seed " + std::to_string(seed) + ")";
    ASSERT_EQ(setenv("FUGUE_TUNING", c.tuning, 1), 0);
    Program program = load_text(dir, scaled_rows(c.rows, c.cols, "f32", seed));
    ExecutionPlan plan = plan_of(program);
    ASSERT_EQ(plan.groups.size(), 1u) << notes(plan);
    const FusedGroup& g = plan.groups[0];
    const Launch& launch = plan.kernels[0].launch;
    EXPECT_TRUE(g.teams) << what;
    EXPECT_GE(launch.team, 1) << what;
    EXPECT_GE(launch.entries_per_group, 2) << what;
    EXPECT_EQ(launch.local_size, launch.team * launch.entries_per_group) << what;
    // Every value the rows' bodies reach is held in local memory, one slot per entry of the group.
    for (const char* s : {"u", "y", "l"}) EXPECT_EQ(g.local_values.count(s), 1u) << s << ", " << what;
    int64_t launches = 0;
    auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
    EXPECT_EQ(launches, 1) << what;
    PlanOptions off;
    off.fuse = false;
    expect_same(fused, test::run_reference(program), 1e-5, "teams vs reference, " + what);
    expect_same(fused, test::run_on_device(program, std::nullopt, off), 1e-6, "teams vs unfused, " + what);
  }
  ASSERT_EQ(unsetenv("FUGUE_TUNING"), 0);
  // The team size follows the row (about eight elements per work-item on GPUs), and a row that wants a
  // team of more than half a work-group's items gets a work-group of its own.
  for (const auto& [cols, team, entries] : {std::tuple<int64_t, int64_t, int64_t>{4, 1, 64}, {16, 2, 32}, {256, 32, 2},
                                            {1024, 128, 1}}) {
    Program program = load_text(dir, scaled_rows(64, cols, "f32", seed));
    ExecutionPlan plan = plan_for(program, "nvidia-h100");
    ASSERT_EQ(plan.groups.size(), 1u) << notes(plan);
    EXPECT_EQ(plan.groups[0].teams, entries > 1) << cols;
    EXPECT_EQ(plan.kernels[0].launch.local_size, team * entries) << cols;
    EXPECT_EQ(plan.kernels[0].launch.team, entries > 1 ? team : 0) << cols;
  }
}

// NumPy is the independent oracle: rows of every length class (shorter than a work-group, not a multiple of
// it, longer than a GPU's local memory), extreme values (rows of -inf, +inf, NaN, huge magnitudes).
TEST(Batched, SoftmaxAndLogsumexpAgreeWithNumpy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const int64_t cols : {1, 7, 256, 1001}) {
    const std::string run = "run " + (dir / "p.json").string() + " --out " + (dir / "out").string();
    test::write_text(dir / "p.json", scaled_rows(13, cols, "f64", seed, "",
                                                 R"("y": "y.npy", "l": "l.npy", "x": "x.npy", "bias": "bias.npy")"));
    auto r = test::run_fugue(run);
    ASSERT_EQ(r.code, 0) << r.out;
    test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1]
u = np.load(d + '/x.npy') * 1.5 + np.load(d + '/bias.npy')
m = u.max(axis=-1, keepdims=True)
e = np.exp(u - m)
y, l = e / e.sum(axis=-1, keepdims=True), np.log(e.sum(axis=-1)) + m[..., 0]
assert np.allclose(np.load(d + '/y.npy'), y, rtol=1e-12, atol=1e-14), 'softmax'
assert np.allclose(np.load(d + '/l.npy'), l, rtol=1e-12, atol=1e-14), 'logsumexp'
print('numpy agrees')
)");
    std::string command = python + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    char buf[256];
    while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
    if (pipe) pclose(pipe);
    EXPECT_NE(out.find("numpy agrees"), std::string::npos) << cols << " columns, seed " << seed << ": " << out;
  }
  // Extremes, NumPy's and SciPy's answers: softmax of a row whose maximum is infinite, or with a NaN, is
  // NaN; -inf elements weigh 0; logsumexp of a row of -inf is -inf, of a row with +inf +inf.
  test::write_text(dir / "make.py", R"(import sys, numpy as np
inf, nan = np.inf, np.nan
x = np.array([[1, 2, 3], [-1e30, 0, 1e30], [-inf, -inf, -inf], [0, inf, 1], [0, nan, 1], [-inf, 0, 1]], np.float32)
np.save(sys.argv[1], x)
)");
  ASSERT_EQ(std::system((python + " " + (dir / "make.py").string() + " " + (dir / "x.npy").string()).c_str()), 0);
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [6, 3], "from": "x.npy"}},
    "body": [{"op": "array.softmax", "out": ["y"], "in": ["x"]}, {"op": "array.logsumexp", "out": ["l"], "in": ["x"]}],
    "outputs": {"y": "y.npy", "l": "l.npy"}})");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1]
x = np.load(d + '/../x.npy').astype(np.float64)
with np.errstate(all='ignore'):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    y = e / e.sum(axis=-1, keepdims=True)
    shift = np.where(np.isfinite(m), m, 0)
    l = np.log(np.exp(x - shift).sum(axis=-1)) + shift[..., 0]
assert np.allclose(np.load(d + '/y.npy'), y, rtol=1e-6, atol=1e-7, equal_nan=True), (np.load(d + '/y.npy'), y)
assert np.allclose(np.load(d + '/l.npy'), l, rtol=1e-6, atol=1e-7, equal_nan=True), (np.load(d + '/l.npy'), l)
print('numpy agrees')
)");
  std::string command = python + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  if (pipe) pclose(pipe);
  EXPECT_NE(out.find("numpy agrees"), std::string::npos) << out;
}

// Found by review: a one-value-per-entry result read by a later segment (PoCL miscompiled the one-trip
// loops over it), and a scalar written by an element-wise operation of a one-entry kernel (it had no place).
TEST(Batched, OneValuePerEntryAndScalarsAreRight) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 257], "from": {"random": {"seed": 1, "low": -3, "high": 3}}}},
    "body": [{"op": "array.logsumexp", "out": ["t1"], "in": ["x"]},
             {"op": "array.add", "out": ["t3"], "in": ["t1", "t1"]},
             {"op": "array.softmax", "out": ["t4"], "in": ["x"]}],
    "outputs": {"t1": "t1.npy", "t3": "t3.npy", "t4": "t4.npy"}})");
  ASSERT_EQ(plan_of(program).groups.size(), 1u);
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-5, "logsumexp read by a later segment");

  Program scalars = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [100], "from": {"random": {"seed": 1, "low": -3, "high": 3}}},
    "a": {"kind": "scalar", "dtype": "f32", "value": 1.5}, "b": {"kind": "scalar", "dtype": "f32", "value": 2}},
    "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]},
             {"op": "array.softmax", "out": ["y"], "in": ["x"]},
             {"op": "array.mul", "out": ["d"], "in": ["c", 2]}],
    "outputs": {"y": "y.npy", "d": "d.npy"}})");
  ExecutionPlan plan = plan_of(scalars);
  EXPECT_NE(notes(plan).find("a scalar, which the work-groups of a batched kernel cannot share"), std::string::npos)
      << notes(plan);
  expect_same(test::run_on_device(scalars), test::run_reference(scalars), 1e-5, "scalars around a batched kernel");

  // A row read through its entry and then updated element by element stays within the work-group's entry.
  Program in_place = load_text(dir, R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [9, 40], "from": {"random": {"seed": 2, "low": -3, "high": 3}}}},
    "body": [{"op": "array.softmax", "out": ["y"], "in": ["x"]},
             {"op": "array.mul", "out": ["x"], "in": ["x", 2]},
             {"op": "array.logsumexp", "out": ["l"], "in": ["x"]}],
    "outputs": {"y": "y.npy", "l": "l.npy", "x": "x.npy"}})");
  plan = plan_of(in_place);
  EXPECT_EQ(plan.groups.size(), 1u) << notes(plan);
  expect_same(test::run_on_device(in_place), test::run_reference(in_place), 1e-5, "row updated in place");
}

// An entry a block-level operation writes and reads back, larger than the device's local memory, stays
// in global memory (here getrf's factor in a team, which no later operation reads): the plan asks for
// no more local memory than the device has (PoCL stopped on an assertion when it did), and the pivots
// and info are the reference's.
TEST(Batched, EntriesLargerThanLocalMemoryStayInGlobalMemory) {
  test::TempDir dir;
  test::LinalgTuning scope("loop_order=0,lu_blocked_order=0");  // the team, whatever the device's table says
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [1, 520, 520], "from": {"random": {"seed": 3, "low": -1, "high": 1}}}},
    "body": [{"op": "linalg.getrf", "out": ["LU", "ipiv", "info"], "in": ["A"]}],
    "outputs": {"ipiv": "ipiv.npy", "info": "info.npy"}})");
  const DeviceInfo described = read_device_description(test::source_root() / "devices" / "pocl-cpu.json");
  const ExecutionPlan plan = lower(program, described, PlanOptions{});
  ASSERT_EQ(plan.groups.size(), 1u);
  const FusedGroup& g = plan.groups[0];
  EXPECT_LE(g.local_bytes, described.local_memory);
  EXPECT_EQ(g.local_values.count("LU"), 0u);
  ASSERT_EQ(g.stored_why.count("LU"), 1u);
  EXPECT_EQ(g.stored_why.at("LU"), "an entry too large for local memory, kept in global memory");
  expect_same(test::run_on_device(program), test::run_reference(program), 0, "getrf of 520 x 520 in a team");
}

// Teams whose work-items each walk rows of their own (fugue_plan.walks_rows), on devices with banks, lay a
// held matrix out a row and one spare element apart (FusedGroup::padded_rows), so that the walks reach
// different banks: every access through the entry (copies in and out, the block-level body, fused
// element-wise operations before and after it) must agree on that layout. PoCL takes the GPUs' layout with
// blocked_items=0 and entries side by side; the results are the reference's, the layout shows in the plan
// and in explain, and teams that walk columns (geqrf's) or blocks (gemm's) keep their matrices packed.
TEST(Batched, PaddedRowsKeepEveryResult) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  test::LinalgTuning rows("loop_order=0");  // a row (potrf, getrf), a block (gemm) or a column (geqrf) per work-item, as on GPUs
  struct Case {
    const char* op;
    const char* outs;
    const char* ins;  // S: A * 2, computed in the kernel; A: read from global memory (staged)
    const char* attrs;
    const char* dtype;
    int64_t n;
    bool padded;
  };
  for (const Case& c : {Case{"linalg.potrf", R"(["L", "info"])", R"(["S"])", "{}", "f64", 16, true},
                        Case{"linalg.potrf", R"(["L", "info"])", R"(["A"])", "{}", "f32", 16, true},
                        Case{"linalg.getrf", R"(["L", "ipiv", "info"])", R"(["S"])", "{}", "f32", 12, true},
                        Case{"linalg.getrf", R"(["L", "ipiv", "info"])", R"(["A"])", "{}", "c64", 10, true},
                        // Upper factors (columns of U = L^H), gemm's blocks and geqrf's columns: packed.
                        Case{"linalg.potrf", R"(["L", "info"])", R"(["S"])", R"({"lower": false})", "f64", 16, false},
                        Case{"linalg.gemm", R"(["L"])", R"(["S", "A"])", "{}", "c64", 16, false},
                        Case{"linalg.geqrf", R"(["L", "tau"])", R"(["S"])", "{}", "f64", 16, false}}) {
    const std::string in = std::string(c.ins).find("\"S\"") != std::string::npos ? "S" : "A";
    const std::string what = std::string(c.op) + " " + c.attrs + " " + c.dtype + " n=" + std::to_string(c.n) + " on " + in + " (seed " +
                             std::to_string(seed) + ")";
    const std::string from = std::string(c.op) == "linalg.potrf" ? R"({"spd": {"seed": )" + std::to_string(seed) + R"(, "cond": 100}})"
                                                                 : R"({"random": {"seed": )" + std::to_string(seed) + "}}";
    // An element-wise producer and consumer join the operation's kernel, reading and writing the padded
    // entries at their elements.
    Program program = load_text(dir, R"({"fugue": 1, "symbols": {
      "A": {"kind": "array", "dtype": ")" + std::string(c.dtype) + R"(", "shape": )" + test::shape_text(37, c.n, c.n) +
                                         R"(, "from": )" + from + R"(},
      "two": {"kind": "scalar", "dtype": ")" + c.dtype + R"(", "value": 2}},
      "body": [)" + std::string(in == "S" ? R"({"op": "array.mul", "out": ["S"], "in": ["A", "two"]},)" : "") + R"(
               {"op": ")" + c.op + R"(", "out": )" + c.outs + R"(, "in": )" + c.ins + R"(, "attrs": )" + c.attrs + R"(},
               {"op": "array.sub", "out": ["Y"], "in": ["L", ")" + in + R"("]}],
      "outputs": {"Y": "Y.npy", "L": "L.npy"}})");
    ASSERT_EQ(setenv("FUGUE_TUNING", "blocked_items=0,block_team_items=64", 1), 0);
    const ExecutionPlan plan = plan_of(program);
    ASSERT_EQ(plan.groups.size(), 1u) << notes(plan) << what;
    const FusedGroup& g = plan.groups[0];
    EXPECT_TRUE(g.teams) << what;
    EXPECT_GE(plan.kernels[0].launch.entries_per_group, 2) << what;
    const bool shown = explain_plan(program, plan, test::test_device().info).find("its rows of " + std::to_string(c.n) + " one element apart") != std::string::npos;
    EXPECT_EQ(shown, c.padded) << what;
    if (!c.padded) {
      EXPECT_TRUE(g.padded_rows.empty()) << "a team that does not walk rows keeps its matrices packed, " << what;
      ASSERT_EQ(unsetenv("FUGUE_TUNING"), 0);
      continue;
    }
    for (const std::string& s : {in, std::string("L")}) {
      ASSERT_EQ(g.padded_rows.count(s), 1u) << s << ", " << what;
      EXPECT_EQ(g.padded_rows.at(s), c.n) << s << ", " << what;
    }
    if (in == "A") {
      EXPECT_EQ(g.staged.count("A"), 1u) << "copied in padded, " << what;
    }
    // The generated source walks the padded layout.
    EXPECT_NE(plan.kernels[0].source.find(") / " + std::to_string(c.n) + "]"), std::string::npos) << what;
    const auto padded = test::run_on_device(program);
    ASSERT_EQ(unsetenv("FUGUE_TUNING"), 0);
    EXPECT_TRUE(plan_of(program).groups[0].padded_rows.empty()) << "a CPU's entries stay packed, " << what;
    const double tolerance = std::string(c.dtype) == "f64" ? 1e-9 : 1e-3;
    expect_same(padded, test::run_reference(program), tolerance, "padded rows vs reference, " + what);
  }
}
