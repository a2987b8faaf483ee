// The registry refuses bad plugins with a message naming the file and the fault, and goes on.
#include <gtest/gtest.h>

#include "fusion_planner.h"
#include "plugin_registry.h"
#include "program_loader.h"
#include "test_support.h"

using namespace fugue;

namespace {
std::string refusal_of(const PluginRegistry& r, const std::string& file_part) {
  for (const auto& x : r.refusals())
    if (x.file.find(file_part) != std::string::npos) return x.reason;
  return "";
}
}  // namespace

TEST(PluginRegistry, RefusesBadPluginsAndLoadsTheRest) {
  PluginRegistry r;
  auto folder = test::test_plugin_folder();
  ASSERT_TRUE(r.load_file(folder / "libfugue_testops.so"));
  r.load_folder(folder);
  ASSERT_NE(r.find("test.scale"), nullptr);
  EXPECT_EQ(r.find("test.scale")->plugin().name, "testops");

  std::string abi = refusal_of(r, "libfugue_bad_abi.so");
  EXPECT_NE(abi.find("ABI 99.3"), std::string::npos) << abi;
  EXPECT_NE(abi.find("ABI 1.2"), std::string::npos) << abi;

  std::string entry = refusal_of(r, "libfugue_no_entry.so");
  EXPECT_NE(entry.find("without the entry point 'fugue_plugin_entry'"), std::string::npos) << entry;

  std::string text = refusal_of(r, "libfugue_not_a_library.so");
  EXPECT_NE(text.find("not a loadable shared library"), std::string::npos) << text;

  std::string dup = refusal_of(r, "libfugue_duplicate.so");
  EXPECT_NE(dup.find("'test.scale'"), std::string::npos) << dup;
  EXPECT_NE(dup.find("plugin 'duplicate'"), std::string::npos) << dup;
  EXPECT_NE(dup.find("plugin 'testops'"), std::string::npos) << dup;
  EXPECT_NE(dup.find("libfugue_testops.so"), std::string::npos) << dup;

  std::string major = refusal_of(r, "libfugue_other_major.so");
  EXPECT_NE(major.find("built for plugin ABI 2.0, but this Fugue has ABI 1.2"), std::string::npos) << major;

  // testops, the ABI 1.0 plugin (a minor version behind is welcome), and the three plugins whose
  // faults only the conformance suite can see (broken_partition, broken_reference, broken_infer).
  EXPECT_EQ(r.plugins().size(), 5u);
  EXPECT_EQ(r.refusals().size(), 5u);
}

TEST(PluginRegistry, BundledPluginsLoadFromTheBuildFolder) {
  PluginRegistry r;
  r.load_folder(test::bundled_plugin_folder());
  EXPECT_TRUE(r.refusals().empty());
  ASSERT_NE(r.find("array.add"), nullptr);
  EXPECT_EQ(r.find("array.add")->plugin().abi_major, static_cast<uint32_t>(FUGUE_ABI_VERSION_MAJOR));
}

TEST(PluginRegistry, SameFileTwiceLoadsOnce) {
  PluginRegistry r;
  auto file = test::test_plugin_folder() / "libfugue_testops.so";
  EXPECT_TRUE(r.load_file(file));
  EXPECT_TRUE(r.load_file(file));
  EXPECT_EQ(r.plugins().size(), 1u);
  EXPECT_TRUE(r.refusals().empty());
}

TEST(PluginRegistry, MissingFileIsRefused) {
  PluginRegistry r;
  EXPECT_FALSE(r.load_file("/nonexistent/libx.so"));
  ASSERT_EQ(r.refusals().size(), 1u);
  EXPECT_NE(r.refusals()[0].reason.find("no such file"), std::string::npos);
}

TEST(PluginRegistry, OperationsKeepTheirLibraryLoaded) {
  std::shared_ptr<const Operation> op;
  {
    PluginRegistry r;
    r.load_file(test::test_plugin_folder() / "libfugue_testops.so");
    op = r.find("test.scale");
  }
  // The registry is gone; the operation's descriptor still lives in the loaded library.
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->name(), "test.scale");
  EXPECT_EQ(std::string(op->desc().name), "test.scale");
}

TEST(PluginRegistry, SearchPathIncludesTheEnvironment) {
  setenv("FUGUE_PLUGIN_PATH", "/a/b:/c", 1);
  auto path = PluginRegistry::default_search_path();
  unsetenv("FUGUE_PLUGIN_PATH");
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[path.size() - 2], std::filesystem::path("/a/b"));
  EXPECT_EQ(path.back(), std::filesystem::path("/c"));
}

// A plugin written against ABI 1.0's layout (smaller op descriptor, no traits) loads into this 1.1 core,
// and its element-level operation fuses with the bundled ones.
TEST(PluginRegistry, AbiMinorOnePointZeroPluginLoadsAndFuses) {
  PluginRegistry r;
  r.load_folder(test::bundled_plugin_folder());
  ASSERT_TRUE(r.load_file(test::test_plugin_folder() / "libfugue_abi_1_0.so"));
  auto op = r.find("old.negate");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->plugin().abi_minor, 0u);
  EXPECT_EQ(op->traits(), 0u);
  test::TempDir dir;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [1001], "from": {"random": {"seed": 9}}}},
    "body": [{"op": "old.negate", "out": ["t"], "in": ["x"]}, {"op": "array.mul", "out": ["y"], "in": ["t", 3]}],
    "outputs": {"y": "y.npy"}})");
  Program program = load_program(dir / "p.json", r);
  ExecutionPlan plan = plan_execution(program, test::test_device().info, {});
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].promoted, (SymbolSet{"t"}));
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  EXPECT_TRUE(test::compare_arrays(device.at("y"), reference.at("y"), 1e-6).empty());
}
