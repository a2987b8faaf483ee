// tridiagonal.h: the small eigenproblem of a Lanczos run, on the host in double precision: the
// smallest eigenvalues of the symmetric tridiagonal T_n (diagonal alpha, off-diagonal beta) by
// bisection on Sturm counts, the Cullum-Willoughby filter of the values that loss of orthogonality
// makes spurious, and eigenvectors by inverse iteration (seed 003 §5.1; LAPACK's stebz and stein are
// the same methods). Bisection finds the k smallest of n values in O(k n) without the rest, which is
// why it is here rather than a full QL sweep: n grows to thousands, k stays near ten.
#pragma once
#include <cstdint>
#include <vector>

namespace fugue::sparse {

struct Tridiagonal {
  std::vector<double> diagonal;   // alpha_1 .. alpha_n
  std::vector<double> offdiagonal;  // beta_1 .. beta_{n-1}
  int64_t order() const { return static_cast<int64_t>(diagonal.size()); }
  // Gershgorin's bound on the largest eigenvalue magnitude.
  double norm() const;
  // How many eigenvalues are below x (Sturm count of T - x I).
  int64_t count_below(double x) const;
  // The same for several shifts at once, in passes over T of shifts_per_pass() each: counts[i] for shifts[i].
  void count_below(const double* shifts, int64_t* counts, int64_t how_many) const;
  // How many shifts one pass counts (16 where the CPU has AVX2, else 8), for about the price of one.
  static int64_t shifts_per_pass();
  // The j-th smallest eigenvalue (0-based) by bisection, to about 2 ulp of the norm.
  double eigenvalue(int64_t j) const;
  // Eigenvalues first .. first + how_many - 1, ascending, each as eigenvalue(j) defines it, found
  // together: the intervals share their first bisection steps and their counts share passes over T.
  // A caller that knows a point `above` with count_below(above) = first may start the search there.
  std::vector<double> eigenvalues(int64_t first, int64_t how_many) const;
  std::vector<double> eigenvalues(int64_t first, int64_t how_many, double above) const;
  // A unit eigenvector for the eigenvalue `value` (an accurate one) by inverse iteration.
  std::vector<double> eigenvector(double value) const;
  // T with its first row and column removed (T-hat of the Cullum-Willoughby test).
  Tridiagonal without_first() const;
};

struct RitzValue {
  double value;
  bool copies;         // also found again within the tolerance (a converged value Lanczos repeated)
  int64_t begin, end;  // the rows of the block of t it belongs to (t splits where an off-diagonal is 0)
};

// The smallest `wanted` eigenvalues of t, ascending, one for each cluster of values closer than
// `tolerance`. t is split into blocks where an off-diagonal is below `tolerance` (a Lanczos run that
// found an invariant subspace and went on); with `cullum_willoughby`, a value found once in its block
// that the block without its first row and column also has (within `tolerance`) is spurious and left
// out. Fewer than `wanted` when t has no more. t's elements must be finite.
std::vector<RitzValue> smallest_ritz_values(const Tridiagonal& t, int64_t wanted, double tolerance, bool cullum_willoughby);

// Unit eigenvectors of t (length t.order()) for `values` (from smallest_ritz_values), each computed on
// its block; vectors of one block whose values lie within `gap` are made orthogonal to each other.
std::vector<std::vector<double>> ritz_vectors(const Tridiagonal& t, const std::vector<RitzValue>& values, double gap);

}  // namespace fugue::sparse
