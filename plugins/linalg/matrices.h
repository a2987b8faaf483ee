// matrices.h: what the linalg operations share: batches of square matrices ([..., n, n], row-major,
// the leading axes number the entries), their BATCH partitions, and OpenCL C literals.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

constexpr uint32_t kRealDtypes = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);

// n of a batch of n x n matrices; throws InvalidArgument naming `operand` otherwise (the core names the operation).
int64_t square_order(const fugue_type& t, const std::string& operand);
// Checks that `t` is a batch of m x n matrices ([..., m, n], m, n >= 1, at least one matrix); throws
// InvalidArgument naming `operand` otherwise.
void require_matrices(const fugue_type& t, const std::string& operand);
// Checks that `b` holds right-hand sides [..., n, k] for the batch of n x n matrices `a`: the same batch
// axes, n rows, a's dtype; throws InvalidArgument naming both operands otherwise.
void require_right_hand_sides(const fugue_type& b, const fugue_type& a, const std::string& b_name,
                              const std::string& a_name);
// The types of a solve's outputs from A [..., n, n] and right-hand sides B [..., n, k] (both checked): X of
// B's shape and dtype, info i32 per matrix. For the solvers that factor A themselves (posv, gesv, ...).
void infer_solve(const sdk::Call& call, std::vector<sdk::Type>& types, uint32_t a, uint32_t b, uint32_t x, uint32_t info);
// The value of string attribute `attr`, which must be `a` or `b` (`a_means`, `b_means` say what each
// does, for the message); throws InvalidArgument naming the attribute otherwise.
std::string one_of(const sdk::Call& call, const std::string& attr, const std::string& a, const std::string& a_means,
                   const std::string& b, const std::string& b_means);
// The value of a transpose attribute (trans, trans_a, ...): 'N' as stored, 'T' transposed, 'C' conjugate
// transposed (the same as 'T' for reals); throws InvalidArgument naming the attribute otherwise.
char transpose_of(const sdk::Call& call, const std::string& attr);
// The rows and columns of a [..., m, n] array.
inline int64_t rows_of(const fugue_type& t) { return t.shape[t.rank - 2]; }
inline int64_t columns_of(const fugue_type& t) { return t.shape[t.rank - 1]; }
// The batch axes of a [..., n, n] array: its shape without the last two.
std::vector<int64_t> batch_shape(const fugue_type& t);
// Matrices in the batch (1 for a single matrix).
int64_t batch_count(const fugue_type& t);
// The BATCH partition of a [..., n, n] operand (a matrix per entry) and of a [...] one (a value per entry).
sdk::Partition matrix_batch(const fugue_type& t);
sdk::Partition value_batch(const fugue_type& t);
// The BATCH partition of a [..., k] operand: a vector per entry (LAPACK's ipiv).
sdk::Partition vector_batch(const fugue_type& t);
// The plan of a BLOCK-level body written for a team of `team` work-items per matrix, `entries` matrices
// (several may share a work-group side by side); the caller adds partitions and resources.
sdk::Plan team_plan(int64_t entries, int64_t team);
// Whether a team may hold a matrix of `elements` values of `dtype` in local memory of its own: three
// quarters of the device's local memory at most (the core stages small entries beside it).
bool fits_local(const sdk::Call& call, int64_t elements, fugue_dtype dtype);
// Variable sizes (the *_vbatched operations, as MAGMA's vbatched routines): a batch of square matrices
// of different orders, padded to the largest (N) in one [..., N, N] buffer, with n [...] (i32) the order
// of each; matrix e is A[e, :n_e, :n_e] and the rest of its N x N is padding, never read. The operations
// factor diag(A_e, I) in place of A_e: the padding's rows and columns never mix with A_e's, so the
// factors are diag(factor of A_e, I), info is A_e's, and the solves of fixed size take them as they are
// (right-hand sides zero below row n_e give solutions zero there). An order outside 0..N is reported as
// info -1 (LAPACK's illegal argument), that matrix factored as if its order were 0.
struct VariableOrder {
  std::string ne;   // the entry's order, checked (0 for a bad one); empty: fixed sizes
  std::string bad;  // whether the entry's order was outside 0..N
};
// Declares the checked order of the current entry from operand `sizes` (value_batch) into `code`.
VariableOrder declare_order(const sdk::Emitter& em, uint32_t sizes, int64_t n, std::string& code);
// The element (r, c) of diag(A_e, I) whose A_e's element is `value` (OpenCL C expressions); `value`
// itself for fixed sizes (v.ne empty). `one`, `zero`: literals of the dtype.
std::string embedded(const VariableOrder& v, const std::string& value, const std::string& r, const std::string& c,
                     const std::string& one, const std::string& zero);
// info as stored: -1 for an order outside 0..N, else `info` (itself for fixed sizes).
inline std::string stored_info(const VariableOrder& v, const std::string& info) { return v.bad.empty() ? info : v.bad + " ? -1 : " + info; }
// Checks operand n of a *_vbatched call: i32 [batch axes of `a`]; throws InvalidArgument naming it.
void require_orders(const fugue_type& n, const fugue_type& a, const std::string& n_name, const std::string& a_name);

// An OpenCL C expression of v / pivot as LAPACK computes it: times the reciprocal `rcp`, unless the
// pivot is so small that its reciprocal overflows (below the dtype's smallest normal number), then divided.
std::string divided_by_pivot(fugue_dtype dtype, const std::string& v, const std::string& pivot, const std::string& rcp);
// The dtype's smallest normal number in OpenCL C (DBL_MIN, FLT_MIN): pivots below it are divided by,
// their reciprocals overflowing.
std::string smallest_normal(fugue_dtype dtype);
// An OpenCL C literal of a real dtype (f32 with its suffix, so an f32 kernel needs no doubles).
std::string real_literal(fugue_dtype dtype, double value);

}  // namespace fugue::linalg
