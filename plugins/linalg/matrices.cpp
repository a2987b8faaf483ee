// matrices.cpp: see matrices.h.
#include "matrices.h"

#include <cstdio>

namespace fugue::linalg {

int64_t square_order(const fugue_type& t, const std::string& op, const std::string& operand) {
  if (t.rank < 2 || t.shape[t.rank - 1] != t.shape[t.rank - 2] || t.shape[t.rank - 1] < 1 || sdk::elements(t) == 0)
    throw sdk::InvalidArgument(op + ": operand " + operand + ": expected a batch of square matrices [..., n, n] with n >= 1 "
                               "and at least one matrix, found " + sdk::type_string(t));
  return t.shape[t.rank - 1];
}

std::vector<int64_t> batch_shape(const fugue_type& t) {
  std::vector<int64_t> shape = sdk::shape_of(t);
  shape.resize(shape.size() - 2);
  return shape;
}

int64_t batch_count(const fugue_type& t) { return sdk::elements(batch_shape(t)); }

sdk::Partition matrix_batch(const fugue_type& t) { return sdk::batch_partition(t.rank, static_cast<int32_t>(t.rank) - 3); }
sdk::Partition value_batch(const fugue_type& t) { return sdk::batch_partition(t.rank, static_cast<int32_t>(t.rank) - 1); }

std::string real_literal(fugue_dtype dtype, double value) {
  char buf[64];
  if (dtype == FUGUE_DTYPE_F64) std::snprintf(buf, sizeof buf, "%.17e", value);
  else std::snprintf(buf, sizeof buf, "%.9ef", value);
  return buf;
}

}  // namespace fugue::linalg
