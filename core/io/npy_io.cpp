#include "io/npy_io.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fugue/npy_header.hpp>

#include "io/atomic_file.h"
#include "errors.h"

// .npy stores raw element bytes; Fugue reads and writes them as they are in memory.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "npy_io assumes a little-endian host");
#endif

namespace fugue {

namespace {

// The supported dtypes' descrs come from the dtype table ('<f4', '|u1', '<c8', ...).
std::string supported_descrs() {
  std::string out;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if (fugue_dtype_supported(d))
      out += std::string(out.empty() ? "" : ", ") + fugue_dtype_info_of(d)->npy_descr + " (" +
             fugue_dtype_info_of(d)->name + ")";
  return out;
}

std::string npy_descr(DType dtype) {
  if (dtype == DType::None) throw std::logic_error("save_npy: array has no dtype");
  return dtype_info(dtype).npy_descr;
}

DType parse_descr(const npy::Header& header, const std::string& where) {
  if (header.structured) throw UserError(where + " holds a structured array; supported dtypes are " + supported_descrs());
  const std::string& d = header.descr;
  const char order = d.empty() ? '\0' : d[0];
  const bool has_order = order == '<' || order == '>' || order == '|' || order == '=';
  const std::string code = has_order ? d.substr(1) : d;
  for (fugue_dtype id = FUGUE_DTYPE_NONE + 1; id < FUGUE_DTYPE_COUNT; ++id) {
    if (!fugue_dtype_supported(id) || code != fugue_dtype_info_of(id)->npy_descr + 1) continue;
    const DType dtype = static_cast<DType>(id);
    // Byte order means nothing for one-byte elements; '=' is native, which is little-endian here.
    if (dtype_size(dtype) == 1 || order == '<' || order == '=') return dtype;
    if (order == '>')
      throw UserError(where + " holds big-endian data ('" + d +
                      "'); big-endian data is not supported; save with little-endian byte order");
  }
  throw UserError(where + " holds unsupported dtype '" + d + "'; supported dtypes are " + supported_descrs());
}

std::string open_failure(const std::filesystem::path& path, int err) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path.string() + ": cannot open: it is a folder";
  return path.string() + ": cannot open (" +
         (err != 0 ? std::string(std::strerror(err)) : std::string("unknown reason")) + ")";
}

// Elements times element size, or UserError if the shape is negative or its byte count is beyond
// int64 (checked multiplication, the element size included: 2^61 c16 elements are 2^65 bytes, which
// would wrap to 0 and pass for an empty file).
uint64_t data_bytes(const NpyHeader& h, const std::string& where) {
  uint64_t bytes = dtype_size(h.dtype);
  bool overflow = false;
  for (int64_t e : h.shape) {
    if (e < 0) throw UserError(where + ": malformed .npy header: negative extent in shape");
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(e), &bytes);
  }
  if (overflow || bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw UserError(where + ": shape " + shape_string(h.shape) + " of " + std::string(dtype_name(h.dtype)) +
                    " has too many elements (more than 2^63 bytes)");
  return bytes;
}

std::string describe(std::optional<DType> dtype, const std::optional<Shape>& shape) {
  std::string s;
  if (dtype) s += dtype_name(*dtype);
  if (shape) s += (s.empty() ? "shape " : " ") + shape_string(*shape);
  return s;
}

}  // namespace

NpyHeader read_npy_header(const std::filesystem::path& path) {
  const std::string where = path.string();
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(open_failure(path, errno));
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw UserError(where + ": cannot open (" + ec.message() + ")");

  unsigned char first[12] = {};
  in.read(reinterpret_cast<char*>(first), sizeof first);
  const uint64_t got = static_cast<uint64_t>(in.gcount());
  try {
    const npy::Preamble pre = npy::read_preamble(first, got, file_size, where);
    std::string text(static_cast<size_t>(pre.header_len), '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(pre.size));
    in.read(text.data(), static_cast<std::streamsize>(pre.header_len));
    if (static_cast<uint64_t>(in.gcount()) != pre.header_len) throw UserError(where + " is truncated: it ends inside the .npy header");
    const npy::Header header = npy::parse_header(text, where);
    NpyHeader h;
    h.dtype = parse_descr(header, where);
    h.fortran_order = header.fortran_order;
    h.shape = header.shape;
    h.data_offset = pre.size + pre.header_len;
  // Fortran order means the axes are stored reversed; it only matters when two extents exceed 1,
  // but NumPy sets it only then, so refuse it outright rather than guess.
    if (h.fortran_order)
      throw UserError(where + " holds an array in Fortran order; save it in C order (e.g. "
                      "numpy.save(path, numpy.ascontiguousarray(a)))");
    data_bytes(h, where);  // rejects shapes whose size overflows
    return h;
  } catch (const npy::FormatError& e) {
    throw UserError(e.what());
  }
}

uint64_t check_npy_data_size(const std::filesystem::path& path, const NpyHeader& h) {
  const std::string where = path.string();
  const uint64_t expected_bytes = data_bytes(h, where);
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw UserError(where + ": cannot open (" + ec.message() + ")");
  const uint64_t found = file_size - h.data_offset;  // read_npy_header checked offset <= size
  if (found < expected_bytes)
    throw UserError(where + " is truncated: expected " + std::to_string(expected_bytes) +
                    " data bytes, found " + std::to_string(found));
  if (found > expected_bytes)
    throw UserError(where + " has trailing bytes: expected " + std::to_string(expected_bytes) +
                    " data bytes for " + describe(h.dtype, h.shape) + ", found " +
                    std::to_string(found));

  return expected_bytes;
}

HostArray load_npy(const std::filesystem::path& path, std::optional<DType> expected_dtype,
                   const std::optional<Shape>& expected_shape) {
  const std::string where = path.string();
  const NpyHeader h = read_npy_header(path);
  const bool dtype_differs = expected_dtype && *expected_dtype != h.dtype;
  const bool shape_differs = expected_shape && *expected_shape != h.shape;
  if (dtype_differs || shape_differs)
    throw UserError(where + " holds " + describe(h.dtype, h.shape) + " but the declaration says " +
                    describe(expected_dtype, expected_shape));

  const uint64_t expected_bytes = check_npy_data_size(path, h);

  HostArray array(h.dtype, h.shape);
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(open_failure(path, errno));
  in.seekg(static_cast<std::streamoff>(h.data_offset));
  in.read(reinterpret_cast<char*>(array.bytes.data()), static_cast<std::streamsize>(expected_bytes));
  if (static_cast<uint64_t>(in.gcount()) != expected_bytes)
    throw UserError(where + " is truncated: expected " + std::to_string(expected_bytes) +
                    " data bytes, read " + std::to_string(in.gcount()));
  return array;
}

void save_npy(const std::filesystem::path& path, const HostArray& array) {
  const std::string descr = npy_descr(array.dtype);
  const uint64_t bytes = static_cast<uint64_t>(array.elements()) * dtype_size(array.dtype);
  if (array.bytes.size() != bytes)
    throw std::logic_error("save_npy: array of shape " + shape_string(array.shape) + " holds " +
                           std::to_string(array.bytes.size()) + " bytes, expected " +
                           std::to_string(bytes));

  const std::string header = npy::header_bytes(descr, array.shape);
  write_file_atomically(path, [&](std::ostream& out) {
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(array.bytes.data()),
              static_cast<std::streamsize>(array.bytes.size()));
  });
}

}  // namespace fugue
