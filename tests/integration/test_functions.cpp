// User functions as operands: array.reduce with a program's function, in each of its plans (the whole
// of a vector, long rows a work-group each, any other axis a work-item per result), checked against its
// reference and NumPy; producers fusing into it; one function typed for several dtypes; and the errors a
// function's body can hold, each named with its place.
#include <gtest/gtest.h>

#include <cstdio>

#include "load/program_loader.h"
#include "passes/lower.h"
#include "test_support.h"

using namespace fugue;

namespace {

using test::load_text;

std::string notes(const ExecutionPlan& plan) { return test::notes_text(plan.not_fused); }

using test::expect_same;

// max(|a|, |b|) in three operations, and a + b in one.
const char* kFunctions = R"(
    "maxabs": {"kind": "function", "params": ["a", "b"], "body": [
      {"op": "array.abs", "out": ["p"], "in": ["a"]},
      {"op": "array.abs", "out": ["q"], "in": ["b"]},
      {"op": "array.maximum", "out": ["m"], "in": ["p", "q"]}], "result": "m"},
    "plus": {"kind": "function", "params": ["a", "b"], "body": [
      {"op": "array.add", "out": ["s"], "in": ["a", "b"]}], "result": "s"})";

std::string array(const std::string& name, const std::string& dtype, const std::string& shape, uint64_t seed) {
  return "\"" + name + "\": {\"kind\": \"array\", \"dtype\": \"" + dtype + "\", \"shape\": " + shape +
         ", \"from\": {\"random\": {\"seed\": " + std::to_string(seed) + ", \"low\": -4, \"high\": 4}}}";
}


}  // namespace

// Every plan of array.reduce gives its reference's result, fused or not, for reals, integers and
// complex numbers: a 1-D x (ITEM level), long rows (BLOCK), short rows and other axes (ELEMENT).
TEST(Functions, ReduceMatchesItsReferenceInEveryPlan) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  struct Case {
    const char* dtype;
    const char* shape;
    int axis;
    const char* function;
    fugue_level level;
  };
  const Case cases[] = {
      {"f32", "[100003]", 0, "plus", FUGUE_LEVEL_ITEM},    {"f64", "[4099]", -1, "maxabs", FUGUE_LEVEL_ITEM},
      {"i32", "[777]", 0, "plus", FUGUE_LEVEL_ITEM},       {"f32", "[37, 300]", -1, "plus", FUGUE_LEVEL_BLOCK},
      {"i64", "[5, 1000]", 1, "maxabs", FUGUE_LEVEL_BLOCK}, {"c64", "[9, 70]", -1, "plus", FUGUE_LEVEL_BLOCK},
      {"f32", "[300, 7]", -1, "maxabs", FUGUE_LEVEL_ELEMENT}, {"f64", "[66, 5]", 0, "plus", FUGUE_LEVEL_ELEMENT},
      {"i32", "[3, 17, 4]", 1, "maxabs", FUGUE_LEVEL_ELEMENT}, {"c128", "[2, 3, 4, 5]", -3, "plus", FUGUE_LEVEL_ELEMENT},
  };
  for (const Case& c : cases) {
    const std::string what = std::string(c.dtype) + " " + c.shape + " axis " + std::to_string(c.axis) + " " + c.function +
                             " (seed " + std::to_string(seed) + ")";
    Program program = load_text(dir, R"({"fugue": 1, "symbols": {)" + array("x", c.dtype, c.shape, seed) + "," + kFunctions +
                                         R"(}, "body": [{"op": "array.reduce", "out": ["r"], "in": [")" + c.function +
                                         R"(", "x"], "attrs": {"axis": )" + std::to_string(c.axis) +
                                         R"(}}], "outputs": {"r": "r.npy"}})");
    ExecutionPlan plan = lower(program, test::test_device().info, {});
    ASSERT_EQ(plan.groups.size(), 1u) << what;
    EXPECT_EQ(plan.groups[0].plan.level, c.level) << what;
    EXPECT_NE(plan.kernels[0].source.find("fugue_fn_" + std::string(c.function) + "_" + c.dtype + "_" + c.dtype + "("),
              std::string::npos)
        << what << ": the function's code is written once, before the kernel";
    const double tolerance = std::string(c.dtype)[0] == 'i' ? 0 : 1e-4;
    expect_same(test::run_on_device(program), test::run_reference(program), tolerance, what);
  }
}

// Element-wise producers fuse into the reduction: into the loop of a 1-D reduction (ITEM) and into
// the rows of a batched one (BLOCK), their values never reaching global memory; consumers of a
// per-element (ELEMENT) reduction's result join it.
TEST(Functions, ProducersAndConsumersFuse) {
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {)" + array("v", "f32", "[50000]", seed) + "," +
                                       array("x", "f32", "[40, 256]", seed + 1) + "," + array("y", "f32", "[40, 3]", seed + 2) +
                                       "," + kFunctions + R"(},
    "body": [{"op": "array.mul", "out": ["v2"], "in": ["v", "v"]},
             {"op": "array.reduce", "out": ["total"], "in": ["plus", "v2"]},
             {"op": "array.sub", "out": ["d"], "in": ["x", 0.5]},
             {"op": "array.reduce", "out": ["peak"], "in": ["maxabs", "d"]},
             {"op": "array.reduce", "out": ["c"], "in": ["plus", "y"], "attrs": {"axis": 0}},
             {"op": "array.mul", "out": ["c2"], "in": ["c", 3]}],
    "outputs": {"total": "total.npy", "peak": "peak.npy", "c2": "c2.npy"}})");
  ExecutionPlan plan = lower(program, test::test_device().info, {});
  ASSERT_EQ(plan.groups.size(), 3u) << notes(plan);
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"v2"}));
  EXPECT_EQ(plan.groups[1].promoted, (SymbolSet{"d"}));
  EXPECT_EQ(plan.groups[2].promoted, (SymbolSet{"c"}));
  int64_t launches = 0, unfused_launches = 0;
  auto fused = test::run_on_device(program, std::nullopt, {}, &launches);
  PlanOptions off;
  off.fuse = false;
  auto unfused = test::run_on_device(program, std::nullopt, off, &unfused_launches);
  EXPECT_EQ(launches, 4);  // the 1-D reduction's finalize kernel besides the three
  EXPECT_EQ(unfused_launches, 7);
  expect_same(fused, test::run_reference(program), 1e-4, "fused vs reference (seed " + std::to_string(seed) + ")");
  expect_same(fused, unfused, 1e-4, "fused vs unfused (seed " + std::to_string(seed) + ")");
}

// One function, typed at each call by its arguments: f32, i64 and c64 calls each get their own code.
TEST(Functions, OneFunctionServesEveryDtype) {
  test::TempDir dir;
  Program program = load_text(dir, R"({"fugue": 1, "symbols": {)" + array("a", "f32", "[10, 100]", 1) + "," +
                                       array("b", "i64", "[10, 100]", 2) + "," + array("z", "c64", "[100]", 3) + "," +
                                       kFunctions + R"(},
    "body": [{"op": "array.reduce", "out": ["ra"], "in": ["plus", "a"]},
             {"op": "array.reduce", "out": ["rb"], "in": ["plus", "b"]},
             {"op": "array.reduce", "out": ["rz"], "in": ["plus", "z"]}],
    "outputs": {"ra": "ra.npy", "rb": "rb.npy", "rz": "rz.npy"}})");
  expect_same(test::run_on_device(program), test::run_reference(program), 1e-4, "three dtypes");
  EXPECT_EQ(program.symbol("rb").dtype, DType::I64);
  EXPECT_EQ(program.symbol("rz").dtype, DType::C64);
  EXPECT_EQ(program.symbol("rz").kind, SymbolKind::Scalar);
}

// NumPy as the oracle: the largest magnitude along each axis, and sums of integers (exact).
TEST(Functions, ReduceAgreesWithNumPy) {
  const std::string python = test::numpy_python();
  if (python.empty()) GTEST_SKIP() << "no python3 with NumPy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + array("x", "f64", "[6, 70, 5]", seed) + "," +
                                       array("k", "i32", "[3000]", seed + 1) + "," + kFunctions + R"(},
    "body": [{"op": "array.reduce", "out": ["m0"], "in": ["maxabs", "x"], "attrs": {"axis": 0}},
             {"op": "array.reduce", "out": ["m1"], "in": ["maxabs", "x"], "attrs": {"axis": 1}},
             {"op": "array.reduce", "out": ["m2"], "in": ["maxabs", "x"], "attrs": {"axis": 2}},
             {"op": "array.reduce", "out": ["s"], "in": ["plus", "k"]}],
    "outputs": {"x": "x.npy", "k": "k.npy", "m0": "m0.npy", "m1": "m1.npy", "m2": "m2.npy", "s": "s.npy"}})");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np
d = sys.argv[1]
x, k = np.load(d + '/x.npy'), np.load(d + '/k.npy')
for axis in range(3):
    got = np.load(d + '/m%d.npy' % axis)
    assert np.array_equal(got, np.abs(x).max(axis=axis)), ('axis', axis)
assert int(np.load(d + '/s.npy')) == int(k.astype(np.int64).sum()), (np.load(d + '/s.npy'), k.sum())
print('numpy agrees')
)");
  const std::string out = test::run_command(python + " " + (dir / "check.py").string() + " " + (dir / "out").string()).out;
  EXPECT_NE(out.find("numpy agrees"), std::string::npos) << "seed " << seed << ": " << out;
}

// What a function's body may not hold, and calls that do not fit the function: exit 2 and the place.
TEST(Functions, ErrorsNameThePlace) {
  test::TempDir dir;
  struct Case {
    const char* function;  // the declaration of f
    const char* call;      // the body's statement
    const char* expect;
  };
  const std::string reduce = R"({"op": "array.reduce", "out": ["r"], "in": ["f", "x"]})";
  const Case cases[] = {
      {R"({"kind": "function", "params": ["a"], "body": [], "result": "a"})", reduce.c_str(),
       "/body/0/in/0: array.reduce: operand f: expected a function of two parameters (a, b), found one of 1"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.cast", "out": ["c"], "in": ["a"], "attrs": {"dtype": "f64"}}], "result": "c"})",
       reduce.c_str(), "returning f64 for two f32 values (cast inside it)"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.sum", "out": ["c"], "in": ["a"]}], "result": "c"})",
       reduce.c_str(), "/symbols/f/body/0/out/0: array.sum writes 'c' as a scalar"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "x"]}], "result": "c"})",
       reduce.c_str(), "/symbols/f/body/0/in/1: 'x' is an array of the program"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"for": "i", "count": 2, "body": []}], "result": "a"})",
       reduce.c_str(), "/symbols/f/body/0: a function's body holds operation calls only"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [], "result": "z"})", reduce.c_str(),
       "/symbols/f/result: 'z' is neither a parameter of 'f' nor a value its body writes"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["a"], "in": ["a", "b"]}], "result": "a"})",
       reduce.c_str(), "/symbols/f/body/0/out/0: 'a' is written once in a function: it is a parameter"},
      {R"({"kind": "function", "params": ["a", "a"], "body": [], "result": "a"})", reduce.c_str(),
       "/symbols/f/params/1: parameter 'a' is named twice"},
      {R"({"kind": "function", "params": [], "body": [], "result": "a"})", reduce.c_str(), "/symbols/f/params: expected a list of 1 to 16"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}], "result": "c", "code": "x"})",
       reduce.c_str(), "/symbols/f/code: unknown key"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}], "result": "c"})",
       R"({"op": "array.add", "out": ["r"], "in": ["f", "x"]})", "/body/0/in/0: operand 'a' of array.add: expected array or scalar or const, found function 'f'"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}], "result": "c"})",
       R"({"op": "array.add", "out": ["f"], "in": ["x", "x"]})", "/body/0/out/0: 'f' is a function and cannot be written"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}], "result": "c"})",
       R"({"op": "array.reduce", "out": ["r"], "in": ["f", "x"], "attrs": {"axis": 2}})", "/body/0/attrs/axis: array.reduce: attribute axis: expected an axis of x, from -2 to 1, found 2"},
      {R"({"kind": "function", "params": ["a", "b"], "body": [{"op": "array.atan2", "out": ["c"], "in": ["a", "b"]}], "result": "c"})",
       R"({"op": "array.reduce", "out": ["r"], "in": ["f", "k"]})", "/symbols/f/body/0: operand 'y' of array.atan2: expected dtype f32, f64, found i32 'a'"},
  };
  for (const Case& c : cases) {
    test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {
      "x": {"kind": "array", "dtype": "f32", "shape": [4, 5], "from": {"zeros": {}}},
      "k": {"kind": "array", "dtype": "i32", "shape": [4, 5], "from": {"zeros": {}}},
      "f": )") + c.function + R"(}, "body": [)" + c.call + R"(], "outputs": {"r": "r.npy"}})");
    auto r = test::run_fugue("validate " + (dir / "p.json").string());
    EXPECT_EQ(r.code, 2) << c.expect << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << "expected: " << c.expect << "\nfound: " << r.out;
  }
}

// A body whose operation is not element-wise, though it types like one (softmax of one element is one
// element), is refused when the function is typed (so that a reference never runs it over many calls
// at once), naming the statement.
TEST(Functions, ABodyThatIsNotElementWiseIsRefused) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [4, 5], "from": {"zeros": {}}},
    "f": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.softmax", "out": ["c"], "in": ["a"]}], "result": "c"}},
    "body": [{"op": "array.reduce", "out": ["r"], "in": ["f", "x"]}], "outputs": {"r": "r.npy"}})");
  for (const char* command : {"validate ", "run --reference --out /dev/null "}) {
    auto r = test::run_fugue(command + (dir / "p.json").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("/symbols/f/body/0: array.softmax cannot be part of a function (it plans at BLOCK level)"),
              std::string::npos)
        << r.out;
  }
}
