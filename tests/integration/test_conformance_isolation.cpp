// `fugue conformance` runs every check that calls plugin code in a child process with guard regions
// around every buffer: a plugin that crashes in execute or in its reference, writes past an output
// (on the device or on the host), hangs, or takes a bundled plugin's name gets a FAIL saying so,
// and the suite completes with its summary and report.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

using fugue::test::TempDir;

namespace {

struct Outcome {
  fugue::test::CliResult cli;
  nlohmann::json report;
};

Outcome conformance_of(const std::string& fault, const std::string& options = "") {
  TempDir dir;
  const auto file = fugue::test::faulty_plugin_folder() / ("libfugue_faulty_" + fault + ".so");
  Outcome o;
  o.cli = fugue::test::run_fugue("conformance " + file.string() + " --report " + (dir / "report.json").string() +
                                 options);
  std::ifstream in(dir / "report.json");
  if (in) o.report = nlohmann::json::parse(in, nullptr, false);
  return o;
}

// The report's entry for `check` of `op` ("" for the plugin's own checks).
nlohmann::json check_of(const nlohmann::json& report, const std::string& op, const std::string& check) {
  if (report.is_object() && report.contains("checks"))
    for (const auto& c : report["checks"])
      if (c["op"] == op && c["check"] == check) return c;
  return nullptr;
}

// The suite ran to its end: exit 1, the summary printed, the report written.
void expect_completed_with_failure(const Outcome& o) {
  EXPECT_EQ(o.cli.code, 1) << o.cli.out;
  EXPECT_NE(o.cli.out.find("faulty: "), std::string::npos) << o.cli.out;
  EXPECT_NE(o.cli.out.find("FAILED"), std::string::npos) << o.cli.out;
  ASSERT_TRUE(o.report.is_object()) << o.cli.out;
  EXPECT_EQ(o.report["summary"]["conforms"], false);
}

}  // namespace

TEST(ConformanceIsolation, CrashInExecuteIsAFailNamingTheCall) {
  Outcome o = conformance_of("execute");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.execute", "reference");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("killed by signal 11"), std::string::npos) << detail;
  EXPECT_NE(detail.find("execute"), std::string::npos) << detail;
  EXPECT_NE(detail.find("f32 ["), std::string::npos) << detail;  // the call
  // The plugin's other checks (descriptor, infer) still reported.
  EXPECT_FALSE(check_of(o.report, "faulty.execute", "infer (valid)").is_null()) << o.cli.out;
}

TEST(ConformanceIsolation, CrashInReferenceIsAFail) {
  Outcome o = conformance_of("reference");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.reference", "reference");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("killed by signal 11"), std::string::npos) << detail;
  EXPECT_NE(detail.find("in its reference"), std::string::npos) << detail;
}

TEST(ConformanceIsolation, DeviceLevelWriteJustPastAnOutputIsAFailOnEveryCall) {
  Outcome o = conformance_of("overrun");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.overrun", "guard regions");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("device buffer of 'y': byte 0 past the end"), std::string::npos) << detail;
  // Every call was checked, not one per dtype.
  for (const auto& call : c["calls"])
    EXPECT_NE(call["outcome"].get<std::string>().find("FAIL"), std::string::npos) << call.dump();
}

TEST(ConformanceIsolation, DeviceLevelWritePastItsScratchIsAFail) {
  Outcome o = conformance_of("scratch");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.scratch", "guard regions");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("faulty.scratch, scratch buffer 0"), std::string::npos) << detail;
  EXPECT_NE(detail.find("byte 0 past the end was written"), std::string::npos) << detail;
}

TEST(ConformanceIsolation, ReferenceWritingPastItsOutputIsAFail) {
  Outcome o = conformance_of("host");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.host", "guard regions");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("host array"), std::string::npos) << detail;
  EXPECT_NE(detail.find("output 'y'"), std::string::npos) << detail;
  EXPECT_NE(detail.find("byte 0 past the end"), std::string::npos) << detail;
}

TEST(ConformanceIsolation, ABundledPluginsNameIsAFail) {
  Outcome o = conformance_of("duplicate");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "", "unique names");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("operation 'array.add' is already registered by plugin 'array'"), std::string::npos) << detail;
  EXPECT_NE(detail.find("libfugue_array.so"), std::string::npos) << detail;
}

TEST(ConformanceIsolation, AHangIsAFailAfterTheTimeLimit) {
  Outcome o = conformance_of("hang", " --timeout 2");
  expect_completed_with_failure(o);
  const auto c = check_of(o.report, "faulty.hang", "reference");
  ASSERT_FALSE(c.is_null()) << o.cli.out;
  EXPECT_EQ(c["verdict"], "FAIL");
  const std::string detail = c["detail"];
  EXPECT_NE(detail.find("did not finish within 2 s"), std::string::npos) << detail;
  EXPECT_NE(detail.find("in its reference"), std::string::npos) << detail;
}
