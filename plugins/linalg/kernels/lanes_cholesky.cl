// lanes_cholesky.cl: linalg.potrf of small real matrices on CPUs, V matrices a work-item side by side in
// the lanes of one vector (lanes_cholesky.h, lanes.cl): every step of the factorization is a vector
// operation on V matrices at once, whatever the order.
//
// Options: lanes.cl's (M = N, the order), -DUPPER=<0: L from A's lower triangle, 1: U = L^T from its
// upper one>.

// w's matrices transposed (element (i, j) and (j, i) trade places: a move of vectors).
inline void transpose_matrices(T* w) {
  for (int i = 1; i < N; ++i)
    for (int j = 0; j < i; ++j) {
      const TV x = AT(i * N + j);
      PUT(AT(j * N + i), i * N + j);
      PUT(x, j * N + i);
    }
}

// L (or U) and info of matrices first .. first + V - 1 (those below `count`: the last work-item's spare
// lanes factor a copy of the last matrix and store nothing). `a` and `l` may be the same buffer.
//
// L column by column, each element from a dot product along two rows of L (the order of the emitted
// plans' updates: A(i, j) - L(i, 0) L(j, 0) - L(i, 1) L(j, 1) - ...), rows two at a time so that row j's
// values are loaded once for both. A lane whose leading minor of order j + 1 is not positive definite
// keeps info j + 1 and goes on with NaNs, which are left out: its factor holds its first j columns and
// zeros, as LAPACK's.
__kernel void cholesky_lanes(__global const T* a, __global T* l, __global int* infos, long count) {
  const long first = (long)get_global_id(0) * V;
  if (first >= count) return;
  T w[N * N * V];
  lanes_in(a, first, count, w);
  if (UPPER) transpose_matrices(w);  // U's upper triangle is L^T's lower
  TI info = (TI)(0);
  for (int j = 0; j < N; ++j) {
    TV d = AT(j * N + j);
    for (int k = 0; k < j; ++k) {
      const TV x = AT(j * N + k);
      d = fma(-x, x, d);
    }
    info = select(info, (TI)(j + 1), ~isgreater(d, (TV)(0)) & (info == (TI)(0)));
    const TV s = sqrt(d), r = (TV)(1) / s;
    PUT(s, j * N + j);
    int i = j + 1;
    for (; i + 1 < N; i += 2) {
      TV x0 = AT(i * N + j), x1 = AT((i + 1) * N + j);
      for (int k = 0; k < j; ++k) {
        const TV y = AT(j * N + k);
        x0 = fma(-AT(i * N + k), y, x0);
        x1 = fma(-AT((i + 1) * N + k), y, x1);
      }
      PUT(x0 * r, i * N + j);
      PUT(x1 * r, (i + 1) * N + j);
    }
    if (i < N) {
      TV x0 = AT(i * N + j);
      for (int k = 0; k < j; ++k) x0 = fma(-AT(i * N + k), AT(j * N + k), x0);
      PUT(x0 * r, i * N + j);
    }
  }
  // The triangle above zero, and a failed lane's columns from info - 1 on.
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
      PUT(j > i ? (TV)(0) : select((TV)(0), AT(i * N + j), (info == (TI)(0)) | ((TI)(j + 1) < info)), i * N + j);
  if (UPPER) transpose_matrices(w);
  lanes_out(w, first, count, l);
  LANE_INT failures[V];
  CAT(vstore, V)(info, 0, failures);
  for (int v = 0; v < V && first + v < count; ++v) infos[first + v] = (int)failures[v];
}
