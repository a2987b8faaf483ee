#include "io/flow_colour.h"

#include <stb/stb_image_write.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "io/atomic_file.h"
#include "errors.h"

namespace fugue {

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Segment {
  int steps;
  Rgb from, to;  // corners of the RGB cube; exactly one channel differs
};

// Red -> yellow -> green -> cyan -> blue -> magenta -> (red).
constexpr Segment kSegments[] = {
    {15, {255, 0, 0}, {255, 255, 0}},  // RY
    {6, {255, 255, 0}, {0, 255, 0}},   // YG
    {4, {0, 255, 0}, {0, 255, 255}},   // GC
    {11, {0, 255, 255}, {0, 0, 255}},  // CB
    {13, {0, 0, 255}, {255, 0, 255}},  // BM
    {6, {255, 0, 255}, {255, 0, 0}},   // MR
};

uint8_t step_channel(uint8_t from, uint8_t to, int i, int steps) {
  const int moved = 255 * i / steps;  // rounded down
  if (to > from) return static_cast<uint8_t>(moved);
  if (to < from) return static_cast<uint8_t>(255 - moved);
  return from;
}

std::array<Rgb, kFlowWheelColours> make_wheel() {
  std::array<Rgb, kFlowWheelColours> wheel{};
  int k = 0;
  for (const Segment& s : kSegments)
    for (int i = 0; i < s.steps; ++i)
      wheel[k++] = Rgb{step_channel(s.from.r, s.to.r, i, s.steps), step_channel(s.from.g, s.to.g, i, s.steps),
                       step_channel(s.from.b, s.to.b, i, s.steps)};
  return wheel;
}

void check_flow(const HostArray& flow, const std::string& what) {
  const Shape& s = flow.shape;
  const bool float_type = flow.dtype == DType::F32 || flow.dtype == DType::F64;
  if (!float_type || s.size() != 3 || s[2] != 2 || s[0] <= 0 || s[1] <= 0)
    throw UserError(what + "the array is " + std::string(dtype_name(flow.dtype)) + " " + shape_string(s) +
                    "; a flow picture needs f32 or f64 flow of shape [H, W, 2] with H, W > 0");
  // stb_image_write sizes its buffers with int; keep well inside that.
  if (s[0] > INT_MAX / 8 || s[1] > INT_MAX / 8 || (3 * s[1] + 1) * s[0] > INT_MAX / 2)
    throw UserError(what + "flow of shape " + shape_string(s) + " is too large for a picture");
}

void append_to_vector(void* context, void* data, int size) {
  auto* buffer = static_cast<std::vector<unsigned char>*>(context);
  const auto* bytes = static_cast<const unsigned char*>(data);
  buffer->insert(buffer->end(), bytes, bytes + size);
}

}  // namespace

const std::array<Rgb, kFlowWheelColours>& flow_colour_wheel() {
  static const std::array<Rgb, kFlowWheelColours> wheel = make_wheel();
  return wheel;
}

bool flow_is_unknown(double u, double v) {
  return std::isnan(u) || std::isnan(v) || std::fabs(u) > kUnknownFlowThreshold ||
         std::fabs(v) > kUnknownFlowThreshold;
}

Rgb flow_colour(double u, double v) {
  if (flow_is_unknown(u, v)) return Rgb{};
  const auto& wheel = flow_colour_wheel();
  const double radius = std::sqrt(u * u + v * v);
  const double angle = std::atan2(-v, -u) / kPi;  // -1 .. 1
  const double position = (angle + 1) / 2 * (kFlowWheelColours - 1);
  const int k0 = std::clamp(static_cast<int>(std::floor(position)), 0, kFlowWheelColours - 1);
  const int k1 = (k0 + 1) % kFlowWheelColours;
  const double f = position - k0;
  auto channel = [&](uint8_t c0, uint8_t c1) {
    double c = (1 - f) * (c0 / 255.0) + f * (c1 / 255.0);
    if (radius <= 1)
      c = 1 - radius * (1 - c);  // towards white as the flow shrinks
    else
      c *= 0.75;  // beyond the normalisation range
    return static_cast<uint8_t>(std::clamp(std::floor(255 * c), 0.0, 255.0));
  };
  return Rgb{channel(wheel[k0].r, wheel[k1].r), channel(wheel[k0].g, wheel[k1].g),
             channel(wheel[k0].b, wheel[k1].b)};
}

std::vector<uint8_t> flow_picture(const HostArray& flow) {
  check_flow(flow, "flow picture: ");
  const size_t pixels = static_cast<size_t>(flow.shape[0]) * static_cast<size_t>(flow.shape[1]);
  double largest = 0;
  for (size_t i = 0; i < pixels; ++i) {
    const double u = flow.get(static_cast<int64_t>(2 * i)), v = flow.get(static_cast<int64_t>(2 * i + 1));
    if (!flow_is_unknown(u, v)) largest = std::max(largest, std::sqrt(u * u + v * v));
  }
  if (!(largest > 0) || !std::isfinite(largest)) largest = 1;
  std::vector<uint8_t> rgb(3 * pixels);
  for (size_t i = 0; i < pixels; ++i) {
    const double u = flow.get(static_cast<int64_t>(2 * i)), v = flow.get(static_cast<int64_t>(2 * i + 1));
    const Rgb c = flow_is_unknown(u, v) ? Rgb{} : flow_colour(u / largest, v / largest);
    rgb[3 * i] = c.r;
    rgb[3 * i + 1] = c.g;
    rgb[3 * i + 2] = c.b;
  }
  return rgb;
}

void save_flow_png(const std::filesystem::path& path, const HostArray& flow) {
  const std::string what = "cannot write " + path.string() + ": ";
  check_flow(flow, what);
  const std::vector<uint8_t> rgb = flow_picture(flow);
  const int height = static_cast<int>(flow.shape[0]), width = static_cast<int>(flow.shape[1]);
  std::vector<unsigned char> png;
  if (!stbi_write_png_to_func(append_to_vector, &png, width, height, 3, rgb.data(), 3 * width))
    throw UserError(what + "PNG encoding failed");
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  });
}

}  // namespace fugue
