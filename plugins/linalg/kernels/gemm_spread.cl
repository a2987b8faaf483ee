// gemm_spread.cl: linalg.gemm of batches with fewer entries than the device has compute units, C's tiles
// spread over work-groups (gemm_spread.h): a work-group of 16 x 16 per tile of TS x TS of an entry's C,
// each work-item BS x BS of it (a row and a column of 16 apart), op(A)'s rows and op(B)'s columns of the
// tile staged KC values of k at a time in local memory, in the order the global values lie.
//
// Options: scalars.cl's, -DTS=<tile side: 64 or 32> -DKC=<k staged: 16> -DOPA=<0: A, 1: A^T, 2: A^H>
// -DOPB=<the same for B>.

// MUL, CONJ, ZERO: kernels/scalars.cl, put before this.

#define BS (TS / 16)
#if OPA == 2
#define A_VALUE(v) CONJ(v)
#else
#define A_VALUE(v) (v)
#endif
#if OPB == 2
#define B_VALUE(v) CONJ(v)
#else
#define B_VALUE(v) (v)
#endif

// C[e] = alpha op(A[e]) op(B[e]) for entry e = group / tiles (m x n x k; A stored m x k, or k x m
// transposed; B k x n, or n x k); alpha 0 gives zeros whatever A and B hold (BLAS's rule).
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void gemm_spread(__global const T* a, __global const T* b, __global T* c, long m, long n,
                                                                             long k, long tiles_n, long tiles, R alpha) {
  __local T As[KC * (TS + 1)];  // k-major, a row of TS padded by one
  __local T Bs[KC * (TS + 1)];
  const long g = get_group_id(0), e = g / tiles, t = g % tiles;
  const long i0 = (t / tiles_n) * TS, j0 = (t % tiles_n) * TS;
  __global const T* ae = a + e * m * k;
  __global const T* be = b + e * k * n;
  __global T* ce = c + e * m * n;
  const int lid = get_local_id(0), ly = lid / 16, lx = lid % 16;
  T acc[BS][BS];
  for (int p = 0; p < BS; ++p)
    for (int q = 0; q < BS; ++q) acc[p][q] = ZERO;
  for (long k0 = 0; k0 < k; k0 += KC) {
    for (int idx = lid; idx < KC * TS; idx += 256) {
#if OPA == 0
      const int r = idx / KC, kk = idx % KC;  // A's k contiguous
      As[kk * (TS + 1) + r] = i0 + r < m && k0 + kk < k ? ae[(i0 + r) * k + k0 + kk] : ZERO;
#else
      const int kk = idx / TS, r = idx % TS;  // A^T's i contiguous
      As[kk * (TS + 1) + r] = i0 + r < m && k0 + kk < k ? A_VALUE(ae[(k0 + kk) * m + i0 + r]) : ZERO;
#endif
#if OPB == 0
      const int kb = idx / TS, cb = idx % TS;  // B's j contiguous
      Bs[kb * (TS + 1) + cb] = j0 + cb < n && k0 + kb < k ? be[(k0 + kb) * n + j0 + cb] : ZERO;
#else
      const int cb = idx / KC, kb = idx % KC;  // B^T's k contiguous
      Bs[kb * (TS + 1) + cb] = j0 + cb < n && k0 + kb < k ? B_VALUE(be[(j0 + cb) * k + k0 + kb]) : ZERO;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < KC; ++kk) {
      T x[BS], y[BS];
      for (int p = 0; p < BS; ++p) x[p] = As[kk * (TS + 1) + ly + 16 * p];
      for (int q = 0; q < BS; ++q) y[q] = Bs[kk * (TS + 1) + lx + 16 * q];
      for (int p = 0; p < BS; ++p)
        for (int q = 0; q < BS; ++q) acc[p][q] += MUL(x[p], y[q]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int p = 0; p < BS; ++p)
    for (int q = 0; q < BS; ++q) {
      const long i = i0 + ly + 16 * p, j = j0 + lx + 16 * q;
      if (i < m && j < n) ce[i * n + j] = alpha == (R)0 ? ZERO : alpha * acc[p][q];
    }
}
