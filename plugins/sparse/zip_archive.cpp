#include "zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

constexpr uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50, kEnd64 = 0x06064b50, kLocator64 = 0x07064b50;
constexpr uint64_t kMaxComment = 0xffff;
// Deflate expands at most about 1032 times: a member claiming more than that of its compressed bytes lies.
constexpr uint64_t kMaxRatio = 1040;

uint64_t le(const std::string& s, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<uint64_t>(i)]);
  return v;
}

void put(std::string& s, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((value >> (8 * i)) & 0xff);
}

uint32_t crc_of(const std::string& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < bytes.size();) {  // crc32 takes at most 4 GiB a call
    const uInt n = static_cast<uInt>(std::min<size_t>(bytes.size() - at, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), n);
    at += n;
  }
  return static_cast<uint32_t>(crc);
}

// Inflates a member piece by piece: the directory's size is checked against what comes out, not
// allocated up front.
std::string inflated(const char* packed, uint64_t packed_size, uint64_t size, const std::string& where) {
  constexpr uint64_t kPiece = 1 << 20;
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw InvalidArgument(where + ": zlib could not start inflating");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed));
  uint64_t in_left = packed_size;
  int status = Z_OK;
  while (status == Z_OK) {
    if (out.size() > size) break;  // more than the directory says
    const size_t before = out.size();
    out.resize(before + kPiece);
    const uInt in_now = static_cast<uInt>(std::min<uint64_t>(in_left, 1u << 30));
    z.avail_in = in_now;
    z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.avail_out = static_cast<uInt>(kPiece);
    status = inflate(&z, Z_NO_FLUSH);
    in_left -= in_now - z.avail_in;
    out.resize(before + (kPiece - z.avail_out));
    if (status == Z_OK && z.avail_in == in_now && out.size() == before) status = Z_BUF_ERROR;  // no progress: the data ends early
  }
  inflateEnd(&z);
  if (out.size() > size)
    throw InvalidArgument(where + ": it inflates to more bytes than the archive says (" + std::to_string(size) + ")");
  if (status != Z_STREAM_END)
    throw InvalidArgument(where + ": its deflated data is damaged (zlib: " + (z.msg ? std::string(z.msg) : "error " + std::to_string(status)) + ")");
  if (out.size() != size)
    throw InvalidArgument(where + ": it inflates to fewer bytes than the archive says (" + std::to_string(out.size()) + " of " + std::to_string(size) + ")");
  return out;
}

}  // namespace

ZipArchive::ZipArchive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot be opened");
  file_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const std::string& file = file_;
  const uint64_t size = file.size();
  auto bad = [&](const std::string& why) { return InvalidArgument("not a ZIP archive (.npz) NumPy could read: " + why); };
  // The end record: its signature within the last 22 + 65535 bytes, its comment reaching the file's end.
  uint64_t end = std::numeric_limits<uint64_t>::max();
  for (uint64_t at = size >= 22 ? size - 22 + 1 : 0; at-- > (size > 22 + kMaxComment ? size - 22 - kMaxComment : 0);)
    if (le(file, at, 4) == kEnd && at + 22 + le(file, at + 20, 2) == size) {
      end = at;
      break;
    }
  if (end == std::numeric_limits<uint64_t>::max()) throw bad("no end of central directory record");
  uint64_t entries = le(file, end + 10, 2), directory_size = le(file, end + 12, 4), directory = le(file, end + 16, 4);
  if (entries == 0xffff || directory_size == 0xffffffff || directory == 0xffffffff) {  // ZIP64
    if (end < 20 || le(file, end - 20, 4) != kLocator64) throw bad("a ZIP64 archive without its locator");
    const uint64_t record = le(file, end - 12, 8);
    if (record > size || size - record < 56 || le(file, record, 4) != kEnd64) throw bad("its ZIP64 end record is not where the locator says");
    entries = le(file, record + 32, 8);
    directory_size = le(file, record + 40, 8);
    directory = le(file, record + 48, 8);
  }
  if (directory > size || directory_size > size - directory) throw bad("its central directory lies outside the file");
  uint64_t at = directory;
  for (uint64_t k = 0; k < entries; ++k) {
    if (at + 46 > directory + directory_size || le(file, at, 4) != kCentral) throw bad("central directory entry " + std::to_string(k) + " is damaged");
    Entry e;
    const uint64_t flags = le(file, at + 8, 2);
    e.method = le(file, at + 10, 2);
    e.crc = le(file, at + 16, 4);
    e.packed = le(file, at + 20, 4);
    e.unpacked = le(file, at + 24, 4);
    uint64_t local = le(file, at + 42, 4);
    const uint64_t name_length = le(file, at + 28, 2), extra_length = le(file, at + 30, 2), comment_length = le(file, at + 32, 2);
    if (at + 46 + name_length + extra_length + comment_length > directory + directory_size) throw bad("central directory entry " + std::to_string(k) + " is damaged");
    const std::string name = file.substr(at + 46, name_length);
    const std::string where = "member '" + name + "'";
    // ZIP64 sizes and offset: in the extra field 0x0001, those the entry marks 0xffffffff, in this order.
    for (uint64_t x = at + 46 + name_length, extra_end = x + extra_length; x + 4 <= extra_end;) {
      const uint64_t id = le(file, x, 2), length = le(file, x + 2, 2);
      if (x + 4 + length > extra_end) throw InvalidArgument(where + ": its extra field is damaged");
      if (id == 1) {
        uint64_t f = x + 4;
        for (uint64_t* field : {&e.unpacked, &e.packed, &local})
          if (*field == 0xffffffff) {
            if (f + 8 > x + 4 + length) throw InvalidArgument(where + ": its ZIP64 field is short");
            *field = le(file, f, 8);
            f += 8;
          }
      }
      x += 4 + length;
    }
    if (flags & 1) throw InvalidArgument(where + " is encrypted");
    if (e.method != 0 && e.method != 8)
      throw InvalidArgument(where + " is compressed with method " + std::to_string(e.method) + "; stored (0) and deflate (8) are read");
    if (local > size || size - local < 30 || le(file, local, 4) != kLocal) throw InvalidArgument(where + ": its local header is not where the directory says");
    e.data = local + 30 + le(file, local + 26, 2) + le(file, local + 28, 2);
    if (e.data > size || e.packed > size - e.data) throw InvalidArgument(where + ": its data runs past the end of the file");
    if (e.method == 0 && e.packed != e.unpacked)
      throw InvalidArgument(where + ": stored, but its sizes differ (" + std::to_string(e.packed) + " and " + std::to_string(e.unpacked) + ")");
    if (e.method == 8 && e.unpacked > kMaxRatio * std::max<uint64_t>(e.packed, 1))
      throw InvalidArgument(where + ": claims " + std::to_string(e.unpacked) + " bytes from " + std::to_string(e.packed) + " deflated, more than deflate can expand");
    if (!entries_.emplace(name, e).second) throw InvalidArgument(where + " appears twice");
    at += 46 + name_length + extra_length + comment_length;
  }
}

std::string ZipArchive::member(const std::string& name) const {
  const auto found = entries_.find(name);
  if (found == entries_.end()) throw std::logic_error("ZipArchive::member: no member " + name);
  const Entry& e = found->second;
  const std::string where = "member '" + name + "'";
  std::string bytes = e.method == 0 ? file_.substr(e.data, e.packed) : inflated(file_.data() + e.data, e.packed, e.unpacked, where);
  if (crc_of(bytes) != e.crc) throw InvalidArgument(where + ": its CRC-32 does not match its data (the file is damaged)");
  return bytes;
}

void write_zip(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, directory;
  constexpr uint64_t kFlag = 0xffffffff;
  for (const auto& [name, bytes] : members) {
    const uint64_t offset = out.size(), n = bytes.size();
    const bool wide = n >= kFlag || offset >= kFlag;  // ZIP64 sizes and offset in an extra field
    const uint32_t crc = crc_of(bytes);
    std::string local;
    put(local, kLocal, 4), put(local, wide ? 45 : 20, 2), put(local, 0, 2), put(local, 0, 2), put(local, 0, 2), put(local, 0x21, 2);
    put(local, crc, 4), put(local, wide ? kFlag : n, 4), put(local, wide ? kFlag : n, 4), put(local, name.size(), 2), put(local, wide ? 20 : 0, 2);
    local += name;
    if (wide) put(local, 1, 2), put(local, 16, 2), put(local, n, 8), put(local, n, 8);
    out += local;
    out += bytes;
    std::string entry;
    put(entry, kCentral, 4), put(entry, wide ? 45 : 20, 2), put(entry, wide ? 45 : 20, 2), put(entry, 0, 2), put(entry, 0, 2), put(entry, 0, 2);
    put(entry, 0x21, 2), put(entry, crc, 4), put(entry, wide ? kFlag : n, 4), put(entry, wide ? kFlag : n, 4), put(entry, name.size(), 2);
    put(entry, wide ? 28 : 0, 2), put(entry, 0, 2), put(entry, 0, 2), put(entry, 0, 2), put(entry, 0, 4), put(entry, wide ? kFlag : offset, 4);
    entry += name;
    if (wide) put(entry, 1, 2), put(entry, 24, 2), put(entry, n, 8), put(entry, n, 8), put(entry, offset, 8);
    directory += entry;
  }
  const uint64_t start = out.size(), count = members.size();
  out += directory;
  if (start >= kFlag || directory.size() >= kFlag || count >= 0xffff) {
    const uint64_t record = out.size();
    put(out, kEnd64, 4), put(out, 44, 8), put(out, 45, 2), put(out, 45, 2), put(out, 0, 4), put(out, 0, 4);
    put(out, count, 8), put(out, count, 8), put(out, directory.size(), 8), put(out, start, 8);
    put(out, kLocator64, 4), put(out, 0, 4), put(out, record, 8), put(out, 1, 4);
    put(out, kEnd, 4), put(out, 0, 2), put(out, 0, 2), put(out, 0xffff, 2), put(out, 0xffff, 2), put(out, kFlag, 4), put(out, kFlag, 4), put(out, 0, 2);
  } else {
    put(out, kEnd, 4), put(out, 0, 2), put(out, 0, 2), put(out, count, 2), put(out, count, 2), put(out, directory.size(), 4), put(out, start, 4), put(out, 0, 2);
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw sdk::DeviceFailure("cannot open " + path + " to write");
  const bool written = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  if (std::fclose(f) != 0 || !written) throw sdk::DeviceFailure("writing " + path + " failed (disk full?)");
}

}  // namespace fugue::sparse
