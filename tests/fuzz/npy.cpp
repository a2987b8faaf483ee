// npy.cpp: libFuzzer target for the .npy reader (core/io/npy_io): any bytes, read as a whole file, as
// the loader does (the header, then the data size, then the data). A clean refusal is a UserError;
// anything else (a crash, a leak, another exception, or a byte count that is not the shape's) is a
// finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>

#include "errors.h"
#include "fuzz_support.h"
#include "io/npy_io.h"

namespace {

// The shape's byte count, computed independently of the reader; false if it is beyond uint64.
bool exact_bytes(const fugue::NpyHeader& h, uint64_t* bytes) {
  *bytes = fugue::dtype_size(h.dtype);
  bool overflow = false;
  for (int64_t e : h.shape) overflow |= __builtin_mul_overflow(*bytes, static_cast<uint64_t>(e), bytes);
  return !overflow;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fugue::fuzz::write_input("input.npy", data, size);
  try {
    const fugue::NpyHeader h = fugue::read_npy_header(path);
    const uint64_t bytes = fugue::check_npy_data_size(path, h);
    uint64_t exact = 0;
    if (!exact_bytes(h, &exact) || exact != bytes)
      fugue::fuzz::unexpected("npy", "the data size accepted is not the shape's byte count (it wrapped)");
    if (h.data_offset + bytes != size) fugue::fuzz::unexpected("npy", "the header and data are not the whole file");
    const fugue::HostArray a = fugue::load_npy(path, std::nullopt, std::nullopt);
    if (a.dtype != h.dtype || a.shape != h.shape || a.bytes.size() != bytes)
      fugue::fuzz::unexpected("npy", "load_npy read another array than the header says");
  } catch (const fugue::UserError&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("npy", e.what());
  }
  return 0;
}
