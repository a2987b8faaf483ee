// lanes_qr.cl: linalg.geqrf of small real matrices on CPUs, V matrices a work-item side by side in the
// lanes of one vector (lanes_qr.h, lanes.cl): every step of LAPACK's geqr2 (the reflector's norm and
// scalars, w = v^T A, A -= tau v w) is a vector operation on V matrices at once, whatever the order.
//
// Options: lanes.cl's, -DK=<min(M, N)> -DNORM_LO= -DNORM_HI= -DNORM_TINY= -DNORM_BIG=<householder.h's
// reflector_limits, where the reflector's arithmetic changes course, as the emitted plans'>.

// QR and tau of matrices first .. first + V - 1 (those below `count`: the last work-item's spare lanes
// factor a copy of the last matrix and store nothing). `a` and `qr` may be the same buffer.
__kernel void qr_lanes(__global const T* a, __global T* qr, __global T* taus, long count) {
  const long first = (long)get_global_id(0) * V;
  if (first >= count) return;
  T w[M * N * V];
  T tau_of[K * V];
  T sums[N * V];  // w = v^T A's columns right of the step, then tau w
  lanes_in(a, first, count, w);
  for (int k = 0; k < K; ++k) {
    // The reflector of column k, as householder.cpp's reflector(): beta = -sign(alpha) ||(alpha, x)||,
    // tau = (beta - alpha) / beta, v = (1, x / (alpha - beta)); H = I (tau 0) where x = 0.
    const TV alpha = AT(k * N + k);
    TV ss = (TV)(0);
    for (int i = k + 1; i < M; ++i) {
      const TV x = AT(i * N + k);
      ss = fma(x, x, ss);
    }
    TV xn = sqrt(ss);
    const TI outside = ~(isgreaterequal(ss, (TV)(NORM_LO)) & islessequal(ss, (TV)(NORM_HI)));
    if (any(outside)) {  // digits lost to underflow, or overflow: the norm again, scaled by the largest part
      TV mx = (TV)(0);
      for (int i = k + 1; i < M; ++i) mx = fmax(mx, fabs(AT(i * N + k)));
      const TV by = select(mx, (TV)(1), mx == (TV)(0));
      TV scaled = (TV)(0);
      for (int i = k + 1; i < M; ++i) {
        const TV x = AT(i * N + k) / by;
        scaled = fma(x, x, scaled);
      }
      xn = select(xn, mx * sqrt(scaled), outside);
    }
    const TI go = xn != (TV)(0);
    const TV sv = select((TV)(1), (TV)(NORM_BIG), fmax(fabs(alpha), xn) < (TV)(NORM_TINY));
    const TV as = alpha * sv;
    const TV bs = select(as, -copysign(hypot(as, xn * sv), as), go);
    const TV tau = select((TV)(0), (bs - as) / bs, go);
    const TV sc = select((TV)(0), (TV)(1) / select((TV)(1), as - bs, go), go);
    PUT(bs / sv, k * N + k);
    CAT(vstore, V)(tau, k, tau_of);
    for (int i = k + 1; i < M; ++i) PUT(AT(i * N + k) * sv * sc, i * N + k);
    // The columns right of k: A -= v (tau v^T A), row by row so that every sum is a chain of its own.
    for (int j = k + 1; j < N; ++j) CAT(vstore, V)(AT(k * N + j), j, sums);
    for (int i = k + 1; i < M; ++i) {
      const TV v = AT(i * N + k);
      for (int j = k + 1; j < N; ++j) CAT(vstore, V)(fma(v, AT(i * N + j), CAT(vload, V)(j, sums)), j, sums);
    }
    for (int j = k + 1; j < N; ++j) {
      const TV s = tau * CAT(vload, V)(j, sums);
      CAT(vstore, V)(s, j, sums);
      PUT(AT(k * N + j) - s, k * N + j);
    }
    for (int i = k + 1; i < M; ++i) {
      const TV v = AT(i * N + k);
      for (int j = k + 1; j < N; ++j) PUT(fma(-v, CAT(vload, V)(j, sums), AT(i * N + j)), i * N + j);
    }
  }
  lanes_out(w, first, count, qr);
  for (int l = 0; l < V && first + l < count; ++l)
    for (int k = 0; k < K; ++k) taus[(first + l) * (long)K + k] = tau_of[k * V + l];
}
