// opencl_c.cpp: the OpenCL C spellings of the array operations' arithmetic.
#include "opencl_c.h"

#include <charconv>

#include "dtypes.h"
#include "fugue/sdk.hpp"

namespace fugue::array::opencl {

namespace {

bool is_signed_integer(fugue_dtype dtype) { return is_integer(dtype) && sdk::is_signed(dtype); }

// The shortest decimal of a float that reads back as it, as an OpenCL C float or double literal.
template <class F>
std::string float_literal(F value, const char* suffix) {
  char buffer[64];
  std::string digits(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  // "3" is an integer literal, and "3f" no literal at all.
  if (digits.find_first_of(".e") == std::string::npos) digits += ".0";
  digits += suffix;
  return digits[0] == '-' ? "(" + digits + ")" : digits;
}

}  // namespace

std::string cast(fugue_dtype dtype, const std::string& x) {
  return "((" + ctype(dtype) + ")(" + x + "))";
}

std::string load(fugue_dtype dtype, const std::string& operand) {
  return "const " + ctype(dtype) + " ${@" + operand + "} = " + cast(dtype, "${" + operand + "}") +
         ";\n";
}

std::string literal(fugue_dtype dtype, double value) {
  if (dtype == FUGUE_DTYPE_F32) return float_literal(static_cast<float>(value), "f");
  if (dtype == FUGUE_DTYPE_F64) return float_literal(value, "");
  // The magnitude of MIN does not fit the type, so -N would not be a literal of it.
  if (is_signed_integer(dtype) && static_cast<int64_t>(value) == lowest_integer(dtype))
    return lowest(dtype);
  const char* suffix = dtype == FUGUE_DTYPE_I64 ? "L" : dtype == FUGUE_DTYPE_U32 ? "u" : "";
  return cast(dtype, std::to_string(static_cast<int64_t>(value)) + suffix);
}

std::string nan(fugue_dtype dtype) { return cast(dtype, "NAN"); }
std::string lowest(fugue_dtype dtype) { return cast(dtype, lowest_macro(dtype)); }
std::string highest(fugue_dtype dtype) { return cast(dtype, highest_macro(dtype)); }

std::string wrapping(fugue_dtype dtype, const std::string& x, char op, const std::string& y) {
  const std::string o = std::string(" ") + op + " ";
  if (sdk::is_float(dtype)) return "(" + x + o + y + ")";
  if (is_signed_integer(dtype)) {
    const std::string u = unsigned_ctype(dtype);
    return "as_" + ctype(dtype) + "((" + u + ")(" + x + ")" + o + "(" + u + ")(" + y + "))";
  }
  // Unsigned arithmetic wraps already; uchar is promoted to int, where 255 * 255 still fits.
  return cast(dtype, "(" + x + ")" + o + "(" + y + ")");
}

std::string negate(fugue_dtype dtype, const std::string& x) {
  if (sdk::is_float(dtype)) return "(-(" + x + "))";
  if (is_signed_integer(dtype))
    return "as_" + ctype(dtype) + "(-(" + unsigned_ctype(dtype) + ")(" + x + "))";
  return cast(dtype, "-(" + x + ")");
}

std::string absolute(fugue_dtype dtype, const std::string& x) {
  if (sdk::is_float(dtype)) return "fabs(" + x + ")";
  // abs() of a signed integer returns the unsigned type, where |MIN| fits; its bits read as MIN.
  if (is_signed_integer(dtype)) return "as_" + ctype(dtype) + "(abs(" + x + "))";
  return x;
}

std::string divide(fugue_dtype dtype, const std::string& x, const std::string& y) {
  if (sdk::is_float(dtype)) return "(" + x + " / " + y + ")";
  const std::string zero = cast(dtype, "0");
  const std::string quotient = cast(dtype, x + " / " + y);
  if (!is_signed_integer(dtype))
    return "(" + y + " == " + zero + " ? " + zero + " : " + quotient + ")";
  return "(" + y + " == " + zero + " ? " + zero + " : " + y + " == " + cast(dtype, "-1") + " ? " +
         negate(dtype, x) + " : " + quotient + ")";
}

std::string minimum(fugue_dtype dtype, const std::string& x, const std::string& y) {
  return (sdk::is_float(dtype) ? "fmin(" : "min(") + x + ", " + y + ")";
}

std::string maximum(fugue_dtype dtype, const std::string& x, const std::string& y) {
  return (sdk::is_float(dtype) ? "fmax(" : "max(") + x + ", " + y + ")";
}

std::string convert(fugue_dtype from, fugue_dtype to, const std::string& x) {
  if (from == to) return x;
  const bool saturate =
      is_integer(to) && (sdk::is_float(from) || dtype_bytes(to) < dtype_bytes(from));
  if (saturate) return "convert_" + ctype(to) + "_sat(" + x + ")";
  if (is_integer(to) && is_integer(from) && dtype_bytes(to) == dtype_bytes(from))
    return "as_" + ctype(to) + "(" + x + ")";
  return cast(to, x);
}

}  // namespace fugue::array::opencl
