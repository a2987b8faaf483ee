#include "io/output_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <regex>
#include <set>
#include <vector>

#include "errors.h"
#include "io/output_lock.h"
#include "io/sha256.h"

namespace fugue {
namespace fs = std::filesystem;

namespace {

// This run's part of every staging name: the pid and 64 random bits.
std::string run_id() {
  std::random_device rd;
  const uint64_t token = (uint64_t(rd()) << 32) ^ rd();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%ld-%016llx", static_cast<long>(::getpid()), static_cast<unsigned long long>(token));
  return buf;
}

fs::path staging_path(const fs::path& final_name, const std::string& run) {
  return final_name.parent_path() / ("." + final_name.filename().string() + ".fugue-" + run + ".new");
}

std::string error_text(int err) { return std::strerror(err); }

bool process_is_gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

// Staging files left by runs that died: all of them when this run holds the folder's lock (every run
// stages only while holding it), else those whose process no longer exists.
void remove_leftovers(const std::set<fs::path>& folders, bool locked) {
  for (const auto& folder : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      long pid = 0;
      if (!is_output_staging_name(it->path().filename().string(), &pid)) continue;
      std::error_code type_ec;
      if (it->is_directory(type_ec)) continue;
      if (!locked && !process_is_gone(pid)) continue;
      std::error_code removed;
      fs::remove(it->path(), removed);
    }
  }
}

// Its size and SHA-256, read back from the disk, and flushed to it.
struct Staged {
  fs::path temporary, final_name;
  uint64_t bytes = 0;
  std::string sha256;
};

void read_back_and_sync(Staged& s) {
  const int fd = ::open(s.temporary.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw UserError("cannot write " + s.final_name.string() + ": " + error_text(err));
  }
  Sha256 hash;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw UserError("cannot write " + s.final_name.string() + ": reading it back: " + error_text(err));
    }
    if (n == 0) break;
    hash.update(buf.data(), static_cast<size_t>(n));
    s.bytes += static_cast<uint64_t>(n);
  }
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a file system without fsync
  const int err = errno;
  ::close(fd);
  if (!synced) throw UserError("cannot write " + s.final_name.string() + ": " + error_text(err));
  s.sha256 = hash.hex_digest();
}

void write_synced(const fs::path& path, const std::string& text, const fs::path& named) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    throw UserError("cannot write " + named.string() + ": " + error_text(err));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw UserError("cannot write " + named.string() + ": " + error_text(err));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a file system without fsync
  int err = errno;
  const bool closed = ::close(fd) == 0;
  if (synced) err = errno;
  if (!synced || !closed) throw UserError("cannot write " + named.string() + ": " + error_text(err));
}

// Makes renames and removals in `folder` durable (best effort: not every file system can).
void sync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace

bool is_output_staging_name(const std::string& name, long* pid) {
  // .<name>.fugue-<pid>-<token>.new, the older .<name>.fugue-new, and either with the .tmp.<pid>.<n>
  // a format's atomic write (io/atomic_file.h) puts after the name it was asked to write.
  static const std::regex pattern(R"(^\..*\.fugue-(?:([0-9]+)-[0-9a-f]+\.new|new)(?:\.tmp\.[0-9]+\.[0-9]+)?$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return false;
  if (pid) *pid = m[1].matched ? std::stol(m[1].str()) : 0;
  return true;
}

void write_output_files(const Program& program, const fs::path& out_folder,
                        const std::function<HostArray(const std::string&)>& value_of, const OutputRun& run) {
  const fs::path folder = out_folder.empty() ? fs::path(".") : out_folder;
  // 1. Every value, checked against its format, before the folder is touched.
  std::vector<std::pair<fs::path, HostArray>> results;
  for (const auto& out : program.outputs) {
    const fs::path file = folder / out.file;
    const fs::path normal = out.file.lexically_normal();
    if (normal == kOutputManifest || normal == OutputFolderLock::kFileName ||
        is_output_staging_name(out.file.filename().string()))
      throw UserError("cannot write " + file.string() + ": " + normal.string() +
                      " is a name Fugue keeps for itself in the output folder; choose another");
    results.emplace_back(file, value_of(out.symbol));
    // The loader chose the format from the declared type; checked again on the value, before any
    // file is written.
    const HostArray& a = results.back().second;
    if (const std::string why = out.format->refuses(type_of(a)); !why.empty())
      throw UserError("cannot write " + file.string() + ": '" + out.symbol + "' is " + a.type_text() + "; " + why);
  }

  // 2. The folder, locked, without the leftovers of killed runs.
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw UserError("cannot create output folder " + folder.string() + ": " + ec.message());
  OutputFolderLock lock(folder, run.lock_timeout);
  std::set<fs::path> folders{folder};
  for (const auto& [file, array] : results) folders.insert(file.parent_path());
  remove_leftovers(folders, lock.held());

  // 3. The checks that can fail, before anything is written.
  const fs::path manifest = folder / kOutputManifest;
  if (fs::is_directory(manifest, ec)) throw UserError("cannot write " + manifest.string() + ": it is a folder");
  uint64_t known_bytes = 0;  // the .npy files' sizes are known before they are written
  for (size_t k = 0; k < results.size(); ++k) {
    const auto& [file, array] = results[k];
    fs::create_directories(file.parent_path(), ec);
    if (ec) throw UserError("cannot create output folder " + file.parent_path().string() + ": " + ec.message());
    if (fs::is_directory(file, ec)) throw UserError("cannot write " + file.string() + ": it is a folder");
    if (program.outputs[k].format->name() == "npy") known_bytes += array.bytes.size() + 4096;  // + header
  }
  struct statvfs fsinfo {};
  if (::statvfs(folder.c_str(), &fsinfo) == 0) {
    const uint64_t available = uint64_t(fsinfo.f_bavail) * fsinfo.f_frsize;
    if (known_bytes > available)
      throw UserError("cannot write the outputs into " + folder.string() + ": they need " + megabytes(known_bytes) +
                      ", the file system has " + megabytes(available) + " free");
  }

  // 4. Staged beside their final names, with names no other run uses; the manifest too.
  const std::string id = run_id();
  std::vector<Staged> staged;
  fs::path staged_manifest;
  auto discard = [&] {
    std::error_code ignored;
    for (const auto& s : staged) fs::remove(s.temporary, ignored);
    if (!staged_manifest.empty()) fs::remove(staged_manifest, ignored);
  };
  try {
    nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
    for (size_t k = 0; k < results.size(); ++k) {
      const auto& [file, array] = results[k];
      Staged s;
      s.final_name = file;
      s.temporary = staging_path(file, id);
      staged.push_back(s);  // so that `discard` removes it whatever happens next
      program.outputs[k].format->write(s.temporary, array, program.symbol(program.outputs[k].symbol).metadata);
      read_back_and_sync(staged.back());
      outputs.push_back({{"file", program.outputs[k].file.generic_string()},
                         {"symbol", program.outputs[k].symbol},
                         {"format", program.outputs[k].format->name()},
                         {"bytes", staged.back().bytes},
                         {"sha256", staged.back().sha256}});
    }
    std::error_code abs_ec;
    fs::path program_file = fs::absolute(program.file, abs_ec);
    if (abs_ec) program_file = program.file;
    nlohmann::ordered_json doc = {{"fugue_run", 1},
                                  {"run", id},
                                  {"fugue_version", FUGUE_VERSION},
                                  {"program", program_file.lexically_normal().string()},
                                  {"command", run.command},
                                  {"options", run.options},
                                  {"finished", utc_now()},
                                  {"checksum", "sha256"},
                                  {"outputs", outputs},
                                  {"complete", true}};
    staged_manifest = staging_path(manifest, id);
    write_synced(staged_manifest, doc.dump(2) + "\n", manifest);

    // 5. The caller's own work that must succeed first.
    if (run.before_commit) run.before_commit();

    // 6. The old manifest goes first, the new one comes last: a manifest never describes a mixed set.
    if (::unlink(manifest.c_str()) != 0 && errno != ENOENT) {
      const int err = errno;
      throw UserError("cannot replace " + manifest.string() + ": " + error_text(err));
    }
    sync_folder(folder);
    for (const auto& s : staged) {
      fs::rename(s.temporary, s.final_name, ec);
      if (ec) throw UserError("cannot write " + s.final_name.string() + ": " + ec.message());
    }
    fs::rename(staged_manifest, manifest, ec);
    if (ec) throw UserError("cannot write " + manifest.string() + ": " + ec.message());
    for (const auto& f : folders) sync_folder(f);
  } catch (...) {
    discard();
    throw;
  }
}

}  // namespace fugue
