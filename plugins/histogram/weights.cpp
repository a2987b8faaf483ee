// weights.cpp: see weights.h.
#include "weights.h"

#include <cmath>
#include <cstdio>

namespace fugue::histogram {

sdk::OperandSpec weights_operand(const std::string& data) {
  return sdk::optional_in("w", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kCountDtypes, 1,
                          "weights: an array of " + data + "'s shape (h takes its dtype), or a number (left out: 1, counts as i64)");
}

fugue_dtype counts_dtype(const fugue_type& w, const std::vector<int64_t>& data_shape, const std::string& data) {
  if (w.kind == FUGUE_KIND_CONST) {
    if (!std::isfinite(w.const_value))
      throw sdk::InvalidArgument("operand w: expected a finite weight, found " + std::to_string(w.const_value));
    // An integer weight counts in i64 (exactly up to 2^53 per value), a fraction in f64.
    return w.const_value == std::floor(w.const_value) && std::fabs(w.const_value) < 9007199254740992.0 ? FUGUE_DTYPE_I64 : FUGUE_DTYPE_F64;
  }
  if (sdk::shape_of(w) != data_shape)
    throw sdk::InvalidArgument("operand w: expected weights of " + data + "'s shape " + sdk::shape_string(data_shape) + " or one number, found " +
                               sdk::type_string(w));
  return w.dtype;
}

Counting counting_for(const sdk::Call& call, uint32_t h, uint32_t w, int64_t bins) {
  Counting c;
  c.h = h;
  c.bins = bins;
  c.dtype = call.operand(h).dtype;
  const fugue_type& wt = call.operand(w);
  if (wt.kind == FUGUE_KIND_CONST) {
    char buf[40];
    if (c.dtype == FUGUE_DTYPE_I64) std::snprintf(buf, sizeof buf, "%lldL", static_cast<long long>(wt.const_value));
    else std::snprintf(buf, sizeof buf, "%.17e", wt.const_value);
    c.weight = buf;
  }
  return c;
}

std::string weight_of(const sdk::Emitter& em, const Counting& c, uint32_t w) { return "(" + em.ctype(c.dtype) + ")(" + em.read(w) + ")"; }

long double reference_weight(const fugue_type& w, const sdk::HostView& values, int64_t i) {
  if (w.kind == FUGUE_KIND_CONST) return w.const_value;
  return values.dtype() == FUGUE_DTYPE_F32 || values.dtype() == FUGUE_DTYPE_F64 ? static_cast<long double>(values.get(i))
                                                                                  : static_cast<long double>(values.get_int(i));
}

}  // namespace fugue::histogram
