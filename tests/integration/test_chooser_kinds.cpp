// What a chooser kind's declaration carries (ABI 2.16): "reads", the program's uses of the value, only
// for a chooser of ABI 2.16 or later that lists the key; a program's own "reads" as given. The test
// plugins' chooser kinds (tests/plugins/chooser_plugin.cpp) say the declaration they got in their note,
// which `fugue explain` shows; the values they choose run.
#include <gtest/gtest.h>

#include <string>

#include "io/npy_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
namespace test = fugue::test;

namespace {

std::string chooser_plugins() {
  const fs::path folder = test::test_plugin_folder().parent_path() / "chooser_plugins";
  return "--plugin " + (folder / "libfugue_chooser.so").string() + " --plugin " + (folder / "libfugue_chooser_2_15.so").string();
}

}  // namespace

TEST(ChooserKinds, OnlyChoosersThatAskAreToldTheReads) {
  test::TempDir dir;
  // T is read twice in a loop of 5 and once after it; U's chooser does not list "reads"; V's plugin
  // is of ABI 2.15; W gives its own; X is read under a loop counted by a scalar.
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "T": {"kind": "tally_auto", "from": {"tally_gen": {"length": 4}}},
    "U": {"kind": "tally_plain", "from": {"tally_gen": {"length": 4}}},
    "V": {"kind": "old_tally_auto", "from": {"old_tally_gen": {"length": 4}}},
    "W": {"kind": "tally_auto", "reads": 2, "from": {"tally_gen": {"length": 3}}},
    "X": {"kind": "tally_auto", "from": {"tally_gen": {"length": 2}}},
    "Y": {"kind": "tally_auto", "from": {"tally_gen": {"length": 1}}},
    "k": {"kind": "scalar", "dtype": "i64", "value": 3},
    "n": {"kind": "const", "value": 3}},
    "body": [{"for": "i", "count": 5, "body": [
               {"op": "tally.copy", "out": ["a"], "in": ["T"]}, {"op": "tally.copy", "out": ["a"], "in": ["T"]},
               {"op": "tally.copy", "out": ["b"], "in": ["U"]}, {"op": "old_tally.copy", "out": ["c"], "in": ["V"]},
               {"op": "tally.copy", "out": ["d"], "in": ["W"]}]},
             {"op": "tally.copy", "out": ["a"], "in": ["T"]},
             {"for": "j", "count": "k", "body": [{"op": "tally.copy", "out": ["e"], "in": ["X"]}]},
             {"for": "l", "count": "n", "body": [{"for": "o", "count": 4, "body": [{"op": "tally.copy", "out": ["f"], "in": ["Y"]}]}]}],
    "outputs": {"a": "a.npy", "b": "b.npy", "c": "c.npy", "d": "d.npy", "e": "e.npy", "f": "f.npy"}})");
  auto explained = test::run_fugue(chooser_plugins() + " explain " + (dir / "p.json").string());
  ASSERT_EQ(explained.code, 0) << explained.out;
  for (const char* line : {R"(T: tally_auto chose tally: declaration {"kind":"tally_auto","reads":11})",
                           R"(U: tally_plain chose tally: declaration {"kind":"tally_plain"})",
                           R"(V: old_tally_auto chose old_tally: declaration {"kind":"old_tally_auto"})",
                           R"(W: tally_auto chose tally: declaration {"kind":"tally_auto","reads":2})",
                           R"(X: tally_auto chose tally: declaration {"kind":"tally_auto","reads":-1})",
                           R"(Y: tally_auto chose tally: declaration {"kind":"tally_auto","reads":12})"})
    EXPECT_NE(explained.out.find(line), std::string::npos) << line << "\n" << explained.out;

  auto ran = test::run_fugue(chooser_plugins() + " run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(ran.code, 0) << ran.out;
  const std::vector<std::pair<std::string, std::vector<float>>> want = {
      {"a", {0, 1, 2, 3}}, {"b", {0, 1, 2, 3}}, {"c", {0, 1, 2, 3}}, {"d", {0, 1, 2}}, {"e", {0, 1}}, {"f", {0}}};
  for (const auto& [name, values] : want) {
    const auto got = fugue::load_npy(dir / "out" / (name + ".npy"), std::nullopt, std::nullopt);
    ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << name;
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(got.get(static_cast<int64_t>(i)), values[i]) << name << "[" << i << "]";
  }
}

// "reads" in the declaration of a chooser that does not take it is refused at its place.
TEST(ChooserKinds, BadReadsNameTheirPlace) {
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "U": {"kind": "tally_plain", "reads": 4, "from": {"tally_gen": {"length": 4}}}},
    "body": [{"op": "tally.copy", "out": ["a"], "in": ["U"]}], "outputs": {"a": "a.npy"}})");
  auto r = test::run_fugue(chooser_plugins() + " validate " + (dir / "p.json").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/symbols/U/reads: unknown key 'reads' (expected one of: kind, doc, from)"), std::string::npos) << r.out;
}
