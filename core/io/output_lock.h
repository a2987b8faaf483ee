// output_lock.h: the advisory lock a run holds on its output folder while it replaces the outputs,
// so that two runs writing into one folder take turns instead of mixing their files.
#pragma once
#include <chrono>
#include <filesystem>

namespace fugue {

class OutputFolderLock {
 public:
  // The lock file, inside the output folder.
  static constexpr const char* kFileName = ".fugue-lock";

  // Takes an exclusive flock(2) on `folder`/.fugue-lock (created if needed; `folder` must exist) and
  // writes this process's id into it. While another process holds it, waits: after `notice_after`
  // logs once "waiting for another fugue run writing FOLDER (pid N)", and after `timeout` throws
  // UserError. Throws UserError when the lock file cannot be created (the folder is not writable).
  // On a file system without flock it logs a warning and goes on unlocked (held() is false).
  OutputFolderLock(const std::filesystem::path& folder, std::chrono::milliseconds timeout,
                   std::chrono::milliseconds notice_after = std::chrono::seconds(1));
  // Removes the lock file, then releases the lock. A process that dies holding it releases it too
  // (the kernel drops flocks); the file it leaves is reused by the next run.
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

  bool held() const { return held_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace fugue
