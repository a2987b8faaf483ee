// dtypes.cpp: one table of facts per dtype, and the questions answered from it.
#include "dtypes.h"

#include <cfloat>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "fugue/sdk.hpp"

namespace fugue::array {

namespace {

struct Facts {
  std::size_t bytes;
  bool integer;
  int64_t lowest, highest;  // integers only
  const char* ctype;
  const char* unsigned_ctype;  // integers only
  const char* lowest_macro;    // integers only
  const char* highest_macro;
};

const Facts& facts(fugue_dtype dtype) {
  // Indexed by fugue_dtype; NONE has no facts.
  static const Facts table[FUGUE_DTYPE_COUNT] = {
      {0, false, 0, 0, nullptr, nullptr, nullptr, nullptr},
      {4, false, 0, 0, "float", nullptr, nullptr, nullptr},
      {8, false, 0, 0, "double", nullptr, nullptr, nullptr},
      {4, true, INT32_MIN, INT32_MAX, "int", "uint", "INT_MIN", "INT_MAX"},
      {8, true, INT64_MIN, INT64_MAX, "long", "ulong", "LONG_MIN", "LONG_MAX"},
      {1, true, 0, UINT8_MAX, "uchar", "uchar", "0", "UCHAR_MAX"},
      {4, true, 0, UINT32_MAX, "uint", "uint", "0", "UINT_MAX"},
  };
  if (dtype <= FUGUE_DTYPE_NONE || dtype >= FUGUE_DTYPE_COUNT)
    throw std::logic_error("no dtype numbered " + std::to_string(dtype));
  return table[dtype];
}

const Facts& integer_facts(fugue_dtype dtype) {
  const Facts& f = facts(dtype);
  if (!f.integer)
    throw std::logic_error(std::string("asked for the integer range of ") + sdk::dtype_name(dtype));
  return f;
}

}  // namespace

std::size_t dtype_bytes(fugue_dtype dtype) { return facts(dtype).bytes; }
bool is_integer(fugue_dtype dtype) { return facts(dtype).integer; }
int64_t lowest_integer(fugue_dtype dtype) { return integer_facts(dtype).lowest; }
int64_t highest_integer(fugue_dtype dtype) { return integer_facts(dtype).highest; }

bool fits(fugue_dtype dtype, double value) {
  if (std::isnan(value)) return false;
  if (dtype == FUGUE_DTYPE_F32) return std::fabs(value) <= FLT_MAX;
  if (dtype == FUGUE_DTYPE_F64) return std::isfinite(value);
  // highest + 1 is a power of two, so exact as a double, where highest itself may not be (i64).
  const Facts& f = integer_facts(dtype);
  return value == std::trunc(value) && value >= static_cast<double>(f.lowest) &&
         value < static_cast<double>(f.highest) + 1.0;
}

std::string fitting_values(fugue_dtype dtype) {
  if (dtype == FUGUE_DTYPE_F32) return "a finite value of magnitude at most 3.4028235e+38";
  if (dtype == FUGUE_DTYPE_F64) return "a finite value";
  const Facts& f = integer_facts(dtype);
  return "an integer in [" + std::to_string(f.lowest) + ", " + std::to_string(f.highest) + "]";
}

std::string ctype(fugue_dtype dtype) { return facts(dtype).ctype; }
std::string unsigned_ctype(fugue_dtype dtype) { return integer_facts(dtype).unsigned_ctype; }
std::string lowest_macro(fugue_dtype dtype) { return integer_facts(dtype).lowest_macro; }
std::string highest_macro(fugue_dtype dtype) { return integer_facts(dtype).highest_macro; }

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
