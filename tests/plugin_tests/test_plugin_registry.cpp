// The registry refuses bad plugins with a message naming the file and the fault, and goes on.
#include <gtest/gtest.h>

#include "passes/lower.h"
#include "plugins/plugin_registry.h"
#include "load/program_loader.h"
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
  EXPECT_NE(abi.find(test::current_abi()), std::string::npos) << abi;

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
  EXPECT_NE(major.find("built for plugin ABI 3.0, but this Fugue has " + test::current_abi()), std::string::npos) << major;

  std::string old = refusal_of(r, "libfugue_abi_1.so");
  EXPECT_NE(old.find("built for plugin ABI 1.0, but this Fugue has " + test::current_abi()), std::string::npos) << old;

  // A kind another plugin defines: the whole plugin is refused, its operation too.
  std::string kind = refusal_of(r, "libfugue_duplicate_kind.so");
  EXPECT_NE(kind.find("kind 'poly' of plugin 'duplicate_kind' is already defined by plugin 'testops'"),
            std::string::npos) << kind;
  EXPECT_EQ(r.find("dupkind.copy"), nullptr);
  ASSERT_NE(r.find_kind("poly"), nullptr);
  EXPECT_EQ(r.find_kind("poly")->plugin()->name, "testops");

  // testops and the three plugins whose faults only the conformance suite can see (broken_partition,
  // broken_reference, broken_infer).
  EXPECT_EQ(r.plugins().size(), 4u);
  EXPECT_EQ(r.refusals().size(), 7u);
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

// A sound plugin built against the ABI 1.2 header is refused by this 2.0 core, naming both versions,
// and nothing of it is registered.
TEST(PluginRegistry, AbiOnePluginIsRefusedNamingBothVersions) {
  PluginRegistry r;
  r.load_folder(test::bundled_plugin_folder());
  EXPECT_FALSE(r.load_file(test::test_plugin_folder() / "libfugue_abi_1.so"));
  EXPECT_EQ(r.find("old.negate"), nullptr);
  std::string reason = refusal_of(r, "libfugue_abi_1.so");
  EXPECT_NE(reason.find("ABI 1.0"), std::string::npos) << reason;
  EXPECT_NE(reason.find(test::current_abi()), std::string::npos) << reason;
}
