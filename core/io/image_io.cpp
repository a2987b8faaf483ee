#include "io/image_io.h"

#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "io/atomic_file.h"
#include "errors.h"

namespace fugue {

namespace {

std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// The whole file: its size is real (not a claim in a header), so reading it is safe.
std::vector<unsigned char> read_whole_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError(where + ": cannot open: it is a folder");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw UserError(where + ": cannot open (" +
                    (err ? std::string(std::strerror(err)) : std::string("unknown reason")) + ")");
  }
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw UserError(where + ": cannot open (" + ec.message() + ")");
  std::vector<unsigned char> data(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size)
    throw UserError(where + ": cannot read (it changed or shrank while being read)");
  return data;
}

void check_shape(const std::string& where, int64_t height, int64_t width,
                 const std::optional<Shape>& expected) {
  const Shape found{height, width};
  if (expected && *expected != found)
    throw UserError(where + " holds a " + std::to_string(width) + "x" + std::to_string(height) +
                    " image, shape " + shape_string(found) + " (height, width), but the declaration says " +
                    shape_string(*expected));
}

// ---- PNG (through stb_image)

struct StbFree {
  void operator()(void* p) const { stbi_image_free(p); }
};


// Every chunk's CRC, up to IEND: stb_image does not check them, and a corrupted file must not
// decode into plausible pixels.
void check_png_chunks(const std::string& where, const std::vector<unsigned char>& file) {
  size_t at = 8;
  auto be32 = [&](size_t i) {
    return uint32_t{file[i]} << 24 | uint32_t{file[i + 1]} << 16 | uint32_t{file[i + 2]} << 8 | uint32_t{file[i + 3]};
  };
  while (true) {
    if (file.size() - at < 12) throw UserError(where + " is truncated: it ends inside a PNG chunk header (byte " +
                                              std::to_string(at) + ")");
    const uint64_t length = be32(at);
    if (length > file.size() - at - 12)
      throw UserError(where + " is truncated or corrupt: a chunk at byte " + std::to_string(at) + " claims " +
                      std::to_string(length) + " bytes, more than the file holds");
    const uint32_t stored = be32(at + 8 + length);
    if (png_crc(file.data() + at + 4, 4 + length) != stored)
      throw UserError(where + " is corrupt: the CRC of the '" + std::string(file.begin() + at + 4, file.begin() + at + 8) +
                      "' chunk at byte " + std::to_string(at) + " does not match its contents");
    const bool end = std::memcmp(file.data() + at + 4, "IEND", 4) == 0;
    at += 12 + length;
    if (end) return;
  }
}

HostArray load_png(const std::filesystem::path& path, const std::optional<Shape>& expected) {
  const std::string where = path.string();
  const std::vector<unsigned char> file = read_whole_file(path);
  static const unsigned char kSignature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
  if (file.size() < 8 || std::memcmp(file.data(), kSignature, 8) != 0)
    throw UserError(where + " is not a PNG file (it does not start with the PNG signature)");
  if (file.size() > static_cast<size_t>(INT_MAX))
    throw UserError(where + " is too large for the PNG reader (over 2 GiB)");
  check_png_chunks(where, file);
  const int len = static_cast<int>(file.size());

  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(file.data(), len, &w, &h, &comp))
    throw UserError(where + " is not a valid PNG file (" + stbi_failure_reason() + ")");
  check_shape(where, h, w, expected);
  // Deflate cannot compress by more than about 1032:1, and every row holds a filter byte and at
  // least one bit per pixel: a header claiming far more pixels than the file can hold is corrupt.
  const uint64_t min_raw = static_cast<uint64_t>(h) * (1 + (static_cast<uint64_t>(w) + 7) / 8);
  if (min_raw > 1100 * static_cast<uint64_t>(file.size()))
    throw UserError(where + " is corrupt or truncated: it claims " + std::to_string(w) + "x" +
                    std::to_string(h) + " pixels but holds only " + std::to_string(file.size()) +
                    " bytes");

  HostArray image(DType::F32, Shape{h, w});
  float* out = image.data<float>();
  int x = 0, y = 0, channels = 0;
  if (stbi_is_16_bit_from_memory(file.data(), len)) {
    std::unique_ptr<stbi_us, StbFree> pixels(stbi_load_16_from_memory(file.data(), len, &x, &y, &channels, 1));
    if (!pixels) throw UserError(where + ": cannot decode the PNG (" + stbi_failure_reason() + ")");
    if (x != w || y != h) throw UserError(where + ": the PNG's size changed while decoding");
    for (size_t i = 0, n = static_cast<size_t>(w) * h; i < n; ++i)
      out[i] = static_cast<float>(pixels.get()[i] * 255.0 / 65535.0);
  } else {
    std::unique_ptr<stbi_uc, StbFree> pixels(stbi_load_from_memory(file.data(), len, &x, &y, &channels, 1));
    if (!pixels) throw UserError(where + ": cannot decode the PNG (" + stbi_failure_reason() + ")");
    if (x != w || y != h) throw UserError(where + ": the PNG's size changed while decoding");
    for (size_t i = 0, n = static_cast<size_t>(w) * h; i < n; ++i) out[i] = pixels.get()[i];
  }
  return image;
}

// ---- PGM (parsed here: stb_image has no 16-bit or plain P2 support)

class PgmReader {
 public:
  PgmReader(const std::vector<unsigned char>& data, const std::string& where)
      : d_(data), where_(where) {}

  HostArray read(const std::optional<Shape>& expected) {
    if (d_.size() < 2 || d_[0] != 'P' || (d_[1] != '5' && d_[1] != '2')) {
      if (d_.size() >= 2 && d_[0] == 'P' && d_[1] >= '1' && d_[1] <= '7')
        throw UserError(where_ + " is not a PGM file: it starts with P" + static_cast<char>(d_[1]) +
                        " (a colour or bitmap Netpbm image); only gray P5 and P2 are supported");
      throw UserError(where_ + " is not a PGM file (it does not start with P5 or P2)");
    }
    const bool binary = d_[1] == '5';
    pos_ = 2;
    const uint64_t width = header_number("width");
    const uint64_t height = header_number("height");
    const uint64_t maxval = header_number("maxval");
    if (width == 0 || height == 0)
      throw UserError(where_ + ": the PGM header gives a zero dimension (" + std::to_string(width) +
                      "x" + std::to_string(height) + ")");
    if (maxval == 0 || maxval > 65535)
      throw UserError(where_ + ": the PGM maxval is " + std::to_string(maxval) +
                      "; expected 1 to 65535");
    // Exactly one whitespace character separates the header from the pixels.
    if (pos_ >= d_.size())
      throw UserError(where_ + " is truncated: it ends after the PGM header");
    if (!std::isspace(d_[pos_]))
      throw UserError(where_ + ": malformed PGM header: expected whitespace after maxval");
    ++pos_;
    check_shape(where_, static_cast<int64_t>(height), static_cast<int64_t>(width), expected);

    const uint64_t n = width * height;  // each is at most 10^9
    const uint64_t remaining = d_.size() - pos_;
    const double scale = 255.0 / static_cast<double>(maxval);
    if (binary) {
      const uint64_t bps = maxval < 256 ? 1 : 2;
      if (remaining < n * bps)
        throw UserError(where_ + " is truncated: expected " + std::to_string(n * bps) +
                        " data bytes, found " + std::to_string(remaining));
      HostArray image(DType::F32, Shape{static_cast<int64_t>(height), static_cast<int64_t>(width)});
      float* out = image.data<float>();
      const unsigned char* p = d_.data() + pos_;
      for (uint64_t i = 0; i < n; ++i) {
        const uint32_t v = bps == 1 ? p[i] : (uint32_t{p[2 * i]} << 8) | p[2 * i + 1];
        check_value(v, maxval, i);
        out[i] = static_cast<float>(v * scale);
      }
      return image;
    }
    // Plain P2: every value takes at least one digit and one separator.
    if (remaining + 1 < 2 * n)
      throw UserError(where_ + " is truncated: expected " + std::to_string(n) +
                      " pixel values, but only " + std::to_string(remaining) +
                      " bytes follow the header");
    HostArray image(DType::F32, Shape{static_cast<int64_t>(height), static_cast<int64_t>(width)});
    float* out = image.data<float>();
    for (uint64_t i = 0; i < n; ++i) {
      skip_space_and_comments();
      if (pos_ >= d_.size())
        throw UserError(where_ + " is truncated: expected " + std::to_string(n) +
                        " pixel values, found " + std::to_string(i));
      const uint64_t v = number("pixel value");
      check_value(v, maxval, i);
      out[i] = static_cast<float>(static_cast<double>(v) * scale);
    }
    return image;
  }

 private:
  void skip_space_and_comments() {
    while (pos_ < d_.size()) {
      if (std::isspace(d_[pos_])) {
        ++pos_;
      } else if (d_[pos_] == '#') {
        while (pos_ < d_.size() && d_[pos_] != '\n' && d_[pos_] != '\r') ++pos_;
      } else {
        break;
      }
    }
  }

  uint64_t number(const char* what) {
    if (pos_ >= d_.size() || !std::isdigit(d_[pos_])) {
      std::string found = pos_ >= d_.size() ? std::string("the end of the file")
                                            : "'" + std::string(1, static_cast<char>(d_[pos_])) + "'";
      throw UserError(where_ + ": malformed PGM: expected the " + std::string(what) +
                      " (a decimal number), found " + found);
    }
    uint64_t v = 0;
    while (pos_ < d_.size() && std::isdigit(d_[pos_])) {
      v = v * 10 + (d_[pos_++] - '0');
      if (v > 1000000000)
        throw UserError(where_ + ": malformed PGM: the " + std::string(what) + " is too large");
    }
    return v;
  }

  uint64_t header_number(const char* what) {
    skip_space_and_comments();
    if (pos_ >= d_.size()) throw UserError(where_ + " is truncated: it ends inside the PGM header");
    return number(what);
  }

  void check_value(uint64_t v, uint64_t maxval, uint64_t index) const {
    if (v > maxval)
      throw UserError(where_ + ": pixel " + std::to_string(index) + " is " + std::to_string(v) +
                      ", more than the maxval " + std::to_string(maxval));
  }

  const std::vector<unsigned char>& d_;
  const std::string& where_;
  size_t pos_ = 0;
};

HostArray load_pgm(const std::filesystem::path& path, const std::optional<Shape>& expected) {
  const std::string where = path.string();
  const std::vector<unsigned char> file = read_whole_file(path);
  return PgmReader(file, where).read(expected);
}

// ---- Writing

// 8-bit pixels of a rank-2 array; checks the shape.
std::vector<unsigned char> to_bytes(const std::filesystem::path& path, const HostArray& image,
                                    int* width, int* height) {
  if (image.shape.size() != 2 || image.shape[0] <= 0 || image.shape[1] <= 0)
    throw UserError("cannot write " + path.string() + ": an image needs shape [H, W] with H, W > 0, found " +
                    shape_string(image.shape));
  // stb_image_write sizes its buffers with int; keep well inside that.
  if (image.shape[0] > INT_MAX / 2 || image.shape[1] > INT_MAX / 2 ||
      (image.shape[1] + 1) * image.shape[0] > INT_MAX / 2)
    throw UserError("cannot write " + path.string() + ": image of shape " + shape_string(image.shape) +
                    " is too large");
  *height = static_cast<int>(image.shape[0]);
  *width = static_cast<int>(image.shape[1]);
  const size_t n = static_cast<size_t>(image.shape[0] * image.shape[1]);
  std::vector<unsigned char> out(n);
  for (size_t i = 0; i < n; ++i) {
    double v = image.get(static_cast<int64_t>(i));
    if (std::isnan(v)) v = 0;
    v = std::min(255.0, std::max(0.0, v));
    out[i] = static_cast<unsigned char>(std::lround(v));
  }
  return out;
}

void append_to_vector(void* context, void* data, int size) {
  auto* buffer = static_cast<std::vector<unsigned char>*>(context);
  const auto* bytes = static_cast<const unsigned char*>(data);
  buffer->insert(buffer->end(), bytes, bytes + size);
}

}  // namespace

uint32_t png_crc(const unsigned char* data, size_t n) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t k = 0; k < 256; ++k) {
      uint32_t c = k;
      for (int bit = 0; bit < 8; ++bit) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[k] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

HostArray load_gray_image(const std::filesystem::path& path, const std::optional<Shape>& expected_shape) {
  const std::string ext = lower_extension(path);
  if (ext == ".png") return load_png(path, expected_shape);
  if (ext == ".pgm") return load_pgm(path, expected_shape);
  throw UserError(path.string() + ": unknown image type '" + ext + "'; expected a .png or .pgm file");
}

void save_gray_png(const std::filesystem::path& path, const HostArray& image) {
  int width = 0, height = 0;
  const std::vector<unsigned char> pixels = to_bytes(path, image, &width, &height);
  std::vector<unsigned char> png;
  if (!stbi_write_png_to_func(append_to_vector, &png, width, height, 1, pixels.data(), width))
    throw UserError("cannot write " + path.string() + ": PNG encoding failed");
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  });
}

void save_pgm(const std::filesystem::path& path, const HostArray& image) {
  int width = 0, height = 0;
  const std::vector<unsigned char> pixels = to_bytes(path, image, &width, &height);
  const std::string header = "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  write_file_atomically(path, [&](std::ostream& out) {
    out << header;
    out.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
  });
}

}  // namespace fugue
