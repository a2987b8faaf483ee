// matrices.cpp: see matrices.h.
#include "matrices.h"

#include <cstdio>

namespace fugue::linalg {

int64_t square_order(const fugue_type& t, const std::string& operand) {
  if (t.rank < 2 || t.shape[t.rank - 1] != t.shape[t.rank - 2] || t.shape[t.rank - 1] < 1 || sdk::elements(t) == 0)
    throw sdk::InvalidArgument("operand " + operand + ": expected a batch of square matrices [..., n, n] with n >= 1 "
                               "and at least one matrix, found " + sdk::type_string(t));
  return t.shape[t.rank - 1];
}

void require_matrices(const fugue_type& t, const std::string& operand) {
  if (t.rank < 2 || t.shape[t.rank - 1] < 1 || t.shape[t.rank - 2] < 1 || sdk::elements(t) == 0)
    throw sdk::InvalidArgument("operand " + operand + ": expected a batch of matrices [..., m, n] with m, n >= 1 "
                               "and at least one matrix, found " + sdk::type_string(t));
}

void require_right_hand_sides(const fugue_type& b, const fugue_type& a, const std::string& b_name,
                              const std::string& a_name) {
  const int64_t n = a.shape[a.rank - 1];
  const std::vector<int64_t> batch = batch_shape(a);
  std::string expected = "[";
  for (int64_t d : batch) expected += std::to_string(d) + ", ";
  expected += std::to_string(n) + ", k] (the batch of " + a_name + ", " + std::to_string(n) + " rows, k >= 1 columns)";
  if (b.rank != a.rank || batch_shape(b) != batch || b.shape[b.rank - 2] != n || b.shape[b.rank - 1] < 1)
    throw sdk::InvalidArgument("operand " + b_name + ": expected right-hand sides " + expected + ", found " +
                               sdk::type_string(b) + " (a single vector is a matrix of one column: shape [..., n, 1])");
  if (b.dtype != a.dtype)
    throw sdk::InvalidArgument("operand " + b_name + " is " + abi::dtype_name(b.dtype) + ", " + a_name + " " +
                               abi::dtype_name(a.dtype) + ": they must have one dtype");
}

void infer_solve(const sdk::Call& call, std::vector<sdk::Type>& types, uint32_t a, uint32_t b, uint32_t x, uint32_t info) {
  const fugue_type &at = call.operand(a), &bt = call.operand(b);
  square_order(at, "A");
  require_right_hand_sides(bt, at, "B", "A");
  types[x] = sdk::make_type(FUGUE_KIND_ARRAY, bt.dtype, sdk::shape_of(bt));
  types[info] = sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(at));
}

std::string one_of(const sdk::Call& call, const std::string& attr, const std::string& a, const std::string& a_means,
                   const std::string& b, const std::string& b_means) {
  const std::string v = call.string(attr);
  if (v != a && v != b)
    throw sdk::InvalidArgument("attribute " + attr + ": expected \"" + a + "\" (" + a_means + ") or \"" + b + "\" (" + b_means +
                               "), found \"" + v + "\"");
  return v;
}

char transpose_of(const sdk::Call& call, const std::string& attr) {
  const std::string v = call.string(attr);
  if (v != "N" && v != "T" && v != "C")
    throw sdk::InvalidArgument("attribute " + attr + ": expected \"N\" (as stored), \"T\" (transposed) or \"C\" (conjugate "
                               "transposed), found \"" + v + "\"");
  return v[0];
}

std::vector<int64_t> batch_shape(const fugue_type& t) {
  std::vector<int64_t> shape = sdk::shape_of(t);
  shape.resize(shape.size() - 2);
  return shape;
}

int64_t batch_count(const fugue_type& t) { return sdk::elements(batch_shape(t)); }

sdk::Partition matrix_batch(const fugue_type& t) { return sdk::batch_partition(t.rank, static_cast<int32_t>(t.rank) - 3); }
sdk::Partition value_batch(const fugue_type& t) { return sdk::batch_partition(t.rank, static_cast<int32_t>(t.rank) - 1); }

sdk::Partition vector_batch(const fugue_type& t) { return sdk::batch_partition(t.rank, static_cast<int32_t>(t.rank) - 2); }

sdk::Plan team_plan(int64_t entries, int64_t team) {
  sdk::Plan plan;
  plan.level = FUGUE_LEVEL_BLOCK;
  plan.phases = FUGUE_PHASE_BODY;
  plan.entry_teams = true;  // LOCAL_ID and LOCAL_SIZE in the body are the matrix's team's
  plan.launch.iteration[0] = entries;
  // The code is written for this team size (one work-item works in registers, several share the matrix).
  plan.launch.local_min = plan.launch.local_max = plan.launch.local_preferred = team;
  plan.launch.local_multiple = 1;
  return plan;
}

bool fits_local(const sdk::Call& call, int64_t elements, fugue_dtype dtype) {
  return static_cast<uint64_t>(elements) * abi::dtype_size(dtype) * 4 <= call.device().local_mem_bytes * 3;
}

VariableOrder declare_order(const sdk::Emitter& em, uint32_t sizes, int64_t n, std::string& code) {
  VariableOrder v{em.name("ne"), em.name("bad_order")};
  const std::string raw = em.name("order");
  code += "const int " + raw + " = " + em.read_at(sizes, "0") + ";\n";
  code += "const bool " + v.bad + " = " + raw + " < 0 || " + raw + " > " + std::to_string(n) + ";\n";
  code += "const int " + v.ne + " = " + v.bad + " ? 0 : " + raw + ";\n";
  return v;
}

std::string embedded(const VariableOrder& v, const std::string& value, const std::string& r, const std::string& c,
                     const std::string& one, const std::string& zero) {
  if (v.ne.empty()) return value;
  // On the diagonal (r and c one expression) the tests fold: no self-comparison for the compiler to
  // warn about on stderr.
  if (r == c) return "((" + r + ") < " + v.ne + " ? " + value + " : " + one + ")";
  return "((" + r + ") < " + v.ne + " && (" + c + ") < " + v.ne + " ? " + value + " : (" + r + ") == (" + c + ") ? " + one + " : " + zero + ")";
}

void require_orders(const fugue_type& n, const fugue_type& a, const std::string& n_name, const std::string& a_name) {
  if (n.dtype != FUGUE_DTYPE_I32 || sdk::shape_of(n) != batch_shape(a))
    throw sdk::InvalidArgument("operand " + n_name + ": expected the order of each matrix of " + a_name + ", " +
                               sdk::type_string(sdk::make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_I32, batch_shape(a))) + ", found " +
                               sdk::type_string(n));
}

std::string smallest_normal(fugue_dtype dtype) { return dtype == FUGUE_DTYPE_F64 ? "DBL_MIN" : "FLT_MIN"; }

std::string divided_by_pivot(fugue_dtype dtype, const std::string& v, const std::string& pivot, const std::string& rcp) {
  return "(fabs(" + pivot + ") >= " + smallest_normal(dtype) + " ? " + v + " * " + rcp + " : " + v + " / " + pivot + ")";
}

std::string real_literal(fugue_dtype dtype, double value) {
  char buf[64];
  if (dtype == FUGUE_DTYPE_F64) std::snprintf(buf, sizeof buf, "%.17e", value);
  else std::snprintf(buf, sizeof buf, "%.9ef", value);
  return buf;
}

}  // namespace fugue::linalg
