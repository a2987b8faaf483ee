// The `fugue` executable: commands, exit codes (0 / 2 bad input / 1 device), one clear line on stderr,
// no output file left behind by a failed run, profiles, bench.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "io/npy_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using fugue::test::TempDir;

namespace {

fugue::test::CliResult fugue_cli(const std::string& args) { return fugue::test::run_fugue(args); }

std::string example(const std::string& name) { return (fugue::test::source_root() / "examples" / name).string(); }

}  // namespace

TEST(Cli, RunWritesOutputs) {
  TempDir dir;
  auto r = fugue_cli("run " + example("statistics.json") + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  auto mean = fugue::load_npy(dir / "out" / "mean.npy", std::nullopt, std::nullopt);
  EXPECT_NEAR(mean.get(0), 5.0, 0.1);
  EXPECT_TRUE(fs::exists(dir / "out" / "clipped.npy"));
}

TEST(Cli, SetOverridesAConst) {
  TempDir dir;
  auto r = fugue_cli("run " + example("saxpy_loop.json") + " --set n=0 --out " + dir.path().string());
  // With zero iterations s is never written: a clear run-time error, exit 2, and no file at all.
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("'s'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "z.npy"));
  EXPECT_FALSE(fs::exists(dir / "s.npy"));
  r = fugue_cli("run " + example("saxpy_loop.json") + " --set n=2 --out " + dir.path().string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir / "s.npy"));
}

TEST(Cli, BadProgramExitsWithTwoAndOneLine) {
  TempDir dir;
  fugue::test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {}, "body": [{"op": "array.add", "out": ["z"], "in": ["p", "q"]}]})");
  auto r = fugue_cli("run " + (dir / "bad.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("bad.json:/body/0/in/0"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  r = fugue_cli("validate " + (dir / "bad.json").string());
  EXPECT_EQ(r.code, 2);
  r = fugue_cli("run " + (dir / "missing.json").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("cannot open"), std::string::npos) << r.out;
}

TEST(Cli, UnknownDeviceExitsWithTwo) {
  auto r = fugue_cli("run " + example("statistics.json") + " --device no-such-device-anywhere");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("matches no device"), std::string::npos) << r.out;
}

TEST(Cli, ValidateDevicesPlugins) {
  auto r = fugue_cli("validate " + example("saxpy_loop.json"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos);
  r = fugue_cli("devices");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(default)"), std::string::npos) << r.out;
  r = fugue_cli("plugins");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("array.norm2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(fugue::test::current_abi()), std::string::npos) << r.out;
}

TEST(Cli, PluginOptionAndRefusal) {
  auto plugin = fugue::test::test_plugin_folder() / "libfugue_testops.so";
  auto r = fugue_cli("--plugin " + plugin.string() + " plugins");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;
  auto bad = fugue::test::test_plugin_folder() / "libfugue_bad_abi.so";
  r = fugue_cli("--plugin " + bad.string() + " validate " + example("statistics.json"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("ABI 99.3"), std::string::npos) << r.out;
  // A plugin built against the ABI 1.2 header, asked for by name: exit 2, both versions named.
  auto old = fugue::test::test_plugin_folder() / "libfugue_abi_1.so";
  r = fugue_cli("--plugin " + old.string() + " validate " + example("statistics.json"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("built for plugin ABI 1.0, but this Fugue has " + fugue::test::current_abi()), std::string::npos) << r.out;
}

TEST(Cli, ProfileIsAChromeTrace) {
  TempDir dir;
  // Unfused, so that every one of the 12 operations shows up as a kernel of its own.
  auto r = fugue_cli("run " + example("statistics.json") + " --no-fuse --out " + dir.path().string() + " --profile " +
                     (dir / "trace.json").string() + " --stats");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("total"), std::string::npos) << r.out;
  std::ifstream in(dir / "trace.json");
  auto trace = nlohmann::json::parse(in);
  int kernels = 0, transfers = 0;
  for (const auto& e : trace["traceEvents"]) {
    kernels += e.value("cat", "") == "kernel";
    transfers += e.value("cat", "") == "transfer";
  }
  EXPECT_GE(kernels, 12);
  EXPECT_GE(transfers, 2);
}

TEST(Cli, BenchReportsMedianAndBandwidth) {
  auto r = fugue_cli("bench " + example("bench/elementwise_scale.json") + " --set n=100000 --repeat 3 --json -");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("median ms"), std::string::npos) << r.out;
  auto line = r.out.substr(r.out.rfind("{\"device\""));
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["repetitions"], 3);
  EXPECT_DOUBLE_EQ(j["total"]["bytes"].get<double>(), 800000.0);
  EXPECT_GT(j["total"]["gbps"].get<double>(), 0.0);
  // The wall time comes from runs without events, which neither add to the kernel's runs nor to the
  // launches counted per run.
  EXPECT_NE(r.out.find("wall ms per run (host clock, launches and waits included, from runs without events): median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n1 kernel launches per run, 1 kernels"), std::string::npos) << r.out;
  const std::string row = "/body/0 array.mul z = (x, 2)";
  ASSERT_NE(r.out.find(row), std::string::npos) << r.out;
  EXPECT_EQ(std::stoi(r.out.substr(r.out.find(row) + row.size())), 1) << "one launch a timed repetition\n" << r.out;
  // With --json -, stdout holds the JSON alone (the table goes to stderr), so that it pipes into a parser.
  auto json_only = fugue::test::run_command("sh -c '" + fugue::test::fugue_executable().string() + " bench " +
                                            example("bench/elementwise_scale.json") + " --set n=1000 --repeat 2 --json - 2>/dev/null'");
  ASSERT_EQ(json_only.code, 0) << json_only.out;
  EXPECT_EQ(nlohmann::json::parse(json_only.out)["repetitions"], 2) << json_only.out;
}

TEST(Cli, ArrayLargerThanTheDeviceIsRefusedBeforeAllocation) {
  TempDir dir;
  fugue::test::write_text(dir / "huge.json", R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32",
    "shape": [1000000000000], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}], "outputs": {"s": "s.npy"}})");
  auto r = fugue_cli("run " + (dir / "huge.json").string() + " --out " + dir.path().string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("huge.json:/symbols/x: 'x' needs 4000000000000 bytes"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "s.npy"));
}

TEST(Cli, AFailingOutputLeavesNoOtherOutput) {
  TempDir dir;
  fugue::test::write_text(dir / "two.json", R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32",
    "shape": [8], "from": {"random": {"seed": 1}}}}, "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}],
    "outputs": {"a_first": "a.npy", "x": "b.npy"}})");
  fs::create_directories(dir / "out" / "b.npy");  // a folder where the second file should go
  // "a_first" is not a symbol: first make the program valid, writing s to a.npy.
  std::string text = R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32", "shape": [8],
    "from": {"random": {"seed": 1}}}}, "body": [{"op": "array.sum", "out": ["s"], "in": ["x"]}],
    "outputs": {"s": "a.npy", "x": "b.npy"}})";
  fugue::test::write_text(dir / "two.json", text);
  auto r = fugue_cli("run " + (dir / "two.json").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("b.npy"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "out" / "a.npy"));
  for (const auto& e : fs::directory_iterator(dir / "out")) EXPECT_EQ(e.path().filename(), "b.npy") << e.path();
}

TEST(Cli, ExplainShowsThePlan) {
  auto r = fugue_cli("explain " + example("jacobi.json"));
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* part : {"loop body /body/0", "live-in {b, D, R, x}, live-out {b, D, f5, R}", "Kernels (1)",
                           "promoted (registers, never in global memory): {f5, f6, f7, r}",
                           "written into a second buffer, swapped in after the kernel: {x}", "{ /* stencil.apply f5 = (R, x) */", "__kernel"})
    EXPECT_NE(r.out.find(part), std::string::npos) << "missing: " << part << "\n" << r.out;
  r = fugue_cli("explain " + example("jacobi.json") + " --no-fuse --no-swap");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Kernels (5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fusion is off (--no-fuse)"), std::string::npos) << r.out;
}

TEST(Cli, NoFuseWritesTheSameOutputs) {
  TempDir dir;
  auto fused = fugue_cli("run " + example("fused_reduction.json") + " --out " + (dir / "fused").string());
  auto unfused = fugue_cli("run " + example("fused_reduction.json") + " --no-fuse --out " + (dir / "unfused").string());
  ASSERT_EQ(fused.code, 0) << fused.out;
  ASSERT_EQ(unfused.code, 0) << unfused.out;
  auto a = fugue::load_npy(dir / "fused" / "s.npy", std::nullopt, std::nullopt);
  auto b = fugue::load_npy(dir / "unfused" / "s.npy", std::nullopt, std::nullopt);
  EXPECT_TRUE(fugue::test::compare_arrays(a, b, 1e-5).empty());
}
