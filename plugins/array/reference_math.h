// reference_math.h: CPU arithmetic with the device's semantics (opencl_c.h), for the references.
//
// Floats compute in long double from the values the device sees, complex numbers in
// std::complex<long double>. Integers travel as int64_t, which
// holds every value of every integer dtype; + - * compute modulo 2^64, and HostView::set_int then
// keeps the low bits of the dtype, so the result wraps exactly as the device's does.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "dtypes.h"
#include "fugue/sdk.hpp"

namespace fugue::array::ref {

using Real = long double;
using Complex = std::complex<Real>;

// Element i of an input as the device computes with it in `dtype`: a const is rounded to it first.
inline Real value(const sdk::HostView& input, int64_t i, fugue_dtype dtype) {
  const double v = input.get(i);
  return component(dtype) == FUGUE_DTYPE_F32 ? static_cast<Real>(static_cast<float>(v))
                                             : static_cast<Real>(v);
}

// The same for a complex `dtype`: a real input (a const) is value + 0i.
inline Complex complex_value(const sdk::HostView& input, int64_t i, fugue_dtype dtype) {
  const std::complex<double> v = input.get_complex(i);
  if (component(dtype) == FUGUE_DTYPE_F32)
    return {static_cast<float>(v.real()), static_cast<float>(v.imag())};
  return {v.real(), v.imag()};
}

// x op y for op in + - *, of reals or complex numbers.
template <class T>
T arithmetic(T x, char op, T y) {
  switch (op) {
    case '+': return x + y;
    case '-': return x - y;
    case '*': return x * y;
  }
  throw std::logic_error(std::string("no arithmetic operator ") + op);
}

// x op y for op in + - *, modulo 2^64.
inline int64_t wrapping(int64_t x, char op, int64_t y) {
  const uint64_t a = static_cast<uint64_t>(x), b = static_cast<uint64_t>(y);
  switch (op) {
    case '+': return static_cast<int64_t>(a + b);
    case '-': return static_cast<int64_t>(a - b);
    case '*': return static_cast<int64_t>(a * b);
  }
  throw std::logic_error(std::string("no arithmetic operator ") + op);
}

// x / y by Smith's algorithm, as the device divides (opencl::divide): no |y|^2 that could
// overflow. y = 0 divides each part by +0, as NumPy does: (1+1i)/0 = inf+inf i, 0/0 = nan+nan i.
inline Complex divide(Complex x, Complex y) {
  const Real a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  if (c == 0 && d == 0) return {a / std::fabs(c), b / std::fabs(c)};
  if (std::fabs(c) >= std::fabs(d)) {
    const Real r = d / c, den = c + d * r;
    return {(a + b * r) / den, (b - a * r) / den};
  }
  const Real r = c / d, den = c * r + d;
  return {(a * r + b) / den, (b * r - a) / den};
}

// |x| without overflow or underflow in the squares.
inline Real magnitude(Complex x) { return std::hypot(x.real(), x.imag()); }

inline int64_t negate(int64_t x) { return wrapping(0, '-', x); }
inline int64_t absolute(int64_t x) { return x < 0 ? negate(x) : x; }

// Truncates toward zero; x / 0 = 0 and MIN / -1 = MIN (= -MIN, wrapped).
inline int64_t divide(int64_t x, int64_t y) {
  if (y == 0) return 0;
  if (y == -1) return negate(x);
  return x / y;
}

template <class T>
bool compare(T x, std::string_view op, T y) {
  if (op == "<") return x < y;
  if (op == "<=") return x <= y;
  if (op == ">") return x > y;
  if (op == ">=") return x >= y;
  if (op == "==") return x == y;
  if (op == "!=") return x != y;
  throw std::logic_error("no comparison operator " + std::string(op));
}

// A float converted to an integer dtype as convert_<type>_sat does: NaN gives 0, values beyond the
// range its ends, the rest truncate toward zero.
inline int64_t saturate(Real x, fugue_dtype to) {
  if (std::isnan(x)) return 0;
  const int64_t lo = lowest_integer(to), hi = highest_integer(to);
  if (x <= static_cast<Real>(lo)) return lo;
  if (x >= static_cast<Real>(hi)) return hi;
  return static_cast<int64_t>(x);
}

// An integer converted between integer dtypes: saturated into a narrower one; otherwise unchanged
// here, and wrapped by HostView::set_int as C wraps same-width conversions.
inline int64_t convert_integer(int64_t x, fugue_dtype from, fugue_dtype to) {
  if (dtype_bytes(to) < dtype_bytes(from))
    return std::clamp(x, lowest_integer(to), highest_integer(to));
  return x;
}

}  // namespace fugue::array::ref
