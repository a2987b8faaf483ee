// cumsum.cl: the kernels of signal.cumsum, an inclusive prefix sum in tiles of TILE = LOCAL * ITEMS
// elements, one tile per work-group. Built with -DLOCAL=<work-group size, a power of two>,
// -DITEMS=<elements per work-item> and, for f64, -DFUGUE_F64.
//
// The host scans the tiles (cumsum_tiles, which also writes each tile's total), scans the totals the
// same way (recursively, until they fit one tile), then adds to every tile the sum of the tiles before
// it (cumsum_add). Every value is a sum of consecutive inputs, so with non-negative inputs no partial
// sum exceeds the final one: f32 errors stay a few dozen roundings of the result.
#ifdef FUGUE_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double T;
#else
typedef float T;
#endif

#define TILE (LOCAL * ITEMS)

// y[i] = x[tile start] + ... + x[i] within each tile; totals[g] = the sum of tile g (unless totals is
// NULL). x and y may be the same buffer: a work-group reads its whole tile before writing it.
__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))
void cumsum_tiles(__global const T* x, __global T* y, __global T* totals, const long n) {
  __local T tile[TILE];
  __local T sums[LOCAL];
  const int lid = (int)get_local_id(0);
  const long base = (long)get_group_id(0) * TILE;

  // Neighbouring work-items load neighbouring elements (coalesced); past the end reads as 0.
  for (int k = 0; k < ITEMS; ++k) {
    const long i = base + k * LOCAL + lid;
    tile[k * LOCAL + lid] = i < n ? x[i] : (T)0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  // Each work-item scans its own ITEMS consecutive elements sequentially.
  T run = 0;
  for (int k = 0; k < ITEMS; ++k) {
    run += tile[lid * ITEMS + k];
    tile[lid * ITEMS + k] = run;
  }
  sums[lid] = run;
  barrier(CLK_LOCAL_MEM_FENCE);

  // Inclusive scan of the work-items' sums (Hillis-Steele: log2(LOCAL) steps).
  for (int offset = 1; offset < LOCAL; offset <<= 1) {
    const T left = lid >= offset ? sums[lid - offset] : (T)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    sums[lid] += left;
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  // Add what the work-items before this one hold, then store coalesced.
  const T before = lid > 0 ? sums[lid - 1] : (T)0;
  for (int k = 0; k < ITEMS; ++k) tile[lid * ITEMS + k] += before;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 0; k < ITEMS; ++k) {
    const long i = base + k * LOCAL + lid;
    if (i < n) y[i] = tile[k * LOCAL + lid];
  }
  if (totals && lid == LOCAL - 1) totals[get_group_id(0)] = sums[LOCAL - 1];
}

// y[i] += the sum of every tile before i's: scanned_totals[g - 1] for tile g (tile 0 has none).
__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))
void cumsum_add(__global T* y, __global const T* scanned_totals, const long n) {
  const long group = (long)get_group_id(0);
  if (group == 0) return;
  const T offset = scanned_totals[group - 1];
  const long base = group * TILE;
  for (int k = 0; k < ITEMS; ++k) {
    const long i = base + k * LOCAL + (long)get_local_id(0);
    if (i < n) y[i] += offset;
  }
}
