#include "io/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "errors.h"

namespace fugue {

namespace {

// The pid the holder wrote into the lock file ("" if none yet).
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

// Holders remove the lock file before releasing it, so a waiter may win the lock on a file that is no
// longer in the folder: it then checks that the file it locked is still the one at the path, and
// starts over if not (the usual flock-and-unlink protocol).
OutputFolderLock::OutputFolderLock(const std::filesystem::path& folder, std::chrono::milliseconds timeout,
                                   std::chrono::milliseconds notice_after)
    : path_(folder / kFileName) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  bool noticed = false;
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EACCES) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);  // another user's
    if (fd_ < 0) {
      const int err = errno;
      throw UserError("cannot write into the output folder " + folder.string() + ": " + std::strerror(err));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK || err == EINTR) {
        const auto waited = clock::now() - start;
        const std::string holder = holder_of(fd_);
        const std::string who = holder.empty() ? "" : " (pid " + holder + ")";
        ::close(fd_);
        fd_ = -1;
        if (waited >= timeout) {
          char seconds[32];
          std::snprintf(seconds, sizeof seconds, "%g", std::chrono::duration<double>(timeout).count());
          throw UserError("gave up after " + std::string(seconds) + " s waiting for another fugue run writing " +
                          folder.string() + who + " to finish; nothing was written");
        }
        if (!noticed && waited >= notice_after) {
          spdlog::warn("waiting for another fugue run writing {}{} to finish", folder.string(), who);
          noticed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      // No flock on this file system (ENOLCK, EOPNOTSUPP, ...): go on without it.
      spdlog::warn("cannot lock {} ({}): runs writing into this folder at the same time may mix their files",
                   path_.string(), std::strerror(err));
      return;
    }
    struct stat locked {}, named {};
    if (::fstat(fd_, &locked) == 0 && ::stat(path_.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
        locked.st_ino == named.st_ino)
      break;
    ::close(fd_);  // the holder before us removed this file: lock the one at the path now
    fd_ = -1;
  }
  held_ = true;
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

OutputFolderLock::~OutputFolderLock() {
  if (fd_ < 0) return;
  if (held_) ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace fugue
