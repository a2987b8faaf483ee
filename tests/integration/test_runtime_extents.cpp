// Run-time lengths: an array whose first axis is known only at run time (array.compact's result, or
// an input declared with a capacity) flows through fused element-wise kernels and reductions, which
// walk only the elements present; outputs hold only those; bad lengths are refused with the place.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "errors.h"
#include "io/npy_io.h"
#include "load/program_loader.h"
#include "runtime/executor.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

std::string load_error(const json& doc, const std::filesystem::path& file = "extents.json") {
  try {
    parse_program(doc, file, test::bundled_plugins());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

// sel = x[m != 0]; y = 2 sel + 1 and s = sum(y), fused, over the selected elements only.
TEST(RuntimeExtents, CompactFeedsAFusedChainAndAReduction) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  json doc = {{"fugue", 1},
              {"symbols",
               {{"x", {{"kind", "array"}, {"dtype", "f64"}, {"shape", {50, 41}},
                       {"from", {{"random", {{"seed", seed}, {"low", -1}, {"high", 1}}}}}}},
                {"m", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {50, 41}},
                       {"from", {{"random", {{"seed", seed + 1}, {"low", -2}, {"high", 1}}}}}}}}},
              {"body",
               {{{"op", "array.compact"}, {"out", {"sel"}}, {"in", {"x", "m"}}},
                {{"op", "array.mul"}, {"out", {"t"}}, {"in", {"sel", 2}}},
                {{"op", "array.add"}, {"out", {"y"}}, {"in", {"t", 1}}},
                {{"op", "array.sum"}, {"out", {"s"}}, {"in", {"y"}}}}},
              {"outputs", {{"sel", "sel.npy"}, {"y", "y.npy"}, {"s", "s.npy"}, {"x", "x.npy"}, {"m", "m.npy"}}}};
  Program program = parse_program(doc, "extents.json", test::bundled_plugins());
  EXPECT_EQ(program.symbol("y").shape_text(), "[<=2050]");
  auto reference = test::run_reference(program);
  const HostArray &x = reference.at("x"), &m = reference.at("m");
  std::vector<double> kept;
  for (int64_t i = 0; i < x.elements(); ++i)
    if (m.get(i) != 0) kept.push_back(x.get(i));
  ASSERT_GT(kept.size(), 100u);
  ASSERT_LT(kept.size(), 2050u);
  double sum = 0;
  for (double v : kept) sum += 2 * v + 1;
  int64_t launches = 0;
  auto device = test::run_on_device(program, std::nullopt, PlanOptions{}, &launches);
  for (const auto* result : {&device, &reference}) {
    ASSERT_EQ(result->at("sel").shape, (Shape{static_cast<int64_t>(kept.size())}));
    ASSERT_EQ(result->at("y").shape, (Shape{static_cast<int64_t>(kept.size())}));
    for (size_t i = 0; i < kept.size(); ++i) {
      ASSERT_EQ(result->at("sel").get(static_cast<int64_t>(i)), kept[i]) << i;
      ASSERT_EQ(result->at("y").get(static_cast<int64_t>(i)), 2 * kept[i] + 1) << i;
    }
    EXPECT_NEAR(result->at("s").get(0), sum, 1e-9 * std::max(1.0, std::fabs(sum)));
  }
}

// An input declared with a capacity takes a file of any length up to it; the same program runs on
// files of different lengths, and the outputs have the file's length.
TEST(RuntimeExtents, InputWithACapacityTakesFilesOfAnyLengthUpToIt) {
  test::TempDir dir;
  auto program_text = [&](const std::string& file) {
    return json{{"fugue", 1},
                {"symbols", {{"v", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {{{"capacity", 100}}, 3}},
                                    {"from", file}}}}},
                {"body", {{{"op", "array.mul"}, {"out", {"w"}}, {"in", {"v", 3}}}}},
                {"outputs", {{"w", "w.npy"}}}};
  };
  for (int64_t rows : {0, 37, 100}) {
    HostArray v(DType::F32, {rows, 3});
    for (int64_t i = 0; i < v.elements(); ++i) v.set(i, static_cast<double>(i) - 50);
    save_npy(dir / "v.npy", v);
    Program program = parse_program(program_text("v.npy"), dir / "p.json", test::bundled_plugins());
    for (const auto& result : {test::run_on_device(program), test::run_reference(program)}) {
      ASSERT_EQ(result.at("w").shape, (Shape{rows, 3})) << rows;
      for (int64_t i = 0; i < v.elements(); ++i) ASSERT_EQ(result.at("w").get(i), 3 * v.get(i)) << i;
    }
  }
  // Above the capacity, or another row shape: exit 2 with the place.
  save_npy(dir / "big.npy", HostArray(DType::F32, {101, 3}));
  std::string e = load_error(program_text("big.npy"), dir / "p.json");
  EXPECT_CONTAINS(e, "p.json:/symbols/v/from: expected a file of shape [<=100, 3] (the declared shape)");
  EXPECT_CONTAINS(e, "of shape [101, 3], above the capacity");
  save_npy(dir / "wide.npy", HostArray(DType::F32, {10, 4}));
  EXPECT_CONTAINS(load_error(program_text("wide.npy"), dir / "p.json"), "of shape [10, 4]");
  auto r = test::run_fugue("validate " + (dir / "p.json").string());  // no such file: the CLI's own check
  EXPECT_NE(r.code, 0);
}

TEST(RuntimeExtents, MisusesAreRefusedWithThePlace) {
  const json x = {{"kind", "array"}, {"dtype", "f32"}, {"shape", {8}}, {"from", {{"random", {{"seed", 1}}}}}};
  const json m = {{"kind", "array"}, {"dtype", "u8"}, {"shape", {8}}, {"from", {{"random", {{"seed", 2}, {"low", 0}, {"high", 1}}}}}};
  // An operation that does not take run-time lengths.
  const json k = {{"kind", "array"}, {"dtype", "i32"}, {"shape", {8}}, {"from", {{"arange", json::object()}}}};
  std::string e = load_error({{"fugue", 1}, {"symbols", {{"x", x}, {"m", m}, {"k", k}}},
                              {"body", {{{"op", "array.compact"}, {"out", {"s"}}, {"in", {"k", "m"}}},
                                        {{"op", "array.scatter_add"}, {"out", {"x"}}, {"in", {"x", "s", 1}}}}}});
  EXPECT_CONTAINS(e, "extents.json:/body/1/in/1: operand 'index' of array.scatter_add");
  EXPECT_CONTAINS(e, "has a run-time length ([<=8])");
  // A run-time length beside a static one of the capacity's shape.
  e = load_error({{"fugue", 1}, {"symbols", {{"x", x}, {"m", m}}},
                  {"body", {{{"op", "array.compact"}, {"out", {"s"}}, {"in", {"x", "m"}}},
                            {{"op", "array.add"}, {"out", {"t"}}, {"in", {"s", "x"}}}}}});
  EXPECT_CONTAINS(e, "extents.json:/body/1/in/1: array.add: operand b: expected shape [<=8] like operand a");
  // Only the first axis, an object with the capacity alone.
  e = load_error({{"fugue", 1}, {"symbols", {{"v", {{"kind", "array"}, {"dtype", "f32"},
                                                   {"shape", {3, {{"capacity", 4}}}}, {"from", {{"zeros", json::object()}}}}}}},
                  {"body", json::array()}});
  EXPECT_CONTAINS(e, "extents.json:/symbols/v/shape/1: expected an extent (only the first axis");
  e = load_error({{"fugue", 1}, {"symbols", {{"v", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {{{"capacity", 4}}}},
                                                   {"value", {1, 2}}}}}},
                  {"body", json::array()}});
  EXPECT_CONTAINS(e, "extents.json:/symbols/v/value: an array of run-time length takes its values from a file");
  // Two lengths from different compactions cannot meet in one operation: refused when the program loads.
  json doc = {{"fugue", 1}, {"symbols", {{"x", x}, {"m", m}}},
              {"body", {{{"op", "array.compact"}, {"out", {"a"}}, {"in", {"x", "m"}}},
                        {{"op", "array.compact"}, {"out", {"b"}}, {"in", {"x", "m"}}},
                        {{"op", "array.mul"}, {"out", {"a2"}}, {"in", {"a", 2}}},
                        {{"op", "array.add"}, {"out", {"c"}}, {"in", {"a2", "b"}}}}},
              {"outputs", {{"c", "c.npy"}}}};
  e = load_error(doc);
  EXPECT_CONTAINS(e, "extents.json:/body/3: 'a2' and 'b' have run-time lengths from different places "
                     "(/body/0 and /body/1)");
}

// A compaction in a loop keeps its block counts in a workspace that outlives the call: one buffer for
// every iteration, and the results of each iteration are right.
TEST(RuntimeExtents, CompactionInALoopReusesItsWorkspace) {
  json doc = {{"fugue", 1},
              {"symbols",
               {{"x", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {5000}}, {"from", {{"arange", json::object()}}}}},
                {"m", {{"kind", "array"}, {"dtype", "u8"}, {"shape", {5000}},
                       {"from", {{"random", {{"seed", 9}, {"low", 0}, {"high", 1}}}}}}},
                {"total", {{"kind", "scalar"}, {"dtype", "i32"}, {"value", 0}}}}},
              {"body",
               {{{"for", "k"}, {"count", 5},
                 {"body", {{{"op", "array.compact"}, {"out", {"sel"}}, {"in", {"x", "m"}}},
                           {{"op", "array.sum"}, {"out", {"s"}}, {"in", {"sel"}}},
                           {{"op", "array.add"}, {"out", {"total"}}, {"in", {"total", "s"}}}}}}}},
              {"outputs", {{"total", "total.npy"}}}};
  Program program = parse_program(doc, "loop.json", test::bundled_plugins());
  Profiler profiler;
  ProgramCache cache(test::test_device(), std::nullopt, &profiler);
  Executor executor(program, test::test_device(), cache, profiler);
  executor.prepare();
  executor.initialize();
  executor.run();
  EXPECT_EQ(executor.persistent_workspaces(), 1u);
  const auto reference = test::run_reference(program);
  EXPECT_EQ(executor.read("total").get(0), reference.at("total").get(0));
  EXPECT_GT(reference.at("total").get(0), 0);
}

// Operations over fixed and run-time lengths of the same capacity, or over two run-time lengths, stay
// in separate kernels: each walks its own elements (found by review: a fused kernel once stopped every
// operation at the run-time length).
TEST(RuntimeExtents, KernelsNeverMixFixedAndRunTimeLengths) {
  auto doc = json::parse(R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"arange": {"start": 1, "step": 1}}},
    "m": {"kind": "array", "dtype": "i32", "shape": [8], "value": [1, 0, 0, 0, 0, 0, 0, 1]},
    "m2": {"kind": "array", "dtype": "i32", "shape": [8], "value": [1, 1, 1, 0, 0, 0, 0, 1]}},
    "body": [{"op": "array.compact", "out": ["a"], "in": ["x", "m"]},
             {"op": "array.compact", "out": ["b"], "in": ["x", "m2"]},
             {"op": "array.mul", "out": ["u"], "in": ["a", 2]},
             {"op": "array.mul", "out": ["t"], "in": ["x", 2]},
             {"op": "array.sum", "out": ["total"], "in": ["x"]},
             {"op": "array.mul", "out": ["d"], "in": ["b", 2]},
             {"op": "array.sum", "out": ["kept"], "in": ["a"]}],
    "outputs": {"u": "u.npy", "t": "t.npy", "total": "total.npy", "d": "d.npy", "kept": "kept.npy"}})");
  Program program = parse_program(doc, "mix.json", test::bundled_plugins());
  for (const auto& r : {test::run_on_device(program), test::run_reference(program)}) {
    ASSERT_EQ(r.at("u").shape, Shape{2});
    EXPECT_EQ(r.at("u").get(1), 16);
    ASSERT_EQ(r.at("t").shape, Shape{8});
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(r.at("t").get(i), 2 * (i + 1)) << i;
    EXPECT_EQ(r.at("total").get(0), 36);
    ASSERT_EQ(r.at("d").shape, Shape{4});
    EXPECT_EQ(r.at("d").get(3), 16);
    EXPECT_EQ(r.at("kept").get(0), 9);
  }
}

// A capacity of 0: nothing to walk, and every result empty (or the sum's 0).
TEST(RuntimeExtents, CapacityZero) {
  test::TempDir dir;
  save_npy(dir / "v.npy", HostArray(DType::F32, {0, 3}));
  json doc = {{"fugue", 1},
              {"symbols", {{"v", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {{{"capacity", 0}}, 3}}, {"from", "v.npy"}}}}},
              {"body", {{{"op", "array.mul"}, {"out", {"w"}}, {"in", {"v", 3}}}, {{"op", "array.sum"}, {"out", {"s"}}, {"in", {"w"}}}}},
              {"outputs", {{"w", "w.npy"}, {"s", "s.npy"}}}};
  Program program = parse_program(doc, dir / "p.json", test::bundled_plugins());
  for (const auto& r : {test::run_on_device(program), test::run_reference(program)}) {
    EXPECT_EQ(r.at("w").shape, (Shape{0, 3}));
    EXPECT_EQ(r.at("s").get(0), 0);
  }
}
