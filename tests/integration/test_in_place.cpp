// In-place (INOUT) operands: updated where they are stored, on the device and in the reference;
// fused like any element-wise access; refused with the place when a program misuses them.
#include <gtest/gtest.h>

#include <random>

#include "errors.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

std::string load_error(const json& doc) {
  try {
    parse_program(doc, "in_place.json", test::plugins_with_test_ops());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

// h[index[i]] += values[i], three times in a loop, against NumPy's np.add.at semantics written out
// here: repeated indices all count, out-of-range ones are skipped.
TEST(InPlace, ScatterAddAccumulatesRepeatedIndicesInALoop) {
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int bins = 13, n = 4000;
  json index = json::array(), values = json::array();
  std::vector<int> idx(n);
  std::vector<double> val(n);
  for (int i = 0; i < n; ++i) {
    idx[i] = static_cast<int>(rng() % (bins + 4)) - 2;  // a few outside [0, bins)
    val[i] = static_cast<double>(rng() % 1000) / 64.0;  // exact in f32, so sums are exact too
    index.push_back(idx[i]);
    values.push_back(val[i]);
  }
  json doc = {{"fugue", 1},
              {"symbols",
               {{"h", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {bins}}, {"from", {{"fill", 0.5}}}}},
                {"index", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {n}}, {"value", index}}},
                {"values", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {n}}, {"value", values}}},
                {"counts", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {bins}}, {"from", {{"zeros", json::object()}}}}}}},
              {"body",
               {{{"for", "r"}, {"count", 3},
                 {"body",
                  {{{"op", "array.scatter_add"}, {"out", {"h"}}, {"in", {"h", "index", "values"}}},
                   {{"op", "array.scatter_add"}, {"out", {"counts"}}, {"in", {"counts", "index", 1}}}}}}}},
              {"outputs", {{"h", "h.npy"}, {"counts", "counts.npy"}}}};
  std::vector<double> h(bins, 0.5);
  std::vector<int> counts(bins, 0);
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int i = 0; i < n; ++i)
      if (idx[i] >= 0 && idx[i] < bins) {
        h[idx[i]] += val[i];
        counts[idx[i]] += 1;
      }
  Program program = parse_program(doc, "scatter.json", test::bundled_plugins());
  for (const auto& result : {test::run_on_device(program), test::run_reference(program)}) {
    for (int b = 0; b < bins; ++b) {
      EXPECT_DOUBLE_EQ(result.at("h").get(b), h[b]) << "bin " << b;
      EXPECT_EQ(result.at("counts").get(b), counts[b]) << "bin " << b;
    }
  }
}

// acc += x in place, fed by a producer and followed by a second update: one kernel, the right sums,
// and the reference agrees.
TEST(InPlace, ElementLevelInPlaceOperandFusesWithItsNeighbours) {
  auto doc = json::parse(R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"random": {"seed": 3}}},
    "acc": {"kind": "array", "dtype": "f32", "shape": [1000], "from": {"fill": 1}}},
    "body": [{"op": "array.mul", "out": ["t"], "in": ["x", 2]},
             {"op": "test.accumulate", "out": ["acc"], "in": ["acc", "t"]},
             {"op": "test.accumulate", "out": ["acc"], "in": ["acc", "x"]}],
    "outputs": {"acc": "acc.npy"}})");
  Program program = parse_program(doc, "accumulate.json", test::plugins_with_test_ops());
  int64_t launches = 0;
  auto device = test::run_on_device(program, std::nullopt, PlanOptions{}, &launches);
  auto reference = test::run_reference(program);
  EXPECT_EQ(launches, 1);
  EXPECT_EQ(test::compare_arrays(device.at("acc"), reference.at("acc"), 1e-6), "");
  // Unfused, the same bits.
  Program plain = parse_program(doc, "accumulate.json", test::plugins_with_test_ops());
  auto unfused = test::run_on_device(plain, std::nullopt, PlanOptions{false, false});
  EXPECT_EQ(test::compare_arrays(unfused.at("acc"), device.at("acc"), 0), "");
}

TEST(InPlace, ProgramsThatMisuseAnInPlaceOperandAreRefusedWithThePlace) {
  auto with_body = [](const json& body) {
    return json{{"fugue", 1},
                {"symbols",
                 {{"h", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {4}}, {"from", {{"zeros", json::object()}}}}},
                  {"g", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {4}}, {"from", {{"zeros", json::object()}}}}},
                  {"i", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {4}}, {"from", {{"arange", json::object()}}}}},
                  {"v5", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {5}}, {"from", {{"zeros", json::object()}}}}},
                  {"n", {{"kind", "const"}, {"value", 2}}}}},
                {"body", body}};
  };
  // Different symbols in `out` and `in`.
  std::string e = load_error(with_body({{{"op", "array.scatter_add"}, {"out", {"g"}}, {"in", {"h", "i", 1}}}}));
  EXPECT_CONTAINS(e, "in_place.json:/body/0/out/0");
  EXPECT_CONTAINS(e, "operand 'h' of array.scatter_add is updated in place: name the same symbol here and at /body/0/in/0");
  // A const cannot be updated.
  e = load_error(with_body({{{"op", "array.scatter_add"}, {"out", {"n"}}, {"in", {"n", "i", 1}}}}));
  EXPECT_CONTAINS(e, "/body/0/in/0");
  EXPECT_CONTAINS(e, "operand 'h' of array.scatter_add: expected array, found const 'n'");
  // Read through another operand while it changes.
  e = load_error(with_body({{{"op", "test.accumulate"}, {"out", {"h"}}, {"in", {"h", "h"}}}}));
  EXPECT_CONTAINS(e, "/body/0/out/0");
  EXPECT_CONTAINS(e, "while operand 'x' reads 'h' too");
  // Updated before anything wrote it.
  e = load_error(with_body({{{"op", "test.accumulate"}, {"out", {"fresh"}}, {"in", {"fresh", "h"}}}}));
  EXPECT_CONTAINS(e, "/body/0/in/0");
  // values of another shape than index.
  e = load_error(with_body({{{"op", "array.scatter_add"}, {"out", {"h"}}, {"in", {"h", "i", "v5"}}}}));
  EXPECT_CONTAINS(e, "/body/0");
  EXPECT_CONTAINS(e, "values: expected an array of index's shape [4] or one value, found f32 array [5]");
}
