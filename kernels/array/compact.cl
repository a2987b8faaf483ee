/* compact.cl: array.compact, the elements of x whose mask is not zero, in order, and how many.
 * Three kernels over blocks of LOCAL * ITEMS elements, one block per work-group, each work-item taking
 * ITEMS consecutive elements (so items, and blocks, are in the elements' order):
 *   count:   each block's number of selected elements, into counts[block];
 *   offsets: one work-group turns the counts into exclusive prefix sums and writes the total, the
 *            result's run-time length;
 *   scatter: each block writes its selected elements from its offset on.
 * Build options: -DT=<x's OpenCL C type> -DM=<mask's type> -DLOCAL=<work-group size, a power of two>
 * -DITEMS=<elements per work-item>. */

/* Inclusive prefix sums of v over the work-group (Hillis-Steele in local memory). */
long group_scan(long v, __local long* s) {
  const int l = get_local_id(0);
  s[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = 1; d < LOCAL; d <<= 1) {
    const long t = l >= d ? s[l - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    s[l] += t;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long r = s[l];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

/* Selected elements of this work-item's run. */
long selected(__global const M* mask, const long first, const long n) {
  long c = 0;
  for (int k = 0; k < ITEMS; ++k) {
    const long i = first + k;
    if (i < n && mask[i] != (M)0) ++c;
  }
  return c;
}

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))
void count(__global const M* mask, const long n, __global long* counts) {
  __local long s[LOCAL];
  const long first = get_group_id(0) * (long)(LOCAL * ITEMS) + get_local_id(0) * (long)ITEMS;
  const long total = group_scan(selected(mask, first, n), s);
  if (get_local_id(0) == LOCAL - 1) counts[get_group_id(0)] = total;
}

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))
void offsets(__global long* counts, const long groups, __global long* length) {
  __local long s[LOCAL];
  const int l = get_local_id(0);
  long carry = 0;
  for (long base = 0; base < groups; base += LOCAL) {
    const long v = base + l < groups ? counts[base + l] : 0;
    const long inclusive = group_scan(v, s);
    if (base + l < groups) counts[base + l] = carry + inclusive - v;
    /* The last item's inclusive sum is the chunk's total: every item adds it. */
    if (l == LOCAL - 1) s[0] = inclusive;
    barrier(CLK_LOCAL_MEM_FENCE);
    carry += s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) length[0] = carry;
}

__kernel __attribute__((reqd_work_group_size(LOCAL, 1, 1)))
void scatter(__global const T* x, __global const M* mask, const long n, __global const long* offsets,
             __global T* out) {
  __local long s[LOCAL];
  const long first = get_group_id(0) * (long)(LOCAL * ITEMS) + get_local_id(0) * (long)ITEMS;
  const long mine = selected(mask, first, n);
  long at = offsets[get_group_id(0)] + group_scan(mine, s) - mine;
  for (int k = 0; k < ITEMS; ++k) {
    const long i = first + k;
    if (i < n && mask[i] != (M)0) out[at++] = x[i];
  }
}
