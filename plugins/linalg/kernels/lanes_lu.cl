// lanes_lu.cl: linalg.getrf of small real matrices on CPUs, V matrices a work-item side by side in the
// lanes of one vector (lanes_lu.h, lanes.cl): every step of the elimination is a vector operation on V
// matrices at once, whatever the order; each lane's own pivot row comes to row k by selects.
//
// Options: lanes.cl's, -DK=<min(M, N)>.

// LU, ipiv and info of matrices first .. first + V - 1 (those below `count`: the last work-item's spare
// lanes factor a copy of the last matrix and store nothing). `a` and `lu` may be the same buffer.
//
// At step k each lane's pivot is the first element of largest magnitude in its column k (rows k on), as
// LAPACK's idamax. Rows k and p trade places in columns k on by selects as the step walks them: row k
// takes row p's values (found by a pass down each column) and row p row k's; columns left of k (L's)
// trade places at the end, lane by lane, in the order of the steps, as LAPACK's swaps of whole rows would
// have left them. A lane whose pivot is exactly zero keeps info k + 1 (the first such step) and its
// column k as it is, and the step changes nothing else there, as the emitted plans.
__kernel void lu_lanes(__global const T* a, __global T* lu, __global int* ipivs, __global int* infos, long count) {
  const long first = (long)get_global_id(0) * V;
  if (first >= count) return;
  T w[M * N * V];
  LANE_INT pivots[K * V];  // step k's pivot row of lane l at k * V + l, 0-based
  lanes_in(a, first, count, w);
  TI info = (TI)(0);
  for (int k = 0; k < K; ++k) {
    TV mx = fabs(AT(k * N + k));
    TI p = (TI)(k);
    for (int r = k + 1; r < M; ++r) {
      const TV x = fabs(AT(r * N + k));
      const TI bigger = isgreater(x, mx);
      mx = select(mx, x, bigger);
      p = select(p, (TI)(r), bigger);
    }
    CAT(vstore, V)(p, k, pivots);
    // Column k: the pivot, then the multipliers below it.
    const TV old_kk = AT(k * N + k);
    TV pivot = old_kk;
    for (int r = k + 1; r < M; ++r) pivot = select(pivot, AT(r * N + k), p == (TI)(r));
    PUT(pivot, k * N + k);
    const TI zero = pivot == (TV)(0);
    info = select(info, (TI)(k + 1), zero & (info == (TI)(0)));
    const TV rcp = (TV)(1) / pivot;
    const TI tiny = isless(fabs(pivot), (TV)(SMALLEST));  // 1 / pivot would overflow: divided, as LAPACK's getf2
    const bool divide = any(tiny & ~zero);
    for (int r = k + 1; r < M; ++r) {
      const TV x = select(AT(r * N + k), old_kk, p == (TI)(r));
      TV l = x * rcp;
      if (divide) l = select(l, x / pivot, tiny);
      PUT(select(l, x, zero), r * N + k);
    }
    // Columns right of k: row k takes row p's value, row p row k's, and every row below k is updated.
    for (int j = k + 1; j < N; ++j) {
      const TV old = AT(k * N + j);
      TV u = old;
      for (int r = k + 1; r < M; ++r) u = select(u, AT(r * N + j), p == (TI)(r));
      PUT(u, k * N + j);
      const TV by = select(u, (TV)(0), zero);
      for (int r = k + 1; r < M; ++r) {
        const TV x = select(AT(r * N + j), old, p == (TI)(r));
        PUT(fma(-AT(r * N + k), by, x), r * N + j);
      }
    }
  }
  // L's rows traded as the steps' swaps of whole rows would have: column j by the swaps of steps after j.
  const int stored = (int)min((long)V, count - first);
  for (int l = 0; l < stored; ++l)
    for (int k = 1; k < K; ++k) {
      const int p = (int)pivots[k * V + l];
      if (p != k)
        for (int j = 0; j < k; ++j) {
          const T x = w[(k * N + j) * V + l];
          w[(k * N + j) * V + l] = w[(p * N + j) * V + l];
          w[(p * N + j) * V + l] = x;
        }
    }
  lanes_out(w, first, count, lu);
  LANE_INT failures[V];
  CAT(vstore, V)(info, 0, failures);
  for (int l = 0; l < stored; ++l) {
    for (int k = 0; k < K; ++k) ipivs[(first + l) * (long)K + k] = (int)pivots[k * V + l] + 1;
    infos[first + l] = (int)failures[l];
  }
}
