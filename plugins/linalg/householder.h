// householder.h: the Householder QR factorization as LAPACK's geqr2 computes it, shared by geqrf (the
// factors themselves) and gels (right-hand sides carried along as extra columns, so that they come out
// as Q^T B with no second pass): the code for a team of work-items, one for a single work-item in
// registers, and the extended-precision reference both are checked against.
//
// Step k reflects rows k.. of every column right of k by H_k^H = I - conj(tau_k) v v^H, v = (1, v_k+1,
// ...): beta = -sign(re alpha) * ||(alpha, x)|| (real), tau = (beta - alpha) / beta, v = x / (alpha - beta),
// column k becoming (beta, v); a zero x with a real alpha gives tau = 0 (H_k = I), as LAPACK's larfg and
// zlarfg. For reals H^H = H = I - tau v v^T.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "scalars.h"
#include "triangular_solve.h"

namespace fugue::linalg {

// An m x columns working matrix W being factored in place, the first `steps` columns reflected (min(m, n)
// for an m x n matrix; columns past n are right-hand sides, only transformed).
struct HouseholderWork {
  int64_t m = 0, columns = 0, steps = 0;
  ElementAt read, write;  // an rvalue and an lvalue of W(i, j)
  // A statement keeping tau_k (k and tau OpenCL C expressions), run by one work-item; empty: tau is not kept.
  std::function<std::string(const std::string& k, const std::string& tau)> keep_tau;
};

// Where a reflector's arithmetic changes course (OpenCL C expressions of the parts' type, without spaces):
// sums of squares outside [lo, hi] are recomputed scaled (digits lost to underflow, or overflow); a column
// whose parts are all below `tiny` is reflected as if scaled up by `big`, a power of two. Written once for
// the emitted plans (below) and the blocked one (blocked_qr.h passes them to kernels/blocked_qr.cl).
struct ReflectorLimits {
  std::string lo, hi, tiny, big;
};
ReflectorLimits reflector_limits(fugue_dtype dtype);

// The scalars of the reflector H = I - tau v v^H with H^H (alpha, x) = (beta, 0), as LAPACK's larfg
// (zlarfg): names of OpenCL C values, every work-item computing them alike. beta and sv are of the parts'
// type, tau and sc of the dtype; v = (1, (x_i * sv) * sc ...); go is false for x = 0 and a real alpha
// (tau 0, H = I).
struct Reflector {
  std::string go, beta, tau, sv, sc;
};
// Appends to `code` the declarations of a reflector's scalars (named from `stem`, distinct for reflectors
// declared in one scope): alpha an expression; x(i) element i of x
// for i from `from` to `to` (OpenCL C expressions; i is the loop's index). The same arithmetic as the
// factorizations below (the norm safe from overflow and underflow, tiny vectors scaled).
// `unrolled`: its loops unrolled (x(i) an element of a private array, from and to constants).
Reflector declare_reflector(const sdk::Emitter& em, fugue_dtype dtype, const std::string& stem, const std::string& alpha,
                            const std::function<std::string(const std::string&)>& x, const std::string& from, const std::string& to,
                            std::string& code, bool unrolled = false);

// Code that factors W in place for em's team (every work-item runs it; W must be written and a barrier
// passed before it; it ends with a barrier): each work-item owns columns (lane, lane + team, ...). At step
// k every work-item computes column k's reflector alike from its sum of squares, which column k's owner
// left in local memory as it updated the column at step k - 1 (so the team agrees on tau without a
// barrier), and each updates its own columns from column k, scaled as it is read; column k's owner
// stores (beta, v) only at the next step, when nobody reads it. One barrier a step.
std::string team_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w);
// Values of local memory team_householder declares itself (column norms), beside any W of the caller's.
constexpr int64_t kTeamHouseholderLocals = 2;

// The same for a team owning a column each in registers (`column`, a private array of the m values of
// column `lane`, lanes past `columns` idle; W as the caller loaded it, no barrier needed before): at step
// k column k's owner alone computes the reflector from its registers, stores (beta, v) there and leaves
// v and tau in local memory (two slots taken in turn, so the next step's writes cannot meet this step's
// reads), and after one barrier the columns right of k update themselves from it. Every loop unrolled,
// so every index is a constant. W(i, j) is then column[i] of lane j; w.read and w.write are not used.
std::string column_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, const std::string& column,
                               const std::string& lane);
// Values of local memory column_householder declares (v and tau, two slots each), for m rows.
constexpr int64_t column_householder_locals(int64_t m) { return 2 * m + 2; }

// The same for one work-item whose W is a private array: every loop unrolled, so every index is a
// constant and W lives in registers; no barriers.
std::string register_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w);

// The same for one work-item with its loops kept (a CPU's plan), W row-major, two steps at a time: the
// sums v^H W and u^H W right of both reflectors (a row of W at a time into `row_sums`, an array of
// 2 x `columns` values) and then W -= v z1 + u z2, both along rows, consecutive values the compiler turns
// into vector operations.
std::string loop_householder(const sdk::Emitter& em, fugue_dtype dtype, const HouseholderWork& w, const std::string& row_sums);

// The reference: factors w (row-major m x columns) in place in complex extended precision, keeping the
// first `steps` taus in `tau` when given.
void householder_reference(std::vector<Complex>& w, int64_t m, int64_t columns, int64_t steps, std::vector<Complex>* tau);

}  // namespace fugue::linalg
