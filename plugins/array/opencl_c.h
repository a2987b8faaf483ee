// opencl_c.h: OpenCL C expressions with the semantics the references in reference_math.h
// reproduce: integers wrap, divisions are guarded, conversions to narrower types saturate, complex
// numbers (float2/double2 holding re, im) multiply, divide and take magnitudes without overflowing
// where the result does not.
//
// Arguments are OpenCL C expressions already of the dtype's C type. Functions that use an argument
// more than once say so: pass them an identifier, not an expression with a cost or side effect.
#pragma once
#include <string>

#include "fugue_plugin.h"

namespace fugue::array::opencl {

// ((T)(x)). For a complex dtype x must be complex already: a real x would fill both parts.
std::string cast(fugue_dtype dtype, const std::string& x);
// `x`, the value of an operand of `kind`, as `dtype`: cast(dtype, x), except that a const (always a
// real number) becomes x + 0i for a complex dtype.
std::string operand_value(fugue_dtype dtype, const std::string& x, fugue_kind kind);
// An Emitter pattern declaring ${@operand}: the operand at the current element, in `dtype`.
std::string load(fugue_dtype dtype, const std::string& operand,
                 fugue_kind kind = FUGUE_KIND_ARRAY);
// `value` exactly, typed as `dtype` (it must fit: see fits()); value + 0i for a complex dtype.
std::string literal(fugue_dtype dtype, double value);
// The real and imaginary parts of a complex x.
std::string real_part(const std::string& x);
std::string imag_part(const std::string& x);
// The complex number re + im i of `dtype`, from expressions of its parts' C type.
std::string make_complex(fugue_dtype dtype, const std::string& re, const std::string& im);
// Identities of reductions: NaN for floats (fmin and fmax ignore it), the integer range's ends.
std::string nan(fugue_dtype dtype);
std::string lowest(fugue_dtype dtype);
std::string highest(fugue_dtype dtype);

// x op y for op in + - *, modulo 2^bits for integers: signed overflow is undefined in OpenCL C,
// so signed operands go through their unsigned type and come back with as_<type>. Complex * uses
// x and y more than once.
std::string wrapping(fugue_dtype dtype, const std::string& x, char op, const std::string& y);
// -x; integers wrap (-MIN = MIN, unsigned 2^bits - x).
std::string negate(fugue_dtype dtype, const std::string& x);
// |x|, of the parts' dtype for a complex x: hypot, which scales, so that |x| overflows only when
// it is beyond the dtype's range. abs(MIN) = MIN for signed integers.
std::string absolute(fugue_dtype dtype, const std::string& x);
// The complex conjugate re - im i (x itself for a real dtype). Uses x more than once.
std::string conjugate(fugue_dtype dtype, const std::string& x);
// x / y; integers truncate toward zero, give 0 for y = 0 and MIN for MIN / -1, and never execute
// those divisions. Complex numbers divide by Smith's algorithm: the ratio of y's smaller part to
// its larger one, never y's squared magnitude, which would overflow for parts beyond the square
// root of the dtype's range. Uses x and y more than once.
std::string divide(fugue_dtype dtype, const std::string& x, const std::string& y);
// fmin/fmax (a NaN operand is ignored) for floats, min/max for integers.
std::string minimum(fugue_dtype dtype, const std::string& x, const std::string& y);
std::string maximum(fugue_dtype dtype, const std::string& x, const std::string& y);
// x converted from `from` to `to`: float to integer and integer to narrower integer saturate
// (convert_<type>_sat: NaN gives 0), integer to same-width integer reinterprets the bits, the rest
// converts as C does (to float: round to nearest). A real converts to a complex dtype as its real
// part, with imaginary part 0; complex converts to complex part by part; complex to real is a
// logic_error (the operations refuse it).
std::string convert(fugue_dtype from, fugue_dtype to, const std::string& x);

}  // namespace fugue::array::opencl
