// host_array.h: a dense array (or scalar) in host memory: dtype, shape and bytes, C order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "program/dtype.h"

namespace fugue {

using Shape = std::vector<int64_t>;
// The most axes an array may have: shapes with more are refused where they are read.
constexpr uint32_t kMaxRank = 8;

// Number of elements of a shape (1 for rank 0). Throws UserError on overflow or negative extents.
int64_t shape_elements(const Shape& shape);
// "[584, 388]"; "[]" for a scalar.
std::string shape_string(const Shape& shape);

// The type of one dense array: a part of a kind with storage.
struct ArrayType {
  DType dtype = DType::None;
  Shape shape;
  // A part of a kind with storage: bit 0 when axis 0's length is the value's count, known at run time
  // (shape[0]: its capacity).
  uint32_t runtime_axes = 0;
  bool operator==(const ArrayType& o) const { return dtype == o.dtype && shape == o.shape && runtime_axes == o.runtime_axes; }
  bool operator!=(const ArrayType& o) const { return !(*this == o); }
};

struct HostArray {
  DType dtype = DType::None;
  Shape shape;                 // empty: a scalar
  std::vector<uint8_t> bytes;  // shape_elements(shape) * dtype_size(dtype); empty for a kind with storage
  // A value of a kind with storage (a plugin's): the kind, and one dense array per part, in its order.
  std::string kind_name;
  std::vector<HostArray> parts;

  HostArray() = default;
  // Zero-filled.
  HostArray(DType dtype, Shape shape);

  int64_t elements() const { return shape_elements(shape); }
  bool compound() const { return !kind_name.empty(); }
  // "f32 [3, 4]", or "pair f32 [3] (first f32 [3], second f32 [3])" for a kind with storage.
  std::string type_text() const;
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  // Element i converted to double (for references, comparisons and `if`); a complex one's real part.
  double get(int64_t i) const;
  // Element i as a complex number (imaginary part 0 for reals).
  std::complex<double> get_complex(int64_t i) const;
  // Store a double into element i, converted to the dtype (truncating toward zero for integers).
  void set(int64_t i, double value);
};

}  // namespace fugue
