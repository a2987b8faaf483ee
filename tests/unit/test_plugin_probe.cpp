// The registry probes a plugin in a child process before loading it here: a library that crashes,
// aborts, hangs or ends the process while it loads is refused with how, and this process goes on.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "plugins/plugin_probe.h"
#include "plugins/plugin_registry.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

// Sets an environment variable for the scope of one test, and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string refusal_of(const PluginRegistry& r, const std::string& file_part) {
  for (const auto& x : r.refusals())
    if (x.file.find(file_part) != std::string::npos) return x.reason;
  return "";
}

}  // namespace

TEST(PluginProbe, RegistryRefusesCrashingPluginsAndGoesOn) {
  test::TempDir cache;
  ScopedEnv dir("FUGUE_CACHE_DIR", cache.path().string());
  ScopedEnv timeout("FUGUE_PLUGIN_PROBE_TIMEOUT", "0.5");
  PluginRegistry r;
  r.load_folder(test::crashing_plugin_folder());
  EXPECT_TRUE(r.plugins().empty());
  ASSERT_EQ(r.refusals().size(), 4u);
  EXPECT_NE(refusal_of(r, "libfugue_crash_entry.so").find("killed by signal 11"), std::string::npos);
  EXPECT_NE(refusal_of(r, "libfugue_wild_table.so").find("killed by signal 11"), std::string::npos);
  EXPECT_NE(refusal_of(r, "libfugue_abort_constructor.so").find("killed by signal 6"), std::string::npos);
  const std::string hang = refusal_of(r, "libfugue_hang_entry.so");
  EXPECT_NE(hang.find("did not answer within 500 ms while loading"), std::string::npos) << hang;
  // The registry still loads sound plugins, probed too.
  EXPECT_TRUE(r.load_probed(test::test_plugin_folder() / "libfugue_testops.so"));
  EXPECT_NE(r.find("test.scale"), nullptr);
  EXPECT_TRUE(fs::exists(plugin_probe_cache_file(test::test_plugin_folder() / "libfugue_testops.so")));
}

TEST(PluginProbe, RefusalsFoundInTheChildAreTheRegistrysOwn) {
  // A library that loads cleanly but has another ABI: the probe passes it, and load_file refuses it
  // with its usual reason, not a probe's.
  test::TempDir cache;
  ScopedEnv dir("FUGUE_CACHE_DIR", cache.path().string());
  PluginRegistry r;
  EXPECT_FALSE(r.load_probed(test::test_plugin_folder() / "libfugue_bad_abi.so"));
  const std::string reason = refusal_of(r, "libfugue_bad_abi.so");
  EXPECT_NE(reason.find("ABI 99.3"), std::string::npos) << reason;
  EXPECT_FALSE(r.load_probed("/nonexistent/libx.so"));
  EXPECT_NE(refusal_of(r, "libx.so").find("no such file"), std::string::npos);
}

TEST(PluginProbe, EveryWayOfNotAnsweringIsNamed) {
  test::TempDir dir;
  ScopedEnv cache("FUGUE_CACHE_DIR", (dir / "cache").string());
  ScopedEnv timeout("FUGUE_PLUGIN_PROBE_TIMEOUT", "0.3");
  int n = 0;
  const auto probe = [&](const std::function<std::string()>& work) {
    const fs::path file = dir / ("lib" + std::to_string(n++) + ".so");  // one file each: no verdict shared
    test::write_text(file, "x");
    return probe_plugin(file, work);
  };
  ProbeVerdict v = probe([] { return std::string(); });
  EXPECT_EQ(v.outcome, ProbeVerdict::Outcome::Sound);
  v = probe([] { return std::string("its table is malformed"); });
  EXPECT_EQ(v.outcome, ProbeVerdict::Outcome::Sound);  // refused by the registry itself, in this process
  v = probe([]() -> std::string { _exit(0); });
  EXPECT_EQ(v.outcome, ProbeVerdict::Outcome::Unsound);
  EXPECT_NE(v.reason.find("ended the process while loading, without answering"), std::string::npos) << v.reason;
  v = probe([]() -> std::string { throw std::runtime_error("boom"); });
  EXPECT_NE(v.reason.find("threw an exception across the C boundary while loading: boom"), std::string::npos)
      << v.reason;
  // The default action: a handler LLVM installs once PoCL has compiled a kernel in this process returns
  // from a raised (not faulting) SIGBUS, and the child would go on.
  v = probe([]() -> std::string { signal(SIGBUS, SIG_DFL); raise(SIGBUS); return ""; });
  EXPECT_NE(v.reason.find("killed by signal 7"), std::string::npos) << v.reason;
  v = probe([]() -> std::string { pause(); return ""; });
  EXPECT_NE(v.reason.find("did not answer within 300 ms"), std::string::npos) << v.reason;
  EXPECT_FALSE(v.cached);

  // The same file again: the verdict comes from the cache, without running the work.
  const fs::path again = dir / "lib5.so";
  v = probe_plugin(again, [] { return std::string(); });
  EXPECT_TRUE(v.cached);
  EXPECT_EQ(v.outcome, ProbeVerdict::Outcome::Unsound);
  EXPECT_NE(v.reason.find("did not answer"), std::string::npos) << v.reason;
}

TEST(PluginProbe, TimeoutComesFromTheEnvironment) {
  {
    ScopedEnv timeout("FUGUE_PLUGIN_PROBE_TIMEOUT", "2.5");
    EXPECT_EQ(plugin_probe_timeout().count(), 2500);
  }
  {
    ScopedEnv timeout("FUGUE_PLUGIN_PROBE_TIMEOUT", "soon");
    EXPECT_EQ(plugin_probe_timeout().count(), 10000);
  }
  {
    ScopedEnv timeout("FUGUE_PLUGIN_PROBE_TIMEOUT", "-1");
    EXPECT_EQ(plugin_probe_timeout().count(), 10000);
  }
}
