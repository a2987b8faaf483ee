#include "io/generators.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <type_traits>

#include "errors.h"

namespace fugue {

namespace {

// ---- Helpers shared by the generators

// Allocates a zeroed array, refusing sizes that overflow instead of wrapping around.
HostArray allocate(DType dtype, const Shape& shape) {
  const int64_t n = shape_elements(shape);  // UserError on negative extents or overflow
  const size_t size = dtype_size(dtype);
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / size)
    throw UserError("array of shape " + shape_string(shape) + " is too large");
  try {
    return HostArray(dtype, shape);
  } catch (const std::bad_alloc&) {
    throw DeviceError("out of host memory: cannot allocate " + std::to_string(n * size) +
                      " bytes for a " + std::string(dtype_name(dtype)) + " array of shape " +
                      shape_string(shape));
  }
}

struct IntRange {
  int64_t min, max;
};
IntRange int_range(DType dtype) {
  const fugue_dtype_info& info = dtype_info(dtype);
  return IntRange{info.int_lowest, static_cast<int64_t>(info.int_highest)};
}
std::string range_text(DType dtype) {
  if (dtype == DType::F32 || dtype == DType::C64)
    return std::string(dtype_name(dtype)) + " (magnitude up to 3.4e38)";
  const IntRange r = int_range(dtype);
  return std::string(dtype_name(dtype)) + " (" + std::to_string(r.min) + " to " +
         std::to_string(r.max) + ")";
}

// Whether an integral double lies in the dtype's range. double(max) + 1 is exact for every
// integer dtype except i64, where double(max) already rounds up to 2^63, the correct bound.
bool fits_int(double v, DType dtype) {
  const IntRange r = int_range(dtype);
  return v >= static_cast<double>(r.min) && v < static_cast<double>(r.max) + 1.0;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// An integer value for an integer dtype; `what` names it in the message.
int64_t checked_int(double v, DType dtype, const std::string& what) {
  if (!std::isfinite(v) || v != std::floor(v))
    throw UserError(what + " " + number_text(v) + " is not an integer, but the dtype is " +
                    std::string(dtype_name(dtype)));
  if (!fits_int(v, dtype))
    throw UserError(what + " " + number_text(v) + " is out of range for " + range_text(dtype));
  return static_cast<int64_t>(v);
}

void check_f32(double v, const std::string& what) {
  if (std::isfinite(v) && std::fabs(v) > FLT_MAX)
    throw UserError(what + " " + number_text(v) + " is out of range for " + range_text(DType::F32));
}

template <class T>
void fill_with(HostArray& a, T value) {
  std::fill(a.data<T>(), a.data<T>() + a.elements(), value);
}

// ---- The random number generator: xoshiro256** seeded through splitmix64 (both by Blackman and
// ---- Vigna), defined by integer arithmetic only, so the stream is the same everywhere.

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& word : s_) word = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, span) for span >= 1, by rejection on the top bits (no modulo bias).
  uint64_t below(uint64_t span) {
    if (span == 1) return 0;
    int bits = 0;
    for (uint64_t m = span - 1; m; m >>= 1) ++bits;
    for (;;) {
      const uint64_t r = next() >> (64 - bits);
      if (r < span) return r;
    }
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// ---- JSON

std::string json_kind(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "a list of " + std::to_string(v.size()) + " values";
    case nlohmann::json::value_t::binary: return "binary data";
    case nlohmann::json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

// Whether `v` is one element of `dtype`: a number, or for complex dtypes also an [re, im] pair.
bool is_element(const nlohmann::json& v, DType dtype) {
  if (v.is_number()) return true;
  return dtype_is_complex(dtype) && v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number();
}
std::string element_text(DType dtype) {
  return dtype_is_complex(dtype) ? "a number or an [re, im] pair" : "a number";
}

// Stores the JSON element `v` (see is_element) into element i of `a`.
void store_json_number(const nlohmann::json& v, HostArray& a, int64_t i, const std::string& loc) {
  const DType dtype = a.dtype;
  if (!is_element(v, dtype))
    throw UserError(loc + ": expected " + element_text(dtype) + ", found " + json_kind(v));
  if (dtype_is_complex(dtype)) {
    const double re = v.is_number() ? v.get<double>() : v[0].get<double>();
    const double im = v.is_number() ? 0.0 : v[1].get<double>();
    if (dtype == DType::C64) {
      check_f32(re, loc + ": real part");
      check_f32(im, loc + ": imaginary part");
      a.data<std::complex<float>>()[i] = {static_cast<float>(re), static_cast<float>(im)};
    } else {
      a.data<std::complex<double>>()[i] = {re, im};
    }
    return;
  }
  if (dtype_is_float(dtype)) {
    const double d = v.get<double>();
    if (dtype == DType::F32) {
      check_f32(d, loc + ": value");
      a.data<float>()[i] = static_cast<float>(d);
    } else {
      a.data<double>()[i] = d;
    }
    return;
  }
  const IntRange r = int_range(dtype);
  int64_t value = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(r.max))
      throw UserError(loc + ": value " + std::to_string(u) + " is out of range for " + range_text(dtype));
    value = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
    if (value < r.min || value > r.max)
      throw UserError(loc + ": value " + std::to_string(value) + " is out of range for " +
                      range_text(dtype));
  } else {
    value = checked_int(v.get<double>(), dtype, loc + ": value");
  }
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!is_complex_v<T>) a.data<T>()[i] = static_cast<T>(value);
  });
}

// Checks that `v` has exactly the nested structure of shape[axis..]; allocates nothing.
void check_nested(const nlohmann::json& v, DType dtype, const Shape& shape, size_t axis, const std::string& loc) {
  if (axis == shape.size()) {
    if (!is_element(v, dtype)) throw UserError(loc + ": expected " + element_text(dtype) + ", found " + json_kind(v));
    return;
  }
  const std::string expected = std::to_string(shape[axis]) + " values along axis " + std::to_string(axis);
  if (!v.is_array())
    throw UserError(loc + ": expected a list of " + expected + ", found " + json_kind(v));
  if (static_cast<int64_t>(v.size()) != shape[axis]) {
    std::string flat;
    if (axis == 0 && shape.size() > 1)
      flat = " (or a flat list of " + std::to_string(shape_elements(shape)) + ")";
    throw UserError(loc + ": expected " + expected + flat + ", found " + std::to_string(v.size()));
  }
  for (size_t k = 0; k < v.size(); ++k) check_nested(v[k], dtype, shape, axis + 1, loc + "/" + std::to_string(k));
}

void store_nested(const nlohmann::json& v, HostArray& a, size_t axis, int64_t& next,
                  const std::string& loc) {
  if (axis == a.shape.size()) {
    store_json_number(v, a, next++, loc);
    return;
  }
  for (size_t k = 0; k < v.size(); ++k) store_nested(v[k], a, axis + 1, next, loc + "/" + std::to_string(k));
}

}  // namespace

HostArray make_filled(DType dtype, const Shape& shape, double value) {
  if (!dtype_is_float(dtype) && !dtype_is_complex(dtype)) checked_int(value, dtype, "fill value");
  if (dtype == DType::F32 || dtype == DType::C64) check_f32(value, "fill value");
  HostArray a = allocate(dtype, shape);
  visit_dtype(dtype, [&](auto zero) { fill_with(a, static_cast<decltype(zero)>(value)); });
  return a;
}

namespace {
// A complex array whose real and imaginary parts are the 2n values `parts` holds, interleaved.
HostArray as_complex(DType dtype, const Shape& shape, const HostArray& parts) {
  HostArray a = allocate(dtype, shape);
  std::copy(parts.bytes.begin(), parts.bytes.end(), a.bytes.begin());
  return a;
}
Shape parts_shape(const Shape& shape) {
  const int64_t n = shape_elements(shape);
  if (n > std::numeric_limits<int64_t>::max() / 2) throw UserError("array of shape " + shape_string(shape) + " is too large");
  return {2 * n};
}
}  // namespace

HostArray make_random(DType dtype, const Shape& shape, uint64_t seed, double low, double high) {
  if (!std::isfinite(low) || !std::isfinite(high))
    throw UserError("random range [" + number_text(low) + ", " + number_text(high) +
                    "] must have finite bounds");
  if (low > high)
    throw UserError("random range is empty: low " + number_text(low) + " is greater than high " +
                    number_text(high));
  // Complex: real and imaginary parts independently uniform, drawn in that order, element by element.
  if (dtype_is_complex(dtype)) {
    const DType part = static_cast<DType>(dtype_info(dtype).component);
    return as_complex(dtype, shape, make_random(part, parts_shape(shape), seed, low, high));
  }
  Xoshiro256 rng(seed);

  if (dtype_is_float(dtype)) {
    const double width = high - low;
    if (!std::isfinite(width))
      throw UserError("random range [" + number_text(low) + ", " + number_text(high) +
                      ") is too wide");
    HostArray a = allocate(dtype, shape);
    const int64_t n = a.elements();
    // std::fma is correctly rounded everywhere, so no compiler's contraction choice can change it.
    if (dtype == DType::F64) {
      double* out = a.data<double>();
      const double below_high = std::nextafter(high, low);
      for (int64_t i = 0; i < n; ++i) {
        const double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
        double v = std::fma(u, width, low);
        if (v >= high && high > low) v = below_high;
        out[i] = v;
      }
    } else {
      check_f32(low, "random low");
      check_f32(high, "random high");
      const float flow = static_cast<float>(low), fhigh = static_cast<float>(high);
      const float below_high = std::nextafter(fhigh, flow);
      float* out = a.data<float>();
      for (int64_t i = 0; i < n; ++i) {
        const double u = static_cast<double>(rng.next() >> 40) * 0x1.0p-24;
        float v = static_cast<float>(std::fma(u, width, low));
        if (v >= fhigh && fhigh > flow) v = below_high;
        out[i] = v;
      }
    }
    return a;
  }

  const double lo = std::ceil(low), hi = std::floor(high);
  if (lo > hi)
    throw UserError("random range [" + number_text(low) + ", " + number_text(high) +
                    "] contains no integer");
  if (!fits_int(lo, dtype) || !fits_int(hi, dtype))
    throw UserError("random range [" + number_text(lo) + ", " + number_text(hi) +
                    "] does not fit " + range_text(dtype));
  const int64_t ilo = static_cast<int64_t>(lo), ihi = static_cast<int64_t>(hi);
  // Unsigned arithmetic: the span of the full i64 range is 2^64, which wraps to 0.
  const uint64_t span = static_cast<uint64_t>(ihi) - static_cast<uint64_t>(ilo) + 1;
  HostArray a = allocate(dtype, shape);
  const int64_t n = a.elements();
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!is_complex_v<T>) {
      T* out = a.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t r = span == 0 ? rng.next() : rng.below(span);
        out[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(ilo) + r));
      }
    }
  });
  return a;
}

HostArray make_arange(DType dtype, const Shape& shape, double start, double step) {
  if (!std::isfinite(start) || !std::isfinite(step))
    throw UserError("arange start " + number_text(start) + " and step " + number_text(step) +
                    " must be finite");
  if (dtype_is_complex(dtype)) {  // the real parts count; the imaginary parts are 0
    const HostArray re = make_arange(static_cast<DType>(dtype_info(dtype).component), shape, start, step);
    HostArray a = allocate(dtype, shape);
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (is_complex_v<T>)
        for (int64_t i = 0; i < a.elements(); ++i) a.data<T>()[i] = T(re.data<typename T::value_type>()[i], 0);
    });
    return a;
  }
  HostArray a = allocate(dtype, shape);
  const int64_t n = a.elements();
  if (n == 0) return a;

  if (dtype_is_float(dtype)) {
    if (dtype == DType::F32) {
      check_f32(start, "arange start");
      check_f32(std::fma(static_cast<double>(n - 1), step, start), "arange last value");
    }
    visit_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T>) {
        T* out = a.data<T>();
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<T>(std::fma(static_cast<double>(i), step, start));
      }
    });
    return a;
  }

  // Integers are computed exactly. The values run monotonically from the first to the last, so
  // checking both ends checks them all.
  const int64_t istart = checked_int(start, DType::I64, "arange start");
  const int64_t istep = checked_int(step, DType::I64, "arange step");
  checked_int(start, dtype, "arange start");
  int64_t offset = 0, last = 0;
  if (__builtin_mul_overflow(n - 1, istep, &offset) || __builtin_add_overflow(istart, offset, &last))
    throw UserError("arange last value " + number_text(start) + " + " + std::to_string(n - 1) +
                    " * " + number_text(step) + " is out of range for " + range_text(dtype));
  const IntRange r = int_range(dtype);
  if (last < r.min || last > r.max)
    throw UserError("arange last value " + std::to_string(last) + " is out of range for " +
                    range_text(dtype));
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!is_complex_v<T>) {
      T* out = a.data<T>();
      // Wrapping unsigned arithmetic: i * step may overflow even where start + i * step does not.
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(istart) +
                                                     static_cast<uint64_t>(i) * static_cast<uint64_t>(istep)));
    }
  });
  return a;
}

HostArray array_from_json(const nlohmann::json& value, DType dtype, const Shape& shape,
                          const std::string& where) {
  int64_t n = 0;
  try {
    n = shape_elements(shape);
  } catch (const UserError& e) {
    throw UserError(where + ": " + e.what());
  }
  if (shape.empty()) {
    if (!is_element(value, dtype))
      throw UserError(where + ": expected " + element_text(dtype) + " for a scalar, found " + json_kind(value));
    HostArray a(dtype, shape);
    store_json_number(value, a, 0, where);
    return a;
  }
  if (!value.is_array())
    throw UserError(where + ": expected a list of values for shape " + shape_string(shape) +
                    ", found " + json_kind(value));

  const bool flat = shape.size() > 1 && static_cast<int64_t>(value.size()) == n &&
                    (n == 0 || is_element(value[0], dtype));
  if (flat) {
    for (size_t k = 0; k < value.size(); ++k)
      if (!is_element(value[k], dtype))
        throw UserError(where + "/" + std::to_string(k) + ": expected " + element_text(dtype) + ", found " +
                        json_kind(value[k]));
  } else {
    check_nested(value, dtype, shape, 0, where);
  }
  // The JSON now holds exactly n numbers, so the allocation is as large as the JSON itself.
  HostArray a = allocate(dtype, shape);
  if (flat) {
    for (size_t k = 0; k < value.size(); ++k)
      store_json_number(value[k], a, static_cast<int64_t>(k), where + "/" + std::to_string(k));
  } else {
    int64_t next = 0;
    store_nested(value, a, 0, next, where);
  }
  return a;
}

}  // namespace fugue
