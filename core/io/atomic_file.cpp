#include "io/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

#include "errors.h"

namespace fugue {

namespace {

// Pid and a per-process counter make the name unique between processes and between threads.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned long> counter{0};
  std::string name = "." + path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                     std::to_string(counter.fetch_add(1));
  return path.parent_path() / name;
}

// errno is the only reason an fstream gives; fall back to a plain phrase when it is not set.
std::string errno_reason(int err, const char* fallback) {
  return err != 0 ? std::string(std::strerror(err)) : std::string(fallback);
}

void remove_quietly(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

std::string folder_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? "." : path.parent_path().string();
}

}  // namespace

void check_file_writable(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.filename().empty() || std::filesystem::is_directory(path, ec))
    throw UserError("cannot write " + path.string() + ": the path names a folder, not a file");
  const std::filesystem::path temp = temp_path_for(path);
  errno = 0;
  std::ofstream probe(temp, std::ios::binary | std::ios::trunc);
  const int err = errno;
  const bool ok = static_cast<bool>(probe);
  probe.close();
  remove_quietly(temp);
  if (!ok)
    throw UserError("cannot write " + path.string() + ": cannot create a file in " + folder_of(path) + " (" +
                    errno_reason(err, "open failed") + ")");
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  if (path.filename().empty())
    throw UserError("cannot write " + path.string() + ": the path names a folder, not a file");
  const std::filesystem::path temp = temp_path_for(path);

  errno = 0;
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int err = errno;
    remove_quietly(temp);
    throw UserError("cannot write " + path.string() + ": cannot create a file in " + folder_of(path) + " (" +
                    errno_reason(err, "open failed") + ")");
  }

  try {
    errno = 0;
    write(out);
    out.flush();
    if (!out) {
      const int err = errno;
      throw UserError("cannot write " + path.string() + ": " + errno_reason(err, "the write failed"));
    }
    errno = 0;
    out.close();
    if (out.fail()) {
      const int err = errno;
      throw UserError("cannot write " + path.string() + ": " + errno_reason(err, "closing failed"));
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) throw UserError("cannot write " + path.string() + ": " + ec.message());
  } catch (...) {
    if (out.is_open()) out.close();
    remove_quietly(temp);
    throw;
  }
}

}  // namespace fugue
