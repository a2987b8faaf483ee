// File formats and generators are one registry: the core's and the plugins' alike are chosen by
// extension (formats) or name (generators), checked when the program loads, and listed by
// `fugue plugins`.
#include <gtest/gtest.h>

#include "errors.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

json program_with(const json& symbols, const json& outputs = json::object()) {
  return {{"fugue", 1}, {"symbols", symbols}, {"body", json::array()}, {"outputs", outputs}};
}

std::string load_error(const json& doc) {
  try {
    parse_program(doc, "formats.json", test::bundled_plugins());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

// The array plugin's linspace: NumPy's linspace, both ends included, through the whole run.
TEST(Generators, PluginGeneratorFillsAnArray) {
  json doc = program_with({{"v", {{"kind", "array"}, {"dtype", "f64"}, {"shape", {2, 3}},
                                  {"from", {{"linspace", {{"start", -1}, {"stop", 1.5}}}}}}}},
                          {{"v", "v.npy"}});
  Program program = parse_program(doc, "formats.json", test::bundled_plugins());
  for (const auto& result : {test::run_on_device(program), test::run_reference(program)}) {
    const HostArray& v = result.at("v");
    ASSERT_EQ(v.shape, (Shape{2, 3}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(v.get(i), -1 + 0.5 * static_cast<double>(i)) << i;
  }
}

TEST(Generators, BadParametersAreRefusedWithThePointerInsideThem) {
  auto declare = [](const std::string& dtype, const json& from) {
    return program_with({{"v", {{"kind", "array"}, {"dtype", dtype}, {"shape", {4}}, {"from", from}}}});
  };
  std::string e = load_error(declare("f32", {{"linspace", {{"start", 0}, {"stop", "x"}}}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from/linspace/stop: expected a finite number, found \"x\"");
  e = load_error(declare("f32", {{"linspace", {{"start", 0}}}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from/linspace/stop: missing");
  e = load_error(declare("f32", {{"linspace", {{"start", 0}, {"stop", 1}, {"num", 5}}}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from/linspace/num: unknown key");
  e = load_error(declare("i32", {{"linspace", {{"start", 0}, {"stop", 1}}}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from/linspace: the linspace generator makes f32, f64, not i32");
  e = load_error(declare("f32", {{"linspaces", json::object()}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from: expected a generator (");
  EXPECT_CONTAINS(e, "linspace");
}

TEST(Formats, OutputsGoToTheFirstFormatThatWritesTheirType) {
  const json symbols = {
      {"x", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {4, 5}}, {"from", {{"zeros", json::object()}}}}},
      {"k", {{"kind", "array"}, {"dtype", "i32"}, {"shape", {4, 5, 3}}, {"from", {{"zeros", json::object()}}}}}};
  // Every writable extension is offered when the one given is unknown.
  std::string e = load_error(program_with(symbols, {{"x", "x.txt"}}));
  EXPECT_CONTAINS(e, "formats.json:/outputs/x: expected an output file name ending in .npy, .png, .pgm");
  // Each format that writes .png says why it does not write this value.
  e = load_error(program_with(symbols, {{"k", "k.png"}}));
  EXPECT_CONTAINS(e, "formats.json:/outputs/k: no format writes 'k' (i32 array [4, 5, 3]) to a .png file: png: only "
                     "non-empty 2-D f32 arrays can be written as images");
  EXPECT_EQ(load_error(program_with(symbols, {{"x", "x.PNG"}, {"k", "k.npy"}})), "");
  // An unreadable input lists what is readable.
  e = load_error(program_with({{"v", {{"kind", "array"}, {"from", "v.txt"}}}}));
  EXPECT_CONTAINS(e, "formats.json:/symbols/v/from: expected a .npy, .png, .pgm");
}

TEST(Formats, PluginsListsFormatsAndGeneratorsWithTheirOwners) {
  auto r = test::run_fugue("plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t core = r.out.find("\nthe core\n"), array = r.out.find("\narray ");
  ASSERT_NE(core, std::string::npos) << r.out;
  ASSERT_NE(array, std::string::npos) << r.out;
  for (const char* line : {"format npy", "format png", "format pgm", "generator random", "generator zeros"}) {
    const size_t at = r.out.find(line);
    EXPECT_TRUE(at > core && at < array) << line << "\n" << r.out;
  }
  EXPECT_GT(r.out.find("generator linspace"), array) << r.out;
}
