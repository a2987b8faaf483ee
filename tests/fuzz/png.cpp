// png.cpp: libFuzzer target for the image reader (core/io/image_io): bytes starting with 'P' are read
// as a .pgm (P2/P5), all others as a .png. A clean refusal is a UserError; anything else is a finding.
//
// The reader refuses a chunk whose CRC does not match, so nearly every mutation of a PNG would stop
// there: unless the input's size is a multiple of 4, the target recomputes every chunk's CRC first,
// so that mutations reach the decoder (inputs of the other sizes keep the CRC check itself fuzzed).
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <vector>

#include "errors.h"
#include "fuzz_support.h"
#include "io/image_io.h"

namespace {

void fix_crcs(std::vector<uint8_t>& f) {
  const auto be32 = [&](size_t i) {
    return uint32_t{f[i]} << 24 | uint32_t{f[i + 1]} << 16 | uint32_t{f[i + 2]} << 8 | uint32_t{f[i + 3]};
  };
  size_t at = 8;
  while (f.size() >= at + 12) {
    const uint64_t length = be32(at);
    if (length > f.size() - at - 12) return;
    const uint32_t crc = fugue::png_crc(f.data() + at + 4, 4 + length);
    for (int i = 0; i < 4; ++i) f[at + 8 + length + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    at += 12 + length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool pgm = size > 0 && data[0] == 'P';
  std::vector<uint8_t> bytes(data, data + size);
  if (!pgm && size % 4 != 0) fix_crcs(bytes);
  const auto path = fugue::fuzz::write_input(pgm ? "input.pgm" : "input.png", bytes.data(), bytes.size());
  try {
    const fugue::HostArray a = fugue::load_gray_image(path, std::nullopt);
    if (a.dtype != fugue::DType::F32 || a.shape.size() != 2 || a.shape[0] <= 0 || a.shape[1] <= 0)
      fugue::fuzz::unexpected("png", "an image that is not f32 [H, W] with H, W > 0");
    for (int64_t i = 0, n = a.elements(); i < n; ++i) {
      const float v = a.data<float>()[i];
      if (!(v >= 0.0f && v <= 255.0f)) fugue::fuzz::unexpected("png", "a pixel outside 0..255");
    }
  } catch (const fugue::UserError&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("png", e.what());
  }
  return 0;
}
