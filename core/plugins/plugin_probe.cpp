#include "plugins/plugin_probe.h"

#include <signal.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fugue_plugin.h"
#include "io/atomic_file.h"
#include "io/cache_folder.h"
#include "io/sha256.h"
#include "plugins/child_process.h"

namespace fugue {
namespace fs = std::filesystem;

namespace {

// Bumped when what a verdict means changes, so older entries are probed again.
constexpr int kProbeFormat = 1;

// What identifies one version of a plugin file: path, size, mtime and content. The inode and the
// status-change time (which no one can set back, unlike mtime) only spare hashing the file at every
// start: while they are unchanged, so is the content.
struct FileIdentity {
  std::string path;  // canonical
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  int64_t inode = 0;
  std::string sha256;  // computed by hash_of, on demand
};

std::optional<FileIdentity> identify(const fs::path& file) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  if (ec) return std::nullopt;
  struct stat st {};
  if (::stat(canonical.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileIdentity{canonical.string(), static_cast<int64_t>(st.st_size),
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                      static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec,
                      static_cast<int64_t>(st.st_ino), ""};
}

// Fills id.sha256; false when the file cannot be read.
bool hash_of(FileIdentity& id) {
  if (!id.sha256.empty()) return true;
  std::ifstream in(id.path, std::ios::binary);
  if (!in) return false;
  Sha256 hash;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hash.update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return false;
  id.sha256 = hash.hex_digest();
  return true;
}

std::string abi_text() {
  return std::to_string(FUGUE_ABI_VERSION_MAJOR) + "." + std::to_string(FUGUE_ABI_VERSION_MINOR);
}

fs::path cache_file_for(const std::string& canonical) {
  const fs::path folder = cache_folder();
  if (folder.empty()) return {};
  return folder / "plugin-probes" / (sha256_hex(canonical.data(), canonical.size()).substr(0, 32) + ".json");
}

// The cached verdict for exactly this file, if the entry is intact and about it. `fresh`: the entry
// matched only by hashing the file (it was copied or touched): worth rewriting.
std::optional<ProbeVerdict> read_cached(const fs::path& entry, FileIdentity& id, bool& fresh) {
  std::ifstream in(entry, std::ios::binary);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("format").get<int>() != kProbeFormat || j.at("abi").get<std::string>() != abi_text() ||
        j.at("file").get<std::string>() != id.path || j.at("size").get<int64_t>() != id.size ||
        j.at("mtime_ns").get<int64_t>() != id.mtime_ns)
      return std::nullopt;  // another version of the file (or of Fugue): probe again
    const std::string sha256 = j.at("sha256").get<std::string>();
    fresh = j.at("ctime_ns").get<int64_t>() != id.ctime_ns || j.at("inode").get<int64_t>() != id.inode;
    if (fresh && (!hash_of(id) || id.sha256 != sha256)) return std::nullopt;
    id.sha256 = sha256;
    ProbeVerdict v;
    v.outcome = j.at("sound").get<bool>() ? ProbeVerdict::Outcome::Sound : ProbeVerdict::Outcome::Unsound;
    v.reason = j.at("reason").get<std::string>();
    v.cached = true;
    if (v.outcome == ProbeVerdict::Outcome::Unsound && v.reason.empty()) return std::nullopt;
    return v;
  } catch (const std::exception& e) {
    spdlog::debug("plugin probe cache entry {} is unusable ({}); probing again", entry.string(), e.what());
    return std::nullopt;
  }
}

void write_cached(const fs::path& entry, const FileIdentity& id, const ProbeVerdict& v) {
  const nlohmann::ordered_json j = {{"format", kProbeFormat}, {"abi", abi_text()}, {"file", id.path},
                                    {"size", id.size}, {"mtime_ns", id.mtime_ns}, {"sha256", id.sha256},
                                    {"ctime_ns", id.ctime_ns}, {"inode", id.inode},
                                    {"sound", v.outcome == ProbeVerdict::Outcome::Sound}, {"reason", v.reason}};
  try {
    std::error_code ec;
    fs::create_directories(entry.parent_path(), ec);
    write_file_atomically(entry, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
  } catch (const std::exception& e) {
    // A cache that cannot be written costs a probe at the next start, nothing else.
    spdlog::debug("plugin probe verdict not cached: {}", e.what());
  }
}

ProbeVerdict run_probe(const std::function<std::string()>& load_and_check) {
  const auto timeout = plugin_probe_timeout();
  const ChildOutcome child = run_in_child(
      [&](const auto& say) {
        spdlog::set_level(spdlog::level::off);  // the parent reports what matters, once
        const std::string refusal = load_and_check();
        say(refusal.empty() ? "loaded" : "refused " + refusal);
      },
      timeout);
  ProbeVerdict v;
  const bool answered = child.output.rfind("loaded", 0) == 0 || child.output.rfind("refused ", 0) == 0;
  if (child.completed && answered) {
    v.outcome = ProbeVerdict::Outcome::Sound;
    return v;
  }
  v.outcome = ProbeVerdict::Outcome::Unsound;
  if (child.timed_out) {
    v.reason = "did not answer within " + duration_text(timeout) +
               " while loading: a hang in a constructor or the entry point?";
  } else if (child.signal != 0) {
    v.reason = "killed by signal " + std::to_string(child.signal) + " (" + strsignal(child.signal) + ") while loading" +
               (child.signal == SIGABRT ? ": an abort() or an exception nobody caught" : "");
  } else if (child.output.rfind("uncaught ", 0) == 0) {
    std::string what = child.output.substr(9);
    while (!what.empty() && what.back() == '\n') what.pop_back();
    v.reason = "threw an exception across the C boundary while loading: " + what;
  } else if (child.completed || child.failure.rfind("exited", 0) == 0) {
    v.reason = "ended the process while loading, without answering (" +
               (child.completed ? std::string("exit status 0") : child.failure) + ")";
  } else {
    v.outcome = ProbeVerdict::Outcome::Unprobed;  // no child: not the plugin's doing
    v.reason = child.failure;
  }
  return v;
}

}  // namespace

std::chrono::milliseconds plugin_probe_timeout() {
  constexpr std::chrono::milliseconds fallback{10000};
  const char* text = std::getenv("FUGUE_PLUGIN_PROBE_TIMEOUT");
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end || !std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    spdlog::warn("FUGUE_PLUGIN_PROBE_TIMEOUT={} is not a number of seconds in (0, 86400]: using 10 s", text);
    return fallback;
  }
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

fs::path plugin_probe_cache_file(const fs::path& plugin_file) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(plugin_file, ec);
  return cache_file_for(ec ? plugin_file.string() : canonical.string());
}

ProbeVerdict probe_plugin(const fs::path& file, const std::function<std::string()>& load_and_check) {
  std::optional<FileIdentity> id = identify(file);
  const fs::path entry = id ? cache_file_for(id->path) : fs::path();
  bool fresh = false;
  if (!entry.empty())
    if (std::optional<ProbeVerdict> cached = read_cached(entry, *id, fresh)) {
      spdlog::debug("plugin {}: probe verdict from {}", file.string(), entry.string());
      if (fresh) write_cached(entry, *id, *cached);
      return *cached;
    }
  if (id && !hash_of(*id)) id.reset();  // unreadable: probed, not cached
  const fs::path cache_entry = id ? entry : fs::path();
  const auto start = std::chrono::steady_clock::now();
  ProbeVerdict v = run_probe(load_and_check);
  spdlog::debug("plugin {} probed in a child process in {:.1f} ms: {}", file.string(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                v.outcome == ProbeVerdict::Outcome::Sound ? "sound" : v.reason);
  if (v.outcome != ProbeVerdict::Outcome::Unprobed && !cache_entry.empty()) write_cached(cache_entry, *id, v);
  return v;
}

}  // namespace fugue
