// grid.cpp: coordinates and borders, on the CPU and as OpenCL C.
#include "grid.h"

#include <algorithm>

#include <stdexcept>

namespace fugue::stencil {

const char* border_name(fugue_border border) {
  switch (border) {
    case FUGUE_BORDER_CLAMP:
      return "clamp";
    case FUGUE_BORDER_ZERO:
      return "zero";
    case FUGUE_BORDER_PERIODIC:
      return "periodic";
    case FUGUE_BORDER_MIRROR:
      return "mirror";
  }
  return "unknown";
}

namespace {

// x mod m in [0, m), for any sign of x.
int64_t modulo(int64_t x, int64_t m) { return ((x % m) + m) % m; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// CPU

std::vector<int64_t> unflatten(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = index % shape[d];
    index /= shape[d];
  }
  return c;
}

int64_t flatten(const std::vector<int64_t>& coordinates, const std::vector<int64_t>& shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coordinates[d];
  return index;
}

int64_t border_coordinate(int64_t c, int64_t offset, int64_t n, fugue_border border) {
  const int64_t j = c + offset;
  if (j >= 0 && j < n) return j;
  switch (border) {
    case FUGUE_BORDER_CLAMP:
      return j < 0 ? 0 : n - 1;
    case FUGUE_BORDER_ZERO:
      return -1;
    case FUGUE_BORDER_PERIODIC:
      return modulo(j, n);
    case FUGUE_BORDER_MIRROR: {
      // Reflection about the edge cells repeats every 2n - 2 cells; one cell is its own mirror.
      if (n == 1) return 0;
      const int64_t k = modulo(j, 2 * n - 2);
      return k < n ? k : 2 * n - 2 - k;
    }
  }
  throw std::logic_error("unknown border rule " + std::to_string(border));
}

// ---------------------------------------------------------------------------------------------
// Device

GridCode::GridCode(const sdk::Emitter& emitter, std::vector<int64_t> shape, std::string index_type,
                   std::string prefix, int operand)
    : emitter_(emitter),
      shape_(std::move(shape)),
      type_(std::move(index_type)),
      prefix_(std::move(prefix)) {
  for (uint32_t d = 0; d < shape_.size(); ++d) {
    const std::string e = operand >= 0 ? emitter_.extent(static_cast<uint32_t>(operand), d) : "";
    const bool symbolic = e.rfind("fugue_ext_", 0) == 0;
    symbolic_.push_back(symbolic);
    extents_.push_back(symbolic ? "((" + type_ + ")" + e + ")" : lit(shape_[d]));
  }
}

std::string GridCode::last(uint32_t d) const {
  return symbolic_.at(d) ? "(" + extents_[d] + " - " + lit(1) + ")" : lit(shape_.at(d) - 1);
}

std::string GridCode::lit(int64_t value) const {
  std::string digits = std::to_string(value) + (type_ == "long" ? "L" : "");
  return value < 0 ? "(" + digits + ")" : digits;
}

std::string GridCode::declare(const std::string& stem, const std::string& value,
                              std::string& code) {
  const std::string name = emitter_.name(prefix_ + stem);
  code += "  const " + type_ + " " + name + " = " + value + ";\n";
  return name;
}

std::string GridCode::coordinates(const std::string& flat) {
  std::string code;
  coordinates_.assign(shape_.size(), "");
  const uint32_t rank = static_cast<uint32_t>(shape_.size());
  // Peel the axes off from the last (fastest) one; what is left is the first axis' coordinate.
  std::string rest = declare("flat", "(" + type_ + ")(" + flat + ")", code);
  for (uint32_t d = rank; d-- > 1;) {
    coordinates_[d] = declare("c" + std::to_string(d), rest + " % " + extents_[d], code);
    rest = declare("rest" + std::to_string(d), rest + " / " + extents_[d], code);
  }
  coordinates_[0] = rest;
  return code;
}

std::string GridCode::coordinates(const std::vector<std::string>& centre) {
  std::string code;
  coordinates_.clear();
  for (size_t d = 0; d < centre.size(); ++d)
    coordinates_.push_back(declare("c" + std::to_string(d), centre[d], code));
  return code;
}

std::string GridCode::neighbour(uint32_t d, int64_t offset, fugue_border border,
                                std::string& code) {
  const std::string& c = coordinates_.at(d);
  if (offset == 0) return c;
  const auto key = std::make_tuple(d, offset, border);
  if (auto it = neighbours_.find(key); it != neighbours_.end()) return it->second;
  const int64_t n = shape_.at(d);
  const std::string stem = "n" + std::to_string(d) + (offset < 0 ? "m" : "p") +
                           std::to_string(offset < 0 ? -offset : offset);
  const std::string moved = c + " + " + lit(offset);
  std::string name;
  switch (border) {
    case FUGUE_BORDER_CLAMP:
      name = declare(stem,
                     offset > 0 ? "min(" + moved + ", " + last(d) + ")"
                                : "max(" + moved + ", " + lit(0) + ")",
                     code);
      break;
    case FUGUE_BORDER_ZERO:
      name = declare(stem, moved, code);
      break;
    case FUGUE_BORDER_PERIODIC: {
      if (symbolic_[d] && (offset < 0 ? -offset : offset) < n) {  // one wrap, for every extent above |offset|
        const std::string a = lit(offset < 0 ? -offset : offset), e = extents_[d];
        name = declare(stem,
                       offset > 0 ? c + " >= " + e + " - " + a + " ? " + c + " - (" + e + " - " + a + ") : " + c + " + " + a
                                  : c + " >= " + a + " ? " + c + " - " + a + " : " + c + " + (" + e + " - " + a + ")",
                       code);
        break;
      }
      // The shift reduced to [0, n) at generation time: then one wrap at most.
      const int64_t s = modulo(offset, n);
      if (s == 0) return neighbours_[key] = c;
      name = declare(
          stem,
          c + " >= " + lit(n - s) + " ? " + c + " - " + lit(n - s) + " : " + c + " + " + lit(s),
          code);
      break;
    }
    case FUGUE_BORDER_MIRROR: {
      if (symbolic_[d] && (offset < 0 ? -offset : offset) < n) {  // one fold, for every extent above |offset|
        const std::string a = lit(offset < 0 ? -offset : offset), e = extents_[d];
        const std::string w = declare(stem + "w", offset > 0 ? c + " + " + a : c + " - " + a, code);
        name = declare(stem,
                       offset > 0 ? w + " >= " + e + " ? " + lit(2) + " * " + e + " - " + lit(2) + " - " + w + " : " + w
                                  : w + " < " + lit(0) + " ? -" + w + " : " + w,
                       code);
        break;
      }
      if (n == 1) return neighbours_[key] = c;
      // The reflected grid repeats every m = 2n - 2 cells: shift within one period, then fold.
      const int64_t m = 2 * n - 2, s = modulo(offset, m);
      if (s == 0) return neighbours_[key] = c;
      const std::string w = declare(
          stem + "w",
          c + " >= " + lit(m - s) + " ? " + c + " - " + lit(m - s) + " : " + c + " + " + lit(s),
          code);
      name = declare(stem, w + " >= " + lit(n) + " ? " + lit(m) + " - " + w + " : " + w, code);
      break;
    }
    default:
      throw std::logic_error("unknown border rule " + std::to_string(border));
  }
  return neighbours_[key] = name;
}

std::string GridCode::inside(uint32_t d, int64_t offset) const {
  const int64_t n = shape_.at(d);
  if (offset == 0) return "";
  if (offset >= n || -offset >= n) return "0";
  const std::string& c = coordinates_.at(d);
  if (offset > 0 && symbolic_.at(d)) return c + " < " + extents_[d] + " - " + lit(offset);
  return offset > 0 ? c + " < " + lit(n - offset) : c + " >= " + lit(-offset);
}

std::string GridCode::flat(const std::vector<std::string>& coordinates) const {
  if (std::find(symbolic_.begin(), symbolic_.end(), true) != symbolic_.end()) {  // Horner: ((c0 * n1 + c1) * n2 + c2)
    std::string sum = coordinates.empty() ? lit(0) : coordinates[0];
    for (size_t d = 1; d < coordinates.size(); ++d) sum = "(" + sum + ") * " + extents_[d] + " + " + coordinates[d];
    return sum;
  }
  std::string sum;
  int64_t stride = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    const std::string term = stride == 1 ? coordinates[d] : coordinates[d] + " * " + lit(stride);
    sum = sum.empty() ? term : term + " + " + sum;
    stride *= shape_[d];
  }
  return sum.empty() ? lit(0) : sum;
}

std::string GridCode::interior(const std::vector<int64_t>& below, const std::vector<int64_t>& above) const {
  std::string condition;
  for (size_t d = 0; d < shape_.size(); ++d) {
    // A literal extent too short for the reach has no interior; an argument's is tested at run time.
    if (!symbolic_[d] && below[d] + above[d] >= shape_[d]) return "0";
    if (below[d] > 0) condition += (condition.empty() ? "" : " && ") + coordinates_[d] + " >= " + lit(below[d]);
    if (above[d] > 0)
      condition += (condition.empty() ? "" : " && ") + coordinates_[d] + " < " + extents_[d] + " - " + lit(above[d]);
  }
  return condition.empty() ? "1" : condition;
}

std::string GridCode::clamped(uint32_t d, const std::string& value) const {
  return "min(max(" + value + ", " + lit(0) + "), " + last(d) + ")";
}

}  // namespace fugue::stencil
