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

#include "io/atomic_file.h"
#include "errors.h"

// .npy stores raw element bytes; Fugue reads and writes them as they are in memory.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "npy_io assumes a little-endian host");
#endif

namespace fugue {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy itself refuses headers over 10000 bytes by default; this is far more than any array of
// the dtypes we read needs, and bounds what a corrupt length field can make us allocate.
constexpr uint64_t kMaxHeaderBytes = 1 << 20;
constexpr int kMaxNesting = 32;

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

// ---- A parser for the Python literal that is the header: a dict of strings, booleans,
// ---- integers and tuples. Lists, None and nested dicts are parsed too, so that a header we do not
// ---- support (e.g. a structured dtype) is reported as such rather than as malformed.

struct PyValue {
  enum class Kind { Str, Bool, None, Int, Seq, Dict } kind = Kind::None;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;
  std::vector<std::pair<std::string, PyValue>> entries;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  PyValue parse_header() {
    PyValue v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    if (v.kind != PyValue::Kind::Dict) fail("the header is not a dict");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw UserError(where_ + ": malformed .npy header: " + what + " (header: " + excerpt() + ")");
  }
  std::string excerpt() const {
    std::string e = s_.substr(0, 200);
    while (!e.empty() && (e.back() == ' ' || e.back() == '\n')) e.pop_back();
    for (char& c : e)
      if (static_cast<unsigned char>(c) < 32) c = ' ';
    return e + (s_.size() > 200 ? "..." : "");
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r'))
      ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool eat_word(const char* word) {
    size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    size_t end = pos_ + n;
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
      return false;
    pos_ = end;
    return true;
  }

  PyValue parse_value(int depth) {
    if (depth > kMaxNesting) fail("nested too deeply");
    skip_space();
    if (pos_ >= s_.size()) fail("it ends early");
    char c = s_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::Str;
      v.str = parse_string();
    } else if (c == '{') {
      ++pos_;
      v.kind = PyValue::Kind::Dict;
      while (!eat('}')) {
        skip_space();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
          fail("expected a quoted key or '}'");
        std::string key = parse_string();
        if (!eat(':')) fail("expected ':' after key '" + key + "'");
        v.entries.emplace_back(key, parse_value(depth + 1));
        if (!eat(',')) {
          if (!eat('}')) fail("expected ',' or '}' after the value of '" + key + "'");
          break;
        }
      }
    } else if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      ++pos_;
      v.kind = PyValue::Kind::Seq;
      while (!eat(close)) {
        v.items.push_back(parse_value(depth + 1));
        if (!eat(',')) {
          if (!eat(close)) fail(std::string("expected ',' or '") + close + "'");
          break;
        }
      }
    } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = PyValue::Kind::Int;
      v.integer = parse_int();
    } else if (eat_word("True")) {
      v.kind = PyValue::Kind::Bool;
      v.boolean = true;
    } else if (eat_word("False")) {
      v.kind = PyValue::Kind::Bool;
      v.boolean = false;
    } else if (eat_word("None")) {
      v.kind = PyValue::Kind::None;
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  std::string parse_string() {
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  int64_t parse_int() {
    bool negative = false;
    if (s_[pos_] == '-' || s_[pos_] == '+') negative = s_[pos_++] == '-';
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail("expected digits");
    uint64_t value = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const uint64_t digit = static_cast<uint64_t>(s_[pos_++] - '0');
      if (value > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - digit) / 10)
        fail("integer too large");
      value = value * 10 + digit;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;  // Python 2's long
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      fail("expected an integer");
    return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  }

  const std::string& s_;
  const std::string& where_;
  size_t pos_ = 0;
};

DType parse_descr(const PyValue& descr, const std::string& where) {
  if (descr.kind == PyValue::Kind::Seq || descr.kind == PyValue::Kind::Dict)
    throw UserError(where + " holds a structured array; supported dtypes are " + supported_descrs());
  if (descr.kind != PyValue::Kind::Str)
    throw UserError(where + ": malformed .npy header: 'descr' is not a string");
  const std::string& d = descr.str;
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

uint64_t le_uint(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
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

  unsigned char pre[12] = {};
  in.read(reinterpret_cast<char*>(pre), 8);
  if (in.gcount() < 8 || std::memcmp(pre, kMagic, kMagicSize) != 0)
    throw UserError(where + " is not a .npy file (it does not start with \\x93NUMPY)");
  const int major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw UserError(where + ": unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor) + "; supported versions are 1.0, 2.0 and 3.0");
  const int len_bytes = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char*>(pre + 8), len_bytes);
  if (in.gcount() < len_bytes)
    throw UserError(where + " is truncated: it ends inside the .npy header");
  const uint64_t header_len = le_uint(pre + 8, len_bytes);
  const uint64_t preamble = 8 + static_cast<uint64_t>(len_bytes);
  if (header_len > kMaxHeaderBytes)
    throw UserError(where + ": malformed .npy header: it claims " + std::to_string(header_len) +
                    " bytes, more than the " + std::to_string(kMaxHeaderBytes) + " allowed");
  if (preamble + header_len > file_size)
    throw UserError(where + " is truncated: the header claims " + std::to_string(header_len) +
                    " bytes but only " + std::to_string(file_size - preamble) + " follow");

  std::string text(static_cast<size_t>(header_len), '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));
  if (static_cast<uint64_t>(in.gcount()) != header_len)
    throw UserError(where + " is truncated: it ends inside the .npy header");

  const PyValue dict = HeaderParser(text, where).parse_header();
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [key, value] : dict.entries) {
    const PyValue** slot = key == "descr" ? &descr
                           : key == "fortran_order" ? &fortran
                           : key == "shape" ? &shape
                                            : nullptr;
    if (!slot)
      throw UserError(where + ": malformed .npy header: unexpected key '" + key +
                      "'; expected 'descr', 'fortran_order' and 'shape'");
    if (*slot) throw UserError(where + ": malformed .npy header: key '" + key + "' appears twice");
    *slot = &value;
  }
  const std::pair<const char*, const PyValue*> required[] = {
      {"descr", descr}, {"fortran_order", fortran}, {"shape", shape}};
  for (const auto& [name, v] : required)
    if (!v) throw UserError(where + ": malformed .npy header: key '" + name + "' is missing");

  NpyHeader h;
  h.dtype = parse_descr(*descr, where);
  if (fortran->kind != PyValue::Kind::Bool)
    throw UserError(where + ": malformed .npy header: 'fortran_order' is not True or False");
  h.fortran_order = fortran->boolean;
  if (shape->kind != PyValue::Kind::Seq)
    throw UserError(where + ": malformed .npy header: 'shape' is not a tuple");
  for (const PyValue& e : shape->items) {
    if (e.kind != PyValue::Kind::Int || e.integer < 0)
      throw UserError(where + ": malformed .npy header: 'shape' must hold non-negative integers");
    h.shape.push_back(e.integer);
  }
  // Fortran order means the axes are stored reversed; it only matters when two extents exceed 1,
  // but NumPy sets it only then, so refuse it outright rather than guess.
  if (h.fortran_order)
    throw UserError(where + " holds an array in Fortran order; save it in C order (e.g. "
                    "numpy.save(path, numpy.ascontiguousarray(a)))");
  h.data_offset = preamble + header_len;
  data_bytes(h, where);  // rejects shapes whose size overflows
  return h;
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

  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(array.shape[i]);
  shape += array.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";

  // Pad with spaces and a final newline so that the data starts at a multiple of 64 bytes.
  auto padded = [&](size_t preamble) { return (preamble + header.size() + 1 + 63) / 64 * 64; };
  int major = 1;
  size_t preamble = 10;
  if (padded(preamble) - preamble > 65535) {  // 1.0 stores the header length in two bytes
    major = 2;
    preamble = 12;
  }
  const size_t total = padded(preamble);
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';

  std::string pre(kMagic, kMagicSize);
  pre += static_cast<char>(major);
  pre += '\0';
  const uint64_t len = header.size();
  for (size_t i = 0; i < preamble - 8; ++i) pre += static_cast<char>((len >> (8 * i)) & 0xff);

  write_file_atomically(path, [&](std::ostream& out) {
    out.write(pre.data(), static_cast<std::streamsize>(pre.size()));
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(array.bytes.data()),
              static_cast<std::streamsize>(array.bytes.size()));
  });
}

}  // namespace fugue
