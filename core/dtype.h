// dtype.h: element types of arrays and scalars: names, sizes, OpenCL C spellings.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "fugue_plugin.h"

namespace fugue {

enum class DType : int32_t {
  None = FUGUE_DTYPE_NONE,
  F32 = FUGUE_DTYPE_F32,
  F64 = FUGUE_DTYPE_F64,
  I32 = FUGUE_DTYPE_I32,
  I64 = FUGUE_DTYPE_I64,
  U8 = FUGUE_DTYPE_U8,
  U32 = FUGUE_DTYPE_U32,
};

// "f32", "f64", "i32", "i64", "u8", "u32".
std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
// Bytes per element.
std::size_t dtype_size(DType dtype);
// OpenCL C type: "float", "double", "int", "long", "uchar", "uint".
std::string_view dtype_ctype(DType dtype);
bool dtype_is_float(DType dtype);
bool dtype_is_signed(DType dtype);
// The list of all dtype names, for error messages: "f32, f64, i32, i64, u8, u32".
std::string dtype_names(uint32_t mask = FUGUE_DTYPES_ALL);

// Apply `f` to a default-constructed value of the C++ type of `dtype` (float, double, int32_t,
// int64_t, uint8_t, uint32_t): one switch for all code that is generic over element types.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::U8: return f(uint8_t{});
    case DType::U32: return f(uint32_t{});
    default: break;
  }
  throw std::logic_error("visit_dtype: no element type");
}

}  // namespace fugue
