// `fugue conformance`: a sound plugin conforms (exit 0, a JSON report), and each deliberately broken
// plugin is caught by the check its fault belongs to, with a message that points at the fault.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace fs = std::filesystem;
using fugue::test::TempDir;

namespace {

fugue::test::CliResult conformance(const std::string& args) { return fugue::test::run_fugue("conformance " + args); }

std::string test_plugin(const std::string& name) {
  return (fugue::test::test_plugin_folder() / ("libfugue_" + name + ".so")).string();
}

// The line of `check` for `op`, or "" when there is none.
std::string line_of(const std::string& out, const std::string& op, const std::string& check) {
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    std::string line = out.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.find(" " + op + " ") != std::string::npos && line.find(" " + check + " ") != std::string::npos)
      return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {};
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST(Conformance, DeviceLevelPluginConformsAndWritesAReport) {
  TempDir dir;
  auto r = conformance(test_plugin("testops") + " --report " + (dir / "report.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.scale", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.scale", "partition honesty"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.scale", "fusion neutrality"), "SKIP")) << r.out;  // device level
  EXPECT_TRUE(starts_with(line_of(r.out, "test.scale", "guard regions"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "(plugin)", "unique names"), "PASS")) << r.out;
  // A third party's BLOCK-level operation over BATCH entries (sdk/README.md's example): checked, and fused.
  EXPECT_TRUE(starts_with(line_of(r.out, "test.row_max", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.row_max", "fusion neutrality"), "PASS")) << r.out;
  // And a SCATTER one (the counting example), and a TILE one (the box filter).
  EXPECT_TRUE(starts_with(line_of(r.out, "test.count", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.box3", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "test.box3", "partition honesty"), "PASS")) << r.out;
  std::ifstream in(dir / "report.json");
  auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["plugin"], "testops");
  EXPECT_EQ(report["summary"]["conforms"], true);
  EXPECT_EQ(report["summary"]["fail"], 0);
  bool saw_reference = false;
  for (const auto& c : report["checks"])
    if (c["op"] == "test.scale" && c["check"] == "reference") {
      saw_reference = true;
      EXPECT_EQ(c["verdict"], "PASS");
      EXPECT_FALSE(c["calls"].empty());
    }
  EXPECT_TRUE(saw_reference) << report.dump(2);
}

TEST(Conformance, WritesOutsideThePartitionAreCaught) {
  TempDir dir;
  auto r = conformance(test_plugin("broken_partition") + " --report " + (dir / "report.json").string());
  EXPECT_EQ(r.code, 1) << r.out;
  // Element-level: writes its neighbour's element, in bounds: only sampling shows it.
  std::string smear = line_of(r.out, "broken.smear", "partition honesty");
  EXPECT_TRUE(starts_with(smear, "FAIL")) << r.out;
  EXPECT_NE(smear.find("output y: element 2 was written, but only elements i % 3 == 1 were computed"),
            std::string::npos) << smear;
  // Device-level: one element past the end, caught by the guard region.
  std::string overrun = line_of(r.out, "broken.overrun", "partition honesty");
  EXPECT_TRUE(starts_with(overrun, "FAIL")) << r.out;
  EXPECT_NE(overrun.find("output y: byte 0 past the end"), std::string::npos) << overrun;
  // The guards around every call's buffers see the overrun too; the smear stays inside its output.
  std::string guards = line_of(r.out, "broken.overrun", "guard regions");
  EXPECT_TRUE(starts_with(guards, "FAIL")) << r.out;
  EXPECT_NE(guards.find("device buffer of 'y': byte 0 past the end"), std::string::npos) << guards;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.smear", "guard regions"), "PASS")) << r.out;
  // Its results are right, so nothing else fails.
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.smear", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.overrun", "reference"), "PASS")) << r.out;
  // Says its reads past the ends stay inside, but adds the row number: the second half of the rows,
  // numbered from 0 on a device of its own, comes out otherwise.
  std::string rows = line_of(r.out, "broken.rows", "split by rows");
  EXPECT_TRUE(starts_with(rows, "FAIL")) << r.out;
  EXPECT_NE(rows.find("rows 4..8 computed with 1 rows before them and 0 after (reads past the ends staying inside) "
                      "differ from the whole's: y"),
            std::string::npos)
      << rows;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.rows", "reference"), "PASS")) << r.out;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.rows", "partition honesty"), "PASS")) << r.out;
  // Operations that read nothing around their elements get no line.
  EXPECT_EQ(line_of(r.out, "broken.smear", "split by rows"), "") << r.out;
  // Says its rows cut x and y, but reads x's first row everywhere: the second half reads its own first.
  std::string cut = line_of(r.out, "broken.cut", "rows cut");
  EXPECT_TRUE(starts_with(cut, "FAIL")) << r.out;
  EXPECT_NE(cut.find("rows 4..8 computed alone (the operands fugue_plan.split_rows marks cut to them) differ from the whole's: y"),
            std::string::npos)
      << cut;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.cut", "reference"), "PASS")) << r.out;
  EXPECT_EQ(line_of(r.out, "broken.smear", "rows cut"), "") << r.out;
  std::ifstream in(dir / "report.json");
  auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["summary"]["conforms"], false);
  EXPECT_EQ(report["summary"]["fail"], 5);
}

TEST(Conformance, AReferenceThatDisagreesWithItsKernelIsCaught) {
  auto r = conformance(test_plugin("broken_reference"));
  EXPECT_EQ(r.code, 1) << r.out;
  std::string line = line_of(r.out, "broken.cube", "reference");
  EXPECT_TRUE(starts_with(line, "FAIL")) << r.out;
  EXPECT_NE(line.find("device and reference differ: y element"), std::string::npos) << line;
  EXPECT_NE(line.find("(tolerance 1e-05)"), std::string::npos) << line;
  EXPECT_TRUE(starts_with(line_of(r.out, "broken.cube", "partition honesty"), "PASS")) << r.out;
}

TEST(Conformance, AnExceptionThrownAcrossTheCBoundaryIsCaught) {
  auto r = conformance(test_plugin("broken_infer"));
  EXPECT_EQ(r.code, 1) << r.out;
  std::string line = line_of(r.out, "broken.throwing", "infer (valid)");
  EXPECT_TRUE(starts_with(line, "FAIL")) << r.out;
  EXPECT_NE(line.find("a C++ exception escaped the C boundary: broken.throwing: infer threw"), std::string::npos)
      << line;
}

TEST(Conformance, AnotherAbiMajorIsRefusedWithBothVersions) {
  auto r = conformance(test_plugin("other_major"));
  EXPECT_EQ(r.code, 1) << r.out;
  std::string line = line_of(r.out, "(plugin)", "abi handshake");
  EXPECT_TRUE(starts_with(line, "FAIL")) << r.out;
  EXPECT_NE(line.find("built for plugin ABI 3.0, but this Fugue has ABI 2."), std::string::npos) << line;
}

TEST(Conformance, UnknownPluginOrOperationIsABadRequest) {
  auto r = conformance("no_such_plugin");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no plugin named 'no_such_plugin'"), std::string::npos) << r.out;
  r = conformance(test_plugin("testops") + " --op test.nothing");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--op test.nothing"), std::string::npos) << r.out;
}
