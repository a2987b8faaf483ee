// fuzz_support.h: what the libFuzzer targets share. The readers under test take a path, so each input
// is written to a file of this process's own scratch folder first.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace fugue::fuzz {

// This process's scratch folder (/dev/shm/fugue-fuzz-<pid>, or under FUZZ_SCRATCH or the temporary
// folder), made on first use and removed at exit.
const std::filesystem::path& scratch_folder();

// Writes the bytes to scratch_folder()/name, replacing what is there; returns the path.
std::filesystem::path write_input(const std::string& name, const uint8_t* data, size_t size);

// A failure the target does not expect (an exception other than the readers' documented one): print
// it and abort, so that libFuzzer keeps the input as a crash.
[[noreturn]] void unexpected(const char* target, const char* what);

}  // namespace fugue::fuzz
