// plugin_probe.h: loads a plugin once in a child process before the registry loads it in this one,
// so that a library that crashes or hangs while it loads (a constructor, the entry point, a wild
// table pointer the checks follow) costs a refusal instead of the process. The verdict is kept in
// the cache folder, keyed by the file's canonical path, size, modification time and SHA-256, so a
// plugin is probed the first time it is seen and again only when it changes (the file is hashed only
// when its inode or status-change time differ from the entry's, so a cached start reads no plugin).
#pragma once
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

namespace fugue {

struct ProbeVerdict {
  enum class Outcome {
    Sound,      // the child loaded it and walked its tables to the end (it may still be refused for them)
    Unsound,    // the child crashed, hung or exited while loading it: `reason` says how
    Unprobed,   // no child could be run (no fork, no pipe): `reason` says why; the caller decides
  };
  Outcome outcome = Outcome::Unprobed;
  std::string reason;   // "killed by signal 11 (Segmentation fault) while loading", "did not answer within 10 s ..."
  bool cached = false;  // taken from the cache folder: no child ran
};

// The probe's time limit: $FUGUE_PLUGIN_PROBE_TIMEOUT (seconds, may be fractional), else 10 s.
std::chrono::milliseconds plugin_probe_timeout();

// Where the verdict for `plugin_file` is kept (empty when there is no cache folder).
std::filesystem::path plugin_probe_cache_file(const std::filesystem::path& plugin_file);

// The cached verdict for `file` if the cache holds one for this very file (same size, time and
// content); otherwise runs load_and_check() in a child process (it loads the file and checks its
// tables as the registry does, returning "" or the reason the registry would refuse it) and caches
// what happened. A corrupt or stale cache entry is ignored. Call before OpenCL starts in this process.
ProbeVerdict probe_plugin(const std::filesystem::path& file, const std::function<std::string()>& load_and_check);

}  // namespace fugue
