// sparse.convert on the device (plugins/sparse/convert_device.cpp): the layouts of
// plugins/sparse/layouts.h, each entry where the host's conversion stores it, a work-item a row.
// Values move as their bits: REAL is uint (f32) or ulong (f64), so no device needs doubles, every bit
// is kept, and a value is padding where it is +0 or -0, as the host's `v != 0` says (ENTRY below).
// A_INDEX is the source's index type, B_INDEX the result's (int or long), DIA_OFFSET the type of the
// offsets the dia kernels read (A_INDEX; long where they are a bdia's, expanded); SCAN_GROUP the
// work-group of the sums and SORT_SIZE a sell's sorting window rounded up (powers of 2).

// Whether a value's bits are an entry's: anything but a zero of either sign (NaN and subnormals too).
#define ENTRY(bits) (((bits) << 1) != (REAL)0)

// *most = max(*most, value), atomically where value is above what *most holds already: a row or
// super-row no longer than the longest seen so far (most of them) leaves the one address alone, which
// millions of atomics would queue on.
void raise_to(__global int* most, const int value) {
  if (value > *(volatile __global int*)most) atomic_max(most, value);
}

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
      raise_to(&verdict[1], (int)min(end - begin, (long)INT_MAX));
      for (long e = begin + 1; e < end; ++e)
        if (col[e] <= col[e - 1]) verdict[0] = 1;
    }
  }
  if (g < nnz) {
    const long c = col[g];
    if (c < 0 || c >= n) verdict[0] = 1;
  }
}

// coo: each entry's row (copy_entries copies the columns and values, a work-item an entry).
__kernel void csr_to_coo(const long m, __global const A_INDEX* row_ptr, __global B_INDEX* row) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) row[e] = (B_INDEX)g;
}

// A csr row (its `length` entries from `begin`) stored strided, as an ell's (at first = g, stride m) and a
// sell's rows are (at first = the slice's start + the place's row in it, stride C): its k-th entry at
// first + k * stride for k < width, column 0 and value 0 past its length.
void store_strided_row(const long first, const long stride, const long width, const long begin, const long length,
                       __global const A_INDEX* a_col, __global const REAL* a_data, __global B_INDEX* col,
                       __global REAL* data) {
  for (long k = 0; k < width; ++k) {
    const bool entry = k < length;
    col[first + k * stride] = entry ? (B_INDEX)a_col[begin + k] : (B_INDEX)0;
    data[first + k * stride] = entry ? a_data[begin + k] : (REAL)0;
  }
}

__kernel void csr_to_ell(const long m, const long width, __global const A_INDEX* row_ptr,
                         __global const A_INDEX* a_col, __global const REAL* a_data, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long begin = row_ptr[g];
  store_strided_row(g, m, width, begin, row_ptr[g + 1] - begin, a_col, a_data, col, data);
}

// csr -> sell, first: the rows in order at their places (sell's row part), -1 past the last row. With
// sigma above 1, sell_sort_window then orders each window.
__kernel void sell_rows_in_order(const long m, const long places, __global B_INDEX* row) {
  const long p = get_global_id(0);
  if (p < places) row[p] = (B_INDEX)(p < m ? p : -1);
}

// A work-group a window of sigma rows (the last one may be short) sorts them by length, longest first,
// stably, as the host's stable sort does: a bitonic sort in local memory of keys (INT_MAX - length) << 32
// | the row's place in the window, padded to SORT_SIZE with the largest key. Lengths are below INT_MAX
// (convert_device.cpp checks the longest row).
__kernel void sell_sort_window(const long m, const long sigma, __global const A_INDEX* row_ptr, __global B_INDEX* row) {
  __local ulong keys[SORT_SIZE];
  const long first = get_group_id(0) * sigma, count = min(sigma, m - first);
  const int l = get_local_id(0), items = get_local_size(0);
  for (int j = l; j < SORT_SIZE; j += items)
    keys[j] = j < count ? ((ulong)(INT_MAX - (row_ptr[first + j + 1] - row_ptr[first + j])) << 32) | (ulong)j : ULONG_MAX;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int size = 2; size <= SORT_SIZE; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = l; t < SORT_SIZE / 2; t += items) {
        const int a = 2 * t - (t & (stride - 1)), b = a + stride;  // the pair t compares
        const ulong x = keys[a], y = keys[b];
        if ((x > y) == ((a & size) == 0)) {
          keys[a] = y;
          keys[b] = x;
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  for (int j = l; j < count; j += items) row[first + j] = (B_INDEX)(first + (long)(keys[j] & 0xffffffffUL));
}

// Then each slice's places: its rows' longest length times C.
__kernel void sell_slice_sizes(const long slices, const long c, __global const A_INDEX* row_ptr, __global const B_INDEX* row,
                               __global long* sizes) {
  const long s = get_global_id(0);
  if (s >= slices) return;
  long width = 0;
  for (long r = 0; r < c; ++r) {
    const long i = row[s * c + r];
    if (i >= 0) width = max(width, (long)(row_ptr[i + 1] - row_ptr[i]));
  }
  sizes[s] = width * c;
}

// Then, from the sizes' inclusive sums, slice_ptr and each place's row, padded to its slice's width.
__kernel void csr_to_sell(const long slices, const long c, __global const A_INDEX* row_ptr, __global const A_INDEX* a_col,
                          __global const REAL* a_data, __global const long* sums, __global const B_INDEX* row,
                          __global B_INDEX* slice_ptr, __global B_INDEX* col, __global REAL* data) {
  const long p = get_global_id(0);
  if (p >= slices * c) return;
  const long s = p / c, r = p % c, start = s == 0 ? 0 : sums[s - 1];
  if (r == 0) slice_ptr[s] = (B_INDEX)start;
  if (p == slices * c - 1) slice_ptr[slices] = (B_INDEX)sums[s];
  const long i = row[p], begin = i >= 0 ? row_ptr[i] : 0, length = i >= 0 ? row_ptr[i + 1] - begin : 0;
  store_strided_row(start + r, c, (sums[s] - start) / c, begin, length, a_col, a_data, col, data);
}

// csr -> dia, first: flags[c - i + m - 1] = 1 for every entry (i, c) (explicit zeros too: a diagonal
// holds an entry that is 0 as the host counts it).
__kernel void csr_diagonals(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                            __global long* flags) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) {
    __global long* flag = &flags[col[e] - g + m - 1];
    if (*flag == 0) *flag = 1;  // read first: a banded matrix's entries all store into a few flags, which writes queue on
  }
}

// Then, from the flags' inclusive sums: diagonal d's offset, for the d-th place flagged.
__kernel void dia_offsets(const long m, const long places, __global const long* sums, __global B_INDEX* offsets) {
  const long k = get_global_id(0);
  if (k >= places) return;
  const long before = k == 0 ? 0 : sums[k - 1];
  if (sums[k] != before) offsets[before] = (B_INDEX)(k - (m - 1));
}

// csr -> bdia, after the flags' sums: starts[k] = 1 where place k's diagonal holds entries and the one
// before it does not (a band begins there).
__kernel void band_starts(const long places, __global const long* sums, __global long* starts) {
  const long k = get_global_id(0);
  if (k >= places) return;
  const long before = k == 0 ? 0 : sums[k - 1], two_before = k <= 1 ? 0 : sums[k - 2];
  starts[k] = sums[k] != before && before == two_before ? 1 : 0;
}

// Then, from the starts' inclusive sums, band b's first offset and where it begins in data (its first
// diagonal's number times m); the last place closes band_ptr with every diagonal's m places.
__kernel void bdia_bands(const long m, const long places, __global const long* sums, __global const long* starts,
                         __global B_INDEX* offsets, __global B_INDEX* band_ptr) {
  const long k = get_global_id(0);
  if (k >= places) return;
  const long b = k == 0 ? 0 : starts[k - 1];
  if (starts[k] != b) {
    offsets[b] = (B_INDEX)(k - (m - 1));
    band_ptr[b] = (B_INDEX)((sums[k] - 1) * m);
  }
  if (k == places - 1) band_ptr[starts[k]] = (B_INDEX)(sums[k] * m);
}

// Then each entry into its diagonal's row (data is zero first; a bdia's data is a dia's).
__kernel void csr_to_dia(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                         __global const REAL* a_data, __global const long* sums, __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long end = row_ptr[g + 1];
  for (long e = row_ptr[g]; e < end; ++e) data[(sums[col[e] - g + m - 1] - 1) * m + g] = a_data[e];
}

// Row g's csr row pointer, from the counts' inclusive sums (and the end, from the last row): its first
// entry's place, where the caller stores them.
long csr_row_start(const long m, const long g, __global const long* sums, __global B_INDEX* row_ptr) {
  const long e = g == 0 ? 0 : sums[g - 1];
  row_ptr[g] = (B_INDEX)e;
  if (g == m - 1) row_ptr[m] = (B_INDEX)sums[g];
  return e;
}

// dia -> csr, first: each row's entries (its nonzero values: zeros are padding) into counts[g]; verdict[0]
// becomes 1 where the dia is not one as the host reads it (offsets not ascending; a value outside the
// matrix), so the host's conversion runs instead and names the fault.
__kernel void dia_check(const long m, const long n, const long diagonals, __global const DIA_OFFSET* offsets,
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
__kernel void dia_to_csr(const long m, const long n, const long diagonals, __global const DIA_OFFSET* offsets,
                         __global const REAL* a_data, __global const long* sums, __global B_INDEX* row_ptr,
                         __global B_INDEX* col, __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long e = csr_row_start(m, g, sums, row_ptr);
  for (long d = 0; d < diagonals; ++d) {
    const REAL v = a_data[d * m + g];
    if (ENTRY(v)) {
      col[e] = (B_INDEX)(g + offsets[d]);
      data[e] = v;
      ++e;
    }
  }
}

// bdia -> csr, first: verdict[0] becomes 1 where the bdia is not one as the host reads it (band_ptr not
// from 0 to diagonals * m, going back, or holding part of a diagonal; a band starting below the end of
// the one before), so that bdia_diagonals stays inside its buffers. Work-item b checks band_ptr[b] and
// band b (bands + 1 of them).
__kernel void bdia_check(const long m, const long bands, const long diagonals, __global const A_INDEX* offsets,
                         __global const A_INDEX* band_ptr, __global int* verdict) {
  const long b = get_global_id(0);
  if (b > bands) return;
  const long at = band_ptr[b];
  if ((b == 0 && at != 0) || (b == bands && at != diagonals * m)) verdict[0] = 1;
  if (b == bands) return;
  const long next = band_ptr[b + 1];
  if (next < at || next > diagonals * m || (next - at) % m != 0) verdict[0] = 1;
  else if (b > 0 && offsets[b] < offsets[b - 1] + (at - band_ptr[b - 1]) / m) verdict[0] = 1;
}

// Then each band's diagonals' offsets, in the order data holds them (diagonal j of band b: offsets[b] + j),
// for dia_check and dia_to_csr (DIA_OFFSET long).
__kernel void bdia_diagonals(const long m, const long bands, __global const A_INDEX* offsets,
                             __global const A_INDEX* band_ptr, __global long* diagonal_offsets) {
  const long b = get_global_id(0);
  if (b >= bands) return;
  const long first = band_ptr[b] / m, count = band_ptr[b + 1] / m - first;
  for (long j = 0; j < count; ++j) diagonal_offsets[first + j] = offsets[b] + j;
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

// Then the row pointers: row_ptr[r] is the first entry whose row is r or more (nnz past the last), for
// r = 0 .. m. A work-item an entry stores its row's where it is the row's first (name_firsts; row_ptr is
// -1 before), then a work-item a row finds the others (rows without entries, and m) by bisection, so that
// a run of empty rows costs no more than any other rows. As a csr's (coo_row_ptr), and as longs where
// they place a hyb's coo part (coo_row_starts).
#define ROW_POINTERS(name, T)                                                                           \
  __kernel void name##_firsts(const long nnz, __global const A_INDEX* row, __global T* row_ptr) {       \
    const long e = get_global_id(0);                                                                    \
    if (e >= nnz) return;                                                                               \
    const long r = row[e];                                                                              \
    if (e == 0 || r != row[e - 1]) row_ptr[r] = (T)e;                                                   \
  }                                                                                                     \
  __kernel void name(const long m, const long nnz, __global const A_INDEX* row, __global T* row_ptr) {  \
    const long r = get_global_id(0);                                                                    \
    if (r > m || (r < m && row_ptr[r] >= 0)) return;                                                    \
    long low = 0, high = nnz;                                                                           \
    while (low < high) {                                                                                \
      const long middle = low + (high - low) / 2;                                                       \
      if (row[middle] < r) low = middle + 1;                                                            \
      else high = middle;                                                                               \
    }                                                                                                   \
    row_ptr[r] = (T)low;                                                                                \
  }
ROW_POINTERS(coo_row_ptr, B_INDEX)
ROW_POINTERS(coo_row_starts, long)

// The entries' columns and values as they are (a coo's into a csr's, a csr's into a coo's).
__kernel void copy_entries(const long nnz, __global const A_INDEX* a_col, __global const REAL* a_data,
                           __global B_INDEX* col, __global REAL* data) {
  const long e = get_global_id(0);
  if (e >= nnz) return;
  col[e] = (B_INDEX)a_col[e];
  data[e] = a_data[e];
}

// A row stored strided (an ell's or a hyb's ell part's: first g, stride m; a sell's: first its slice's
// start + its place in the slice, stride C), `width` places: its entries (its nonzero values: zeros are
// padding), with verdict[0] set to 1 where one's column is outside the matrix or they are not ascending;
// *last is the last one's column (-1: none).
long strided_row_entries(const long n, const long first, const long stride, const long width, __global const A_INDEX* a_col,
                         __global const REAL* a_data, long* last, __global int* verdict) {
  long count = 0;
  *last = -1;
  for (long k = 0; k < width; ++k)
    if (ENTRY(a_data[first + k * stride])) {
      const long c = a_col[first + k * stride];
      if (c < 0 || c >= n || c <= *last) verdict[0] = 1;
      *last = c;
      ++count;
    }
  return count;
}

// ell -> csr, first: each row's entries into counts[g], checked as strided_row_entries says.
__kernel void ell_check(const long m, const long n, const long width, __global const A_INDEX* a_col,
                        __global const REAL* a_data, __global long* counts, __global int* verdict) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long last = -1;
  counts[g] = strided_row_entries(n, g, m, width, a_col, a_data, &last, verdict);
}

// A row stored strided (as strided_row_entries reads it): its nonzero entries into a csr at e on; the
// place after them.
long store_csr_row_strided(const long first, const long stride, const long width, __global const A_INDEX* a_col,
                           __global const REAL* a_data, long e, __global B_INDEX* col, __global REAL* data) {
  for (long k = 0; k < width; ++k) {
    const REAL v = a_data[first + k * stride];
    if (ENTRY(v)) {
      col[e] = (B_INDEX)a_col[first + k * stride];
      data[e] = v;
      ++e;
    }
  }
  return e;
}

// Then, from the counts' inclusive sums, row g's nonzero entries at sums[g - 1] on.
__kernel void ell_to_csr(const long m, const long width, __global const A_INDEX* a_col, __global const REAL* a_data,
                         __global const long* sums, __global B_INDEX* row_ptr, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  store_csr_row_strided(g, m, width, a_col, a_data, csr_row_start(m, g, sums, row_ptr), col, data);
}

// sell, bcsr and sbell -> csr, first: verdict[0] becomes 1 where slice_ptr does not run from 0 to
// `stored`, goes back, or gives a slice that is not whole columns of C places, so that the checks after
// it stay inside their buffers. A sell's slice_ptr over its places; a sbell's over its blocks' places (C
// super-rows a slice); a bcsr's row_ptr over its blocks (a slice a super-row, C = 1). Work-item s checks
// slice_ptr[s] and slice s (slices + 1 of them).
__kernel void slices_check(const long slices, const long c, const long stored, __global const A_INDEX* slice_ptr,
                                __global int* verdict) {
  const long s = get_global_id(0);
  if (s > slices) return;
  const long at = slice_ptr[s];
  if ((s == 0 && at != 0) || (s == slices && at != stored)) verdict[0] = 1;
  if (s == slices) return;
  const long next = slice_ptr[s + 1];
  if (next < at || next > stored || (next - at) % c != 0) verdict[0] = 1;
}

// Then each place's row (-1 .. m-1; `seen` counts each row's places, sell_seen wants one) and its
// entries into counts[row], checked as strided_row_entries says.
__kernel void sell_check(const long m, const long n, const long c, const long places, __global const A_INDEX* slice_ptr,
                         __global const A_INDEX* row, __global const A_INDEX* a_col, __global const REAL* a_data,
                         __global int* seen, __global long* counts, __global int* verdict) {
  const long p = get_global_id(0);
  if (p >= places) return;
  const long i = row[p];
  if (i < -1 || i >= m) verdict[0] = 1;
  if (i < 0 || i >= m) return;
  atomic_inc(&seen[i]);
  const long s = p / c, begin = slice_ptr[s];
  long last = -1;
  counts[i] = strided_row_entries(n, begin + p % c, c, (slice_ptr[s + 1] - begin) / c, a_col, a_data, &last, verdict);
}

__kernel void sell_seen(const long m, __global const int* seen, __global int* verdict) {
  const long i = get_global_id(0);
  if (i < m && seen[i] != 1) verdict[0] = 1;
}

// Then, from the counts' inclusive sums, each place's row's nonzero entries at sums[row - 1] on.
__kernel void sell_to_csr(const long m, const long c, const long places, __global const A_INDEX* slice_ptr,
                          __global const A_INDEX* row, __global const A_INDEX* a_col, __global const REAL* a_data,
                          __global const long* sums, __global B_INDEX* row_ptr, __global B_INDEX* col, __global REAL* data) {
  const long p = get_global_id(0);
  if (p >= places) return;
  const long i = row[p];
  if (i < 0) return;
  const long s = p / c, begin = slice_ptr[s];
  store_csr_row_strided(begin + p % c, c, (slice_ptr[s + 1] - begin) / c, a_col, a_data, csr_row_start(m, i, sums, row_ptr), col, data);
}

// hyb -> csr, after its coo part is checked (coo_check) and placed by row (coo_row_starts): each row's
// entries, its ell part's then its coo part's, into counts[g]; verdict[0] becomes 1 where the ell part
// fails strided_row_entries's check or the row's first coo column is not past its last ell column.
__kernel void hyb_check(const long m, const long n, const long width, __global const A_INDEX* ell_col,
                        __global const REAL* ell_data, __global const A_INDEX* coo_col, __global const long* coo_starts,
                        __global long* counts, __global int* verdict) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long last = -1;
  const long count = strided_row_entries(n, g, m, width, ell_col, ell_data, &last, verdict);
  const long begin = coo_starts[g], end = coo_starts[g + 1];
  if (begin < end && coo_col[begin] <= last) verdict[0] = 1;
  counts[g] = count + end - begin;
}

// Then row g's entries: its ell part's nonzero ones, then its coo part's (zeros too: a coo holds entries).
__kernel void hyb_to_csr(const long m, const long width, __global const A_INDEX* ell_col, __global const REAL* ell_data,
                         __global const A_INDEX* coo_col, __global const REAL* coo_data, __global const long* coo_starts,
                         __global const long* sums, __global B_INDEX* row_ptr, __global B_INDEX* col,
                         __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  long e = store_csr_row_strided(g, m, width, ell_col, ell_data, csr_row_start(m, g, sums, row_ptr), col, data);
  for (long k = coo_starts[g]; k < coo_starts[g + 1]; ++k, ++e) {
    col[e] = (B_INDEX)coo_col[k];
    data[e] = coo_data[k];
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
  store_strided_row(g, m, width, begin, length, a_col, a_data, ell_col, ell_data);
  long e = g == 0 ? 0 : sums[g - 1];
  for (long k = width; k < length; ++k, ++e) {
    coo_row[e] = (B_INDEX)g;
    coo_col[e] = (B_INDEX)a_col[begin + k];
    coo_data[e] = a_data[begin + k];
  }
}

// ---- The block layouts: bcsr, bell and sbell (layouts.h) ----------------------------------------

#define KIND_BCSR 0
#define KIND_BELL 1
#define KIND_SBELL 2

// A block layout's shape, as convert_device.cpp passes it: `kind` (KIND_*) and a long8 of the matrix's
// rows m and columns n, the block's h x w, the super-rows, the slice height c (sbell's; a bell is one
// slice of every super-row, a bcsr a slice a super-row), a bell's width (blocks a super-row) and the
// places for blocks (a bcsr's or a sbell's col).
typedef struct {
  int kind;
  long m, n, h, w, super_rows, c, width, blocks;
} Blocks;

Blocks blocks_of(const int kind, const long8 shape) {
  const Blocks b = {kind, shape.s0, shape.s1, shape.s2, shape.s3, shape.s4, shape.s5, shape.s6, shape.s7};
  return b;
}

// Where super-row s's blocks lie: block k's first column at col[col_base + first + k * stride] for
// k < count, unit u of it (its row r and columns 4u' .. 4u' + 3, u = r * w / 4 + u') at
// data[data_base + (u * places + first + k * stride) * 4]. `begin` and `end` are a bcsr's row_ptr[s] and
// row_ptr[s + 1], a sbell's slice_ptr of s's slice and the next (a bell's are not read).
typedef struct {
  long col_base, first, stride, count, data_base, places;
} BlockRow;

BlockRow block_row(const Blocks b, const long s, const long begin, const long end) {
  BlockRow row = {0, begin, 1, end - begin, 0, b.blocks};  // bcsr
  if (b.kind == KIND_BELL) {
    row.first = s, row.stride = b.super_rows, row.count = b.width, row.places = b.width * b.super_rows;
  } else if (b.kind == KIND_SBELL) {
    row.col_base = begin, row.first = s % b.c, row.stride = b.c, row.count = (end - begin) / b.c;
    row.data_base = begin * b.h * b.w, row.places = end - begin;
  }
  return row;
}

// The place of column `j` of block k's row r in data.
long block_value_at(const Blocks b, const BlockRow row, const long k, const long r, const long j) {
  return row.data_base + ((r * (b.w / 4) + j / 4) * row.places + row.first + k * row.stride) * 4 + j % 4;
}

// A source's super-row s, where its pointers say (ptr: a bcsr's row_ptr, a sbell's slice_ptr).
BlockRow source_block_row(const Blocks b, const long s, __global const A_INDEX* ptr) {
  if (b.kind == KIND_BELL) return block_row(b, s, 0, 0);
  const long at = b.kind == KIND_BCSR ? s : s / b.c;
  return block_row(b, s, ptr[at], ptr[at + 1]);
}

// bcsr, bell and sbell -> csr, after slices_check (bcsr, sbell): a work-item a row i of the super-rows
// (super_rows * h of them) walks its super-row's blocks in order and counts its entries (nonzero values:
// zeros are padding) into counts[i]; verdict[0] becomes 1 where a block's column is outside the matrix, a
// value is (past its last row or column), or the row's columns are not ascending, so that the host's
// conversion names the fault or sorts the row.
__kernel void blocks_check(const int kind, const long8 shape, __global const A_INDEX* ptr, __global const A_INDEX* a_col,
                           __global const REAL* a_data, __global long* counts, __global int* verdict) {
  const Blocks b = blocks_of(kind, shape);
  const long i = get_global_id(0);
  if (i >= b.super_rows * b.h) return;
  const long s = i / b.h, r = i % b.h;
  const BlockRow row = source_block_row(b, s, ptr);
  long count = 0, last = -1;
  for (long k = 0; k < row.count; ++k) {
    const long first = a_col[row.col_base + row.first + k * row.stride];
    if (first < 0 || first >= b.n) verdict[0] = 1;
    for (long j = 0; j < b.w; ++j)
      if (ENTRY(a_data[block_value_at(b, row, k, r, j)])) {
        const long c = first + j;
        if (i >= b.m || c >= b.n || c <= last) verdict[0] = 1;
        last = c;
        ++count;
      }
  }
  if (i < b.m) counts[i] = count;
}

// Then, from the counts' inclusive sums, row i's nonzero values at sums[i - 1] on.
__kernel void blocks_to_csr(const int kind, const long8 shape, __global const A_INDEX* ptr, __global const A_INDEX* a_col,
                            __global const REAL* a_data, __global const long* sums, __global B_INDEX* row_ptr,
                            __global B_INDEX* col, __global REAL* data) {
  const Blocks b = blocks_of(kind, shape);
  const long i = get_global_id(0);
  if (i >= b.m) return;
  const long s = i / b.h, r = i % b.h;
  const BlockRow row = source_block_row(b, s, ptr);
  long e = csr_row_start(b.m, i, sums, row_ptr);
  for (long k = 0; k < row.count; ++k) {
    const long first = a_col[row.col_base + row.first + k * row.stride];
    for (long j = 0; j < b.w; ++j) {
      const REAL v = a_data[block_value_at(b, row, k, r, j)];
      if (ENTRY(v)) {
        col[e] = (B_INDEX)(first + j);
        data[e] = v;
        ++e;
      }
    }
  }
}

// csr -> bcsr, bell and sbell: a work-item a super-row merges its h rows (h <= 8), whose columns ascend,
// by block column (column / w). The rows' cursors start at their first entries.
void super_row_cursors(const Blocks b, const long s, __global const A_INDEX* row_ptr, long* at, long* end) {
  for (long r = 0; r < b.h; ++r) {
    const long i = s * b.h + r;
    at[r] = i < b.m ? row_ptr[i] : 0;
    end[r] = i < b.m ? row_ptr[i + 1] : 0;
  }
}

// The least block column among the rows' entries from their cursors on; -1 where none is left.
long next_block_column(const Blocks b, const long* at, const long* end, __global const A_INDEX* col) {
  long least = -1;
  for (long r = 0; r < b.h; ++r)
    if (at[r] < end[r]) {
      const long block = col[at[r]] / b.w;
      if (least < 0 || block < least) least = block;
    }
  return least;
}

// First: super-row s's blocks into counts[s], the most of any super-row into verdict[1] (a bell's width).
__kernel void block_counts(const int kind, const long8 shape, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                           __global long* counts, __global int* verdict) {
  const Blocks b = blocks_of(kind, shape);
  const long s = get_global_id(0);
  if (s >= b.super_rows) return;
  long at[8], end[8], count = 0;
  super_row_cursors(b, s, row_ptr, at, end);
  for (long block; (block = next_block_column(b, at, end, col)) >= 0; ++count)
    for (long r = 0; r < b.h; ++r)
      while (at[r] < end[r] && col[at[r]] / b.w == block) ++at[r];
  counts[s] = count;
  raise_to(&verdict[1], (int)min(count, (long)INT_MAX));
}

// Into a sbell, then: each slice's places, its widest super-row's blocks times c.
__kernel void sbell_slice_sizes(const long slices, const long c, const long super_rows, __global const long* counts,
                                __global long* sizes) {
  const long t = get_global_id(0);
  if (t >= slices) return;
  long width = 0;
  for (long s = t * c; s < min(super_rows, t * c + c); ++s) width = max(width, counts[s]);
  sizes[t] = width * c;
}

// Then, from the sums of the counts (bcsr) or of the slices' sizes (sbell), super-row s's pointers
// (bcsr's row_ptr, sbell's slice_ptr at a slice's first super-row; a bell has none), its blocks' columns
// (the padding's 0) and its entries' values (data is zero first, so padding is 0). A work-item for each
// super-row of every slice: a sbell's last slice may hold places for super-rows past the last, column 0.
__kernel void csr_to_blocks(const int kind, const long8 shape, __global const A_INDEX* row_ptr, __global const A_INDEX* a_col,
                            __global const REAL* a_data, __global const long* sums, __global B_INDEX* ptr,
                            __global B_INDEX* col, __global REAL* data) {
  const Blocks b = blocks_of(kind, shape);
  const long s = get_global_id(0);
  if (s >= (b.super_rows + b.c - 1) / b.c * b.c) return;
  long begin = 0, end = 0;
  if (kind == KIND_BCSR) {
    begin = csr_row_start(b.super_rows, s, sums, ptr);
    end = sums[s];
  } else if (kind == KIND_SBELL) {
    const long t = s / b.c;
    begin = t == 0 ? 0 : sums[t - 1];
    end = sums[t];
    if (s % b.c == 0) ptr[t] = (B_INDEX)begin;
    if (s == b.super_rows - 1) ptr[t + 1] = (B_INDEX)end;
  }
  const BlockRow row = block_row(b, s, begin, end);
  long at[8], stop[8], k = 0;
  super_row_cursors(b, s, row_ptr, at, stop);
  for (long block; (block = next_block_column(b, at, stop, a_col)) >= 0; ++k) {
    col[row.col_base + row.first + k * row.stride] = (B_INDEX)(block * b.w);
    for (long r = 0; r < b.h; ++r)
      for (; at[r] < stop[r] && a_col[at[r]] / b.w == block; ++at[r]) data[block_value_at(b, row, k, r, a_col[at[r]] - block * b.w)] = a_data[at[r]];
  }
  for (; k < row.count; ++k) col[row.col_base + row.first + k * row.stride] = (B_INDEX)0;
}

// ---- cocktail -> csr -----------------------------------------------------------------------------
// A cocktail's dia, sbell and sell parts each become a csr of the device's own over the matrix's rows
// (long indices, their padding left out); its csr part holds only its listed rows. Row g's entries are
// then those four sources merged by column, as the host sorts the parts' entries together.

// listed[rows[r]] = r + 1 for each of the csr part's `count` listed rows (listed is zero first: 0 for a
// row it leaves empty); verdict[0] becomes 1 where a listed row is outside 0..m-1 or not above the one
// before it.
__kernel void cocktail_listed_rows(const long m, const long count, __global const A_INDEX* rows, __global long* listed,
                                   __global int* verdict) {
  const long r = get_global_id(0);
  if (r >= count) return;
  const long row = rows[r];
  if (row < 0 || row >= m || (r > 0 && row <= rows[r - 1])) {
    verdict[0] = 1;
    return;
  }
  listed[row] = r + 1;
}

// The four sources' kernel arguments: the dia's, the sbell's and the sell's csrs, then the csr part's
// listed rows (as cocktail_listed_rows leaves them) and its parts.
#define COCKTAIL_SOURCES                                                                                           \
  __global const long *d_ptr, __global const long *d_col, __global const REAL *d_data, __global const long *b_ptr, \
      __global const long *b_col, __global const REAL *b_data, __global const long *s_ptr, __global const long *s_col, \
      __global const REAL *s_data, __global const long *listed, __global const A_INDEX *c_ptr,                      \
      __global const A_INDEX *c_col, __global const REAL *c_data
#define COCKTAIL_SOURCE_NAMES d_ptr, d_col, d_data, b_ptr, b_col, b_data, s_ptr, s_col, s_data, listed, c_ptr, c_col, c_data

// Row g's entries merged by column from the four sources, stored into a csr at e on where `col` is not
// null (the values as they are: padding is gone and a csr part's zeros are entries); its count, or -1
// where two sources hold one position (the host names it).
long cocktail_row(const long g, COCKTAIL_SOURCES, long e, __global B_INDEX* col, __global REAL* data) {
  long at[4] = {d_ptr[g], b_ptr[g], s_ptr[g], 0}, end[4] = {d_ptr[g + 1], b_ptr[g + 1], s_ptr[g + 1], 0};
  const long r = listed[g] - 1;
  if (r >= 0) at[3] = c_ptr[r], end[3] = c_ptr[r + 1];
  long count = 0, last = -1;
  for (;;) {
    long source = -1, least = LONG_MAX;
    for (int k = 0; k < 4; ++k)
      if (at[k] < end[k]) {
        const long c = k == 0 ? d_col[at[k]] : k == 1 ? b_col[at[k]] : k == 2 ? s_col[at[k]] : (long)c_col[at[k]];
        if (c < least) least = c, source = k;
      }
    if (source < 0) return count;
    if (least == last) return -1;
    if (col) {
      const long a = at[source];
      col[e] = (B_INDEX)least;
      data[e] = source == 0 ? d_data[a] : source == 1 ? b_data[a] : source == 2 ? s_data[a] : c_data[a];
      ++e;
    }
    last = least;
    ++at[source];
    ++count;
  }
}

// First: each row's entries into counts[g]; verdict[0] becomes 1 where two parts hold one position.
__kernel void cocktail_check(const long m, COCKTAIL_SOURCES, __global long* counts, __global int* verdict) {
  const long g = get_global_id(0);
  if (g >= m) return;
  const long count = cocktail_row(g, COCKTAIL_SOURCE_NAMES, 0, 0, 0);
  if (count < 0) verdict[0] = 1;
  counts[g] = max(count, 0L);
}

// Then, from the counts' inclusive sums, row g's entries at sums[g - 1] on.
__kernel void cocktail_to_csr(const long m, COCKTAIL_SOURCES, __global const long* sums, __global B_INDEX* row_ptr,
                              __global B_INDEX* col, __global REAL* data) {
  const long g = get_global_id(0);
  if (g >= m) return;
  cocktail_row(g, COCKTAIL_SOURCE_NAMES, csr_row_start(m, g, sums, row_ptr), col, data);
}

// ---- csr -> cocktail -----------------------------------------------------------------------------
// The split as cocktail.h makes it: an entry on a diagonal holding `diagonal_least` entries or more is
// the dia's; of the rest, one in an aligned h x w block holding `block_least` of them or more the sbell's;
// of the rest, each row's first `width` (all where width < 0) the sell's; the rest the csr's. The leasts
// are the split's fills times the places (a diagonal's rows, a block's h * w), rounded up: a count c holds
// the fill exactly where c >= that (0: the part takes nothing). Each part's entries then form a csr of the
// device's own (long indices), which the layouts' own conversions store; the csr part goes straight
// into the cocktail's, its rows listed.

#define DIAGONAL_ROWS 16  // rows a work-item counts the diagonals of
#define DIAGONAL_SLOTS 8  // diagonals it counts privately before adding them up

// First: each diagonal's entries into counts[c - i + m - 1] (zero first). A work-item takes DIAGONAL_ROWS
// rows, `stride` apart (neighbouring work-items read neighbouring rows), and adds to the counts only what
// it has counted of a few diagonals at a time, so that a banded matrix's entries do not queue on a few
// addresses.
__kernel void cocktail_diagonal_counts(const long m, const long stride, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                                       __global int* counts) {
  const long g = get_global_id(0);
  if (g >= stride) return;
  long place[DIAGONAL_SLOTS];
  int counted[DIAGONAL_SLOTS];
  int used = 0;
  for (long i = g; i < m && i < g + DIAGONAL_ROWS * stride; i += stride)
    for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      const long p = col[e] - i + m - 1;
      int k = 0;
      while (k < used && place[k] != p) ++k;
      if (k == used) {
        if (used == DIAGONAL_SLOTS) {
          for (int j = 0; j < used; ++j) atomic_add(&counts[place[j]], counted[j]);
          used = 0, k = 0;
        }
        place[k] = p, counted[k] = 0, ++used;
      }
      ++counted[k];
    }
  for (int j = 0; j < used; ++j) atomic_add(&counts[place[j]], counted[j]);
}

// The part (0 dia, 1 sbell, 2 sell, 3 csr) each entry of super-row s (rows s * h .. s * h + h - 1) goes
// to, into part[e], and each row's entries in each part into per_row[k][i]. The sbell's blocks are found
// as block_counts finds a super-row's, over the entries the dia leaves.
#define UNDECIDED 255
__kernel void cocktail_parts(const long m, const long h, const long w, const long width, const long diagonal_least,
                             const long block_least, __global const A_INDEX* row_ptr, __global const A_INDEX* col,
                             __global const int* diagonal_counts, __global uchar* part, __global long* dia_rows,
                             __global long* block_rows, __global long* sell_rows, __global long* csr_rows) {
  const long s = get_global_id(0);
  if (s * h >= m) return;
  const long rows = min(h, m - s * h);
  for (long r = 0; r < rows; ++r) {
    const long i = s * h + r;
    for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
      part[e] = diagonal_least > 0 && diagonal_counts[col[e] - i + m - 1] >= diagonal_least ? 0 : UNDECIDED;
  }
  if (block_least > 0) {
    long at[8], end[8], start[8];
    for (long r = 0; r < 8; ++r) at[r] = end[r] = 0;
    for (long r = 0; r < rows; ++r) at[r] = row_ptr[s * h + r], end[r] = row_ptr[s * h + r + 1];
    for (;;) {
      long block = -1;
      for (long r = 0; r < rows; ++r) {
        while (at[r] < end[r] && part[at[r]] == 0) ++at[r];
        if (at[r] < end[r] && (block < 0 || col[at[r]] / w < block)) block = col[at[r]] / w;
      }
      if (block < 0) break;
      long count = 0;
      for (long r = 0; r < rows; ++r) {
        start[r] = at[r];
        for (; at[r] < end[r] && col[at[r]] / w == block; ++at[r]) count += part[at[r]] != 0;
      }
      if (count >= block_least)
        for (long r = 0; r < rows; ++r)
          for (long e = start[r]; e < at[r]; ++e)
            if (part[e] != 0) part[e] = 1;
    }
  }
  for (long r = 0; r < rows; ++r) {
    const long i = s * h + r;
    long counted[4] = {0, 0, 0, 0}, left = 0;
    for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      uchar k = part[e];
      if (k == UNDECIDED) {
        k = width < 0 || left < width ? 2 : 3;
        ++left;
        part[e] = k;
      }
      ++counted[k];
    }
    dia_rows[i] = counted[0], block_rows[i] = counted[1], sell_rows[i] = counted[2], csr_rows[i] = counted[3];
  }
}

// Then flags[i] = 1 where row i holds entries of the csr part (their sums list the rows).
__kernel void cocktail_listed_flags(const long m, __global const long* csr_rows, __global long* flags) {
  const long i = get_global_id(0);
  if (i < m) flags[i] = csr_rows[i] > 0 ? 1 : 0;
}

// The three parts' csrs (long indices) and the cocktail's csr part (its listed rows and B_INDEX parts).
#define COCKTAIL_PARTS                                                                                                  \
  __global long *d_ptr, __global long *d_col, __global REAL *d_data, __global long *b_ptr, __global long *b_col,        \
      __global REAL *b_data, __global long *s_ptr, __global long *s_col, __global REAL *s_data, __global B_INDEX *c_rows, \
      __global B_INDEX *c_ptr, __global B_INDEX *c_col, __global REAL *c_data

// Then, from the inclusive sums of each part's entries a row (and of the listed rows' flags), row i's
// entries into their parts, in order.
__kernel void csr_to_cocktail(const long m, __global const A_INDEX* row_ptr, __global const A_INDEX* a_col,
                              __global const REAL* a_data, __global const uchar* part, __global const long* dia_sums,
                              __global const long* block_sums, __global const long* sell_sums, __global const long* csr_sums,
                              __global const long* listed, COCKTAIL_PARTS) {
  const long i = get_global_id(0);
  if (i >= m) return;
  long at0 = i == 0 ? 0 : dia_sums[i - 1], at1 = i == 0 ? 0 : block_sums[i - 1], at2 = i == 0 ? 0 : sell_sums[i - 1];
  long at3 = i == 0 ? 0 : csr_sums[i - 1];
  d_ptr[i] = at0, b_ptr[i] = at1, s_ptr[i] = at2;
  if (i == m - 1) d_ptr[m] = dia_sums[i], b_ptr[m] = block_sums[i], s_ptr[m] = sell_sums[i];
  if (i == 0) c_ptr[0] = (B_INDEX)0;
  if (csr_sums[i] != at3) {  // a listed row: the list and its end
    const long r = listed[i] - 1;
    c_rows[r] = (B_INDEX)i;
    c_ptr[r + 1] = (B_INDEX)csr_sums[i];
  }
  // Each part by a branch of its own (not an array of pointers, which would live in memory).
  for (long e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
    const uchar k = part[e];
    const long c = a_col[e];
    const REAL v = a_data[e];
    if (k == 0) {
      d_col[at0] = c, d_data[at0++] = v;
    } else if (k == 1) {
      b_col[at1] = c, b_data[at1++] = v;
    } else if (k == 2) {
      s_col[at2] = c, s_data[at2++] = v;
    } else {
      c_col[at3] = (B_INDEX)c, c_data[at3++] = v;
    }
  }
}
