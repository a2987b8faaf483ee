// flow_files.cpp: .flo files and colour pictures of flow (see flow_files.h).
#include "flow_files.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

// The PNG encoder, compiled into this file with internal linkage: the core links its own copy, and a
// plugin exports nothing but its entry point.
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#endif
#include <stb/stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace fugue::stencil {

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Shared

// "f32 [3, 4]" (an array), or the SDK's description of anything else.
std::string describe_value(const fugue_type& t) {
  if (t.kind != FUGUE_KIND_ARRAY) return sdk::type_string(t);
  return std::string(sdk::dtype_name(t.dtype)) + " " + sdk::shape_string(t);
}

std::string system_reason(int err, const char* otherwise) {
  return err ? std::string(std::strerror(err)) : std::string(otherwise);
}

// The array's values through HostView (which reads, whatever its constness says), after checking
// that the core handed over as many bytes as its type needs.
sdk::HostView values_of(const fugue_host_array& array) {
  if (!array.type) throw std::logic_error("host array without a type");
  const uint64_t needed =
      static_cast<uint64_t>(sdk::elements(*array.type)) * static_cast<uint64_t>(sdk::dtype_size(array.type->dtype));
  if (array.bytes < needed || (needed > 0 && !array.data))
    throw std::logic_error("host array of " + std::to_string(array.bytes) + " bytes for " +
                           describe_value(*array.type) + " (" + std::to_string(needed) + " needed)");
  return sdk::HostView(const_cast<fugue_host_array&>(array));
}

// Writes `bytes` to `path`, replacing what is there.
void write_bytes(const fs::path& path, const unsigned char* bytes, size_t size) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw sdk::InvalidArgument("cannot write: it is a folder");
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) throw sdk::InvalidArgument("cannot write (" + system_reason(errno, "cannot create the file") + ")");
  errno = 0;
  const size_t written = size ? std::fwrite(bytes, 1, size, file) : 0;
  const int write_err = errno;
  errno = 0;
  const int closed = std::fclose(file);
  const int close_err = errno;
  if (written != size) throw sdk::InvalidArgument("cannot write (" + system_reason(write_err, "the write failed") + ")");
  if (closed != 0) throw sdk::InvalidArgument("cannot write (" + system_reason(close_err, "closing failed") + ")");
}

// ---------------------------------------------------------------------------------------------
// .flo

constexpr unsigned char kTag[4] = {'P', 'I', 'E', 'H'};  // 202021.25f, little-endian
constexpr uint64_t kHeaderBytes = 12;
constexpr uint64_t kBytesPerPixel = 8;  // u and v, float32 each

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

void put_le32(unsigned char* p, uint32_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
  p[2] = static_cast<unsigned char>(v >> 16);
  p[3] = static_cast<unsigned char>(v >> 24);
}

// "'PIEx' (0x50494578)": the four bytes as characters ('?' where not printable) and in hex, in
// file order.
std::string describe_tag(const unsigned char* tag) {
  std::string text, hex = "0x";
  for (int i = 0; i < 4; ++i) {
    text += (tag[i] >= 32 && tag[i] < 127) ? static_cast<char>(tag[i]) : '?';
    char digits[3];
    std::snprintf(digits, sizeof digits, "%02x", tag[i]);
    hex += digits;
  }
  return "'" + text + "' (" + hex + ")";
}

// An open .flo file whose header has been checked against its size.
struct FloFile {
  std::ifstream in;
  int64_t width = 0, height = 0;
  std::vector<int64_t> shape() const { return {height, width, 2}; }
};

void open_flo(const fs::path& path, FloFile& f) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw sdk::InvalidArgument("cannot open: it is a folder");
  errno = 0;
  f.in.open(path, std::ios::binary);
  if (!f.in) throw sdk::InvalidArgument("cannot open (" + system_reason(errno, "unknown reason") + ")");
  const uint64_t size = fs::file_size(path, ec);
  if (ec) throw sdk::InvalidArgument("cannot open (" + ec.message() + ")");

  unsigned char header[kHeaderBytes] = {};
  f.in.read(reinterpret_cast<char*>(header), static_cast<std::streamsize>(std::min(size, kHeaderBytes)));
  const uint64_t got = static_cast<uint64_t>(f.in.gcount());
  if (got < 4)
    throw sdk::InvalidArgument(std::to_string(got) +
                               " bytes: too short for a Middlebury .flo file (a 12-byte header: PIEH, width, height)");
  if (std::memcmp(header, kTag, 4) != 0)
    throw sdk::InvalidArgument("tag " + describe_tag(header) + " where PIEH was expected: not a Middlebury .flo file");
  if (got < kHeaderBytes)
    throw sdk::InvalidArgument("truncated: it ends inside the 12-byte .flo header (" + std::to_string(got) +
                               " bytes)");
  const int64_t width = static_cast<int32_t>(le32(header + 4));
  const int64_t height = static_cast<int32_t>(le32(header + 8));
  if (width <= 0 || height <= 0 || width > kMaxFloExtent || height > kMaxFloExtent)
    throw sdk::InvalidArgument("the .flo header gives width " + std::to_string(width) + " and height " +
                               std::to_string(height) + "; each must be 1 to " + std::to_string(kMaxFloExtent));
  // Both are at most 10^6: the product and the byte count fit easily.
  const uint64_t expected = static_cast<uint64_t>(width) * static_cast<uint64_t>(height) * kBytesPerPixel;
  const uint64_t present = size - kHeaderBytes;
  const std::string dims =
      "width " + std::to_string(width) + ", height " + std::to_string(height) + ", 8 bytes per pixel";
  if (present < expected)
    throw sdk::InvalidArgument("truncated: " + std::to_string(present) + " bytes of flow, " +
                               std::to_string(expected) + " expected (" + dims + ")");
  if (present > expected)
    throw sdk::InvalidArgument(std::to_string(present - expected) + " bytes after the flow (" +
                               std::to_string(expected) + " bytes of flow for " + dims +
                               "): not a well-formed Middlebury .flo file");
  f.width = width;
  f.height = height;
}

// ---------------------------------------------------------------------------------------------
// Colours

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

void append_to_vector(void* context, void* data, int size) {
  auto* buffer = static_cast<std::vector<unsigned char>*>(context);
  const auto* bytes = static_cast<const unsigned char*>(data);
  buffer->insert(buffer->end(), bytes, bytes + size);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// .flo

std::vector<int64_t> read_flo_shape(const fs::path& path) {
  FloFile f;
  open_flo(path, f);
  return f.shape();
}

void read_flo(const fs::path& path, float* out, const std::vector<int64_t>& expected_shape) {
  FloFile f;
  open_flo(path, f);
  if (expected_shape != f.shape())
    throw sdk::InvalidArgument("holds flow of shape " + sdk::shape_string(f.shape()) + " (width " +
                               std::to_string(f.width) + ", height " + std::to_string(f.height) +
                               "), but the declaration says " + sdk::shape_string(expected_shape));
  const size_t values = static_cast<size_t>(f.width) * static_cast<size_t>(f.height) * 2;
  std::vector<unsigned char> raw(values * 4);
  f.in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (static_cast<size_t>(f.in.gcount()) != raw.size())
    throw sdk::InvalidArgument("cannot read (it changed or shrank while being read)");
  for (size_t i = 0; i < values; ++i) {
    const uint32_t bits = le32(raw.data() + 4 * i);
    std::memcpy(out + i, &bits, 4);
  }
}

void check_flo_type(const fugue_type& t) {
  const bool float_type = t.dtype == FUGUE_DTYPE_F32 || t.dtype == FUGUE_DTYPE_F64;
  const bool flow_shape = t.kind == FUGUE_KIND_ARRAY && t.rank == 3 && t.shape[2] == 2 && t.shape[0] >= 1 &&
                          t.shape[1] >= 1 && t.shape[0] <= kMaxFloExtent && t.shape[1] <= kMaxFloExtent;
  if (!float_type || !flow_shape)
    throw sdk::InvalidArgument("a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1.." +
                               std::to_string(kMaxFloExtent) + "; this is " + describe_value(t));
}

void write_flo(const fs::path& path, const fugue_host_array& flow) {
  if (!flow.type) throw std::logic_error("host array without a type");
  check_flo_type(*flow.type);
  const sdk::HostView view = values_of(flow);
  const fugue_type& t = *flow.type;
  const size_t values = static_cast<size_t>(t.shape[0]) * static_cast<size_t>(t.shape[1]) * 2;
  std::vector<unsigned char> bytes(kHeaderBytes + 4 * values);
  std::memcpy(bytes.data(), kTag, 4);
  put_le32(bytes.data() + 4, static_cast<uint32_t>(t.shape[1]));  // width
  put_le32(bytes.data() + 8, static_cast<uint32_t>(t.shape[0]));  // height
  const auto* f32 = static_cast<const float*>(flow.data);
  for (size_t i = 0; i < values; ++i) {
    // f32 bit for bit (NaN payloads and -0 included), f64 rounded.
    const float v = t.dtype == FUGUE_DTYPE_F32 ? f32[i] : static_cast<float>(view.get(static_cast<int64_t>(i)));
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put_le32(bytes.data() + kHeaderBytes + 4 * i, bits);
  }
  write_bytes(path, bytes.data(), bytes.size());
}

// ---------------------------------------------------------------------------------------------
// Colours

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

void check_flow_picture_type(const fugue_type& t) {
  const bool float_type = t.dtype == FUGUE_DTYPE_F32 || t.dtype == FUGUE_DTYPE_F64;
  if (!float_type || t.kind != FUGUE_KIND_ARRAY || t.rank != 3 || t.shape[2] != 2 || t.shape[0] <= 0 ||
      t.shape[1] <= 0)
    throw sdk::InvalidArgument("a flow picture needs f32 or f64 flow of shape [H, W, 2] with H, W > 0; this is " +
                               describe_value(t));
  // stb_image_write sizes its buffers with int; keep well inside that.
  const int64_t h = t.shape[0], w = t.shape[1];
  if (h > INT_MAX / 8 || w > INT_MAX / 8 || (3 * w + 1) * h > INT_MAX / 2)
    throw sdk::InvalidArgument("flow of shape " + sdk::shape_string(t) + " is too large for a picture");
}

std::vector<uint8_t> flow_picture(const fugue_host_array& flow) {
  if (!flow.type) throw std::logic_error("host array without a type");
  check_flow_picture_type(*flow.type);
  const sdk::HostView view = values_of(flow);
  const size_t pixels = static_cast<size_t>(flow.type->shape[0]) * static_cast<size_t>(flow.type->shape[1]);
  double largest = 0;
  for (size_t i = 0; i < pixels; ++i) {
    const double u = view.get(static_cast<int64_t>(2 * i)), v = view.get(static_cast<int64_t>(2 * i + 1));
    if (!flow_is_unknown(u, v)) largest = std::max(largest, std::sqrt(u * u + v * v));
  }
  if (!(largest > 0) || !std::isfinite(largest)) largest = 1;
  std::vector<uint8_t> rgb(3 * pixels);
  for (size_t i = 0; i < pixels; ++i) {
    const double u = view.get(static_cast<int64_t>(2 * i)), v = view.get(static_cast<int64_t>(2 * i + 1));
    const Rgb c = flow_is_unknown(u, v) ? Rgb{} : flow_colour(u / largest, v / largest);
    rgb[3 * i] = c.r;
    rgb[3 * i + 1] = c.g;
    rgb[3 * i + 2] = c.b;
  }
  return rgb;
}

void write_flow_png(const fs::path& path, const fugue_host_array& flow) {
  const std::vector<uint8_t> rgb = flow_picture(flow);  // checks the type
  const int height = static_cast<int>(flow.type->shape[0]), width = static_cast<int>(flow.type->shape[1]);
  std::vector<unsigned char> png;
  if (!stbi_write_png_to_func(append_to_vector, &png, width, height, 3, rgb.data(), 3 * width))
    throw sdk::InvalidArgument("PNG encoding failed");
  write_bytes(path, png.data(), png.size());
}

}  // namespace fugue::stencil
