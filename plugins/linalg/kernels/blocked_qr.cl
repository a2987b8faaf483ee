// blocked_qr.cl: linalg.geqrf for large matrices as a sequence of kernels over a whole batch
// (blocked_qr.h): each entry's M x N matrix lives in QR's storage, row-major, and is factored panel by
// panel, NB columns at a time, as LAPACK's geqrf: the panel kernel reflects the panel's columns one by
// one (geqr2) and forms the triangular factor T of its block reflector Q = H_0 ... H_b-1 = I - V T V^H
// (larft, forward and columnwise); the apply kernel gives the columns right of the panel Q^H C =
// C - V T^H (V^H C) (larfb), a work-group per matrix and CT columns, a work-item a column.
//
// The matrices' rows M, columns N and steps K = min(M, N) are arguments. Options: scalars.cl's, -DNB=<panel
// columns> -DTR=<row groups of the panel kernel> -DQ=<rows a panel work-item holds: TR apart>
// -DCT=<the apply kernel's work-items> -DCW=<columns each of them takes> -DRC=<rows it stages at a time> -DNORM_LO= -DNORM_HI= -DNORM_TINY= -DNORM_BIG=<householder.h's reflector_limits>
// -DUNROLL=<0 or 1, as blocked_lu.cl's>.

// MUL, CONJ, RE, FROM_REAL, by_pivot and ZERO: kernels/scalars.cl, put before this.
#ifdef COMPLEX
#define ABS2(a) ((a).x * (a).x + (a).y * (a).y)
#define MAX_PART(a) fmax(fabs((a).x), fabs((a).y))
#define ABS(a) hypot((a).x, (a).y)
#define HAS_IMAGINARY(a) ((a).y != (R)0)
#else
#define ABS2(a) ((a) * (a))
#define MAX_PART(a) fabs(a)
#define ABS(a) (a)
#define HAS_IMAGINARY(a) false
#endif
// NORM_LO, NORM_HI, NORM_TINY, NORM_BIG: householder.h's reflector_limits, where the reflector's
// arithmetic changes course, as the emitted plans'.

// A into W (when they are different buffers): a work-item an element.
__kernel void qr_start(__global const T* a, __global T* w, long elements) {
  const size_t i = get_global_id(0);
  if (i < (size_t)elements) w[i] = a[i];
}

// Columns j0 .. j0 + b - 1, rows j0 .. M - 1 of every entry, reflected as LAPACK's geqr2; tau_j0+k kept,
// and the panel's T (NB x NB, upper) written to `tmat` (an NB x NB matrix per entry). Work-item (g, c),
// g = lid % TR, c = lid / TR, holds column j0 + c of rows j0 + g + TR q, q < Q, in registers (a column's
// work-items consecutive: only the warps holding column k work on its reflector). Step k:
// column k's sum of squares below the diagonal (partial sums in local memory), its reflector's scalars
// (every work-item alike), v_k into local memory, then every other column's s_c = v_k^H x_c (partial sums
// again): right of k, x_c -= conj(tau) v_k s_c; left of k, conj(s_c) = V_c^H v_k, T's Gram column. Three
// barriers a step (five when a sum of squares has to be rescaled).
__kernel void qr_panel(__global T* w, __global T* tau, __global T* tmat, int M, int N, int K, int j0, int b) {
  __local R part_ss[TR], part_mx[TR];
  __local T alpha_at[1];
  __local T v[TR * Q];  // v_k over rows j0 ..
  __local T part[TR][NB];
  __local T gram[NB][NB];  // gram[c][k] = V_c^H v_k, c < k
  __local T tri[NB][NB];   // T
  __local T taus[NB];
  const int lid = get_local_id(0), g = lid % TR, c = lid / TR;
  const long m = get_group_id(0), base = m * (long)M * N;
  T x[Q];
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    const int i = j0 + g + TR * q;
    x[q] = i < M && c < b ? w[base + (long)i * N + j0 + c] : ZERO;
  }
  // The steps are not unrolled (nothing is indexed by k; unrolled, they only made the kernel longer).
  for (int k = 0; k < b; ++k) {
    const int rk = j0 + k;
    // Column k's partial sums of squares below the diagonal, the largest part among them, and alpha.
    if (c == k) {
      R ss = (R)0, mx = (R)0;
#if UNROLL
#pragma unroll
#endif
      for (int q = 0; q < Q; ++q) {
        const int i = j0 + g + TR * q;
        if (i > rk && i < M) {
          ss += ABS2(x[q]);
          mx = fmax(mx, MAX_PART(x[q]));
        }
        if (i == rk) alpha_at[0] = x[q];
      }
      part_ss[g] = ss;
      part_mx[g] = mx;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    R ss = (R)0, mx = (R)0;
    for (int h = 0; h < TR; ++h) {
      ss += part_ss[h];
      mx = fmax(mx, part_mx[h]);
    }
    const T alpha = alpha_at[0];
    R xn = sqrt(ss);
    if (!(ss >= NORM_LO && ss <= NORM_HI)) {  // every work-item alike: the same sums in the same order
      barrier(CLK_LOCAL_MEM_FENCE);          // part_ss read by all
      if (c == k) {
        R s2 = (R)0;
        if (mx > (R)0) {
#if UNROLL
#pragma unroll
#endif
          for (int q = 0; q < Q; ++q) {
            const int i = j0 + g + TR * q;
            if (i > rk && i < M) {
              const T y = x[q] / mx;
              s2 += ABS2(y);
            }
          }
        }
        part_ss[g] = s2;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      ss = (R)0;
      for (int h = 0; h < TR; ++h) ss += part_ss[h];
      xn = mx * sqrt(ss);
    }
    // The reflector's scalars, as householder.cpp's reflector(): beta = -sign(re alpha) ||(alpha, x)||,
    // tau = (beta - alpha) / beta, v = x / (alpha - beta); nothing to reflect (tau 0) for x = 0 and a
    // real alpha.
    const bool go = xn != (R)0 || HAS_IMAGINARY(alpha);
    const R sv = fmax(MAX_PART(alpha), xn) < NORM_TINY ? NORM_BIG : (R)1;
    const T as = alpha * sv;
    const R bs = go ? -copysign(hypot(ABS(as), xn * sv), RE(as)) : RE(as);
    const R beta = bs / sv;
#ifdef COMPLEX
    const T t = go ? (T)((bs - as.x) / bs, -as.y / bs) : ZERO;
#else
    const T t = go ? (bs - as) / bs : ZERO;
#endif
    const T sc = go ? by_pivot(FROM_REAL((R)1), as - FROM_REAL(bs)) : ZERO;
    // v_k: column k below the diagonal scaled (kept in place, LAPACK's layout), 1 on the diagonal.
    if (c == k) {
#if UNROLL
#pragma unroll
#endif
      for (int q = 0; q < Q; ++q) {
        const int i = j0 + g + TR * q;
        if (i > rk && i < M) x[q] = MUL(x[q] * sv, sc);
        if (i == rk) x[q] = FROM_REAL(beta);
        v[i - j0] = i > rk && i < M ? x[q] : i == rk ? FROM_REAL((R)1) : ZERO;
      }
      if (g == 0) {
        taus[k] = t;
        tau[m * K + rk] = t;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // s_c = v_k^H x_c over rows j0 + k .., partial sums.
    if (c != k) {
      T s = ZERO;
#if UNROLL
#pragma unroll
#endif
      for (int q = 0; q < Q; ++q) {
        const int i = j0 + g + TR * q;
        if (i >= rk && i < M) s += MUL(CONJ(v[i - j0]), x[q]);
      }
      part[g][c] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (c != k) {
      T s = ZERO;
      for (int h = 0; h < TR; ++h) s += part[h][c];
      if (c > k && go) {  // tau 0 (H = I) changes nothing, whatever s is (NaN included), as LAPACK's larf
        const T f = MUL(CONJ(t), s);
#if UNROLL
#pragma unroll
#endif
        for (int q = 0; q < Q; ++q) {
          const int i = j0 + g + TR * q;
          if (i >= rk && i < M) x[q] -= MUL(v[i - j0], f);
        }
      } else if (g == 0) {
        gram[c][k] = CONJ(s);
      }
    }
  }
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    const int i = j0 + g + TR * q;
    if (i < M && c < b) w[base + (long)i * N + j0 + c] = x[q];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // T's row c (larft): T_cc = tau_c, T_ck = -tau_k sum_{c <= j < k} T_cj gram_jk; a row depends only on
  // itself, so each is formed by one work-item without barriers.
  if (g == 0) {
    for (int k = 0; k < NB; ++k) {
      T value = ZERO;
      if (k == c && k < b) value = taus[c];
      if (k > c && k < b) {
        T s = ZERO;
        for (int j = c; j < k; ++j) s += MUL(tri[c][j], gram[j][k]);
        value = IS_ZERO(taus[k]) ? ZERO : -MUL(taus[k], s);  // larft: T's column 0 for tau 0, whatever s is
      }
      tri[c][k] = value;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int idx = lid; idx < NB * NB; idx += TR * NB) tmat[m * NB * NB + idx] = tri[idx / NB][idx % NB];
}

// Rows i0 .. i0 + RC - 1 of the panel's reflectors V (unit lower trapezoidal: zero above the diagonal, one
// on it, QR's storage below) into vs, by the apply kernel's CT work-items.
inline void stage_reflectors(__local T* vs, __global const T* w, long base, int M, int N, int j0, int b, int i0, int lid) {
  for (int idx = lid; idx < RC * NB; idx += CT) {
    const int r = idx / NB, k = idx % NB, i = i0 + r;
    vs[idx] = i >= M || k >= b || i < j0 + k ? ZERO : i == j0 + k ? FROM_REAL((R)1) : w[base + (long)i * N + j0 + k];
  }
}

// W += V^H C over the RC staged rows i0 .. of V (vs) and of the work-item's CW columns (from `first`, CT
// apart). In the blocks among the panel's first NB rows (`diag` = i0 - j0: 0, or RC when NB > RC), V's
// zeros above its diagonal (row i, k > i - j0) are skipped rather than multiplied: 0 times a NaN or an
// infinity elsewhere in the column would be NaN, where larfb's trmm keeps it in its rows. `diag` is a
// constant at each call (-1 below those blocks), so the skipped terms are not compiled and the other
// blocks' loops have no test.
#if NB > 2 * RC
#error "qr_apply: the panel's first NB rows span at most two staged blocks"
#endif
inline __attribute__((always_inline)) void gather_rows(T acc[CW][NB], __local T vs[RC][NB], __global const T* w,
                                                       long base, int M, int N, int first, int i0, const int diag) {
  // The rows unrolled (a constant count, each guarded), so that their loads are issued together.
#if UNROLL
#pragma unroll
#endif
  for (int r = 0; r < RC; ++r) {
    T value[CW];
#if UNROLL
#pragma unroll
#endif
    for (int u = 0; u < CW; ++u) value[u] = i0 + r < M && first + u * CT < N ? w[base + (long)(i0 + r) * N + first + u * CT] : ZERO;
#if UNROLL
#pragma unroll
#endif
    for (int k = 0; k < NB; ++k) {
      const T v = CONJ(vs[r][k]);
#if UNROLL
#pragma unroll
#endif
      for (int u = 0; u < CW; ++u)
        if (diag < 0 || k <= diag + r) acc[u][k] += MUL(v, value[u]);
    }
  }
}

// C -= V W over the same rows and columns as gather_rows, `diag` as there.
inline __attribute__((always_inline)) void update_rows(T acc[CW][NB], __local T vs[RC][NB], __global T* w,
                                                       long base, int M, int N, int first, int i0, const int diag) {
#if UNROLL
#pragma unroll
#endif
  for (int r = 0; r < RC; ++r) {
    T s[CW];
#if UNROLL
#pragma unroll
#endif
    for (int u = 0; u < CW; ++u) s[u] = ZERO;
#if UNROLL
#pragma unroll
#endif
    for (int k = 0; k < NB; ++k) {
      const T v = vs[r][k];
#if UNROLL
#pragma unroll
#endif
      for (int u = 0; u < CW; ++u)
        if (diag < 0 || k <= diag + r) s[u] += MUL(v, acc[u][k]);
    }
#if UNROLL
#pragma unroll
#endif
    for (int u = 0; u < CW; ++u)
      if (i0 + r < M && first + u * CT < N) w[base + (long)(i0 + r) * N + first + u * CT] -= s[u];
  }
}

// Columns j0 + b .. N - 1 of every entry: C = Q^H C = C - V (T^H (V^H C)) over rows j0 .. M - 1, V the
// panel's reflectors (unit lower trapezoidal, from QR's storage), T from `tmat`. A work-group of CT
// work-items per matrix and CT * CW columns (`tiles` a matrix), a work-item CW columns, CT apart: W = V^H c
// in registers (V staged RC rows at a time in local memory, each value read there serving CW columns),
// W = T^H W, then c -= V W; V's structural zeros never multiply (gather_rows).
__kernel void qr_apply(__global T* w, __global const T* tmat, int M, int N, int j0, int b, int tiles) {
  __local T vs[RC][NB];
  __local T ts[NB][NB];
  const long group = get_group_id(0), m = group / tiles, base = m * (long)M * N;
  const int lid = get_local_id(0), first = j0 + b + (int)(group % tiles) * CT * CW + lid;
  for (int idx = lid; idx < NB * NB; idx += CT) ts[idx / NB][idx % NB] = tmat[m * NB * NB + idx];
  T acc[CW][NB];
#if UNROLL
#pragma unroll
#endif
  for (int u = 0; u < CW; ++u)
#if UNROLL
#pragma unroll
#endif
    for (int k = 0; k < NB; ++k) acc[u][k] = ZERO;
  for (int i0 = j0; i0 < M; i0 += RC) {
    barrier(CLK_LOCAL_MEM_FENCE);
    stage_reflectors(&vs[0][0], w, base, M, N, j0, b, i0, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    // Only the blocks among the panel's first NB rows meet V's zeros.
    if (i0 == j0) gather_rows(acc, vs, w, base, M, N, first, i0, 0);
    else if (i0 < j0 + NB) gather_rows(acc, vs, w, base, M, N, first, i0, RC);
    else gather_rows(acc, vs, w, base, M, N, first, i0, -1);
  }
  // T^H W in place, last row first (row r reads rows j <= r only).
#if UNROLL
#pragma unroll
#endif
  for (int r = NB - 1; r >= 0; --r) {
    T s[CW];
#if UNROLL
#pragma unroll
#endif
    for (int u = 0; u < CW; ++u) s[u] = ZERO;
#if UNROLL
#pragma unroll
#endif
    for (int j = 0; j <= r; ++j) {
      const T t = CONJ(ts[j][r]);
#if UNROLL
#pragma unroll
#endif
      for (int u = 0; u < CW; ++u) s[u] += MUL(t, acc[u][j]);
    }
#if UNROLL
#pragma unroll
#endif
    for (int u = 0; u < CW; ++u) acc[u][r] = s[u];
  }
  for (int i0 = j0; i0 < M; i0 += RC) {
    barrier(CLK_LOCAL_MEM_FENCE);
    stage_reflectors(&vs[0][0], w, base, M, N, j0, b, i0, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i0 == j0) update_rows(acc, vs, w, base, M, N, first, i0, 0);
    else if (i0 < j0 + NB) update_rows(acc, vs, w, base, M, N, first, i0, RC);
    else update_rows(acc, vs, w, base, M, N, first, i0, -1);
  }
}
