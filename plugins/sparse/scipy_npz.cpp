#include "scipy_npz.h"

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

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
  }
  // Element k as a number (integers exact up to 2^53, as every index the layouts hold).
  double number(int64_t k) const {
    const fugue_dtype_info& info = abi::dtype_info(dtype);
    const char* p = data.data() + static_cast<size_t>(k) * info.size;
    auto as = [&](auto zero) {
      decltype(zero) v;
      std::memcpy(&v, p, sizeof v);
      return static_cast<double>(v);
    };
    const bool is_signed = info.flags & FUGUE_DTYPE_FLAG_SIGNED;
    if (info.flags & FUGUE_DTYPE_FLAG_FLOAT) return info.size == 4 ? as(0.0f) : as(0.0);
    switch (info.size) {
      case 1: return is_signed ? as(int8_t{}) : as(uint8_t{});
      case 2: return is_signed ? as(int16_t{}) : as(uint16_t{});
      case 4: return is_signed ? as(int32_t{}) : as(uint32_t{});
      default: return is_signed ? as(int64_t{}) : as(uint64_t{});
    }
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

std::string readable_descrs() {
  std::string text;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if (fugue_dtype_supported(d)) text += std::string(text.empty() ? "" : ", ") + fugue_dtype_info_of(d)->npy_descr;
  return text;
}

Member member(const std::map<std::string, std::string>& zip, const std::string& path, const std::string& key) {
  const auto found = zip.find(key + ".npy");
  if (found == zip.end()) throw InvalidArgument(path + ": no member '" + key + ".npy' (scipy.sparse.save_npz writes one)");
  Member m;
  m.where = path + ": member '" + key + ".npy'";
  const std::string& bytes = found->second;
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
  else if (m.descr.size() > 2 && m.descr[1] == 'S') size = std::stoull(m.descr.substr(2));
  else if (m.descr.size() > 2 && m.descr[1] == 'U') size = 4 * std::stoull(m.descr.substr(2));
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
  const std::map<std::string, std::string> zip = read_zip(path);
  const std::string format = format_of(member(zip, path, "format"));
  if (format != "csr" && format != "csc" && format != "coo")
    throw InvalidArgument(path + " holds a SciPy '" + format + "' matrix; csr, csc and coo are read (convert with .tocsr() first)");
  const Member shape = check_vector(member(zip, path, "shape"), 2, false);
  Coordinates m;
  m.rows = static_cast<int64_t>(shape.number(0));
  m.cols = static_cast<int64_t>(shape.number(1));
  if (m.rows < 0 || m.cols < 0) throw InvalidArgument(shape.where + ": a negative extent");
  const Member data = check_vector(member(zip, path, "data"), -1, true);
  const int64_t nnz = data.shape[0];
  auto index = [&](const Member& v, int64_t k, int64_t bound, const char* what) {
    const double i = v.number(k);
    if (!(i >= 0 && i < static_cast<double>(bound)))
      throw InvalidArgument(v.where + ": element " + std::to_string(k) + " is " + std::to_string(static_cast<long long>(i)) + ", outside the " +
                            what + " 0.." + std::to_string(bound - 1));
    return static_cast<int64_t>(i);
  };
  std::vector<int64_t> order;  // each entry's position before sorting, for errors
  if (format == "coo") {
    const Member row = check_vector(member(zip, path, "row"), nnz, false);
    const Member col = check_vector(member(zip, path, "col"), nnz, false);
    for (int64_t k = 0; k < nnz; ++k) m.add(index(row, k, m.rows, "rows"), index(col, k, m.cols, "columns"), data.number(k));
  } else {
    // csr: pointers over rows, indices of columns; csc the other way round.
    const bool by_rows = format == "csr";
    const int64_t outer = by_rows ? m.rows : m.cols, inner = by_rows ? m.cols : m.rows;
    const Member ptr = check_vector(member(zip, path, "indptr"), outer + 1, false);
    const Member ind = check_vector(member(zip, path, "indices"), nnz, false);
    if (ptr.number(0) != 0) throw InvalidArgument(ptr.where + ": the first pointer is " + std::to_string(ptr.number(0)) + ", not 0");
    if (ptr.number(outer) != static_cast<double>(nnz))
      throw InvalidArgument(ptr.where + ": the last pointer is " + std::to_string(static_cast<long long>(ptr.number(outer))) + ", not the " +
                            std::to_string(nnz) + " entries of 'data.npy'");
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t begin = static_cast<int64_t>(ptr.number(o)), end = static_cast<int64_t>(ptr.number(o + 1));
      if (end < begin) throw InvalidArgument(ptr.where + ": pointer " + std::to_string(o + 1) + " goes back (" + std::to_string(end) + " after " + std::to_string(begin) + ")");
      for (int64_t k = begin; k < end; ++k) {
        const int64_t i = index(ind, k, inner, by_rows ? "columns" : "rows");
        by_rows ? m.add(o, i, data.number(k)) : m.add(i, o, data.number(k));
      }
    }
  }
  m.sort_unique([&](int64_t k) { return "entry " + std::to_string(k) + " of 'data.npy'"; });
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
