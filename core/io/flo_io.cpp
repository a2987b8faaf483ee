#include "io/flo_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "io/atomic_file.h"
#include "errors.h"

namespace fugue {

namespace {

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
  Shape shape() const { return {height, width, 2}; }
};

void open_flo(const std::filesystem::path& path, FloFile& f) {
  const std::string where = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(where + ": cannot open: it is a folder");
  errno = 0;
  f.in.open(path, std::ios::binary);
  if (!f.in) {
    const int err = errno;
    throw UserError(where + ": cannot open (" +
                    (err ? std::string(std::strerror(err)) : std::string("unknown reason")) + ")");
  }
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw UserError(where + ": cannot open (" + ec.message() + ")");

  unsigned char header[kHeaderBytes] = {};
  f.in.read(reinterpret_cast<char*>(header), static_cast<std::streamsize>(std::min(size, kHeaderBytes)));
  const uint64_t got = static_cast<uint64_t>(f.in.gcount());
  if (got < 4)
    throw UserError(where + ": " + std::to_string(got) + " bytes: too short for a Middlebury .flo file "
                    "(a 12-byte header: PIEH, width, height)");
  if (std::memcmp(header, kTag, 4) != 0)
    throw UserError(where + ": tag " + describe_tag(header) +
                    " where PIEH was expected: not a Middlebury .flo file");
  if (got < kHeaderBytes)
    throw UserError(where + ": truncated: it ends inside the 12-byte .flo header (" + std::to_string(got) +
                    " bytes)");
  const int64_t width = static_cast<int32_t>(le32(header + 4));
  const int64_t height = static_cast<int32_t>(le32(header + 8));
  if (width <= 0 || height <= 0 || width > kMaxFloExtent || height > kMaxFloExtent)
    throw UserError(where + ": the .flo header gives width " + std::to_string(width) + " and height " +
                    std::to_string(height) + "; each must be 1 to " + std::to_string(kMaxFloExtent));
  // Both are at most 10^6: the product and the byte count fit easily.
  const uint64_t expected = static_cast<uint64_t>(width) * static_cast<uint64_t>(height) * kBytesPerPixel;
  const uint64_t present = size - kHeaderBytes;
  const std::string dims = "width " + std::to_string(width) + ", height " + std::to_string(height) +
                           ", 8 bytes per pixel";
  if (present < expected)
    throw UserError(where + ": truncated: " + std::to_string(present) + " bytes of flow, " +
                    std::to_string(expected) + " expected (" + dims + ")");
  if (present > expected)
    throw UserError(where + ": " + std::to_string(present - expected) + " bytes after the flow (" +
                    std::to_string(expected) + " bytes of flow for " + dims +
                    "): not a well-formed Middlebury .flo file");
  f.width = width;
  f.height = height;
}

}  // namespace

Shape read_flo_shape(const std::filesystem::path& path) {
  FloFile f;
  open_flo(path, f);
  return f.shape();
}

HostArray load_flo(const std::filesystem::path& path, const std::optional<Shape>& expected_shape) {
  const std::string where = path.string();
  FloFile f;
  open_flo(path, f);
  if (expected_shape && *expected_shape != f.shape())
    throw UserError(where + " holds flow of shape " + shape_string(f.shape()) + " (width " +
                    std::to_string(f.width) + ", height " + std::to_string(f.height) +
                    "), but the declaration says " + shape_string(*expected_shape));
  const size_t values = static_cast<size_t>(f.width) * static_cast<size_t>(f.height) * 2;
  std::vector<unsigned char> raw(values * 4);
  f.in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
  if (static_cast<size_t>(f.in.gcount()) != raw.size())
    throw UserError(where + ": cannot read (it changed or shrank while being read)");
  HostArray flow(DType::F32, f.shape());
  float* out = flow.data<float>();
  for (size_t i = 0; i < values; ++i) {
    const uint32_t bits = le32(raw.data() + 4 * i);
    std::memcpy(out + i, &bits, 4);
  }
  return flow;
}

void save_flo(const std::filesystem::path& path, const HostArray& flow) {
  const Shape& s = flow.shape;
  const bool float_type = flow.dtype == DType::F32 || flow.dtype == DType::F64;
  const bool flow_shape = s.size() == 3 && s[2] == 2 && s[0] >= 1 && s[1] >= 1 && s[0] <= kMaxFloExtent &&
                          s[1] <= kMaxFloExtent;
  if (!float_type || !flow_shape)
    throw UserError("cannot write " + path.string() + ": the array is " + std::string(dtype_name(flow.dtype)) +
                    " " + shape_string(s) + "; a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1.." +
                    std::to_string(kMaxFloExtent));
  const size_t values = static_cast<size_t>(s[0]) * static_cast<size_t>(s[1]) * 2;
  std::vector<unsigned char> bytes(kHeaderBytes + 4 * values);
  std::memcpy(bytes.data(), kTag, 4);
  put_le32(bytes.data() + 4, static_cast<uint32_t>(s[1]));  // width
  put_le32(bytes.data() + 8, static_cast<uint32_t>(s[0]));  // height
  for (size_t i = 0; i < values; ++i) {
    const float v = flow.dtype == DType::F32 ? flow.data<float>()[i] : static_cast<float>(flow.data<double>()[i]);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    put_le32(bytes.data() + kHeaderBytes + 4 * i, bits);
  }
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  });
}

}  // namespace fugue
