// npy.cpp: libFuzzer target for the .npy reader (core/io/npy_io): any bytes, read as a whole file.
// A clean refusal is a UserError; anything else (a crash, a leak, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>

#include "errors.h"
#include "fuzz_support.h"
#include "io/npy_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fugue::fuzz::write_input("input.npy", data, size);
  try {
    const fugue::HostArray a = fugue::load_npy(path, std::nullopt, std::nullopt);
    // What was read is what the header said.
    if (a.bytes.size() != static_cast<size_t>(a.elements()) * fugue::dtype_size(a.dtype))
      fugue::fuzz::unexpected("npy", "the array's byte count does not match its shape");
  } catch (const fugue::UserError&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("npy", e.what());
  }
  return 0;
}
