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
// -DQ=<rows a panel work-item holds> -DFAN=<candidates a round of the pivot search takes, a divisor of TEAM> -DSR=<rows staged at a time, a divisor of TEAM> -DTS=<32 or 64> -DCHUNK=<swap-solve work-items> -DUNROLL=<0 or 1:
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
  // Two of each, a column's and the next one's, so that a column's writes never wait for the last
  // column's reads: three barriers a column (the candidates, the groups' candidates, the pivot row).
  __local R best_magnitude[2][TEAM], group_magnitude[2][TEAM / FAN];
  __local int best_row[2][TEAM], group_row[2][TEAM / FAN];
  __local T pivot_rows[2][NB], k_rows[2][NB];
  const long m = get_group_id(0), base = m * (long)M * N;
  const int t = get_local_id(0);
  T x[Q][NB];
  int zero_at = 0;  // work-item 0's first zero pivot in this panel (1-based), info's when no earlier panel had one
  // In and out through local memory, SR rows at a time, so that a work-group's reads and writes cover
  // whole rows (a work-item a row of its own would read NB sectors a row apart in every instruction).
  __local T stage[SR * (NB + 1)];  // padded: a row's elements fall in different banks
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    for (int s0 = 0; s0 < TEAM; s0 += SR) {
      for (int idx = t; idx < SR * NB; idx += TEAM) {
        const int r = j0 + TEAM * q + s0 + idx / NB, c = idx % NB;
        stage[(idx / NB) * (NB + 1) + c] = r < M && c < b ? w[base + (long)r * N + j0 + c] : ZERO;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      if (t >= s0 && t < s0 + SR) {
#if UNROLL
#pragma unroll
#endif
        for (int c = 0; c < NB; ++c) x[q][c] = stage[(t - s0) * (NB + 1) + c];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
#if UNROLL
#pragma unroll
#endif
  for (int k = 0; k < NB; ++k) {
    const int row_k = j0 + k, h = k & 1;
    __local T* pivot_row = pivot_rows[h];
    __local T* k_row = k_rows[h];
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
    // The candidates meet in two rounds: groups of FAN, then every work-item takes the best of the groups'.
    best_magnitude[h][t] = best;
    best_row[h][t] = at;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < TEAM / FAN) {
      for (int i = t * FAN; i < t * FAN + FAN; ++i) {
        const R v = best_magnitude[h][i];
        const int r = best_row[h][i];
        if (v > best || (v == best && r < at)) {
          best = v;
          at = r;
        }
      }
      group_magnitude[h][t] = best;
      group_row[h][t] = at;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    best = (R)-1;
    at = M;
    for (int i = 0; i < TEAM / FAN; ++i) {
      const R v = group_magnitude[h][i];
      const int r = group_row[h][i];
      if (v > best || (v == best && r < at)) {
        best = v;
        at = r;
      }
    }
    const bool going = k < b;  // the same in every work-item
    int p = at;
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
      if (IS_ZERO(pivot) && zero_at == 0) zero_at = row_k + 1;
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
  }
#if UNROLL
#pragma unroll
#endif
  for (int q = 0; q < Q; ++q) {
    for (int s0 = 0; s0 < TEAM; s0 += SR) {
      if (t >= s0 && t < s0 + SR) {
#if UNROLL
#pragma unroll
#endif
        for (int c = 0; c < NB; ++c) stage[(t - s0) * (NB + 1) + c] = x[q][c];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int idx = t; idx < SR * NB; idx += TEAM) {
        const int r = j0 + TEAM * q + s0 + idx / NB, c = idx % NB;
        if (r < M && c < b) w[base + (long)r * N + j0 + c] = stage[(idx / NB) * (NB + 1) + c];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  if (t == 0 && zero_at != 0 && info[m] == 0) info[m] = zero_at;
}

// Every column outside the panel (a work-item a column, `chunks` work-groups of CHUNK a matrix): the
// panel's swaps (LAPACK's laswp, rows j0 + k and ipiv_k - 1 in order k = 0 .. b - 1), then, right of
// the panel, U's rows j0 .. j0 + b - 1 solved against the panel's unit lower triangle (staged in local
// memory): u_i = a_i - sum_{k < i} L_ik u_k. The swaps compose into one permutation of at most 2b rows,
// rows j0 .. j0 + b - 1 and the pivots' rows below them; each of those rows' source is found by tracing
// the swaps backwards, so a column reads all its sources at once and then writes, rather than b swaps
// one after another, each waiting for the last. A pivot row below the panel's rows takes a row from
// j0 .. j0 + b - 1 (a trace from it never leaves them); the rows j0 .. j0 + b - 1 may take rows from
// below, which are therefore all read before any is written.
__kernel void lu_swap_solve(__global T* w, __global const int* ipiv, int M, int N, int K, int j0, int b, int chunks) {
  __local T L[NB * NB];
  __local int pivot[NB], source[2 * NB], target[2 * NB];
  const long g = get_group_id(0), m = g / chunks, base = m * (long)M * N;
  const int lid = get_local_id(0), c = (int)(g % chunks) * CHUNK + lid;
  for (int idx = lid; idx < NB * NB; idx += CHUNK) {
    const int i = idx / NB, k = idx % NB;
    L[idx] = i < b && k < b ? w[base + (long)(j0 + i) * N + j0 + k] : ZERO;
  }
  for (int k = lid; k < NB; k += CHUNK) pivot[k] = k < b ? ipiv[m * K + j0 + k] - 1 : j0 + k;
  barrier(CLK_LOCAL_MEM_FENCE);
  // Targets 0 .. NB - 1: rows j0 + e; targets NB + k: pivot k's row when below the panel's rows and not
  // an earlier pivot's (-1 otherwise).
  for (int e = lid; e < 2 * NB; e += CHUNK) {
    int to = -1;
    if (e < NB) {
      if (e < b) to = j0 + e;
    } else if (e - NB < b && pivot[e - NB] >= j0 + b) {
      to = pivot[e - NB];
      for (int k = 0; k < e - NB; ++k)
        if (pivot[k] == to) to = -1;
    }
    int from = to;
    for (int k = b - 1; k >= 0 && to >= 0; --k) {
      if (from == j0 + k) from = pivot[k];
      else if (from == pivot[k]) from = j0 + k;
    }
    target[e] = to;
    source[e] = from;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (c >= N || (c >= j0 && c < j0 + b)) return;  // the panel's own columns; no barrier follows
  T u[NB], below[NB];
#if UNROLL
#pragma unroll
#endif
  for (int e = 0; e < NB; ++e) {
    u[e] = target[e] >= 0 ? w[base + (long)source[e] * N + c] : ZERO;
    below[e] = target[NB + e] >= 0 ? w[base + (long)source[NB + e] * N + c] : ZERO;
  }
#if UNROLL
#pragma unroll
#endif
  for (int e = 0; e < NB; ++e)
    if (target[NB + e] >= 0) w[base + (long)target[NB + e] * N + c] = below[e];
  if (c >= j0 + b) {
#if UNROLL
#pragma unroll
#endif
    for (int i = 1; i < NB; ++i) {
#if UNROLL
#pragma unroll
#endif
      for (int k = 0; k < i; ++k) u[i] -= MUL(L[i * NB + k], u[k]);
    }
  }
#if UNROLL
#pragma unroll
#endif
  for (int e = 0; e < NB; ++e)
    if (target[e] >= 0 && (c >= j0 + b || target[e] != source[e])) w[base + (long)target[e] * N + c] = u[e];
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
