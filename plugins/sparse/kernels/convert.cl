// sparse.convert on the device (plugins/sparse/convert_device.cpp): the layouts of
// plugins/sparse/layouts.h, each entry where the host's conversion stores it, a work-item a row.
// Values move as their bits: REAL is uint (f32) or ulong (f64), so no device needs doubles, every bit
// is kept, and a value is padding where it is +0 or -0, as the host's `v != 0` says (ENTRY below).
// A_INDEX is the source's index type, B_INDEX the result's (int or long); SCAN_GROUP the work-group of
// the sums (a power of 2).

// Whether a value's bits are an entry's: anything but a zero of either sign (NaN and subnormals too).
#define ENTRY(bits) (((bits) << 1) != (REAL)0)

// Inclusive sums of values[0 .. n-1] within each work-group of SCAN_GROUP, in place; each group's total
// to totals[group]. scan_add then adds the sums of the groups before (convert_device.cpp recurses over
// the totals).
__kernel void scan_groups(const long n, __global long* values, __global long* totals) {
  __local long sums[SCAN_GROUP];
  const long g = get_global_id(0);
  const int l = get_local_id(0);
  sums[l] = g < n ? values[g] : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < SCAN_GROUP; step <<= 1) {
    const long before = l >= step ? sums[l - step] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    sums[l] += before;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (g < n) values[g] = sums[l];
  if (l == SCAN_GROUP - 1) totals[get_group_id(0)] = sums[l];
}

__kernel void scan_add(const long n, __global long* values, __global const long* totals) {
  const long g = get_global_id(0), group = get_group_id(0);
  if (g < n && group > 0) values[g] += totals[group - 1];
}

// verdict[0] becomes 1 where the csr is not one as the host reads it (row_ptr not from 0 to nnz, or
// going back; a column outside 0..n-1; a row's columns not ascending, a position twice among them), so
// the host's conversion runs instead and names the fault; verdict[1] is the longest row's length (at
// most INT_MAX). One work-item a row and one an entry.
__kernel void csr_check(const long m, const long n, const long nnz, __global const A_INDEX* row_ptr,
                        __global const A_INDEX* col, __global int* verdict) {
  const long g = get_global_id(0);
  if (g < m) {
    const long begin = row_ptr[g], end = row_ptr[g + 1];
    if ((g == 0 && begin != 0) || (g == m - 1 && end != nnz) || begin < 0 || end < begin || end > nnz) {
      verdict[0] = 1;
    } else {
      atomic_max(&verdict[1], (int)min(end - begin, (long)INT_MAX));
      for (long e = begin + 1; e < end; ++e)
        if (col[e] <= col[e - 1]) verdict[0] = 1;
    }
  }
  if (g < nnz) {
    const long c = col[g];
    if (c < 0 || c >= n) verdict[0] = 1;
  }
}

// coo: each entry's row, its column and value as the csr holds them.
__kernel void csr_to_coo(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* a_col,
                         __global const REAL* a_data, __global B_INDEX* row, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) {
    row[e] = (B_INDEX)g;
    col[e] = (B_INDEX)a_col[e];
    data[e] = a_data[e];
  }
}

// Row g of a csr (its `length` entries from `begin`) as an ell of `width`: its k-th entry at k * m + g,
// column 0 and value 0 past its length (an ell, and a hyb's ell part).
void store_ell_row(const long m, const long g, const long width, const long begin, const long length,
                   __global const A_INDEX* a_col, __global const REAL* a_data, __global B_INDEX* col,
                   __global REAL* data) {
  for (long k = 0; k < width; ++k) {
    const bool entry = k < length;
    col[k * m + g] = entry ? (B_INDEX)a_col[begin + k] : (B_INDEX)0;
    data[k * m + g] = entry ? a_data[begin + k] : (REAL)0;
  }
}

__kernel void csr_to_ell(const long m, const long width, __global const A_INDEX* row_ptr,
                         __global const A_INDEX* a_col, __global const REAL* a_data, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long begin = row_ptr[g];
  store_ell_row(m, g, width, begin, row_ptr[g + 1] - begin, a_col, a_data, col, data);
}

// csr -> dia, first: flags[c - i + m - 1] = 1 for every entry (i, c) (explicit zeros too: a diagonal
// holds an entry that is 0 as the host counts it).
__kernel void csr_diagonals(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                            __global long* flags) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) flags[col[e] - g + m - 1] = 1;
}

// Then, from the flags' inclusive sums: diagonal d's offset, for the d-th place flagged.
__kernel void dia_offsets(const long m, const long places, __global const long* sums, __global B_INDEX* offsets) {
  const long k = get_global_id(0);
  if (k >= places) return;
  const long before = k == 0 ? 0 : sums[k - 1];
  if (sums[k] != before) offsets[before] = (B_INDEX)(k - (m - 1));
}

// Then each entry into its diagonal's row (data is zero first).
__kernel void csr_to_dia(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                         __global const REAL* a_data, __global const long* sums, __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) data[(sums[col[e] - g + m - 1] - 1) * m + g] = a_data[e];
}

// dia -> csr, first: each row's entries (its nonzero values: zeros are padding) into counts[g]; verdict[0]
// becomes 1 where the dia is not one as the host reads it (offsets not ascending; a value outside the
// matrix), so the host's conversion runs instead and names the fault.
__kernel void dia_check(const long m, const long n, const long diagonals, __global const A_INDEX* offsets,
                        __global const REAL* a_data, __global long* counts, __global int* verdict) {
  const long g = get_global_id(0);
  if (g < diagonals && g > 0 && offsets[g] <= offsets[g - 1]) verdict[0] = 1;
  if (g >= m) return;
  long count = 0;
  for (long d = 0; d < diagonals; ++d) {
    const long c = g + offsets[d];
    if (ENTRY(a_data[d * m + g])) {
      if (c < 0 || c >= n) verdict[0] = 1;
      ++count;
    }
  }
  counts[g] = count;
}

// Then, from the counts' inclusive sums, row g's entries at sums[g - 1] on, by diagonal (so by column).
__kernel void dia_to_csr(const long m, const long n, const long diagonals, __global const A_INDEX* offsets,
                         __global const REAL* a_data, __global const long* sums, __global B_INDEX* row_ptr,
                         __global B_INDEX* col, __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long e = g == 0 ? 0 : sums[g - 1];
  row_ptr[g] = (B_INDEX)e;
  if (g == m - 1) row_ptr[m] = (B_INDEX)sums[g];
  for (long d = 0; d < diagonals; ++d) {
    const REAL v = a_data[d * m + g];
    if (ENTRY(v)) {
      col[e] = (B_INDEX)(g + offsets[d]);
      data[e] = v;
      ++e;
    }
  }
}

// coo -> csr, first: verdict[0] becomes 1 where the coo is not one as the host reads it (a row or column
// outside the matrix, rows not ascending, a row's columns not ascending or a position twice).
__kernel void coo_check(const long m, const long n, const long nnz, __global const A_INDEX* row,
                        __global const A_INDEX* col, __global int* verdict) {
  const long e = get_global_id(0);
  if (e >= nnz) return;
  const long r = row[e], c = col[e];
  if (r < 0 || r >= m || c < 0 || c >= n) verdict[0] = 1;
  if (e > 0 && (r < row[e - 1] || (r == row[e - 1] && c <= col[e - 1]))) verdict[0] = 1;
}

// Then the row pointers: a work-item an entry e (and one for the end) writes those of the rows from
// the previous entry's row (exclusive) to its own (inclusive).
__kernel void coo_row_ptr(const long m, const long nnz, __global const A_INDEX* row, __global B_INDEX* row_ptr) {
  const long e = get_global_id(0);
  if (e > nnz) return;
  const long previous = e == 0 ? -1 : row[e - 1], own = e == nnz ? m : row[e];
  for (long r = previous + 1; r <= own; ++r) row_ptr[r] = (B_INDEX)e;
}

// The entries' columns and values as they are (a coo's into a csr's).
__kernel void copy_entries(const long nnz, __global const A_INDEX* a_col, __global const REAL* a_data,
                           __global B_INDEX* col, __global REAL* data) {
  const long e = get_global_id(0);
  if (e >= nnz) return;
  col[e] = (B_INDEX)a_col[e];
  data[e] = a_data[e];
}

// ell -> csr, first: each row's entries (its nonzero values: zeros are padding) into counts[g];
// verdict[0] becomes 1 where a nonzero value's column is outside the matrix or the row's columns are not
// ascending.
__kernel void ell_check(const long m, const long n, const long width, __global const A_INDEX* a_col,
                        __global const REAL* a_data, __global long* counts, __global int* verdict) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long count = 0, last = -1;
  for (long k = 0; k < width; ++k)
    if (ENTRY(a_data[k * m + g])) {
      const long c = a_col[k * m + g];
      if (c < 0 || c >= n || c <= last) verdict[0] = 1;
      last = c;
      ++count;
    }
  counts[g] = count;
}

// Then, from the counts' inclusive sums, row g's nonzero entries at sums[g - 1] on.
__kernel void ell_to_csr(const long m, const long width, __global const A_INDEX* a_col, __global const REAL* a_data,
                         __global const long* sums, __global B_INDEX* row_ptr, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long e = g == 0 ? 0 : sums[g - 1];
  row_ptr[g] = (B_INDEX)e;
  if (g == m - 1) row_ptr[m] = (B_INDEX)sums[g];
  for (long k = 0; k < width; ++k) {
    const REAL v = a_data[k * m + g];
    if (ENTRY(v)) {
      col[e] = (B_INDEX)a_col[k * m + g];
      data[e] = v;
      ++e;
    }
  }
}

// csr -> hyb of ell width `width`, first: each row's entries past the width (the coo part's) into counts[g].
__kernel void hyb_counts(const long m, const long width, __global const A_INDEX* row_ptr, __global long* counts) {
  const long g = get_global_id(0);
  if (g < m) counts[g] = max(row_ptr[g + 1] - row_ptr[g] - width, 0L);
}

// Then row g's first `width` entries into the ell part (k * m + g, column 0 and value 0 past its length)
// and the rest into the coo part from sums[g - 1] on.
__kernel void csr_to_hyb(const long m, const long width, __global const A_INDEX* row_ptr, __global const A_INDEX* a_col,
                         __global const REAL* a_data, __global const long* sums, __global B_INDEX* ell_col,
                         __global REAL* ell_data, __global B_INDEX* coo_row, __global B_INDEX* coo_col,
                         __global REAL* coo_data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long begin = row_ptr[g], length = row_ptr[g + 1] - begin;
  store_ell_row(m, g, width, begin, length, a_col, a_data, ell_col, ell_data);
  long e = g == 0 ? 0 : sums[g - 1];
  for (long k = width; k < length; ++k, ++e) {
    coo_row[e] = (B_INDEX)g;
    coo_col[e] = (B_INDEX)a_col[begin + k];
    coo_data[e] = a_data[begin + k];
  }
}
