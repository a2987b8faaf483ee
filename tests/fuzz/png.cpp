// png.cpp: libFuzzer target for the image reader (core/io/image_io): bytes starting with 'P' are read
// as a .pgm (P2/P5), all others as a .png. A clean refusal is a UserError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>

#include "errors.h"
#include "fuzz_support.h"
#include "io/image_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool pgm = size > 0 && data[0] == 'P';
  const auto path = fugue::fuzz::write_input(pgm ? "input.pgm" : "input.png", data, size);
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
