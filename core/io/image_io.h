// image_io.h: read and write grayscale images (PNG and PGM) as f32 arrays of shape [H, W].
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "program/host_array.h"

namespace fugue {

// Reads a .png (8- or 16-bit, any colour type; colour is converted to gray and alpha dropped) or a
// .pgm (binary P5 with maxval up to 65535, or plain P2) file, chosen by the extension (any case).
// Returns f32 [H, W] with values in 0..255 (16-bit PNG and PGM values are scaled by 255/maxval).
// If `expected_shape` is given, the image's dimensions are checked against it before the pixels
// are decoded. Throws UserError, starting with the path, for an unknown extension, a file that
// cannot be opened, is not a PNG/PGM, is truncated or corrupt, or has another shape.
HostArray load_gray_image(const std::filesystem::path& path, const std::optional<Shape>& expected_shape);

// Write `image`, of shape [H, W] with H, W > 0, as an 8-bit gray PNG or binary PGM (P5, maxval
// 255). Any dtype is accepted; values are clamped to 0..255 and rounded to nearest (halves away
// from zero; NaN becomes 0). The write is atomic (see write_file_atomically).
void save_gray_png(const std::filesystem::path& path, const HostArray& image);
void save_pgm(const std::filesystem::path& path, const HostArray& image);

// PNG's CRC-32 (ISO 3309, polynomial 0xEDB88320) of `n` bytes: a chunk's type and data.
uint32_t png_crc(const unsigned char* data, size_t n);

}  // namespace fugue
