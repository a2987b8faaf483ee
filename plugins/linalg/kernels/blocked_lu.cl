// blocked_lu.cl: linalg.getrf for large matrices as a sequence of kernels over a whole batch
// (blocked_lu.h): each entry's M x N matrix lives in LU's storage, row-major, and is factored panel by
// panel, NB columns at a time, right-looking, each panel by three kernels: the panel kernel (the panel's
// rows from j0 down factored with partial pivoting, a work-group a matrix, each work-item Q rows of it in
// registers), the swap-solve kernel (the panel's row swaps applied to every other column, and U's rows of
// the panel solved against its unit lower triangle, a work-item a column), and the update kernel (the
// trailing matrix minus L's panel times U's rows, in tiles of TS x TS, a work-group a tile).
//
// The matrices' rows M, columns N and steps K = min(M, N) are arguments (one program serves every
// shape with the same panel). Options: scalars.cl's, -DNB=<panel columns> -DTEAM=<panel work-items>
// -DQ=<rows a panel work-item holds> -DTS=<32 or 64> -DCHUNK=<swap-solve work-items> -DUNROLL=<0 or 1:
// loops over the panel's columns unrolled (registers); 0 on CPUs, where PoCL 3.1 (LLVM 15) wrote outside
// the buffers with such loops unrolled>.

// MUL, CONJ, RE, FROM_REAL, MAGNITUDE, IS_ZERO, by_pivot and ZERO: kernels/scalars.cl, put before this.


// A into W (when they are different buffers), info 0: a work-item an element.
__kernel void lu_start(__global const T* a, __global T* w, __global int* info, long elements, long count, int copy) {
  const size_t i = get_global_id(0);
  if (copy && i < (size_t)elements) w[i] = a[i];
  if (i < (size_t)count) info[i] = 0;
}

// Columns j0 .. j0 + b - 1, rows j0 .. M - 1 of every entry, factored with partial pivoting as LAPACK's
// getf2: the pivot of column j0 + k is the first row from j0 + k whose element has the largest
// magnitude (NaNs never chosen, unless at row j0 + k itself); rows j0 + k and the pivot's swap within
// the panel; a zero pivot sets info (the first one) and leaves the column. Work-item t holds rows
// j0 + t + TEAM q, q < Q, in registers; the candidates meet in a reduction in local memory, the pivot
// row and row j0 + k pass through local memory. Every work-item passes every barrier.
__kernel void lu_panel(__global T* w, __global int* ipiv, __global int* info, int M, int N, int K, int j0, int b) {
  __local R best_magnitude[TEAM];
  __local int best_row[TEAM];
  __local T pivot_row[NB], k_row[NB];
  const long m = get_group_id(0), base = m * (long)M * N;
  const int t = get_local_id(0);
  T x[Q][NB];
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    const int r = j0 + t + TEAM * q;
#if UNROLL
#pragma unroll
#endif
    for (int c = 0; c < NB; ++c) x[q][c] = r < M && c < b ? w[base + (long)r * N + j0 + c] : ZERO;
  }
#if UNROLL
#pragma unroll
#endif
  for (int k = 0; k < NB; ++k) {
    const int row_k = j0 + k;
    // This work-item's candidate: the first largest magnitude among its rows from j0 + k.
    R best = (R)-1;
    int at = M;
#if UNROLL
#pragma unroll
#endif
    for (int q = 0; q < Q; ++q) {
      const int r = j0 + t + TEAM * q;
      const R v = MAGNITUDE(x[q][k]);
      if (r >= row_k && r < M && (v > best || (v == best && r < at))) {
        best = v;
        at = r;
      }
      if (r == row_k) {
#if UNROLL
#pragma unroll
#endif
        for (int c = 0; c < NB; ++c) k_row[c] = x[q][c];
      }
    }
    best_magnitude[t] = best;
    best_row[t] = at;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = TEAM / 2; stride > 0; stride /= 2) {
      if (t < stride) {
        const R v = best_magnitude[t + stride];
        const int r = best_row[t + stride];
        if (v > best_magnitude[t] || (v == best_magnitude[t] && r < best_row[t])) {
          best_magnitude[t] = v;
          best_row[t] = r;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    const bool going = k < b;  // the same in every work-item
    int p = best_row[0];
    if (!going || p >= M || isnan(MAGNITUDE(k_row[k]))) p = row_k;  // a NaN at row j0 + k stays, as a scan from it
#if UNROLL
#pragma unroll
#endif
    for (int q = 0; q < Q; ++q)
      if (j0 + t + TEAM * q == p && going) {
#if UNROLL
#pragma unroll
#endif
        for (int c = 0; c < NB; ++c) pivot_row[c] = x[q][c];
      }
    barrier(CLK_LOCAL_MEM_FENCE);
    const T pivot = pivot_row[k];
    if (going && t == 0) {
      ipiv[m * K + row_k] = p + 1;
      if (IS_ZERO(pivot) && info[m] == 0) info[m] = row_k + 1;
    }
    if (going && !IS_ZERO(pivot)) {
#if UNROLL
#pragma unroll
#endif
      for (int q = 0; q < Q; ++q) {
        const int r = j0 + t + TEAM * q;
        // The swap: row j0 + k takes the pivot row, the pivot's row takes row j0 + k.
        if (r == row_k) {
#if UNROLL
#pragma unroll
#endif
          for (int c = 0; c < NB; ++c) x[q][c] = pivot_row[c];
        } else if (r == p) {
#if UNROLL
#pragma unroll
#endif
          for (int c = 0; c < NB; ++c) x[q][c] = k_row[c];
        }
        if (r > row_k && r < M) {
          const T l = by_pivot(x[q][k], pivot);
          x[q][k] = l;
#if UNROLL
#pragma unroll
#endif
          for (int c = k + 1; c < NB; ++c) x[q][c] -= MUL(l, pivot_row[c]);
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // the next column's candidates and rows overwrite these
  }
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    const int r = j0 + t + TEAM * q;
    if (r < M) {
#if UNROLL
#pragma unroll
#endif
      for (int c = 0; c < NB; ++c)
        if (c < b) w[base + (long)r * N + j0 + c] = x[q][c];
    }
  }
}

// Every column outside the panel (a work-item a column, `chunks` work-groups of CHUNK a matrix): the
// panel's swaps in order (LAPACK's laswp), then, right of the panel, U's rows j0 .. j0 + b - 1 solved
// against the panel's unit lower triangle (staged in local memory): u_i = a_i - sum_{k < i} L_ik u_k.
__kernel void lu_swap_solve(__global T* w, __global const int* ipiv, int M, int N, int K, int j0, int b, int chunks) {
  __local T L[NB * NB];
  const long g = get_group_id(0), m = g / chunks, base = m * (long)M * N;
  const int lid = get_local_id(0), c = (int)(g % chunks) * CHUNK + lid;
  for (int idx = lid; idx < NB * NB; idx += CHUNK) {
    const int i = idx / NB, k = idx % NB;
    L[idx] = i < b && k < b ? w[base + (long)(j0 + i) * N + j0 + k] : ZERO;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (c >= N || (c >= j0 && c < j0 + b)) return;  // the panel's own columns; no barrier follows
  for (int k = 0; k < b; ++k) {
    const int p = ipiv[m * K + j0 + k] - 1;
    if (p != j0 + k) {
      const T v = w[base + (long)(j0 + k) * N + c];
      w[base + (long)(j0 + k) * N + c] = w[base + (long)p * N + c];
      w[base + (long)p * N + c] = v;
    }
  }
  if (c < j0 + b) return;
  T u[NB];
#if UNROLL
#pragma unroll
#endif
  for (int i = 0; i < NB; ++i) u[i] = i < b ? w[base + (long)(j0 + i) * N + c] : ZERO;
#if UNROLL
#pragma unroll
#endif
  for (int i = 1; i < NB; ++i) {
#if UNROLL
#pragma unroll
#endif
    for (int k = 0; k < i; ++k) u[i] -= MUL(L[i * NB + k], u[k]);
  }
#if UNROLL
#pragma unroll
#endif
  for (int i = 1; i < NB; ++i)
    if (i < b) w[base + (long)(j0 + i) * N + c] = u[i];
}

// The trailing matrix from row and column s0 = j0 + NB of every entry, minus L's panel rows times U's
// rows of the panel: a work-group of US x US (US = TS / 4) per tile of TS x TS (`tiles_r` x `tiles_c` a
// matrix), each work-item 4 x 4 elements, a row and a column of US apart; the tile's rows of L and
// columns of U staged in local memory, k-major.
#define US (TS / 4)
__kernel void lu_update(__global T* w, int M, int N, int j0, int tiles_r, int tiles_c) {
  __local T PL[NB * (TS + 1)];  // padded: the staging stores of a k apart fall in different banks
  __local T PU[NB * TS];
  const long per = (long)tiles_r * tiles_c;
  const long g = get_group_id(0), m = g / per;
  const int tile = (int)(g % per), ti = tile / tiles_c, tj = tile % tiles_c;
  const long base = m * (long)M * N;
  const int s0 = j0 + NB, i0 = s0 + ti * TS, c0 = s0 + tj * TS;
  const int lid = get_local_id(0), ly = lid / US, lx = lid % US;
  for (int idx = lid; idx < TS * NB; idx += US * US) {
    const int r = idx / NB, k = idx % NB;
    PL[k * (TS + 1) + r] = i0 + r < M ? w[base + (long)(i0 + r) * N + j0 + k] : ZERO;
    const int kk = idx / TS, c = idx % TS;
    PU[kk * TS + c] = c0 + c < N ? w[base + (long)(j0 + kk) * N + c0 + c] : ZERO;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  T acc[4][4];
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) acc[p][q] = ZERO;
  for (int k = 0; k < NB; ++k) {
    T l[4], u[4];
    for (int p = 0; p < 4; ++p) {
      l[p] = PL[k * (TS + 1) + ly + US * p];
      u[p] = PU[k * TS + lx + US * p];
    }
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q) acc[p][q] += MUL(l[p], u[q]);
  }
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) {
      const int r = i0 + ly + US * p, c = c0 + lx + US * q;
      if (r < M && c < N) w[base + (long)r * N + c] -= acc[p][q];
    }
}
