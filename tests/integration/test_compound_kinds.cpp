// Kinds with storage (compound kinds): a value is its parts, each an array with its own buffer. The
// test plugin's `pair` (testops_pair.cpp) is declared, made, read, updated in place, written to and read
// from its own file format; dataflow and liveness see the parts; bad declarations name their place.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "errors.h"
#include "io/file_format.h"
#include "load/program_loader.h"
#include "passes/dataflow.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

json program(const json& symbols, const json& body, const json& outputs) {
  return {{"fugue", 1}, {"symbols", symbols}, {"body", body}, {"outputs", outputs}};
}

std::string load_error(const json& doc, const std::filesystem::path& file = "pairs.json") {
  try {
    parse_program(doc, file, test::plugins_with_test_ops());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

json random_array(int64_t n, uint64_t seed) {
  return {{"kind", "array"}, {"dtype", "f64"}, {"shape", {n}}, {"from", {{"random", {{"seed", seed}, {"low", -3}, {"high", 3}}}}}};
}

}  // namespace

// make_pair -> pair_norm -> pair_swap -> a part read by an array op: the device equals the reference
// and the values computed here by hand; the pair is written whole and a part alone.
TEST(CompoundKinds, PairIsMadeReadSwappedAndWritten) {
  const int64_t n = 1000 + static_cast<int64_t>(test::fresh_seed() % 100);
  const uint64_t seed = test::fresh_seed();
  json doc = program({{"a", random_array(n, seed)},
                      {"b", random_array(n, seed + 1)},
                      {"P", {{"kind", "pair"}, {"dtype", "f64"}, {"shape", {n}}}}},
                     {{{"op", "test.make_pair"}, {"out", {"P"}}, {"in", {"a", "b"}}},
                      {{"op", "test.pair_norm"}, {"out", {"norm"}}, {"in", {"P"}}},
                      {{"op", "test.pair_swap"}, {"out", {"P"}}, {"in", {"P"}}},
                      {{"op", "array.mul"}, {"out", {"twice"}}, {"in", {"P.first", 2}}}},
                     {{"P", "p.pair"}, {"norm", "norm.npy"}, {"twice", "twice.npy"}, {"P.second", "second.npy"},
                      {"a", "a.npy"}, {"b", "b.npy"}});
  Program p = parse_program(doc, "pairs.json", test::plugins_with_test_ops());
  EXPECT_TRUE(p.symbol("P").compound());
  EXPECT_EQ(p.symbol("P.first").part_of, "P");
  auto device = test::run_on_device(p);
  auto reference = test::run_reference(p);
  const HostArray &a = reference.at("a"), &b = reference.at("b");
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(device.at("norm").get(i), std::hypot(a.get(i), b.get(i)), 1e-12) << i;
    ASSERT_EQ(device.at("twice").get(i), 2 * b.get(i)) << i;  // first is b after the swap
    ASSERT_EQ(device.at("P.second").get(i), a.get(i)) << i;
  }
  const HostArray& pair = device.at("P");
  ASSERT_TRUE(pair.compound());
  EXPECT_EQ(pair.kind_name, "pair");
  ASSERT_EQ(pair.parts.size(), 2u);
  for (const auto& [name, value] : reference)
    EXPECT_EQ(test::compare_arrays(device.at(name), value, 1e-12), "") << name;
}

// A pair written by `fugue run` to its format reads back in another program, whole ("from") or part by
// part ("parts" with files and generators), and the per-part sources give what they say.
TEST(CompoundKinds, PairFilesAndPerPartSourcesRoundTrip) {
  test::TempDir dir;
  const std::string plugin = "--plugin " + (test::test_plugin_folder() / "libfugue_testops.so").string();
  test::write_text(dir / "make.json", program({{"a", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {4}}, {"value", {3, 0, 1, 5}}}},
                                               {"b", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {4}}, {"value", {4, 1, 0, 12}}}},
                                               {"P", {{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}}}},
                                              {{{"op", "test.make_pair"}, {"out", {"P"}}, {"in", {"a", "b"}}}},
                                              {{"P", "p.pair"}, {"a", "a.npy"}})
                                          .dump());
  auto made = test::run_fugue(plugin + " run " + (dir / "make.json").string() + " --out " + (dir / "made").string());
  ASSERT_EQ(made.code, 0) << made.out;
  test::write_text(dir / "read.json",
                   program({{"P", {{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}, {"from", "made/p.pair"}}},
                            {"Q", {{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}},
                                   {"parts", {{"first", {{"from", "made/a.npy"}}}, {"second", {{"from", {{"fill", 2}}}}}}}}}},
                           {{{"op", "test.pair_norm"}, {"out", {"np"}}, {"in", {"P"}}},
                            {{"op", "test.pair_norm"}, {"out", {"nq"}}, {"in", {"Q"}}}},
                           {{"np", "np.npy"}, {"nq", "nq.npy"}, {"Q", "q.pair"}})
                       .dump());
  Program p = load_program(dir / "read.json", test::plugins_with_test_ops());
  auto device = test::run_on_device(p);
  const std::vector<double> np = {5, 1, 1, 13}, a = {3, 0, 1, 5};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(device.at("np").get(i), np[i], 1e-6);
    EXPECT_NEAR(device.at("nq").get(i), std::hypot(a[i], 2.0), 1e-6);
    EXPECT_EQ(device.at("Q").parts[1].get(i), 2.0);
  }
}

// Liveness sees the parts: a pair's parts die after its last reader, one part can outlive the other.
TEST(CompoundKinds, DataflowWorksPerPart) {
  json doc = program({{"a", random_array(8, 1)}, {"b", random_array(8, 2)},
                      {"P", {{"kind", "pair"}, {"dtype", "f64"}, {"shape", {8}}}}},
                     {{{"op", "test.make_pair"}, {"out", {"P"}}, {"in", {"a", "b"}}},
                      {{"op", "test.pair_norm"}, {"out", {"n"}}, {"in", {"P"}}},
                      {{"op", "array.neg"}, {"out", {"m"}}, {"in", {"P.second"}}}},
                     {{"n", "n.npy"}, {"m", "m.npy"}});
  Program p = parse_program(doc, "pairs.json", test::plugins_with_test_ops());
  Dataflow flow = analyze_dataflow(p);
  const OpLiveness& make = flow.at(&p.body[0]);
  const OpLiveness& norm = flow.at(&p.body[1]);
  EXPECT_EQ(set_string(make.live_out), "{P.first, P.second}");
  EXPECT_EQ(set_string(norm.live_out), "{n, P.second}");  // first is dead, second is still read
  EXPECT_EQ(set_string(op_sinks(p, p.body[0])), "{P.first, P.second}");
}

// Bad declarations and uses: exit-2 errors with the place.
TEST(CompoundKinds, BadDeclarationsAndUsesNameTheirPlace) {
  const json use = {{{"op", "test.pair_norm"}, {"out", {"n"}}, {"in", {"P"}}}};
  const json out = {{"n", "n.npy"}};
  auto with = [&](const json& declaration, const json& body, const json& outputs) {
    return load_error(program({{"a", random_array(4, 1)}, {"P", declaration}}, body, outputs));
  };
  // The kind's own messages point inside the declaration.
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "i8"}, {"shape", {4}}}, use, out),
                  "pairs.json:/symbols/P/dtype: expected \"f32\" or \"f64\"");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4, -1}}}, use, out), "pairs.json:/symbols/P/shape/1:");
  // Parts: unknown, missing, without a source, both ways at once.
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}},
                        {"parts", {{"first", {{"from", {{"zeros", json::object()}}}}}, {"third", json::object()}}}},
                       use, out),
                  "pairs.json:/symbols/P/parts");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}, {"parts", {{"first", {{"from", {{"zeros", json::object()}}}}}}}},
                       use, out),
                  "pairs.json:/symbols/P/parts: every part needs a source; second has none");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}},
                        {"parts", {{"first", {{"value", {1, 2, 3}}}}, {"second", {{"from", {{"zeros", json::object()}}}}}}}},
                       use, out),
                  "pairs.json:/symbols/P/parts/first/value");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}, {"from", "p.pair"},
                        {"parts", {{"first", {{"value", {1, 2, 3, 4}}}}, {"second", {{"value", {1, 2, 3, 4}}}}}}},
                       use, out),
                  "pairs.json:/symbols/P: give either \"from\" or \"parts\", not both");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}, {"from", {{"random", json::object()}}}}, use, out),
                  "pairs.json:/symbols/P/from: expected a file holding a pair");
  // Read before it is written; its parts cannot be written alone; a .npy file does not hold a pair.
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}}, use, out),
                  "symbol 'P' is read before anything writes it");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}},
                       {{{"op", "array.neg"}, {"out", {"P.first"}}, {"in", {"a"}}}}, json::object()),
                  "pairs.json:/body/0/out/0: expected a symbol name");
  const json make = {{{"op", "test.make_pair"}, {"out", {"P"}}, {"in", {"a", "a"}}}};
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f64"}, {"shape", {4}}}, make, {{"P", "p.npy"}}),
                  "pairs.json:/outputs/P: no format writes 'P' (f64 pair) to a .npy file: npy: the npy format writes "
                  "arrays and scalars, not a pair");
  // The op's output must be declared with the kind, of the type it produces.
  EXPECT_CONTAINS(load_error(program({{"a", random_array(4, 1)}}, make, json::object())),
                  "pairs.json:/body/0/out/0: test.make_pair produces a pair; declare 'P' as one");
  EXPECT_CONTAINS(with({{"kind", "pair"}, {"dtype", "f64"}, {"shape", {5}}}, make, json::object()),
                  "test.make_pair produces a pair of f64 [4] but 'P' is declared f64 [5]");
  // A compile-time kind is never written.
  EXPECT_CONTAINS(load_error(program({{"a", random_array(4, 1)}, {"P", {{"kind", "poly"}, {"coefficients", {1, 2}}}}}, make,
                                     json::object())),
                  "pairs.json:/body/0/out/0: 'P' is a poly and cannot be written");
}

// A .pair file that is not what the program declares is refused when the program loads.
TEST(CompoundKinds, PairFileOfAnotherTypeIsRefusedAtLoad) {
  test::TempDir dir;
  HostArray value;
  value.dtype = DType::F32;
  value.shape = {3};
  value.kind_name = "pair";
  value.parts = {HostArray(DType::F32, {3}), HostArray(DType::F32, {3})};
  auto format = test::plugins_with_test_ops().reader_for(".pair");
  ASSERT_TRUE(format);
  format->write(dir / "p.pair", value);
  const json doc = program({{"P", {{"kind", "pair"}, {"dtype", "f32"}, {"shape", {4}}, {"from", "p.pair"}}}},
                           {{{"op", "test.pair_norm"}, {"out", {"n"}}, {"in", {"P"}}}}, {{"n", "n.npy"}});
  EXPECT_CONTAINS(load_error(doc, dir / "pairs.json"),
                  "/symbols/P/from: expected a file holding pair f32 [4] (f32 [4], f32 [4]) (the declared type), found ");
  // Truncated: the format's own message, with the file.
  std::filesystem::resize_file(dir / "p.pair", 30);
  EXPECT_CONTAINS(load_error(doc, dir / "pairs.json"), "p.pair: holds 30 bytes; its header says");
}
