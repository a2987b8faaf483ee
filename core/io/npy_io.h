// npy_io.h: read and write arrays in NumPy's .npy format (header versions 1.0, 2.0 and 3.0).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>

#include "program/host_array.h"

namespace fugue {

// What a .npy header says. Only little-endian (or one-byte) f4, f8, i4, i8, u1, u4 in C order
// are accepted, so `fortran_order` is always false in a header that read_npy_header returns.
struct NpyHeader {
  DType dtype = DType::None;
  Shape shape;  // empty: a scalar
  bool fortran_order = false;
  uint64_t data_offset = 0;  // bytes from the start of the file to the first element
};

// Parses the header of a .npy file. Throws UserError, starting with the path, if the file cannot
// be opened, is not a .npy file, or holds something Fugue cannot read (big-endian data, another
// dtype, Fortran order).
NpyHeader read_npy_header(const std::filesystem::path& path);

// Reads a whole .npy file. If `expected_dtype` or `expected_shape` is given and the file holds
// something else, throws UserError naming both. The file's size is checked against the header
// before anything is allocated: missing or extra data bytes are errors.
// The data size `h` implies; throws UserError unless the file holds exactly that much after the
// header (truncated, or trailing bytes). Reads no data.
uint64_t check_npy_data_size(const std::filesystem::path& path, const NpyHeader& h);

HostArray load_npy(const std::filesystem::path& path, std::optional<DType> expected_dtype,
                   const std::optional<Shape>& expected_shape);

// Writes `array` as a version 1.0 .npy file (header padded to a multiple of 64 bytes; version 2.0
// only if the header does not fit 1.0's 65535 bytes), atomically (see write_file_atomically).
void save_npy(const std::filesystem::path& path, const HostArray& array);

}  // namespace fugue
