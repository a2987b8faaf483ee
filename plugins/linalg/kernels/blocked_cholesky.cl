// blocked_cholesky.cl: linalg.potrf for large orders as a sequence of kernels over a whole batch
// (blocked_cholesky.h): the matrix of each entry lives in L's storage, row-major, n x n, as its lower
// factor; panels of NB columns are factored one after another, each by three kernels: the panel kernel
// (the diagonal block factored in local memory, a work-group a matrix), the solve kernel (the rows below
// it solved against it, a work-group per ROWS rows) and the update kernel (the trailing lower triangle
// minus the panel's rows times their conjugate transposes, in tiles of TS x TS, a work-group a tile).
//
// Options: -DT=<value type> -DR=<its parts' type> [-DCOMPLEX] -DNB=<panel columns> -DTS=32 -DTEAM=64
// -DROWS=<solve work-items>. Complex values are float2/double2 (re, im).

#ifdef COMPLEX
#define MUL(a, b) ((T)((a).x * (b).x - (a).y * (b).y, (a).x * (b).y + (a).y * (b).x))
#define CONJ(a) ((T)((a).x, -(a).y))
#define RE(a) ((a).x)
#define FROM_REAL(r) ((T)((r), (R)0))
#else
#define MUL(a, b) ((a) * (b))
#define CONJ(a) (a)
#define RE(a) (a)
#define FROM_REAL(r) ((T)(r))
#endif
#define ZERO ((T)(0))

// Each entry's lower triangle of A (upper: of A^H, as A's upper triangle conjugated and transposed)
// into W, the rest of W zero; info 0. W may be A: the work-item of (r, c), c <= r, alone reads and writes
// (r, c) and (c, r). A work-group per matrix.
__kernel void cholesky_start(__global const T* a, __global T* w, __global int* info, long n, int upper) {
  const long m = get_group_id(0), base = m * n * n;
  const long team = get_local_size(0);
  for (long idx = get_local_id(0); idx < n * n; idx += team) {
    const long r = idx / n, c = idx % n;
    if (c > r) continue;
    const T v = upper ? CONJ(a[base + c * n + r]) : a[base + r * n + c];
    w[base + r * n + c] = v;
    if (c < r) w[base + c * n + r] = ZERO;
  }
  if (get_local_id(0) == 0) info[m] = 0;
}

// Columns j0 .. j0 + b - 1 of every entry whose info is still 0: the diagonal block factored
// right-looking in local memory (D, NB x NB) and written back. A diagonal element that is not positive
// (or NaN) stops the entry: info = its column + 1, the columns before it finished (finish zeroes the
// rest). A work-group of TEAM per matrix.
__kernel void cholesky_panel(__global T* w, __global int* info, long n, long j0, int b) {
  __local T D[NB * NB];
  const long m = get_group_id(0), base = m * n * n;
  const int lid = get_local_id(0);
  if (info[m] != 0) return;  // the same for the whole work-group
  for (int idx = lid; idx < b * b; idx += TEAM) {
    const int r = idx / b, c = idx % b;
    D[r * NB + c] = c <= r ? w[base + (j0 + r) * n + j0 + c] : ZERO;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int kept = b;  // columns factored
  for (int k = 0; k < b; ++k) {
    const R d = RE(D[k * NB + k]);  // every work-item reads the same value: the branch is uniform
    if (!(d > (R)0)) {
      kept = k;
      break;
    }
    const R s = sqrt(d);
    barrier(CLK_LOCAL_MEM_FENCE);  // D[k][k] read by all before it changes
    for (int i = k + lid; i < b; i += TEAM) D[i * NB + k] = i == k ? FROM_REAL(s) : D[i * NB + k] / s;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int rest = b - k - 1;
    for (int idx = lid; idx < rest * rest; idx += TEAM) {
      const int i = k + 1 + idx / rest, j = k + 1 + idx % rest;
      if (j <= i) D[i * NB + j] -= MUL(D[i * NB + k], CONJ(D[j * NB + k]));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int idx = lid; idx < b * b; idx += TEAM) {
    const int r = idx / b, c = idx % b;
    if (c <= r && c < kept) w[base + (j0 + r) * n + j0 + c] = D[r * NB + c];
  }
  if (lid == 0 && kept < b) info[m] = (int)(j0 + kept + 1);
}

// The rows below the panel's diagonal block, ROWS a work-group (`chunks` work-groups a matrix), solved
// against the block the panel kernel factored: x D^H = a, column by column, for the columns it
// finished (all NB, or those before the one that failed there). A row per work-item, staged in local
// memory (X, padded to NB + 1 against bank conflicts), read and written along rows; D read from
// global memory, the same element by every work-item at once.
__kernel void cholesky_solve(__global T* w, __global const int* info, long n, long j0, int chunks) {
  __local T X[ROWS * (NB + 1)];
  const long g = get_group_id(0), m = g / chunks, r0 = j0 + NB + (g % chunks) * (long)ROWS;
  const int lid = get_local_id(0);
  const int failed = info[m];
  if (failed != 0 && failed - 1 < j0) return;  // stopped in an earlier panel (the same for the work-group)
  const int kept = failed == 0 ? NB : (int)(failed - 1 - j0);
  const long base = m * n * n;
  __global const T* d = w + base + j0 * n + j0;  // D[j][c] = d[j * n + c]
  const int rows = (int)min((long)ROWS, n - r0);
  for (int idx = lid; idx < rows * NB; idx += ROWS) X[(idx / NB) * (NB + 1) + idx % NB] = w[base + (r0 + idx / NB) * n + j0 + idx % NB];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < rows) {
    __local T* x = X + lid * (NB + 1);
    for (int c = 0; c < kept; ++c) {
      const T v = x[c] / RE(d[c * n + c]);
      x[c] = v;
      for (int j = c + 1; j < kept; ++j) x[j] -= MUL(v, CONJ(d[j * n + c]));
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int idx = lid; idx < rows * NB; idx += ROWS)
    if (idx % NB < kept) w[base + (r0 + idx / NB) * n + j0 + idx % NB] = X[(idx / NB) * (NB + 1) + idx % NB];
}

// The trailing lower triangle from row and column s0 = j0 + NB of every entry whose info is still 0,
// minus P P^H for the panel's rows P = W[s0.., j0 .. j0 + NB - 1]: a work-group of 8 x 8 per tile of TS x
// TS on or below the diagonal (`tiles` tiles a side, tiles (tiles + 1) / 2 of them a matrix), each
// work-item 4 x 4 elements of it, a row and a column of 8 apart; the tile's rows and columns of P staged
// in local memory, k-major.
__kernel void cholesky_update(__global T* w, __global const int* info, long n, long j0, int tiles) {
  __local T PI[NB * TS];
  __local T PJ[NB * TS];
  const long triangle = (long)tiles * (tiles + 1) / 2;
  const long g = get_group_id(0), m = g / triangle;
  const int t = (int)(g % triangle);
  if (info[m] != 0) return;  // the same for the whole work-group
  int ti = (int)((sqrt(8.0f * (float)t + 1.0f) - 1.0f) * 0.5f);  // the tile row: ti (ti + 1) / 2 <= t
  while (ti * (ti + 1) / 2 > t) --ti;
  while ((ti + 1) * (ti + 2) / 2 <= t) ++ti;
  const int tj = t - ti * (ti + 1) / 2;
  const long base = m * n * n, s0 = j0 + NB, i0 = s0 + (long)ti * TS, c0 = s0 + (long)tj * TS;
  const int lid = get_local_id(0), ly = lid / 8, lx = lid % 8;
  for (int idx = lid; idx < TS * NB; idx += 64) {
    const int r = idx / NB, k = idx % NB;
    PI[k * TS + r] = i0 + r < n ? w[base + (i0 + r) * n + j0 + k] : ZERO;
    PJ[k * TS + r] = c0 + r < n ? CONJ(w[base + (c0 + r) * n + j0 + k]) : ZERO;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  T acc[4][4];
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) acc[p][q] = ZERO;
  for (int k = 0; k < NB; ++k) {
    T pi[4], pj[4];
    for (int p = 0; p < 4; ++p) {
      pi[p] = PI[k * TS + ly + 8 * p];
      pj[p] = PJ[k * TS + lx + 8 * p];
    }
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q) acc[p][q] += MUL(pi[p], pj[q]);
  }
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) {
      const long r = i0 + ly + 8 * p, c = c0 + lx + 8 * q;
      if (r < n && c <= r) w[base + r * n + c] -= acc[p][q];
    }
}

// The factors as potrf returns them: an entry that failed (info k > 0) keeps its first k - 1 columns,
// zeros elsewhere; upper: U = L^H, in place (the work-item of (r, c), c <= r, alone touches (r, c) and
// (c, r)). A work-group per matrix.
__kernel void cholesky_finish(__global T* w, __global const int* info, long n, int upper) {
  const long m = get_group_id(0), base = m * n * n;
  const int failed = info[m];
  if (!upper && failed == 0) return;  // the same for the whole work-group
  const long keep = failed == 0 ? n : failed - 1, team = get_local_size(0);
  for (long idx = get_local_id(0); idx < n * n; idx += team) {
    const long r = idx / n, c = idx % n;
    if (c > r) continue;
    const T v = c < keep ? w[base + r * n + c] : ZERO;
    if (upper) {
      w[base + c * n + r] = CONJ(v);
      if (c < r) w[base + r * n + c] = ZERO;
    } else {
      w[base + r * n + c] = v;
    }
  }
}
