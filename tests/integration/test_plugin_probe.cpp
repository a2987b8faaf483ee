// A plugin on the search path that crashes or hangs while it loads is probed in a child process,
// refused with a warning naming it and how, and every command goes on with the others; the verdict
// is cached until the file changes; asked for with --plugin, it is exit 2.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace fs = std::filesystem;
using fugue::test::TempDir;

namespace {

std::string example(const std::string& name) { return (fugue::test::source_root() / "examples" / name).string(); }

// A plugin folder holding a sound plugin beside the four that crash or hang while they load, and a
// cache folder of its own; the probe's time limit is 1 s so the hanging one costs little.
struct ProbeSetup {
  TempDir dir;
  fs::path plugins = dir / "plugins";
  fs::path cache = dir / "cache";
  ProbeSetup() {
    fs::create_directories(plugins);
    fs::copy_file(fugue::test::test_plugin_folder() / "libfugue_testops.so", plugins / "libfugue_testops.so");
    for (const char* fault : {"crash_entry", "abort_constructor", "hang_entry", "wild_table"}) {
      const std::string name = std::string("libfugue_") + fault + ".so";
      fs::copy_file(fugue::test::crashing_plugin_folder() / name, plugins / name);
    }
  }
  std::string environment() const {
    return "FUGUE_PLUGIN_PATH=" + plugins.string() + " FUGUE_CACHE_DIR=" + cache.string() +
           " FUGUE_PLUGIN_PROBE_TIMEOUT=1";
  }
  fugue::test::CliResult fugue(const std::string& args) const { return fugue::test::run_fugue(args, environment()); }
  std::vector<nlohmann::json> cache_entries() const {
    std::vector<nlohmann::json> entries;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache / "plugin-probes", ec)) {
      std::ifstream in(e.path());
      entries.push_back(nlohmann::json::parse(in));
    }
    return entries;
  }
};

// The plugins of the build's plugin folder (the bundled ones).
size_t bundled_plugins() {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(fugue::test::bundled_plugin_folder()))
    n += e.path().extension() == ".so" && e.path().filename().string().rfind("libfugue_", 0) == 0;
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void expect_refusals_named(const std::string& out) {
  EXPECT_NE(out.find("libfugue_crash_entry.so refused: killed by signal 11 (Segmentation fault) while loading"),
            std::string::npos) << out;
  EXPECT_NE(out.find("libfugue_wild_table.so refused: killed by signal 11"), std::string::npos) << out;
  EXPECT_NE(out.find("libfugue_abort_constructor.so refused: killed by signal 6 (Aborted) while loading"),
            std::string::npos) << out;
  EXPECT_NE(out.find("libfugue_hang_entry.so refused: did not answer within 1 s while loading"), std::string::npos)
      << out;
}

}  // namespace

TEST(PluginProbe, CrashingPluginsOnTheSearchPathAreRefusedAndTheRestWork) {
  ProbeSetup setup;
  auto r = setup.fugue("plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  expect_refusals_named(r.out);  // the warnings on stderr
  // The listing shows the good plugins and every refusal.
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("array.add"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused " + (setup.plugins / "libfugue_crash_entry.so").string() + ": killed by signal 11"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused " + (setup.plugins / "libfugue_hang_entry.so").string() + ": did not answer"),
            std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "\nrefused "), 4u) << r.out;

  r = setup.fugue("validate " + example("statistics.json"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
  expect_refusals_named(r.out);
}

TEST(PluginProbe, VerdictsAreCachedAndASecondRunForksNothing) {
  ProbeSetup setup;
  auto first = setup.fugue("-v plugins");
  ASSERT_EQ(first.code, 0) << first.out;
  // The bundled plugins and the five of the folder were each probed once.
  const size_t plugins = bundled_plugins() + 5;
  EXPECT_EQ(count(first.out, "probed in a child process in"), plugins) << first.out;
  const auto entries = setup.cache_entries();
  ASSERT_EQ(entries.size(), plugins);
  size_t unsound = 0;
  for (const auto& e : entries) {
    EXPECT_EQ(e.at("sha256").get<std::string>().size(), 64u) << e.dump();
    if (!e.at("sound").get<bool>()) {
      ++unsound;
      EXPECT_FALSE(e.at("reason").get<std::string>().empty()) << e.dump();
    }
  }
  EXPECT_EQ(unsound, 4u);

  auto second = setup.fugue("-v plugins");
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_EQ(count(second.out, "probed in a child process in"), 0u) << second.out;
  EXPECT_EQ(count(second.out, "probe verdict from"), plugins) << second.out;
  expect_refusals_named(second.out);
  EXPECT_NE(second.out.find("seen in a child process before"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("test.scale"), std::string::npos) << second.out;
}

TEST(PluginProbe, AChangedFileIsProbedAgain) {
  ProbeSetup setup;
  const fs::path file = setup.plugins / "libfugue_testops.so";
  auto r = setup.fugue("plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;
  // The sound plugin replaced by a crashing one under the same name: its cached verdict no longer applies.
  fs::copy_file(fugue::test::crashing_plugin_folder() / "libfugue_crash_entry.so", file,
                fs::copy_options::overwrite_existing);
  r = setup.fugue("-v plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "probed in a child process in"), 1u) << r.out;
  EXPECT_NE(r.out.find("libfugue_testops.so refused: killed by signal 11"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("test.scale"), std::string::npos) << r.out;
}

TEST(PluginProbe, ACorruptCacheEntryIsIgnoredAndRewritten) {
  ProbeSetup setup;
  ASSERT_EQ(setup.fugue("plugins").code, 0);
  size_t corrupted = 0;
  for (const auto& e : fs::directory_iterator(setup.cache / "plugin-probes")) {
    // Alternately garbage and a well-formed entry with a field of the wrong type.
    fugue::test::write_text(e.path(), corrupted++ % 2 ? "{\"format\": 1, \"abi\": [" : "{\"format\": \"one\"}");
  }
  const size_t plugins = bundled_plugins() + 5;  // the bundled ones and the five of the folder
  ASSERT_EQ(corrupted, plugins);
  auto r = setup.fugue("-v plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "probed in a child process in"), plugins) << r.out;
  expect_refusals_named(r.out);
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;
  EXPECT_EQ(setup.cache_entries().size(), plugins);  // every entry parses again
}

TEST(PluginProbe, AnExplicitCrashingPluginIsExitTwoNamingIt) {
  ProbeSetup setup;
  for (const char* fault : {"crash_entry", "abort_constructor", "hang_entry"}) {
    const fs::path file = setup.plugins / (std::string("libfugue_") + fault + ".so");
    auto r = fugue::test::run_fugue("--plugin " + file.string() + " validate " + example("statistics.json"),
                                    "FUGUE_CACHE_DIR=" + setup.cache.string() + " FUGUE_PLUGIN_PROBE_TIMEOUT=1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--plugin " + file.string() + ": "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(std::string(fault) == "hang_entry" ? "did not answer within 1 s" : "killed by signal"),
              std::string::npos) << r.out;
  }
  // A sound one beside them still loads in this process, as before.
  auto r = fugue::test::run_fugue("--plugin " + (setup.plugins / "libfugue_testops.so").string() + " plugins",
                                  "FUGUE_CACHE_DIR=" + setup.cache.string());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;
}

TEST(PluginProbe, ConformanceOfAPluginThatCrashesWhileLoadingFailsTheHandshake) {
  ProbeSetup setup;
  const fs::path file = setup.plugins / "libfugue_crash_entry.so";
  auto r = fugue::test::run_fugue("conformance " + file.string(), "FUGUE_CACHE_DIR=" + setup.cache.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed by signal 11"), std::string::npos) << r.out;
}

TEST(PluginProbe, SameSizeAndTimeButOtherContentIsProbedAgainASameContentCopyIsNot) {
  ProbeSetup setup;
  const fs::path file = setup.plugins / "libfugue_testops.so";
  ASSERT_EQ(setup.fugue("plugins").code, 0);
  const auto mtime = fs::last_write_time(file);

  // A copy of the same bytes with the old modification time (as `cp -p` makes): the hash matches,
  // so the verdict stands and nothing is forked.
  fs::copy_file(file, setup.dir / "copy.so");
  fs::remove(file);
  fs::copy_file(setup.dir / "copy.so", file);
  fs::last_write_time(file, mtime);
  auto r = setup.fugue("-v plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "probed in a child process in"), 0u) << r.out;
  EXPECT_NE(r.out.find("test.scale"), std::string::npos) << r.out;

  // One byte of its documentation changed, size and modification time kept: probed again.
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto at = bytes.find("enqueued by the plugin itself");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'E';
  fugue::test::write_text(file, bytes);
  fs::last_write_time(file, mtime);
  r = setup.fugue("-v plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "probed in a child process in"), 1u) << r.out;
  EXPECT_NE(r.out.find("Enqueued by the plugin itself"), std::string::npos) << r.out;
}
