// dtypes.cpp: the integer spellings of OpenCL C per dtype, and the questions answered from them and
// from the one dtype table (fugue_dtypes.h).
#include "dtypes.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "fugue/sdk.hpp"

namespace fugue::array {

namespace {

// What OpenCL C needs beyond the dtype table, for the integer dtypes.
struct IntegerSpelling {
  const char* unsigned_ctype;
  const char* lowest_macro;
  const char* highest_macro;
};

const IntegerSpelling& integer_spelling(fugue_dtype dtype) {
  static const IntegerSpelling i32{"uint", "INT_MIN", "INT_MAX"},
      i64{"ulong", "LONG_MIN", "LONG_MAX"}, u8{"uchar", "0", "UCHAR_MAX"},
      u32{"uint", "0", "UINT_MAX"};
  switch (dtype) {
    case FUGUE_DTYPE_I32: return i32;
    case FUGUE_DTYPE_I64: return i64;
    case FUGUE_DTYPE_U8: return u8;
    case FUGUE_DTYPE_U32: return u32;
  }
  throw std::logic_error(std::string("asked for the integer spelling of ") +
                         sdk::dtype_name(dtype));
}

const fugue_dtype_info& integer_info(fugue_dtype dtype) {
  const fugue_dtype_info& info = abi::dtype_info(dtype);
  if (!(info.flags & FUGUE_DTYPE_FLAG_INTEGER))
    throw std::logic_error(std::string("asked for the integer range of ") + info.name);
  return info;
}

}  // namespace

std::size_t dtype_bytes(fugue_dtype dtype) { return sdk::dtype_size(dtype); }
bool is_integer(fugue_dtype dtype) { return sdk::is_integer(dtype); }
bool is_complex(fugue_dtype dtype) { return sdk::is_complex(dtype); }
int64_t lowest_integer(fugue_dtype dtype) { return integer_info(dtype).int_lowest; }
int64_t highest_integer(fugue_dtype dtype) {
  return static_cast<int64_t>(integer_info(dtype).int_highest);  // every integer dtype's fits
}

fugue_dtype component(fugue_dtype dtype) { return sdk::component_dtype(dtype); }

fugue_dtype complex_of(fugue_dtype real) {
  if (real == FUGUE_DTYPE_F32) return FUGUE_DTYPE_C64;
  if (real == FUGUE_DTYPE_F64) return FUGUE_DTYPE_C128;
  throw std::logic_error(std::string("no complex dtype has parts of ") + sdk::dtype_name(real));
}

bool fits(fugue_dtype dtype, double value) {
  dtype = component(dtype);
  if (std::isnan(value)) return false;
  if (dtype == FUGUE_DTYPE_F32) return std::fabs(value) <= FLT_MAX;
  if (dtype == FUGUE_DTYPE_F64) return std::isfinite(value);
  // highest + 1 is a power of two, so exact as a double, where highest itself may not be (i64).
  return value == std::trunc(value) && value >= static_cast<double>(lowest_integer(dtype)) &&
         value < static_cast<double>(highest_integer(dtype)) + 1.0;
}

std::string fitting_values(fugue_dtype dtype) {
  dtype = component(dtype);
  if (dtype == FUGUE_DTYPE_F32) return "a finite value of magnitude at most 3.4028235e+38";
  if (dtype == FUGUE_DTYPE_F64) return "a finite value";
  return "an integer in [" + std::to_string(lowest_integer(dtype)) + ", " +
         std::to_string(highest_integer(dtype)) + "]";
}

std::string ctype(fugue_dtype dtype) { return sdk::dtype_ctype(dtype); }
std::string unsigned_ctype(fugue_dtype dtype) { return integer_spelling(dtype).unsigned_ctype; }
std::string lowest_macro(fugue_dtype dtype) { return integer_spelling(dtype).lowest_macro; }
std::string highest_macro(fugue_dtype dtype) { return integer_spelling(dtype).highest_macro; }

std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

int64_t element_count(const fugue_type& type) {
  return type.kind == FUGUE_KIND_ARRAY ? sdk::elements(type) : 1;
}

double traffic_bytes(const fugue_type& type, fugue_role role) {
  if (type.kind == FUGUE_KIND_ARRAY)
    return static_cast<double>(sdk::elements(type)) * static_cast<double>(dtype_bytes(type.dtype));
  if (type.kind == FUGUE_KIND_SCALAR && role == FUGUE_ROLE_OUT)
    return static_cast<double>(dtype_bytes(type.dtype));
  return 0;
}

}  // namespace fugue::array
