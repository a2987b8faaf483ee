#include "host_memory.h"
#include "scipy_npz.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include <fugue/npy_header.hpp>

#include "zip_archive.h"

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

// One .npy member: its dtype (from the dtype table; none for 'format''s strings), shape and data bytes.
struct Member {
  std::string where, descr;
  fugue_dtype dtype = FUGUE_DTYPE_NONE;
  std::vector<int64_t> shape;
  std::string data;

  // Element k of an integer member, exactly.
  int64_t integer(int64_t k) const {
    const fugue_dtype_info& info = abi::dtype_info(dtype);
    const char* p = data.data() + static_cast<size_t>(k) * info.size;
    auto as = [&](auto zero) {
      decltype(zero) v;
      std::memcpy(&v, p, sizeof v);
      return static_cast<int64_t>(v);
    };
    const bool is_signed = info.flags & FUGUE_DTYPE_FLAG_SIGNED;
    switch (info.size) {
      case 1: return is_signed ? as(int8_t{}) : as(uint8_t{});
      case 2: return is_signed ? as(int16_t{}) : as(uint16_t{});
      case 4: return is_signed ? as(int32_t{}) : as(uint32_t{});
      default: return as(int64_t{});  // the table has no u64
    }
  }
  // Element k as a number.
  double number(int64_t k) const {
    if (!abi::is_float(dtype)) return static_cast<double>(integer(k));
    const char* p = data.data() + static_cast<size_t>(k) * abi::dtype_size(dtype);
    if (abi::dtype_size(dtype) == 4) {
      float v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    double v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
};

// The dtype table's entry for a descr ('<i4', '|u1', '=f8'); NONE for one it has not.
fugue_dtype dtype_of(const std::string& descr) {
  if (descr.size() < 2 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=')) return FUGUE_DTYPE_NONE;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d) {
    const fugue_dtype_info* info = fugue_dtype_info_of(d);
    if (fugue_dtype_supported(d) && info && info->npy_descr && descr.substr(1) == std::string(info->npy_descr).substr(1)) return d;
  }
  return FUGUE_DTYPE_NONE;
}

// A string dtype's length ('|S3': 3, '<U3': 3 characters of 4 bytes); 0 for any other dtype or a length
// no member of a sparse matrix has (over 9 digits).
int64_t string_length(const std::string& descr) {
  if (descr.size() < 3 || descr.size() > 11 || (descr[1] != 'S' && descr[1] != 'U')) return 0;
  int64_t length = 0;
  for (size_t k = 2; k < descr.size(); ++k) {
    if (descr[k] < '0' || descr[k] > '9') return 0;
    length = length * 10 + (descr[k] - '0');
  }
  return length;
}

std::string readable_descrs() {
  std::string text;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if (fugue_dtype_supported(d)) text += std::string(text.empty() ? "" : ", ") + fugue_dtype_info_of(d)->npy_descr;
  return text;
}

Member member(const ZipArchive& zip, const std::string& key) {
  if (!zip.contains(key + ".npy")) throw InvalidArgument("no member '" + key + ".npy' (scipy.sparse.save_npz writes one)");
  const std::string bytes = zip.member(key + ".npy");
  Member m;
  m.where = "member '" + key + ".npy'";
  try {
    const npy::Preamble pre = npy::read_preamble(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), bytes.size(), m.where);
    const npy::Header h = npy::parse_header(bytes.substr(pre.size, pre.header_len), m.where);
    if (h.structured) throw InvalidArgument(m.where + " holds a structured array");
    if (h.fortran_order && h.shape.size() > 1) throw InvalidArgument(m.where + " is in Fortran order");
    m.descr = h.descr;
    m.shape = h.shape;
    m.data = bytes.substr(pre.size + pre.header_len);
  } catch (const npy::FormatError& e) {
    throw InvalidArgument(e.what());
  }
  m.dtype = dtype_of(m.descr);
  uint64_t size = 1;  // bytes the shape implies
  if (m.dtype != FUGUE_DTYPE_NONE) size = abi::dtype_size(m.dtype);
  else if (const int64_t length = string_length(m.descr); length > 0) size = static_cast<uint64_t>(length) * (m.descr[1] == 'U' ? 4 : 1);
  else throw InvalidArgument(m.where + " holds dtype '" + m.descr + "'; read are " + readable_descrs() + " and 'format''s string");
  for (int64_t e : m.shape)
    if (__builtin_mul_overflow(size, static_cast<uint64_t>(e), &size)) throw InvalidArgument(m.where + ": its shape is too large");
  if (m.data.size() != size)
    throw InvalidArgument(m.where + " holds " + std::to_string(m.data.size()) + " data bytes where its header says " + std::to_string(size));
  return m;
}

// A 1-D member of integers (or, for `values`, numbers) with `length` elements where that is >= 0.
Member check_vector(Member m, int64_t length, bool values) {
  const bool integer = m.dtype != FUGUE_DTYPE_NONE && abi::is_integer(m.dtype);
  const bool real = m.dtype != FUGUE_DTYPE_NONE && (abi::is_float(m.dtype) || integer);
  if (values ? !real || abi::is_complex(m.dtype) : !integer)
    throw InvalidArgument(m.where + " holds '" + m.descr + "'; expected " + (values ? "real numbers" : "integers"));
  if (m.shape.size() != 1) throw InvalidArgument(m.where + " is not a vector (" + std::to_string(m.shape.size()) + " axes)");
  if (length >= 0 && m.shape[0] != length)
    throw InvalidArgument(m.where + " holds " + std::to_string(m.shape[0]) + " elements; expected " + std::to_string(length));
  return m;
}

std::string format_of(const Member& m) {
  if (!m.shape.empty() || m.descr.size() < 3) throw InvalidArgument(m.where + " is not one string (b'csr', b'csc' or b'coo')");
  std::string text;
  if (m.descr[1] == 'S') {
    text = m.data.substr(0, m.data.find('\0'));
  } else if (m.descr[1] == 'U') {
    for (size_t k = 0; k + 4 <= m.data.size() && m.data[k] != '\0'; k += 4) text += m.data[k];
  } else {
    throw InvalidArgument(m.where + " is not one string (b'csr', b'csc' or b'coo')");
  }
  return text;
}

}  // namespace

Coordinates read_scipy_npz(const std::string& path) {
  const ZipArchive zip(path);
  const std::string format = format_of(member(zip, "format"));
  if (format != "csr" && format != "csc" && format != "coo")
    throw InvalidArgument("holds a SciPy '" + format + "' matrix; csr, csc and coo are read (convert with .tocsr() first)");
  const Member shape = check_vector(member(zip, "shape"), 2, false);
  Coordinates m;
  m.rows = shape.integer(0);
  m.cols = shape.integer(1);
  if (m.rows < 0 || m.cols < 0 || m.rows > kMaxExtent || m.cols > kMaxExtent)
    throw InvalidArgument(shape.where + ": the matrix is " + std::to_string(m.rows) + " by " + std::to_string(m.cols) +
                          "; expected 0 to 2^31 - 1 rows and columns");
  const Member data = check_vector(member(zip, "data"), -1, true);
  const int64_t nnz = data.shape[0];
  check_host_room(matrix_host_bytes(m.rows, m.cols, nnz), shape.where + ": a " + std::to_string(m.rows) + " by " + std::to_string(m.cols) +
                                                             " matrix of " + std::to_string(nnz) + " entries");
  auto index = [&](const Member& v, int64_t k, int64_t bound, const char* what) {
    const int64_t i = v.integer(k);
    if (i < 0 || i >= bound)
      throw InvalidArgument(v.where + ": element " + std::to_string(k) + " is " + std::to_string(i) + ", outside the " + what + " 0.." +
                            std::to_string(bound - 1));
    return i;
  };
  auto value = [&](int64_t k) {
    const double v = data.number(k);
    if (!std::isfinite(v)) throw InvalidArgument(data.where + ": element " + std::to_string(k) + " is not finite");
    return v;
  };
  if (format == "coo") {
    const Member row = check_vector(member(zip, "row"), nnz, false);
    const Member col = check_vector(member(zip, "col"), nnz, false);
    for (int64_t k = 0; k < nnz; ++k) {
      m.add(index(row, k, m.rows, "rows"), index(col, k, m.cols, "columns"), value(k));
      m.place.push_back(k);
    }
  } else {
    // csr: pointers over rows, indices of columns; csc the other way round. The pointers are checked
    // whole before any entry is read.
    const bool by_rows = format == "csr";
    const int64_t outer = by_rows ? m.rows : m.cols, inner = by_rows ? m.cols : m.rows;
    const Member ptr = check_vector(member(zip, "indptr"), outer + 1, false);
    const Member ind = check_vector(member(zip, "indices"), nnz, false);
    if (ptr.integer(0) != 0) throw InvalidArgument(ptr.where + ": the first pointer is " + std::to_string(ptr.integer(0)) + ", not 0");
    for (int64_t o = 0; o < outer; ++o)
      if (ptr.integer(o + 1) < ptr.integer(o))
        throw InvalidArgument(ptr.where + ": pointer " + std::to_string(o + 1) + " goes back (" + std::to_string(ptr.integer(o + 1)) + " after " +
                              std::to_string(ptr.integer(o)) + ")");
    if (ptr.integer(outer) != nnz)
      throw InvalidArgument(ptr.where + ": the last pointer is " + std::to_string(ptr.integer(outer)) + ", not the " + std::to_string(nnz) +
                            " entries of 'data.npy'");
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = ptr.integer(o), end = ptr.integer(o + 1); k < end; ++k) {
        const int64_t i = index(ind, k, inner, by_rows ? "columns" : "rows");
        by_rows ? m.add(o, i, value(k)) : m.add(i, o, value(k));
        m.place.push_back(k);
      }
  }
  m.place_name = [](int64_t k) { return "entry " + std::to_string(k) + " of 'data.npy'"; };
  m.base = 0;
  try {
    m.sort_unique([&](int64_t k) { return m.place_name(m.place[static_cast<size_t>(k)]); }, 0);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(e.what()) + "; scipy.sparse's sum_duplicates() merges such entries");
  }
  return m;
}

void write_scipy_npz(const std::string& path, const Coordinates& m, fugue_dtype dtype) {
  const bool wide = m.entries() > std::numeric_limits<int32_t>::max() || m.rows > std::numeric_limits<int32_t>::max() ||
                    m.cols > std::numeric_limits<int32_t>::max();
  auto array = [](const std::string& descr, const std::vector<int64_t>& shape, std::string data) {
    return npy::header_bytes(descr, shape) + data;
  };
  auto integers = [&](const std::vector<int64_t>& values) {
    std::string bytes;
    bytes.reserve(values.size() * (wide ? 8 : 4));
    for (int64_t v : values) {
      if (wide) bytes.append(reinterpret_cast<const char*>(&v), 8);
      else {
        const int32_t narrow = static_cast<int32_t>(v);
        bytes.append(reinterpret_cast<const char*>(&narrow), 4);
      }
    }
    return array(wide ? "<i8" : "<i4", {static_cast<int64_t>(values.size())}, std::move(bytes));
  };
  std::vector<int64_t> pointers(static_cast<size_t>(m.rows + 1), 0);
  for (int64_t r : m.row) ++pointers[static_cast<size_t>(r + 1)];
  for (int64_t r = 0; r < m.rows; ++r) pointers[static_cast<size_t>(r + 1)] += pointers[static_cast<size_t>(r)];
  std::string values;
  for (double v : m.value) {
    if (dtype == FUGUE_DTYPE_F32) {
      const float f = static_cast<float>(v);
      values.append(reinterpret_cast<const char*>(&f), 4);
    } else {
      values.append(reinterpret_cast<const char*>(&v), 8);
    }
  }
  std::string shape;
  for (int64_t e : {m.rows, m.cols}) shape.append(reinterpret_cast<const char*>(&e), 8);
  write_zip(path, {{"indices.npy", integers(m.col)},
                   {"indptr.npy", integers(pointers)},
                   {"format.npy", array("|S3", {}, "csr")},
                   {"shape.npy", array("<i8", {2}, shape)},
                   {"data.npy", array(dtype == FUGUE_DTYPE_F32 ? "<f4" : "<f8", {m.entries()}, std::move(values))}});
}

}  // namespace fugue::sparse
