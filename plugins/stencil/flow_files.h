// flow_files.h: optical flow in files: the Middlebury .flo format (read and write) and the Middlebury
// colour-coded picture of a flow (written as an 8-bit RGB PNG). The stencil plugin's `flo` and
// `flow_picture` formats (flow_formats.h) are built on these.
//
// The .flo format: the 4 bytes "PIEH" (the float 202021.25, little-endian), the width and the height as
// little-endian int32, then width * height pairs (u, v) of little-endian float32, row-major; nothing
// after them. u is the horizontal and v the vertical (downward) displacement in pixels; values over
// 1e9 in magnitude mark "unknown" flow and are read as they are.
//
// The colour coding (Baker et al., "A Database and Evaluation Methodology for Optical Flow"): the
// direction of a flow vector picks a hue on a colour wheel, its magnitude (relative to the largest in
// the picture) the saturation; zero flow is white, unknown flow black.
//
// Errors are sdk::InvalidArgument whose message does not name the file: the core puts "<path>: " in
// front of a format's messages.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::stencil {

// ---------------------------------------------------------------------------------------------
// .flo files

// Largest width or height accepted in a .flo header (and written).
constexpr int64_t kMaxFloExtent = 1000000;

// The shape [H, W, 2] a .flo file holds. Reads only the 12-byte header but checks it against the
// file's size, so a file this accepts can be read whole. Throws InvalidArgument when the file cannot
// be opened (a folder, a missing file: with the system's reason), its tag is not PIEH, a dimension is
// not in 1..kMaxFloExtent, or the file holds fewer ("truncated: N bytes of flow, M expected") or more
// ("K bytes after the flow") bytes than the header implies.
std::vector<int64_t> read_flo_shape(const std::filesystem::path& path);

// Reads a whole .flo file into `out` (H * W * 2 floats) after the checks of read_flo_shape. If the
// file holds another shape than `expected_shape`, throws InvalidArgument naming both before the flow
// is read.
void read_flo(const std::filesystem::path& path, float* out, const std::vector<int64_t>& expected_shape);

// Returns when a .flo file can hold values of `type`: f32 or f64 arrays of shape [H, W, 2] with H, W
// in 1..kMaxFloExtent. Otherwise throws InvalidArgument ("a .flo file holds f32 or f64 flow of shape
// [H, W, 2] with H, W in 1..1000000; this is f32 [3, 4]").
void check_flo_type(const fugue_type& type);

// Writes `flow` (check_flo_type first; f64 is rounded to f32, f32 is written bit for bit) to `path`
// directly: the core hands formats a staging file it renames into place.
void write_flo(const std::filesystem::path& path, const fugue_host_array& flow);

// ---------------------------------------------------------------------------------------------
// Colour pictures of flow

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const { return !(*this == o); }
};

// The wheel's 55 fully saturated hues: red to yellow (15 steps), yellow to green (6), green to cyan
// (4), cyan to blue (11), blue to magenta (13), magenta back towards red (6). Each segment starts at
// its first colour and moves towards the next one in equal steps (rounded down).
constexpr int kFlowWheelColours = 55;
const std::array<Rgb, kFlowWheelColours>& flow_colour_wheel();

// Flow whose u or v exceeds this in magnitude, or is NaN, is unknown (the .flo convention).
constexpr double kUnknownFlowThreshold = 1e9;
bool flow_is_unknown(double u, double v);

// The colour of one normalised flow vector (u to the right, v downwards; magnitude 1 is the
// picture's largest). The hue comes from atan2(-v, -u) / pi in [-1, 1], mapped linearly onto the
// wheel's 55 colours and interpolated between neighbours; magnitude r <= 1 moves every channel from
// white towards the hue (1 - r * (1 - c)); r > 1 keeps the hue darkened to 75%. Channels are
// rounded down to 8 bits. Unknown flow (flow_is_unknown) is black.
Rgb flow_colour(double u, double v);

// Returns when values of `type` can be pictured: f32 or f64 arrays of shape [H, W, 2] with H, W > 0,
// small enough for the PNG encoder's int sizes. Otherwise throws InvalidArgument ("a flow picture
// needs f32 or f64 flow of shape [H, W, 2] with H, W > 0; this is i32 [2, 2, 2]").
void check_flow_picture_type(const fugue_type& type);

// 8-bit RGB pixels, row-major, 3 bytes per pixel, of `flow` (check_flow_picture_type first): each
// vector divided by the largest magnitude over the known pixels (1 if that is 0) and coloured by
// flow_colour.
std::vector<uint8_t> flow_picture(const fugue_host_array& flow);

// Writes flow_picture(flow) as an 8-bit RGB PNG to `path` directly (a staging file, as write_flo).
void write_flow_png(const std::filesystem::path& path, const fugue_host_array& flow);

}  // namespace fugue::stencil
