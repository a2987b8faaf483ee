// opencl_c.cpp: the OpenCL C spellings of the array operations' arithmetic.
#include "opencl_c.h"

#include <cctype>
#include <charconv>
#include <stdexcept>

#include "dtypes.h"
#include "fugue/sdk.hpp"

namespace fugue::array::opencl {

namespace {

bool is_signed_integer(fugue_dtype dtype) { return is_integer(dtype) && sdk::is_signed(dtype); }

bool is_identifier(const std::string& x) {
  if (x.empty() || std::isdigit(static_cast<unsigned char>(x[0]))) return false;
  for (char c : x)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// x.member, with x parenthesized unless it is an identifier or an Emitter pattern ${...}.
std::string member(const std::string& x, const char* name) {
  const bool pattern = x.size() > 3 && x.compare(0, 2, "${") == 0 && x.back() == '}' &&
                       x.find('}') == x.size() - 1;
  return (is_identifier(x) || pattern ? x : "(" + x + ")") + "." + name;
}

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

std::string operand_value(fugue_dtype dtype, const std::string& x, fugue_kind kind) {
  if (is_complex(dtype) && kind == FUGUE_KIND_CONST)
    return make_complex(dtype, cast(component(dtype), x), literal(component(dtype), 0));
  return cast(dtype, x);
}

std::string load(fugue_dtype dtype, const std::string& operand, fugue_kind kind) {
  return "const " + ctype(dtype) + " ${@" + operand + "} = " +
         operand_value(dtype, "${" + operand + "}", kind) + ";\n";
}

std::string real_part(const std::string& x) { return member(x, "x"); }
std::string imag_part(const std::string& x) { return member(x, "y"); }

std::string make_complex(fugue_dtype dtype, const std::string& re, const std::string& im) {
  return "((" + ctype(dtype) + ")(" + re + ", " + im + "))";
}

std::string literal(fugue_dtype dtype, double value) {
  if (is_complex(dtype))
    return make_complex(dtype, literal(component(dtype), value), literal(component(dtype), 0));
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
  if (is_complex(dtype) && op == '*') {
    const std::string xr = real_part(x), xi = imag_part(x), yr = real_part(y), yi = imag_part(y);
    return make_complex(dtype, xr + " * " + yr + " - " + xi + " * " + yi,
                        xr + " * " + yi + " + " + xi + " * " + yr);
  }
  // float2 and double2 add and subtract part by part.
  if (sdk::is_float(dtype) || is_complex(dtype)) return "(" + x + o + y + ")";
  if (is_signed_integer(dtype)) {
    const std::string u = unsigned_ctype(dtype);
    return "as_" + ctype(dtype) + "((" + u + ")(" + x + ")" + o + "(" + u + ")(" + y + "))";
  }
  // Unsigned arithmetic wraps already; uchar is promoted to int, where 255 * 255 still fits.
  return cast(dtype, "(" + x + ")" + o + "(" + y + ")");
}

std::string negate(fugue_dtype dtype, const std::string& x) {
  if (sdk::is_float(dtype) || is_complex(dtype)) return "(-(" + x + "))";
  if (is_signed_integer(dtype))
    return "as_" + ctype(dtype) + "(-(" + unsigned_ctype(dtype) + ")(" + x + "))";
  return cast(dtype, "-(" + x + ")");
}

std::string absolute(fugue_dtype dtype, const std::string& x) {
  if (is_complex(dtype)) return "hypot(" + real_part(x) + ", " + imag_part(x) + ")";
  if (sdk::is_float(dtype)) return "fabs(" + x + ")";
  // abs() of a signed integer returns the unsigned type, where |MIN| fits; its bits read as MIN.
  if (is_signed_integer(dtype)) return "as_" + ctype(dtype) + "(abs(" + x + "))";
  return x;
}

std::string conjugate(fugue_dtype dtype, const std::string& x) {
  if (!is_complex(dtype)) return x;
  return make_complex(dtype, real_part(x), "-" + imag_part(x));
}

std::string divide(fugue_dtype dtype, const std::string& x, const std::string& y) {
  if (is_complex(dtype)) {
    // Smith: with r = small / large of y's parts, x / y = (x * conj(y) / large) / d, where
    // d = large + small * r is |y|^2 / large; a branch for each of y's parts being the larger.
    const std::string xr = real_part(x), xi = imag_part(x), yr = real_part(y), yi = imag_part(y);
    const std::string r_re = "(" + yi + " / " + yr + ")";
    const std::string d_re = "(" + yr + " + " + yi + " * " + r_re + ")";
    const std::string r_im = "(" + yr + " / " + yi + ")";
    const std::string d_im = "(" + yr + " * " + r_im + " + " + yi + ")";
    const std::string larger_re =
        make_complex(dtype, "(" + xr + " + " + xi + " * " + r_re + ") / " + d_re,
                     "(" + xi + " - " + xr + " * " + r_re + ") / " + d_re);
    const std::string larger_im =
        make_complex(dtype, "(" + xr + " * " + r_im + " + " + xi + ") / " + d_im,
                     "(" + xi + " * " + r_im + " - " + xr + ") / " + d_im);
    // y = 0: each part divided by +0, as NumPy does (inf, or NaN for 0 / 0), not NaN for all.
    const std::string by_zero = make_complex(dtype, xr + " / fabs(" + yr + ")", xi + " / fabs(" + yr + ")");
    return "(" + yr + " == 0 && " + yi + " == 0 ? " + by_zero + " : fabs(" + yr + ") >= fabs(" + yi + ") ? " +
           larger_re + " : " + larger_im + ")";
  }
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
  if (is_complex(to) && is_complex(from)) return "convert_" + ctype(to) + "(" + x + ")";
  if (is_complex(to))
    return make_complex(to, convert(from, component(to), x), literal(component(to), 0));
  if (is_complex(from))
    throw std::logic_error(std::string("no conversion of complex ") + sdk::dtype_name(from) +
                           " to real " + sdk::dtype_name(to));
  const bool saturate =
      is_integer(to) && (sdk::is_float(from) || dtype_bytes(to) < dtype_bytes(from));
  if (saturate) return "convert_" + ctype(to) + "_sat(" + x + ")";
  if (is_integer(to) && is_integer(from) && dtype_bytes(to) == dtype_bytes(from))
    return "as_" + ctype(to) + "(" + x + ")";
  return cast(to, x);
}

}  // namespace fugue::array::opencl
