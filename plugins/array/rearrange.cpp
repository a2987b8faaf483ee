// rearrange.cpp: see rearrange.h. Both operations reduce to an AffinePlace: out's element with index
// (i_0, ..., i_{r-1}) is x's element offset + sum_d i_d * step_d (steps in elements, negative where a
// slice walks backwards); the device code and the reference both walk that formula.
#include "rearrange.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dtypes.h"
#include "signature.h"
#include "typing.h"

namespace fugue::array {

namespace {

constexpr uint32_t kX = 0, kOut = 1;

struct AffinePlace {
  std::vector<int64_t> shape;  // out's
  std::vector<int64_t> steps;  // in x's elements, per axis of out
  int64_t offset = 0;          // x's element that out's first element is
};

// x's row-major strides, in elements.
std::vector<int64_t> strides_of(const fugue_type& x) {
  std::vector<int64_t> s(x.rank, 1);
  for (int a = static_cast<int>(x.rank) - 2; a >= 0; --a) s[a] = s[a + 1] * x.shape[a + 1];
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// A whole integer of `text` (an optional sign, spaces, then digits), or false. One past what int64
// holds is held as its largest magnitude (+-(2^63 - 1)): every use clamps it to an axis or refuses it.
bool parse_integer(const std::string& text, int64_t& value) {
  std::string t = trim(text);
  if (t.empty()) return false;
  const bool negative = t[0] == '-';
  if (t[0] == '-' || t[0] == '+') t = trim(t.substr(1));
  if (t.empty()) return false;
  const int64_t most = std::numeric_limits<int64_t>::max();
  int64_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    const int digit = c - '0';
    v = v > (most - digit) / 10 ? most : v * 10 + digit;
  }
  value = negative ? -v : v;
  return true;
}

// `text` cut at `separator` (each piece trimmed).
std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  std::string piece;
  for (char c : text) {
    if (c == separator) {
      pieces.push_back(trim(piece));
      piece.clear();
    } else {
      piece += c;
    }
  }
  pieces.push_back(trim(piece));
  return pieces;
}

// "the attribute axes: expected ..., found \"...\"" (the core names the operation and the place).
sdk::InvalidArgument bad_attribute(const std::string& attribute, const std::string& expected, const std::string& text) {
  return sdk::InvalidArgument("attribute " + attribute + ": expected " + expected + ", found \"" + text + "\"");
}

// np.transpose(x, axes): axes a permutation of x's axes, written "2, 0, 1" (commas or spaces, negative
// axes counted from the end); empty reverses them, as NumPy's default.
AffinePlace transposed(const fugue_type& x, const std::string& text) {
  const int64_t rank = x.rank;
  std::string reversed;  // the example: x's axes reversed
  for (int64_t a = rank - 1; a >= 0; --a) reversed += std::to_string(a) + (a > 0 ? ", " : "");
  const std::string expected = "a permutation of x's " + std::to_string(rank) + " axes, as \"" + reversed +
                               "\" (negative axes count from the end; empty reverses them)";
  std::vector<int64_t> axes;
  std::string body = trim(text);
  if (body.empty()) {
    for (int64_t a = rank - 1; a >= 0; --a) axes.push_back(a);
  } else {
    // One pair of brackets may hold the list, "(2, 0, 1)" as NumPy's argument; commas (a last one
    // allowed, as Python's) or else spaces separate the axes.
    if (body.size() >= 2 && ((body.front() == '(' && body.back() == ')') || (body.front() == '[' && body.back() == ']')))
      body = trim(body.substr(1, body.size() - 2));
    std::vector<std::string> tokens;
    if (body.find(',') != std::string::npos) {
      tokens = split(body, ',');
      if (tokens.size() > 1 && tokens.back().empty()) tokens.pop_back();
    } else {
      for (char& c : body)
        if (std::isspace(static_cast<unsigned char>(c))) c = ' ';
      for (std::string& token : split(body, ' '))
        if (!token.empty()) tokens.push_back(token);
    }
    for (const std::string& token : tokens) {
      int64_t a = 0;
      if (!parse_integer(token, a) || a < -rank || a >= rank) throw bad_attribute("axes", expected, text);
      axes.push_back(a < 0 ? a + rank : a);
    }
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (seen[a]) throw bad_attribute("axes", expected, text);
    seen[a] = true;
  }
  if (static_cast<int64_t>(axes.size()) != rank) throw bad_attribute("axes", expected, text);
  const std::vector<int64_t> strides = strides_of(x);
  AffinePlace p;
  for (int64_t a : axes) {
    p.shape.push_back(x.shape[a]);
    p.steps.push_back(strides[a]);
  }
  return p;
}

// x[index] with NumPy's basic indexing: items separated by commas, one an axis from the first, each
// a slice "start:stop:step" (any part may be left out; negative starts and stops count from the end,
// a negative step walks backwards; out-of-range bounds are clamped, as Python's slice.indices), an
// integer (the axis is dropped; it must lie inside the axis) or "..." (as many whole axes as the other
// items leave). Axes past the items are whole.
AffinePlace sliced(const fugue_type& x, const std::string& text) {
  const int64_t rank = x.rank;
  const std::string expected =
      "NumPy's basic indexing of x's " + std::to_string(rank) + " axes: items such as \"1:7:2\", \"::-1\", \"3\" or \"...\", separated by commas";
  std::string body = trim(text);
  if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = trim(body.substr(1, body.size() - 2));
  std::vector<std::string> items = split(body, ',');
  if (items.size() > 1 && items.back().empty()) items.pop_back();  // x[1,] as NumPy allows
  int64_t ellipses = 0, used = 0;
  for (const std::string& item : items) {
    if (item.empty()) throw bad_attribute("index", expected + " (an item is empty)", text);
    if (item == "...") ++ellipses;
    else ++used;
  }
  if (ellipses > 1) throw bad_attribute("index", expected + " (\"...\" at most once)", text);
  if (used > rank)
    throw bad_attribute("index", expected + " (" + std::to_string(used) + " items index " + std::to_string(rank) + " axes)", text);
  // The items, one an axis: "..." becomes whole slices; axes past the items are whole.
  std::vector<std::string> per_axis;
  for (const std::string& item : items) {
    if (item == "...") per_axis.insert(per_axis.end(), static_cast<size_t>(rank - used), ":");
    else per_axis.push_back(item);
  }
  while (static_cast<int64_t>(per_axis.size()) < rank) per_axis.push_back(":");
  const std::vector<int64_t> strides = strides_of(x);
  AffinePlace p;
  for (int64_t a = 0; a < rank; ++a) {
    const std::string& item = per_axis[a];
    const int64_t n = x.shape[a];
    const std::string axis = " (axis " + std::to_string(a) + " of " + std::to_string(n) + ")";
    if (item.find(':') == std::string::npos) {
      int64_t k = 0;
      if (!parse_integer(item, k)) throw bad_attribute("index", expected + " (\"" + item + "\" is neither)", text);
      if (k < -n || k >= n) throw bad_attribute("index", "an integer inside the axis" + axis + ", from " + std::to_string(-n) + " to " + std::to_string(n - 1), text);
      p.offset += (k < 0 ? k + n : k) * strides[a];
      continue;
    }
    const std::vector<std::string> parts = split(item, ':');
    if (parts.size() > 3) throw bad_attribute("index", expected + " (\"" + item + "\" has more than two colons)", text);
    int64_t v[3] = {0, 0, 1};
    bool given[3] = {false, false, false};
    for (size_t k = 0; k < parts.size(); ++k) {
      if (parts[k].empty()) continue;
      if (!parse_integer(parts[k], v[k])) throw bad_attribute("index", expected + " (\"" + parts[k] + "\" is not an integer)", text);
      given[k] = true;
    }
    const int64_t step = given[2] ? v[2] : 1;
    if (step == 0) throw bad_attribute("index", "a slice step other than 0" + axis, text);
    // Python's slice.indices(n), in integers that cannot overflow (every bound is clamped first).
    auto bound = [&](int64_t b, int64_t low, int64_t high) {
      if (b < 0) b = b < -n ? low : b + n;
      return std::min(std::max(b, low), high);
    };
    int64_t start, stop, length;
    if (step > 0) {
      start = given[0] ? bound(v[0], 0, n) : 0;
      stop = given[1] ? bound(v[1], 0, n) : n;
      length = stop > start ? (stop - start - 1) / step + 1 : 0;  // no overflow for any step
    } else {
      start = given[0] ? bound(v[0], -1, n - 1) : n - 1;
      stop = given[1] ? bound(v[1], -1, n - 1) : -1;
      length = start > stop ? (start - stop - 1) / -step + 1 : 0;
    }
    p.shape.push_back(length);
    // Two elements or more: |step| < n, so the product stays inside x's count; else the step is never taken.
    p.steps.push_back(length > 1 ? step * strides[a] : 0);
    if (length > 0) p.offset += start * strides[a];
  }
  if (p.shape.empty())
    throw bad_attribute("index", "at least one slice (every axis an integer is one element; \"i:i+1\" keeps it as an array)", text);
  return p;
}

// The same places with fewer axes: neighbouring axes whose elements lie evenly apart in x as one (a
// slice of whole matrices walks each matrix as one run), so the device divides less.
AffinePlace merged(const AffinePlace& p) {
  AffinePlace m;
  m.offset = p.offset;
  for (size_t d = 0; d < p.shape.size(); ++d) {
    if (p.shape[d] == 1) continue;  // contributes nothing
    if (!m.shape.empty() && m.steps.back() == p.steps[d] * p.shape[d]) {
      m.shape.back() *= p.shape[d];
      m.steps.back() = p.steps[d];
    } else {
      m.shape.push_back(p.shape[d]);
      m.steps.push_back(p.steps[d]);
    }
  }
  if (m.shape.empty()) m.shape.push_back(1), m.steps.push_back(0);
  return m;
}

// Element `i` of out's place in x.
int64_t place_of(const AffinePlace& p, int64_t i) {
  int64_t at = p.offset;
  for (int d = static_cast<int>(p.shape.size()) - 1; d >= 0; --d) {
    at += (i % p.shape[d]) * p.steps[d];
    i /= p.shape[d];
  }
  return at;
}

// Common to both: out is x's dtype, the place's shape; x read whole, out element by element.
class Rearrange : public sdk::Operation {
 public:
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& x = call.operand(kX);
    if (x.rank < 1) throw rejection(name, "operand x", "an array of rank 1 or more", describe(x));
    types[kOut] = sdk::make_type(FUGUE_KIND_ARRAY, x.dtype, place(call).shape);
  }

  sdk::Plan plan(const sdk::Call& call) const override {
    const fugue_type& x = call.operand(kX);
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_ELEMENT, sdk::elements(call.operand(kOut)));
    p.partitions[kX] = sdk::partition(FUGUE_PARTITION_WHOLE, x.rank);  // any element, at a computed place
    p.registers = 4;
    return p;
  }

  void emit(const sdk::Call& call, const sdk::Plan&, const sdk::Emitter& em) const override {
    const AffinePlace p = merged(place(call));
    if (sdk::elements(call.operand(kOut)) == 0) {
      // No element: no work-item runs this (and no division by 0), but a fused consumer reads the value.
      const std::string type = ctype(call.operand(kOut).dtype);
      em.append(em.write(kOut) + " = (" + type + ")(0);\n");
      return;
    }
    const std::string q = em.name("q"), at = em.name("at");
    // The index walked unsigned (it is never negative): dividing by a constant is then a multiply, or a
    // shift and a mask for powers of two.
    std::string code = "ulong " + q + " = (ulong)(" + em.builtin(FUGUE_BUILTIN_INDEX) + ");\nlong " + at + " = " + std::to_string(p.offset) + "L;\n";
    for (int d = static_cast<int>(p.shape.size()) - 1; d >= 1; --d) {
      if (p.shape[d] == 1) continue;
      const std::string extent = std::to_string(p.shape[d]) + "UL";
      if (p.steps[d] != 0) code += at + " += (long)(" + q + " % " + extent + ") * " + std::to_string(p.steps[d]) + "L; ";
      code += q + " /= " + extent + ";\n";
    }
    if (!p.shape.empty() && p.steps[0] != 0) code += at + " += (long)" + q + " * " + std::to_string(p.steps[0]) + "L;\n";
    code += em.write(kOut) + " = " + em.read_at(kX, at) + ";\n";
    em.append(code);
  }

  fugue_cost cost(const sdk::Call& call) const override {
    const AffinePlace p = place(call);
    const double elements = static_cast<double>(sdk::elements(call.operand(kOut))), size = static_cast<double>(dtype_bytes(call.operand(kX).dtype));
    // out written once; x read where out's neighbours are x's neighbours, else a memory sector (32 bytes)
    // an element, but never more than all of x.
    const bool together = p.shape.back() == 1 || p.steps.back() == 1 || p.steps.back() == -1;
    const double reads = together ? elements * size : std::min(static_cast<double>(sdk::elements(call.operand(kX))) * size, elements * std::max(size, 32.0));
    return {sizeof(fugue_cost), elements * size + reads, 0};
  }

  void reference(const sdk::Call& call, fugue_host_array* arrays) const override {
    sdk::HostView x(arrays[kX]), out(arrays[kOut]);
    const AffinePlace p = place(call);
    const size_t size = dtype_bytes(x.dtype());
    const char* from = static_cast<const char*>(x.data());
    char* to = static_cast<char*>(out.data());
    for (int64_t i = 0; i < out.size(); ++i) std::memcpy(to + i * size, from + place_of(p, i) * size, size);
  }

 protected:
  virtual AffinePlace place(const sdk::Call& call) const = 0;
};

class Transpose final : public Rearrange {
 public:
  Transpose() {
    name = "array.transpose";
    doc = "x with its axes permuted, as NumPy's np.transpose(x, axes): axis d of out is axis axes[d] of x. "
          "Attribute `axes` lists them, \"2, 0, 1\" (negative axes count from the end); left out, the axes are reversed";
    operands = {sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "the array (rank >= 1)"),
                sdk::out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "x's dtype and elements, its axes permuted")};
    attrs = {{"axes", FUGUE_ATTR_STRING, false, 0, "", "out's axes as x's, \"2, 0, 1\"; empty: reversed"}};
    set_tolerance(*this, kRounding);
    test_cases = R"([
      {"name": "a matrix", "shape": [37, 5], "dtypes": ["f32", "f64", "i32", "u8", "c64"]},
      {"name": "a batch with the batch axis last, as matrices first", "shape": [4, 4, 9], "attrs": {"axes": "2, 0, 1"},
       "dtypes": ["f32", "f64", "c128", "i64"]},
      {"name": "negative axes, the last two swapped", "shape": [3, 2, 5, 7], "attrs": {"axes": "0 1 -1 -2"}, "dtypes": ["f32", "u32"]}
    ])";
  }

 protected:
  AffinePlace place(const sdk::Call& call) const override { return transposed(call.operand(kX), call.string("axes")); }
};

class Slice final : public Rearrange {
 public:
  Slice() {
    name = "array.slice";
    doc = "x[index], NumPy's basic indexing: attribute `index` holds one item an axis, separated by commas, each a slice "
          "\"start:stop:step\" (parts may be left out; negative starts and stops count from the end, a negative step "
          "walks backwards, bounds past the axis are clamped), an integer (that axis is dropped) or \"...\" (whole axes); "
          "axes past the items are whole; left out, the whole array (x[...]). At least one axis must stay";
    operands = {sdk::in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "the array (rank >= 1)"),
                sdk::out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kAllDtypes, "x's dtype, the elements index picks")};
    attrs = {{"index", FUGUE_ATTR_STRING, false, 0, "...", "\"::2, 1:7, -1\" as NumPy writes x[::2, 1:7, -1]; \"...\" (the default) the whole array"}};
    set_tolerance(*this, kRounding);
    test_cases = R"([
      {"name": "every other matrix of a batch", "shape": [9, 3, 3], "attrs": {"index": "::2"}, "dtypes": ["f32", "f64", "c64", "i32"]},
      {"name": "a block of a matrix, backwards", "shape": [20, 30], "attrs": {"index": "-3:2:-4, 5:25"}, "dtypes": ["f32", "i64", "u8"]},
      {"name": "an integer drops its axis", "shape": [4, 6, 5], "attrs": {"index": "..., 2"}, "dtypes": ["f64", "c128"]},
      {"name": "bounds past the axis, clamped", "shape": [33], "attrs": {"index": "-100:100:3"}, "dtypes": ["f32", "u32"]}
    ])";
  }

 protected:
  AffinePlace place(const sdk::Call& call) const override { return sliced(call.operand(kX), call.string("index")); }
};

}  // namespace

std::unique_ptr<sdk::Operation> transpose_operation() { return std::make_unique<Transpose>(); }
std::unique_ptr<sdk::Operation> slice_operation() { return std::make_unique<Slice>(); }

}  // namespace fugue::array
