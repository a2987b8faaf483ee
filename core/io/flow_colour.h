// flow_colour.h: pictures of optical flow in the Middlebury colour coding (Baker et al., "A Database
// and Evaluation Methodology for Optical Flow"): the direction of a flow vector picks a hue on a
// colour wheel, its magnitude (relative to the largest in the picture) the saturation; zero flow is
// white, unknown flow black.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "program/host_array.h"

namespace fugue {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
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

// 8-bit RGB pixels, row-major, 3 bytes per pixel, of `flow` (f32 or f64, shape [H, W, 2]): each
// vector divided by the largest magnitude over the known pixels (1 if that is 0) and coloured by
// flow_colour. Throws UserError for another dtype or shape.
std::vector<uint8_t> flow_picture(const HostArray& flow);

// Writes flow_picture(flow) as an 8-bit RGB PNG, atomically (see write_file_atomically). Throws
// UserError("cannot write <path>: ...") when `flow` is not f32/f64 [H, W, 2] with H, W > 0.
void save_flow_png(const std::filesystem::path& path, const HostArray& flow);

}  // namespace fugue
