// fuzz_support.cpp: see fuzz_support.h.
#include "fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace fugue::fuzz {

namespace fs = std::filesystem;

namespace {
void remove_scratch() {
  std::error_code ec;
  fs::remove_all(scratch_folder(), ec);
}

// FUZZ_SCRATCH if set; else /dev/shm (memory: writing a file there takes microseconds, on a disk's
// file system milliseconds, which would bound the fuzzer to a few hundred inputs a second); else the
// temporary folder.
fs::path scratch_parent() {
  if (const char* env = std::getenv("FUZZ_SCRATCH"); env && *env) return env;
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return fs::temp_directory_path();
}

}  // namespace

const fs::path& scratch_folder() {
  // Never destroyed: remove_scratch runs at exit, after static destructors might have.
  static const fs::path* folder = [] {
    auto* f = new fs::path(scratch_parent() / ("fugue-fuzz-" + std::to_string(::getpid())));
    std::error_code ec;
    fs::remove_all(*f, ec);
    fs::create_directories(*f);
    return f;
  }();
  static const bool registered = std::atexit(remove_scratch) == 0;
  (void)registered;
  return *folder;
}

fs::path write_input(const std::string& name, const uint8_t* data, size_t size) {
  const fs::path path = scratch_folder() / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw std::runtime_error("fuzz: cannot write " + path.string());
  return path;
}

void unexpected(const char* target, const char* what) {
  std::fprintf(stderr, "\nfuzz_%s: unexpected failure (not a clean refusal): %s\n", target, what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace fugue::fuzz
