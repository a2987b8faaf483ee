// flo_io.h: read and write optical flow in the Middlebury .flo format as f32 arrays of shape [H, W, 2].
//
// The format: the 4 bytes "PIEH" (the float 202021.25, little-endian), the width and the height as
// little-endian int32, then width * height pairs (u, v) of little-endian float32, row-major; nothing
// after them. u is the horizontal and v the vertical (downward) displacement in pixels; values over
// 1e9 in magnitude mark "unknown" flow and are read as they are.
#pragma once
#include <filesystem>
#include <optional>

#include "program/host_array.h"

namespace fugue {

// Largest width or height accepted in a .flo header.
constexpr int64_t kMaxFloExtent = 1000000;

// The shape [H, W, 2] a .flo file holds. Reads only the 12-byte header but checks it against the
// file's size, so a file this accepts can be read whole. Throws UserError, starting with the path,
// when the file cannot be opened, its tag is not PIEH, a dimension is not in 1..kMaxFloExtent, or
// the file holds fewer ("truncated: N bytes of flow, M expected") or more ("K bytes after the flow")
// bytes than the header implies.
Shape read_flo_shape(const std::filesystem::path& path);

// Reads a whole .flo file as f32 [H, W, 2] (the checks of read_flo_shape first). If
// `expected_shape` is given and the file holds another shape, throws UserError naming both before
// the flow is read.
HostArray load_flo(const std::filesystem::path& path, const std::optional<Shape>& expected_shape);

// Writes `flow`, f32 or f64 of shape [H, W, 2] with H, W in 1..kMaxFloExtent (f64 is rounded to
// f32), atomically (see write_file_atomically). Throws UserError("cannot write <path>: ...") naming
// the array's dtype and shape otherwise.
void save_flo(const std::filesystem::path& path, const HostArray& flow);

}  // namespace fugue
