// blocked_cholesky.cl: linalg.potrf for large orders as a sequence of kernels over a whole batch
// (blocked_cholesky.h): the matrix of each entry lives in L's storage, row-major, n x n, as its lower
// factor; panels of NB columns are factored one after another, each by three kernels: the panel kernel
// (the diagonal block factored a row per work-item, a work-group a matrix), the solve kernel (the rows below
// it solved against it, a work-group per ROWS rows) and the update kernel (the trailing lower triangle
// minus the panel's rows times their conjugate transposes, in tiles of TS x TS, a work-group a tile).
//
// Options: scalars.cl's, -DNB=<panel columns> -DTS=<tile side, 32 or 64> -DROWS=<solve work-items>
// -DUNROLL=<0 or 1: the loops over a row unrolled, the row in registers; 0 on CPUs, where PoCL 3.1
// (LLVM 15) wrote outside the buffers with them unrolled>.

// MUL, CONJ, RE, FROM_REAL, MAGNITUDE, IS_ZERO, by_pivot and ZERO: kernels/scalars.cl, put before this.

// Each entry's lower triangle of A (upper: of A^H, as A's upper triangle conjugated and transposed)
// into W, the rest of W zero; info 0. W may be A: each element (lower), or each pair (r, c) and (c, r)
// with c <= r (upper), is read and written by one work-item alone. A work-group per matrix, row by row
// (no division of the flat index: 64-bit divisions are long sequences on GPUs).
__kernel void cholesky_start(__global const T* a, __global T* w, __global int* info, long n, int upper) {
  const long m = get_group_id(0), base = m * n * n, team = get_local_size(0);
  for (long r = 0; r < n; ++r) {
    if (upper) {
      for (long c = get_local_id(0); c <= r; c += team) {
        w[base + r * n + c] = CONJ(a[base + c * n + r]);
        if (c < r) w[base + c * n + r] = ZERO;
      }
    } else {
      for (long c = get_local_id(0); c < n; c += team) w[base + r * n + c] = c <= r ? a[base + r * n + c] : ZERO;
    }
  }
  if (get_local_id(0) == 0) info[m] = 0;
}

// Columns j0 .. j0 + b - 1 of every entry whose info is still 0: the diagonal block factored
// right-looking, a row per work-item in registers (the loops unrolled where UNROLL: NB is a constant),
// each step's pivot and column shared through local memory (each write separated by a barrier from the
// reads before it, and from those after it), and written back. A diagonal element
// that is not positive (or NaN) stops the entry: info = its column + 1, the columns before it finished
// (finish zeroes the rest). A work-group of NB per matrix; every work-item passes every barrier.
__kernel void cholesky_panel(__global T* w, __global int* info, long n, long j0, int b) {
  __local R pivot;
  __local T column[NB];
  const long m = get_group_id(0), base = m * n * n;
  const int i = get_local_id(0);
  if (info[m] != 0) return;  // the same for the whole work-group
  __global T* row = w + base + (j0 + i) * n + j0;
  T x[NB];
#if UNROLL
#pragma unroll
#endif
  for (int c = 0; c < NB; ++c) x[c] = i < b && c <= i ? row[c] : ZERO;
  int kept = b;  // columns factored (the same in every work-item)
#if UNROLL
#pragma unroll
#endif
  for (int k = 0; k < NB; ++k) {
    if (i == k) pivot = RE(x[k]);
    barrier(CLK_LOCAL_MEM_FENCE);
    const R d = pivot;
    const bool going = k < b && kept == b;
    if (going && !(d > (R)0)) kept = k;
    if (going && kept == b) {
      const R s = sqrt(d);
      x[k] = i == k ? FROM_REAL(s) : i > k ? x[k] / s : x[k];
      column[i] = x[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (going && kept == b && i > k) {
#if UNROLL
#pragma unroll
#endif
      for (int j = k + 1; j < NB; ++j)
        if (j <= i) x[j] -= MUL(x[k], CONJ(column[j]));
    }
  }
  if (i < b) {
#if UNROLL
#pragma unroll
#endif
    for (int c = 0; c < NB; ++c)
      if (c <= i && c < kept) row[c] = x[c];
  }
  if (i == 0 && kept < b) info[m] = (int)(j0 + kept + 1);
}

// The rows below the panel's diagonal block, ROWS a work-group (`chunks` work-groups a matrix), solved
// against the block the panel kernel factored: x D^H = a, column by column, for the columns it
// finished (all NB, or those before the one that failed there). A row per work-item, in registers (the
// loops unrolled where UNROLL: NB is a constant), read and written through local memory (X, padded to
// NB + 1 against bank conflicts) so that global memory is walked along rows; D staged in local memory,
// each element read by every work-item at once.
__kernel void cholesky_solve(__global T* w, __global const int* info, long n, long j0, int chunks) {
  __local T D[NB * NB];
  __local T X[ROWS * (NB + 1)];
  const long g = get_group_id(0), m = g / chunks, r0 = j0 + NB + (g % chunks) * (long)ROWS;
  const int lid = get_local_id(0);
  const int failed = info[m];
  if (failed != 0 && failed - 1 < j0) return;  // stopped in an earlier panel (the same for the work-group)
  const int kept = failed == 0 ? NB : (int)(failed - 1 - j0);
  const long base = m * n * n;
  const int rows = (int)min((long)ROWS, n - r0);
  for (int idx = lid; idx < NB * NB; idx += ROWS) D[idx] = w[base + (j0 + idx / NB) * n + j0 + idx % NB];
  for (int idx = lid; idx < rows * NB; idx += ROWS) X[(idx / NB) * (NB + 1) + idx % NB] = w[base + (r0 + idx / NB) * n + j0 + idx % NB];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < rows) {
    __local T* row = X + lid * (NB + 1);
    T x[NB];
#if UNROLL
#pragma unroll
#endif
    for (int c = 0; c < NB; ++c) x[c] = row[c];
#if UNROLL
#pragma unroll
#endif
    for (int c = 0; c < NB; ++c)
      if (c < kept) {
        const T v = x[c] / RE(D[c * NB + c]);
        x[c] = v;
#if UNROLL
#pragma unroll
#endif
        for (int j = c + 1; j < NB; ++j) x[j] -= MUL(v, CONJ(D[j * NB + c]));
      }
#if UNROLL
#pragma unroll
#endif
    for (int c = 0; c < NB; ++c) row[c] = x[c];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int idx = lid; idx < rows * NB; idx += ROWS)
    if (idx % NB < kept) w[base + (r0 + idx / NB) * n + j0 + idx % NB] = X[(idx / NB) * (NB + 1) + idx % NB];
}

// The trailing lower triangle from row and column s0 = j0 + NB of every entry whose info is still 0,
// minus P P^H for the panel's rows P = W[s0.., j0 .. j0 + NB - 1]: a work-group of US x US (US = TS / 4)
// per tile of TS x TS on or below the diagonal (`tiles` tiles a side, tiles (tiles + 1) / 2 of them a
// matrix), each work-item 4 x 4 elements of it, a row and a column of US apart; the tile's rows and
// columns of P staged in local memory, k-major.
#define US (TS / 4)
__kernel void cholesky_update(__global T* w, __global const int* info, long n, long j0, int tiles) {
  __local T PI[NB * (TS + 1)];  // k-major, padded: the staging stores of a k apart fall in different banks
  __local T PJ[NB * (TS + 1)];
  const long triangle = (long)tiles * (tiles + 1) / 2;
  const long g = get_group_id(0), m = g / triangle;
  const int t = (int)(g % triangle);
  if (info[m] != 0) return;  // the same for the whole work-group
  int ti = (int)((sqrt(8.0f * (float)t + 1.0f) - 1.0f) * 0.5f);  // the tile row: ti (ti + 1) / 2 <= t
  while (ti * (ti + 1) / 2 > t) --ti;
  while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;
  const int tj = t - ti * (ti + 1) / 2;
  const long base = m * n * n, s0 = j0 + NB, i0 = s0 + (long)ti * TS, c0 = s0 + (long)tj * TS;
  const int lid = get_local_id(0), ly = lid / US, lx = lid % US;
  for (int idx = lid; idx < TS * NB; idx += US * US) {
    const int r = idx / NB, k = idx % NB;
    PI[k * (TS + 1) + r] = i0 + r < n ? w[base + (i0 + r) * n + j0 + k] : ZERO;
    PJ[k * (TS + 1) + r] = c0 + r < n ? CONJ(w[base + (c0 + r) * n + j0 + k]) : ZERO;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  T acc[4][4];
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) acc[p][q] = ZERO;
  for (int k = 0; k < NB; ++k) {
    T pi[4], pj[4];
    for (int p = 0; p < 4; ++p) {
      pi[p] = PI[k * (TS + 1) + ly + US * p];
      pj[p] = PJ[k * (TS + 1) + lx + US * p];
    }
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q) acc[p][q] += MUL(pi[p], pj[q]);
  }
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) {
      const long r = i0 + ly + US * p, c = c0 + lx + US * q;
      if (r < n && c <= r) w[base + r * n + c] -= acc[p][q];
    }
}

// The factors as potrf returns them: an entry that failed (info k > 0) keeps its first k - 1 columns,
// zeros elsewhere; upper: U = L^H, in place (the work-item of (r, c), c <= r, alone touches (r, c) and
// (c, r)). A work-group per matrix, row by row.
__kernel void cholesky_finish(__global T* w, __global const int* info, long n, int upper) {
  const long m = get_group_id(0), base = m * n * n, team = get_local_size(0);
  const int failed = info[m];
  if (!upper && failed == 0) return;  // the same for the whole work-group
  const long keep = failed == 0 ? n : failed - 1;
  for (long r = 0; r < n; ++r)
    for (long c = get_local_id(0); c <= r; c += team) {
      const T v = c < keep ? w[base + r * n + c] : ZERO;
      if (upper) {
        w[base + c * n + r] = CONJ(v);
        if (c < r) w[base + r * n + c] = ZERO;
      } else {
        w[base + r * n + c] = v;
      }
    }
}
