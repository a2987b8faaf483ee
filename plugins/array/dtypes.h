// dtypes.h: facts about each element type that the array operations rely on: size, range, which
// values fit, its OpenCL C spellings, and how complex dtypes relate to their parts' real dtypes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "fugue_plugin.h"

namespace fugue::array {

std::size_t dtype_bytes(fugue_dtype dtype);
bool is_integer(fugue_dtype dtype);
bool is_complex(fugue_dtype dtype);

// The real dtype of a complex dtype's parts (c64 -> f32); a real dtype itself.
fugue_dtype component(fugue_dtype dtype);
// The complex dtype whose parts are `real` (f32 -> c64, f64 -> c128); logic_error for others.
fugue_dtype complex_of(fugue_dtype real);

// The range of an integer dtype.
int64_t lowest_integer(fugue_dtype dtype);
int64_t highest_integer(fugue_dtype dtype);

// Whether `value` converts to `dtype` unchanged (integers) or without overflowing (floats; for a
// complex dtype, as the real part of value + 0i).
bool fits(fugue_dtype dtype, double value);
// The values that fit, for error messages: "an integer in [0, 255]".
std::string fitting_values(fugue_dtype dtype);

// The OpenCL C type: "float", "uchar", "float2" (c64), ...
std::string ctype(fugue_dtype dtype);
// The unsigned type of the same width, in which integer arithmetic wraps: "uint" for int.
std::string unsigned_ctype(fugue_dtype dtype);
// OpenCL C macros for the range of an integer dtype: "INT_MIN", "UCHAR_MAX", ...
std::string lowest_macro(fugue_dtype dtype);
std::string highest_macro(fugue_dtype dtype);

// The shortest decimal that reads back as `value`: "2.5", "0.1", "4294967295".
std::string number_text(double value);

// Elements an element-wise loop visits to produce a result of this type: 1 unless it is an array.
int64_t element_count(const fugue_type& type);
// Global memory an operand costs an operation: arrays in full, scalar results one element; scalar
// inputs are one value read into a register, consts are baked into the code.
double traffic_bytes(const fugue_type& type, fugue_role role);

}  // namespace fugue::array
