#include "program/host_array.h"

#include <limits>

#include "errors.h"

namespace fugue {

int64_t shape_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw UserError("negative extent in shape " + shape_string(shape));
    if (extent != 0 && n > std::numeric_limits<int64_t>::max() / extent)
      throw UserError("shape " + shape_string(shape) + " has too many elements");
    n *= extent;
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

HostArray::HostArray(DType dtype_, Shape shape_) : dtype(dtype_), shape(std::move(shape_)) {
  uint64_t size = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(shape_elements(shape)), dtype_size(dtype), &size) ||
      size > std::numeric_limits<size_t>::max() / 2)
    throw UserError("an array of shape " + shape_string(shape) + " and dtype " + std::string(dtype_name(dtype)) +
                    " is too large for this machine's memory");
  bytes.assign(static_cast<size_t>(size), 0);
}

double HostArray::get(int64_t i) const { return get_complex(i).real(); }

std::complex<double> HostArray::get_complex(int64_t i) const {
  return visit_dtype(dtype, [&](auto zero) -> std::complex<double> {
    using T = decltype(zero);
    if constexpr (is_complex_v<T>)
      return {static_cast<double>(data<T>()[i].real()), static_cast<double>(data<T>()[i].imag())};
    else
      return static_cast<double>(data<T>()[i]);
  });
}

void HostArray::set(int64_t i, double value) {
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    data<T>()[i] = static_cast<T>(value);
  });
}

}  // namespace fugue

namespace fugue {

std::string HostArray::type_text() const {
  std::string text = std::string(dtype_name(dtype)) + " " + shape_string(shape);
  if (!compound()) return text;
  text = kind_name + " " + text + " (";
  for (size_t k = 0; k < parts.size(); ++k) text += (k ? ", " : "") + parts[k].type_text();
  return text + ")";
}

}  // namespace fugue
