// npy_header.hpp: the header of NumPy's .npy format (versions 1.0, 2.0 and 3.0), read and written. The
// core's .npy files and a plugin's arrays inside other containers (the sparse plugin's .npz) share it:
// the magic, the preamble's length field and the Python dict literal that follows. What a descr means
// (which dtypes a reader takes) stays with each reader; errors are npy::FormatError, whose message
// starts with `where`, for the reader to rethrow as its own error kind.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fugue::npy {

struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr size_t kMagicSize = 6;
// NumPy itself refuses headers over 10000 bytes by default; this is far more than any array needs, and
// bounds what a corrupt length field can make a reader allocate.
inline constexpr uint64_t kMaxHeaderBytes = 1 << 20;

// The preamble: the magic, the version and the header dict's length.
struct Preamble {
  int major = 1;
  uint64_t size = 10;        // bytes before the dict: 10 (version 1.0) or 12
  uint64_t header_len = 0;   // the dict's bytes
};

// Reads the preamble from the file's first `available` bytes (12 are enough); `file_size` bounds the
// length it claims.
inline Preamble read_preamble(const unsigned char* p, uint64_t available, uint64_t file_size, const std::string& where) {
  if (available < 8 || std::memcmp(p, kMagic, kMagicSize) != 0)
    throw FormatError(where + " is not a .npy file (it does not start with \\x93NUMPY)");
  Preamble pre;
  pre.major = p[6];
  const int minor = p[7];
  if ((pre.major != 1 && pre.major != 2 && pre.major != 3) || minor != 0)
    throw FormatError(where + ": unsupported .npy format version " + std::to_string(pre.major) + "." + std::to_string(minor) +
                      "; supported versions are 1.0, 2.0 and 3.0");
  const int len_bytes = pre.major == 1 ? 2 : 4;
  if (available < 8 + static_cast<uint64_t>(len_bytes)) throw FormatError(where + " is truncated: it ends inside the .npy header");
  for (int i = len_bytes - 1; i >= 0; --i) pre.header_len = (pre.header_len << 8) | p[8 + i];
  pre.size = 8 + static_cast<uint64_t>(len_bytes);
  if (pre.header_len > kMaxHeaderBytes)
    throw FormatError(where + ": malformed .npy header: it claims " + std::to_string(pre.header_len) + " bytes, more than the " +
                      std::to_string(kMaxHeaderBytes) + " allowed");
  if (pre.size + pre.header_len > file_size)
    throw FormatError(where + " is truncated: the header claims " + std::to_string(pre.header_len) + " bytes but only " +
                      std::to_string(file_size - pre.size) + " follow");
  return pre;
}

// What the header dict says. `descr` is the dtype string ('<f8'); `structured` where it was a list (a
// structured dtype, which no reader takes).
struct Header {
  std::string descr;
  bool structured = false;
  bool fortran_order = false;
  std::vector<int64_t> shape;  // empty: a scalar; every extent checked non-negative
};

namespace detail {

// A parser for the Python literal that is the header: a dict of strings, booleans, integers and tuples.
// Lists, None and nested dicts are parsed too, so that a header no reader supports (a structured dtype)
// is reported as such rather than as malformed.
struct PyValue {
  enum class Kind { Str, Bool, None, Int, Seq, Dict } kind = Kind::None;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;
  std::vector<std::pair<std::string, PyValue>> entries;
};

class DictParser {
 public:
  DictParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  PyValue parse_header() {
    PyValue v = parse_value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the header dict");
    if (v.kind != PyValue::Kind::Dict) fail("the header is not a dict");
    return v;
  }

 private:
  static constexpr int kMaxNesting = 32;
  [[noreturn]] void fail(const std::string& what) {
    throw FormatError(where_ + ": malformed .npy header: " + what + " (header: " + excerpt() + ")");
  }
  std::string excerpt() const {
    std::string e = s_.substr(0, 200);
    while (!e.empty() && (e.back() == ' ' || e.back() == '\n')) e.pop_back();
    for (char& c : e)
      if (static_cast<unsigned char>(c) < 32) c = ' ';
    return e + (s_.size() > 200 ? "..." : "");
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
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
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    const size_t end = pos_ + n;
    if (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_')) return false;
    pos_ = end;
    return true;
  }

  PyValue parse_value(int depth) {
    if (depth > kMaxNesting) fail("nested too deeply");
    skip_space();
    if (pos_ >= s_.size()) fail("it ends early");
    const char c = s_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::Str;
      v.str = parse_string();
    } else if (c == '{') {
      ++pos_;
      v.kind = PyValue::Kind::Dict;
      while (!eat('}')) {
        skip_space();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted key or '}'");
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
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_]))) fail("expected digits");
    uint64_t value = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const uint64_t digit = static_cast<uint64_t>(s_[pos_++] - '0');
      if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) fail("integer too large");
      value = value * 10 + digit;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;  // Python 2's long
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E')) fail("expected an integer");
    return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  }

  const std::string& s_;
  const std::string& where_;
  size_t pos_ = 0;
};

}  // namespace detail

// Parses the header dict (the `header_len` bytes after the preamble): its keys 'descr', 'fortran_order'
// and 'shape', each once and no other.
inline Header parse_header(const std::string& text, const std::string& where) {
  using detail::PyValue;
  const PyValue dict = detail::DictParser(text, where).parse_header();
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [key, value] : dict.entries) {
    const PyValue** slot = key == "descr" ? &descr : key == "fortran_order" ? &fortran : key == "shape" ? &shape : nullptr;
    if (!slot)
      throw FormatError(where + ": malformed .npy header: unexpected key '" + key + "'; expected 'descr', 'fortran_order' and 'shape'");
    if (*slot) throw FormatError(where + ": malformed .npy header: key '" + key + "' appears twice");
    *slot = &value;
  }
  const std::pair<const char*, const PyValue*> required[] = {{"descr", descr}, {"fortran_order", fortran}, {"shape", shape}};
  for (const auto& [name, v] : required)
    if (!v) throw FormatError(where + ": malformed .npy header: key '" + name + "' is missing");
  Header h;
  if (descr->kind == PyValue::Kind::Seq || descr->kind == PyValue::Kind::Dict) h.structured = true;
  else if (descr->kind != PyValue::Kind::Str) throw FormatError(where + ": malformed .npy header: 'descr' is not a string");
  else h.descr = descr->str;
  if (fortran->kind != PyValue::Kind::Bool) throw FormatError(where + ": malformed .npy header: 'fortran_order' is not True or False");
  h.fortran_order = fortran->boolean;
  if (shape->kind != PyValue::Kind::Seq) throw FormatError(where + ": malformed .npy header: 'shape' is not a tuple");
  for (const PyValue& e : shape->items) {
    if (e.kind != PyValue::Kind::Int || e.integer < 0)
      throw FormatError(where + ": malformed .npy header: 'shape' must hold non-negative integers");
    h.shape.push_back(e.integer);
  }
  return h;
}

// The preamble and header of a C-order array of `descr` and `shape`, version 1.0 (2.0 where the header
// does not fit 1.0's 65535 bytes), padded with spaces and a newline so the data starts at a multiple
// of 64 bytes.
inline std::string header_bytes(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  dims += shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + dims + ", }";
  auto padded = [&](size_t preamble) { return (preamble + header.size() + 1 + 63) / 64 * 64; };
  int major = 1;
  size_t preamble = 10;
  if (padded(preamble) - preamble > 65535) {  // 1.0 stores the header length in two bytes
    major = 2;
    preamble = 12;
  }
  header.append(padded(preamble) - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(major);
  out += '\0';
  const uint64_t len = header.size();
  for (size_t i = 0; i < preamble - 8; ++i) out += static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header;
}

}  // namespace fugue::npy
