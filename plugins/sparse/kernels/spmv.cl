// y = alpha * A x + beta * y0 for each sparse layout (layouts.h). Built with -D REAL=float|double,
// -D INDEX=int|long, and for the row kernels -D LANES=1..64 (work-items per row, a power of two).
// Only nonzero values are multiplied: a zero is padding in ell, sell and dia, and contributes nothing in
// every layout, so an infinite x_j beside one stays out of y. Sums run in storage order, so every run
// gives the same bits.

inline REAL finish(REAL sum, long row, REAL alpha, REAL beta, __global const REAL* y0, int y0_array, REAL y0_value) {
  return alpha * sum + beta * (y0_array ? y0[row] : y0_value);
}

inline REAL product(REAL value, __global const REAL* x, INDEX column) { return value != (REAL)0 ? value * x[column] : (REAL)0; }

#ifdef LANES
// The first entry of row r in a coo's row part (sorted): the lowest k with row[k] >= r.
inline long first_of_row(__global const INDEX* row, long nnz, long r) {
  long low = 0, high = nnz;
  while (low < high) {
    const long mid = (low + high) / 2;
    if (row[mid] < r) low = mid + 1;
    else high = mid;
  }
  return low;
}

// csr and coo: LANES work-items a row, striding over its entries, then a tree sum in local memory.
// `starts` is row_ptr (csr) or the row part (coo, searched).
__kernel void rows_spmv(const long m, const long nnz, __global const INDEX* starts, __global const INDEX* col,
                        __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                        const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta, __local REAL* partial) {
  const int lid = get_local_id(0), lane = lid % LANES;
  const long r = get_global_id(0) / LANES;
  REAL sum = 0;
  if (r < m) {
#ifdef COO
    const long begin = first_of_row(starts, nnz, r), end = first_of_row(starts, nnz, r + 1);
#else
    const long begin = starts[r], end = starts[r + 1];
#endif
    for (long k = begin + lane; k < end; k += LANES) sum += product(data[k], x, col[k]);
  }
#if LANES > 1
  partial[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = LANES / 2; w > 0; w /= 2) {
    if (lane < w) partial[lid] += partial[lid + w];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  sum = partial[lid];
#endif
  if (lane == 0 && r < m) y[r] = finish(sum, r, alpha, beta, y0, y0_array, y0_value);
}
#endif

// ell: a row per work-item; place k of row i at k * m + i, so neighbouring work-items read neighbours.
__kernel void ell_spmv(const long m, const long width, __global const INDEX* col, __global const REAL* data,
                       __global const REAL* x, __global REAL* y, __global const REAL* y0, const int y0_array,
                       const REAL y0_value, const REAL alpha, const REAL beta) {
  const long i = get_global_id(0);
  if (i >= m) return;
  REAL sum = 0;
  for (long k = 0; k < width; ++k) sum += product(data[k * m + i], x, col[k * m + i]);
  y[i] = finish(sum, i, alpha, beta, y0, y0_array, y0_value);
}

// sell: a place per work-item; its slice is an ell of C rows starting at slice_ptr[s].
__kernel void sell_spmv(const long places, const long c, __global const INDEX* slice_ptr, __global const INDEX* row,
                        __global const INDEX* col, __global const REAL* data, __global const REAL* x, __global REAL* y,
                        __global const REAL* y0, const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta) {
  const long p = get_global_id(0);
  if (p >= places) return;
  const long i = row[p];
  if (i < 0) return;
  const long s = p / c, r = p % c, begin = slice_ptr[s], end = slice_ptr[s + 1];
  REAL sum = 0;
  for (long k = begin + r; k < end; k += c) sum += product(data[k], x, col[k]);
  y[i] = finish(sum, i, alpha, beta, y0, y0_array, y0_value);
}

// dia: a row per work-item, diagonal by diagonal.
__kernel void dia_spmv(const long m, const long n, const long diagonals, __global const INDEX* offsets,
                       __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                       const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta) {
  const long i = get_global_id(0);
  if (i >= m) return;
  REAL sum = 0;
  for (long d = 0; d < diagonals; ++d) {
    const long j = i + offsets[d];
    if (j >= 0 && j < n) sum += product(data[d * m + i], x, (INDEX)j);
  }
  y[i] = finish(sum, i, alpha, beta, y0, y0_array, y0_value);
}
