// opencl_c.h: OpenCL C expressions with the semantics the references in reference_math.h
// reproduce: integers wrap, divisions are guarded, conversions to narrower types saturate.
//
// Arguments are OpenCL C expressions already of the dtype's C type. Functions that use an argument
// more than once say so: pass them an identifier, not an expression with a cost or side effect.
#pragma once
#include <string>

#include "fugue_plugin.h"

namespace fugue::array::opencl {

// ((T)(x))
std::string cast(fugue_dtype dtype, const std::string& x);
// An Emitter pattern declaring ${@operand}: the operand at the current element, in `dtype`.
std::string load(fugue_dtype dtype, const std::string& operand);
// `value` exactly, typed as `dtype` (it must fit: see fits()).
std::string literal(fugue_dtype dtype, double value);
// Identities of reductions: NaN for floats (fmin and fmax ignore it), the integer range's ends.
std::string nan(fugue_dtype dtype);
std::string lowest(fugue_dtype dtype);
std::string highest(fugue_dtype dtype);

// x op y for op in + - *, modulo 2^bits for integers: signed overflow is undefined in OpenCL C,
// so signed operands go through their unsigned type and come back with as_<type>.
std::string wrapping(fugue_dtype dtype, const std::string& x, char op, const std::string& y);
// -x; integers wrap (-MIN = MIN, unsigned 2^bits - x).
std::string negate(fugue_dtype dtype, const std::string& x);
// |x|; abs(MIN) = MIN for signed integers.
std::string absolute(fugue_dtype dtype, const std::string& x);
// x / y; integers truncate toward zero, give 0 for y = 0 and MIN for MIN / -1, and never execute
// those divisions. Uses x and y more than once.
std::string divide(fugue_dtype dtype, const std::string& x, const std::string& y);
// fmin/fmax (a NaN operand is ignored) for floats, min/max for integers.
std::string minimum(fugue_dtype dtype, const std::string& x, const std::string& y);
std::string maximum(fugue_dtype dtype, const std::string& x, const std::string& y);
// x converted from `from` to `to`: float to integer and integer to narrower integer saturate
// (convert_<type>_sat: NaN gives 0), integer to same-width integer reinterprets the bits, the rest
// converts as C does (to float: round to nearest).
std::string convert(fugue_dtype from, fugue_dtype to, const std::string& x);

}  // namespace fugue::array::opencl
