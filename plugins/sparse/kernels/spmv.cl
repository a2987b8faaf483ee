// Y = alpha * A X + beta * Y0 for each sparse layout (layouts.h), X [n, VECTORS] and Y [m, VECTORS]
// row-major (VECTORS = 1: y = A x). Built with -D REAL=float|double (VEC4 its 4-vector), -D INDEX=int|long, -D VECTORS=k,
// -D LANES=1..32 (csr: work-items a row, a power of two) and -D CHUNK=n (coo: entries a work-item).
// Work-item gid computes column j = gid % VECTORS of its unit (row, place or chunk) gid / VECTORS, so
// neighbouring work-items read neighbouring elements of X; dia_spmv_rows and ell_spmv_rows (CPUs, VECTORS 1)
// take ROWS consecutive rows each instead.
// Only nonzero values are multiplied: a zero is padding in ell, sell and dia, and contributes nothing in
// every layout, so an infinite x beside one stays out of y. Sums run in storage order, so every run gives
// the same bits.

#define AT(row) ((long)(row) * VECTORS + j)
// CAT(float, 8): float8 (the vector kernels' types and loads, from their -D ROWS).
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
// csr's kernels with -D ROW_IDS: the matrix holds only the rows listed in row_ids (a cocktail's csr of
// the entries its other parts leave: few rows, most of y's rows not touched); row r of the list is row
// row_ids[r] of y. Without it, row_ids is not read.
#ifdef ROW_IDS
#define ROW(r) ((long)row_ids[r])
#else
#define ROW(r) (r)
#endif

// A count left to the run (-D RUN_COUNT, ABI 2.21): the kernels' count argument (csr's and coo's entries,
// ell's and bell's width, dia's diagonals, bcsr's blocks) is its capacity, the units launched are the
// capacity's, and the count itself is read from run_count[0], where the operation that made the matrix
// wrote it, bounded by the capacity: the product waits for no read back.
#ifdef RUN_COUNT
#define RUN_COUNT_ARG , __global const long* restrict run_count
#define COUNTED(capacity) clamp(run_count[0], 0L, (long)(capacity))
#else
#define RUN_COUNT_ARG
#define COUNTED(capacity) (capacity)
#endif

inline REAL finish(REAL sum, long at, REAL alpha, REAL beta, __global const REAL* y0, int y0_array, REAL y0_value) {
  return alpha * sum + beta * (y0_array ? y0[at] : y0_value);
}

inline REAL product(REAL value, __global const REAL* x, long at) { return value != (REAL)0 ? value * x[at] : (REAL)0; }

// csr: LANES work-items a (row, column), striding over the row's entries, then a tree sum in local memory.
__kernel void rows_spmv(const long m, __global const INDEX* row_ptr, __global const INDEX* col, __global const REAL* data,
                        __global const REAL* x, __global REAL* y, __global const REAL* y0, const int y0_array,
                        const REAL y0_value, const REAL alpha, const REAL beta, __local REAL* partial, __global const INDEX* row_ids) {
  const int lid = get_local_id(0), lane = lid % LANES;
  const long unit = get_global_id(0) / LANES, r = unit / VECTORS, j = unit % VECTORS;
  REAL sum = 0;
  if (r < m) {
    const long begin = row_ptr[r], end = row_ptr[r + 1];
    for (long k = begin + lane; k < end; k += LANES) sum += product(data[k], x, AT(col[k]));
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
  if (lane == 0 && r < m) y[AT(ROW(r))] = finish(sum, AT(ROW(r)), alpha, beta, y0, y0_array, y0_value);
}

// csr on GPUs (VECTORS 1) in chunks of equal entries: chunk g holds entries [g * CHUNK_ENTRIES,
// (g + 1) * CHUNK_ENTRIES) (a power of two, 2^CHUNK_SHIFT) whatever the rows, so a power law's hub rows spread over
// many work-groups instead of holding one. Three kernels: csr_chunk_starts finds each chunk's first row
// (once a matrix: the next products check the starts kept), csr_chunk_spmv sums every row inside a
// chunk, csr_chunk_fixup the rows that leave theirs.

// starts[g]: the first row starting at or after chunk g's first entry (a row r starts in chunk g when
// g * CHUNK_ENTRIES <= row_ptr[r] < (g + 1) * CHUNK_ENTRIES); starts[chunks] = m. A work-item a chunk,
// guessing where the rows' pointers reach its first entry as if they grew evenly, bisecting every other
// step (so at most twice bisection's steps): regular matrices take a few dependent loads instead of
// bisection's log2(m) (about 1 us each on the H100 under load; a pass over row_ptr, a work-item a row,
// took 6 us per million rows).
long first_row_from(const long m, const long first, __global const INDEX* row_ptr) {
  // row_ptr[low] < first <= row_ptr[high]: the answer is high once they meet.
  long low = 0, high = m, low_value = 0, high_value = row_ptr[m];
  for (int step = 0; high - low > 1; ++step) {
    long guess = (low + high) / 2;
    if (step % 2 == 0)
      guess = low + (long)((float)(first - low_value) / (float)(high_value - low_value) * (float)(high - low));
    guess = clamp(guess, low + 1, high - 1);
    const long value = row_ptr[guess];
    if (value < first) low = guess, low_value = value;
    else high = guess, high_value = value;
  }
  return high;
}

// csr's chunks of a count left to the run: as many as the entries counted fill (at least one), at most
// `chunks`, the capacity's.
#define CHUNKS_NOW(chunks) min(max((COUNTED((chunks) << CHUNK_SHIFT) + CHUNK_ENTRIES - 1) >> CHUNK_SHIFT, 1L), (long)(chunks))

__kernel void csr_chunk_starts(const long m, const long chunks_most, __global const INDEX* restrict row_ptr, __global long* restrict starts RUN_COUNT_ARG) {
  const long g = get_global_id(0), chunks = CHUNKS_NOW(chunks_most);
  if (g > chunks) return;
  const long first = g << CHUNK_SHIFT;
  if (g == chunks || first == 0) {
    starts[g] = g == chunks ? m : 0;
    return;
  }
  starts[g] = first_row_from(m, first, row_ptr);
}

// The same starts from a pass over row_ptr, a work-item a row (m + 1 of them): row r >= 1 is the first
// to start at or after the first entries g * CHUNK_ENTRIES in (row_ptr[r - 1], row_ptr[r]]. Reads row_ptr
// once, coalesced, and waits on no chain of loads: faster than the search where rows are few beside
// chunks or irregular (power laws, where the guesses miss).
__kernel void csr_chunk_starts_by_rows(const long m, const long chunks_most, __global const INDEX* restrict row_ptr, __global long* restrict starts RUN_COUNT_ARG) {
  const long r = get_global_id(0), chunks = CHUNKS_NOW(chunks_most);
  if (r > m) return;
  if (r == 0) {
    starts[0] = 0;
    starts[chunks] = m;
    return;
  }
  const long low = row_ptr[r - 1], high = row_ptr[r];
  for (long g = (low >> CHUNK_SHIFT) + 1; g < chunks && (g << CHUNK_SHIFT) <= high; ++g) starts[g] = r;
}

// Local index of a chunk's entry k, padded one in 32 so that work-items reading CHUNK_ITEMS neighbouring
// entries each fall in different banks.
#define PADDED(k) ((k) + ((k) >> 5))

// A work-group a chunk of CHUNK_ENTRIES = size * CHUNK_ITEMS entries: the products read together into
// local memory (neighbouring work-items, neighbouring entries), each row's first entry marked with the
// row, then each work-item sums its CHUNK_ITEMS entries run by run (a run: one row's entries). A row
// whose run starts and ends in one work-item's entries is written by it; a row that crosses work-items is
// added up by the work-item where it starts, with the runs of the work-items after it up to the next row
// start: one after another where many rows start in the chunk (the runs to add are few), by a segmented
// sum over the work-items where few do (a long row's chunks would otherwise add a whole chunk's runs in
// one work-item). Rows that start in the chunk and end after it leave their sum in tails[g] (the row in
// tail_rows[g], -1 when none), and the run a chunk starts with, of a row begun before it, goes to
// pieces[g]; csr_chunk_fixup adds them up. Every sum runs in the same order each time, so every run
// gives the same bits.
__kernel void csr_chunk_spmv(const long m, const long nnz_most, __global const INDEX* restrict row_ptr, __global const INDEX* restrict col,
                             __global const REAL* restrict data, __global const REAL* restrict x, __global REAL* y, __global const REAL* y0,
                             const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta,
                             __global long* starts, __global REAL* pieces, __global REAL* tails, __global long* tail_rows,
                             __local REAL* products, __local INDEX* row_at, __local REAL* heads, __local int* ends,
                             __global const INDEX* row_ids RUN_COUNT_ARG) {
  // Loops between barriers take the same number of trips in every work-item (PoCL miscompiled others).
  __local int last_start;  // the last work-item whose entries hold a row's start (-1: none)
  __local int kept_hold;  // whether the chunk's starts as kept hold
  __local long kept[2];   // the starts work-item 0 read and checked
  const int lid = get_local_id(0), size = get_local_size(0);
  const long nnz = COUNTED(nnz_most);
  const long g = get_group_id(0), c0 = g << CHUNK_SHIFT, c1 = (g + 1) << CHUNK_SHIFT, count = min((long)CHUNK_ENTRIES, nnz - c0);
  const long chunks = max((nnz + CHUNK_ENTRIES - 1) >> CHUNK_SHIFT, 1L);
#ifdef RUN_COUNT
  if (g >= chunks) return;  // past the entries counted: the whole work-group, before any barrier
#endif
  // The chunk's rows as kept: spmv.cpp keeps a matrix's starts for its next products (a loop's), by its
  // row pointers' buffer, so they may be another matrix's. Clamped, every load below stays in row_ptr
  // whatever they hold; work-item 0 checks them (starts[h] = r holds where row_ptr[r - 1] < h *
  // CHUNK_ENTRIES <= row_ptr[r]) while the other loads are on their way, and where they do not hold
  // every work-item finds them again after the barrier. Another work-group may be writing them back
  // meanwhile (each writes its own first row where it found it again), so every work-item takes the
  // starts work-item 0 checked, and loads again where its own read differs.
  long r0 = g == 0 ? 0 : clamp(starts[g], 0L, m), r1 = g + 1 >= chunks ? m : clamp(starts[g + 1], r0, m);
  // Every load issued before any is used: the entries' columns and values, the first pass's rows
  // starting in the chunk, where the last of them ends (the rows after the last start are empty, so
  // row_ptr[r1]), then x at the columns.
  INDEX cols[CHUNK_ITEMS];
  REAL values[CHUNK_ITEMS], xs[CHUNK_ITEMS];
  for (int q = 0; q < CHUNK_ITEMS; ++q) {
    const int k = q * size + lid;
    cols[q] = k < count ? col[c0 + k] : 0;
    values[q] = k < count ? data[c0 + k] : (REAL)0;
  }
  long r = r0 + lid, last_end = row_ptr[r1];
  long b = r < r1 ? row_ptr[r] : 0, e = r < r1 ? row_ptr[r + 1] : 0;
  if (lid == 0) {
    kept_hold = (g == 0 || (r0 >= 1 && row_ptr[r0 - 1] < c0 && c0 <= row_ptr[r0])) &&
                (g + 1 >= chunks || (r1 >= 1 && row_ptr[r1 - 1] < c1 && c1 <= last_end));
    kept[0] = r0;
    kept[1] = r1;
    last_start = -1;
  }
  for (int q = 0; q < CHUNK_ITEMS; ++q) xs[q] = q * size + lid < count ? x[cols[q]] : (REAL)0;
  for (int q = 0; q < CHUNK_ITEMS; ++q) {
    products[PADDED(q * size + lid)] = values[q] != (REAL)0 ? values[q] * xs[q] : (REAL)0;
    row_at[PADDED(q * size + lid)] = -1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int found_again = !kept_hold;  // the same in every work-item
  if (found_again || r0 != kept[0] || r1 != kept[1]) {
    r0 = found_again ? (g == 0 ? 0 : first_row_from(m, c0, row_ptr)) : kept[0];
    r1 = found_again ? (g + 1 >= chunks ? m : first_row_from(m, c1, row_ptr)) : kept[1];
    if (found_again && lid == 0 && g > 0) starts[g] = r0;  // for the next products
    r = r0 + lid;
    last_end = row_ptr[r1];
    b = r < r1 ? row_ptr[r] : 0;
    e = r < r1 ? row_ptr[r + 1] : 0;
  }
  // The rows starting in the chunk: an empty one is beta * y0 now, the others mark their first entry.
  if (r < r1) {
    if (b == e) y[ROW(r)] = finish((REAL)0, ROW(r), alpha, beta, y0, y0_array, y0_value);
    else row_at[PADDED(b - c0)] = (INDEX)r;
  }
  for (long later = r + size; later < r1; later += size) {  // a chunk where more rows start than work-items
    const long begins = row_ptr[later];
    if (begins == row_ptr[later + 1]) y[ROW(later)] = finish((REAL)0, ROW(later), alpha, beta, y0, y0_array, y0_value);
    else row_at[PADDED(begins - c0)] = (INDEX)later;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // This work-item's entries, run by run: the run before its first row start is its head (a row begun
  // earlier), the run after its last one goes on into the work-items after it.
  REAL run = 0, head = 0;
  long row = -1;
  for (int q = 0; q < CHUNK_ITEMS; ++q) {
    const int k = lid * CHUNK_ITEMS + q;
    const long starting = row_at[PADDED(k)];
    if (starting >= 0) {
      if (row < 0) head = run;
      else y[ROW(row)] = finish(run, ROW(row), alpha, beta, y0, y0_array, y0_value);
      row = starting;
      run = 0;
    }
    run += products[PADDED(k)];
  }
  if (row < 0) head = run;
  else atomic_max(&last_start, lid);
  heads[lid] = head;
  ends[lid] = row >= 0 || lid == size - 1;  // the runs of a row end at a work-item holding the next start
  barrier(CLK_LOCAL_MEM_FENCE);
  // Where few rows start here, heads[t] becomes the sum of the runs of work-items t.. up to the first
  // that holds a row start (itself included): a segmented sum from the right, doubling the work-items
  // each step covers.
  const int summed = (r1 - r0) * 4 < size;
  if (summed) {
    REAL after = head;
    int end = ends[lid];
    for (int d = 1; d < size; d *= 2) {
      const REAL next = lid + d < size ? heads[lid + d] : (REAL)0;
      const int next_end = lid + d < size ? ends[lid + d] : 1;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (!end) {
        after += next;
        end = next_end;
      }
      heads[lid] = after;
      ends[lid] = end;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  if (row >= 0) {
    // The row this work-item's last run starts: the runs of the work-items after it.
    REAL sum = run;
    if (lid + 1 < size) {
      if (summed) {
        sum += heads[lid + 1];
      } else {
        for (int t = lid + 1; t < size; ++t) {
          sum += heads[t];
          if (ends[t]) break;
        }
      }
    }
    if (lid < last_start || last_end <= c0 + count) {
      y[ROW(row)] = finish(sum, ROW(row), alpha, beta, y0, y0_array, y0_value);
      if (lid == last_start) tail_rows[g] = -1;
    } else {
      tails[g] = sum;
      tail_rows[g] = row;
    }
  }
  if (lid == 0) {
    // The chunk's first run, of a row begun before it (0 where a row starts at its first entry).
    REAL piece = 0;
    if (summed) {
      piece = heads[0];
    } else {
      for (int t = 0; t < size; ++t) {
        piece += heads[t];
        if (ends[t]) break;
      }
    }
    pieces[g] = piece;
    if (last_start < 0) tail_rows[g] = -1;
  }
}

// The rows that start in chunk g and end after it: the tail, then the following chunks' first runs.
__kernel void csr_chunk_fixup(const long chunks_most, __global const INDEX* row_ptr, __global const REAL* pieces, __global const REAL* tails,
                              __global const long* tail_rows, __global REAL* y, __global const REAL* y0, const int y0_array,
                              const REAL y0_value, const REAL alpha, const REAL beta, __global const INDEX* row_ids RUN_COUNT_ARG) {
  const long g = get_global_id(0), chunks = CHUNKS_NOW(chunks_most);
  if (g >= chunks) return;
  const long row = tail_rows[g];
  if (row < 0) return;
  const long end = row_ptr[row + 1];
  REAL sum = tails[g];
  for (long h = g + 1; h < chunks && (h << CHUNK_SHIFT) < end; ++h) sum += pieces[h];
  y[ROW(row)] = finish(sum, ROW(row), alpha, beta, y0, y0_array, y0_value);
}

// ell: a row per unit; place k of row i at k * m + i, so neighbouring rows read neighbours.
__kernel void ell_spmv(const long m, const long width_most, __global const INDEX* col, __global const REAL* data,
                       __global const REAL* x, __global REAL* y, __global const REAL* y0, const int y0_array,
                       const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long i = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS, width = COUNTED(width_most);
  if (i >= m) return;
  REAL sum = 0;
  for (long k = 0; k < width; ++k) sum += product(data[k * m + i], x, AT(col[k * m + i]));
  y[AT(i)] = finish(sum, AT(i), alpha, beta, y0, y0_array, y0_value);
}

// coo: a chunk of CHUNK entries per unit, summed run by run (a run: the entries of one row). A run that
// starts and ends in the chunk is written; one that crosses the chunk's first or last entry leaves its
// partial sum in head or tail [chunks, VECTORS] for coo_carries. The chunk also writes the empty rows
// that follow each of its runs (chunk 0 those before the first entry), so every row of y is written once.
// With `accumulate` (hyb's coo part, after its ell part wrote y), runs add alpha * sum to y instead,
// and empty rows are left as they are.
__kernel void coo_chunks(const long m, const long nnz_most, const int accumulate, __global const INDEX* row, __global const INDEX* col,
                         __global const REAL* data, __global const REAL* x, __global REAL* head, __global REAL* tail,
                         __global REAL* y, __global const REAL* y0, const int y0_array, const REAL y0_value,
                         const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long g = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS, begin = g * CHUNK, nnz = COUNTED(nnz_most);
#ifdef RUN_COUNT
  if (nnz == 0) {  // no entries counted: every row is beta * y0 (the units launched share them)
    const long units = get_global_size(0) / VECTORS;
    if (!accumulate)
      for (long r = g; r < m; r += units) y[AT(r)] = finish((REAL)0, AT(r), alpha, beta, y0, y0_array, y0_value);
    return;
  }
#endif
  if (begin >= nnz) return;
  const long end = min(begin + CHUNK, nnz);
  const long first = row[begin], last = row[end - 1];
  const int head_continues = begin > 0 && row[begin - 1] == first, tail_continues = end < nnz && row[end] == last;
  if (g == 0 && !accumulate)
    for (long r = 0; r < first; ++r) y[AT(r)] = finish((REAL)0, AT(r), alpha, beta, y0, y0_array, y0_value);
  long k = begin;
  while (k < end) {
    const long r = row[k];
    REAL sum = 0;
    for (; k < end && row[k] == r; ++k) sum += product(data[k], x, AT(col[k]));
    if (r == first && head_continues) head[AT(g)] = sum;
    else if (r == last && tail_continues) tail[AT(g)] = sum;
    else if (accumulate) y[AT(r)] += alpha * sum;
    else y[AT(r)] = finish(sum, AT(r), alpha, beta, y0, y0_array, y0_value);
    // The empty rows up to the next run (or the matrix's end, after the last chunk).
    const long next = accumulate ? r + 1 : k < end ? (long)row[k] : end < nnz ? (long)row[end] : m;
    for (long e = r + 1; e < next; ++e) y[AT(e)] = finish((REAL)0, AT(e), alpha, beta, y0, y0_array, y0_value);
  }
}

// coo: the rows that cross chunks, summed in chunk order by the chunk where each starts.
__kernel void coo_carries(const long nnz_most, const long chunks_most, const int accumulate, __global const INDEX* row, __global const REAL* head,
                          __global const REAL* tail, __global REAL* y, __global const REAL* y0, const int y0_array,
                          const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long g = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS, nnz = COUNTED(nnz_most);
  const long chunks = min((nnz + CHUNK - 1) / CHUNK, chunks_most);
  if (g >= chunks) return;
  const long begin = g * CHUNK, end = min(begin + CHUNK, nnz);
  const long r = row[end - 1];
  const int tail_continues = end < nnz && row[end] == r;
  const int started_here = !(row[begin] == r && begin > 0 && row[begin - 1] == r);
  if (!tail_continues || !started_here) return;
  REAL sum = tail[AT(g)];
  for (long h = g + 1; h < chunks; ++h) {
    sum += head[AT(h)];
    const long h_end = min((h + 1) * CHUNK, nnz);
    if (!(row[h_end - 1] == r && h_end < nnz && row[h_end] == r)) break;  // the row ends in chunk h
  }
  if (accumulate) y[AT(r)] += alpha * sum;
  else y[AT(r)] = finish(sum, AT(r), alpha, beta, y0, y0_array, y0_value);
}

// sell: a place per unit; its slice is an ell of c rows starting at slice_ptr[s].
__kernel void sell_spmv(const long places, const long c, __global const INDEX* slice_ptr, __global const INDEX* row,
                        __global const INDEX* col, __global const REAL* data, __global const REAL* x, __global REAL* y,
                        __global const REAL* y0, const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta) {
  const long p = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS;
  if (p >= places) return;
  const long i = row[p];
  if (i < 0) return;
  const long s = p / c, r = p % c, begin = slice_ptr[s], end = slice_ptr[s + 1];
  REAL sum = 0;
  for (long k = begin + r; k < end; k += c) sum += product(data[k], x, AT(col[k]));
  y[AT(i)] = finish(sum, AT(i), alpha, beta, y0, y0_array, y0_value);
}

// dia: a row per unit, diagonal by diagonal.
__kernel void dia_spmv(const long m, const long n, const long diagonals_most, __global const INDEX* offsets,
                       __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                       const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long i = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS, diagonals = COUNTED(diagonals_most);
  if (i >= m) return;
  REAL sum = 0;
  for (long d = 0; d < diagonals; ++d) {
    const long c = i + offsets[d];
    if (c >= 0 && c < n) sum += product(data[d * m + i], x, AT(c));
  }
  y[AT(i)] = finish(sum, AT(i), alpha, beta, y0, y0_array, y0_value);
}

#ifdef ROWS
// dia on CPUs (VECTORS 1, -D ROWS=the native vector width): ROWS consecutive rows a work-item, in one vector,
// so that each diagonal's values and x are read as vectors; a diagonal whose columns for the block leave
// the matrix reads x element by element (its values there are 0). Each row's sum runs diagonal by diagonal,
// as dia_spmv's.
#define REAL_ROWS CAT(REAL, ROWS)
#define VLOAD_ROWS CAT(vload, ROWS)
#define VSTORE_ROWS CAT(vstore, ROWS)
__kernel void dia_spmv_rows(const long m, const long n, const long diagonals_most, __global const INDEX* offsets,
                            __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                            const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long first = get_global_id(0) * ROWS, j = 0, diagonals = COUNTED(diagonals_most);
  if (first >= m) return;
  if (first + ROWS > m) {  // the last rows, one by one
    for (long i = first; i < m; ++i) {
      REAL sum = 0;
      for (long d = 0; d < diagonals; ++d) {
        const long c = i + offsets[d];
        if (c >= 0 && c < n) sum += product(data[d * m + i], x, c);
      }
      y[i] = finish(sum, i, alpha, beta, y0, y0_array, y0_value);
    }
    return;
  }
  REAL_ROWS sum = (REAL_ROWS)(0);
  for (long d = 0; d < diagonals; ++d) {
    const long c = first + offsets[d];
    const REAL_ROWS v = VLOAD_ROWS(0, data + d * m + first);
    REAL_ROWS xs;
    if (c >= 0 && c <= n - ROWS) {  // (not c + ROWS <= n: an offset near the index's limit would wrap)
      xs = VLOAD_ROWS(0, x + c);
    } else {
      REAL edge[ROWS];
      for (int r = 0; r < ROWS; ++r) edge[r] = c + r >= 0 && c + r < n ? x[c + r] : (REAL)0;
      xs = VLOAD_ROWS(0, edge);
    }
    sum += select((REAL_ROWS)(0), v * xs, v != (REAL_ROWS)(0));
  }
  const REAL_ROWS old = y0_array ? VLOAD_ROWS(0, y0 + first) : (REAL_ROWS)(y0_value);
  VSTORE_ROWS(alpha * sum + beta * old, 0, y + first);
}

// ell on CPUs, as dia_spmv_rows: ROWS consecutive rows a work-item, each place's values read as a vector
// (column-major: neighbouring rows are neighbours), x gathered at their columns one by one.
__kernel void ell_spmv_rows(const long m, const long width_most, __global const INDEX* col, __global const REAL* data,
                            __global const REAL* x, __global REAL* y, __global const REAL* y0, const int y0_array,
                            const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long first = get_global_id(0) * ROWS, j = 0, width = COUNTED(width_most);
  if (first >= m) return;
  if (first + ROWS > m) {  // the last rows, one by one
    for (long i = first; i < m; ++i) {
      REAL sum = 0;
      for (long k = 0; k < width; ++k) sum += product(data[k * m + i], x, col[k * m + i]);
      y[i] = finish(sum, i, alpha, beta, y0, y0_array, y0_value);
    }
    return;
  }
  REAL_ROWS sum = (REAL_ROWS)(0);
  for (long k = 0; k < width; ++k) {
    const REAL_ROWS v = VLOAD_ROWS(0, data + k * m + first);
    REAL gathered[ROWS];
    // Only where the value is not 0: padding's columns are not checked when a value is read.
    for (int r = 0; r < ROWS; ++r) gathered[r] = data[k * m + first + r] != (REAL)0 ? x[col[k * m + first + r]] : (REAL)0;
    sum += select((REAL_ROWS)(0), v * VLOAD_ROWS(0, gathered), v != (REAL_ROWS)(0));
  }
  const REAL_ROWS old = y0_array ? VLOAD_ROWS(0, y0 + first) : (REAL_ROWS)(y0_value);
  VSTORE_ROWS(alpha * sum + beta * old, 0, y + first);
}
#endif

// bcsr: a row per unit, block by block over its super-row; a block's row r, column c at 1 x 4 unit
// u = r * w / 4 + c / 4 of the block, units of every block before the next unit.
__kernel void bcsr_spmv(const long m, const long n, const long blocks_most, const long h, const long w, __global const INDEX* row_ptr,
                        __global const INDEX* col, __global const REAL* data, __global const REAL* x, __global REAL* y,
                        __global const REAL* y0, const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long i = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS, blocks = COUNTED(blocks_most);
  if (i >= m) return;
  const long s = i / h, r = i % h;
  REAL sum = 0;
  for (long b = row_ptr[s]; b < row_ptr[s + 1]; ++b) {
    const long first = col[b];
    for (long c = 0; c < w; ++c)
      if (first + c < n) sum += product(data[((r * (w / 4) + c / 4) * blocks + b) * 4 + c % 4], x, AT(first + c));
  }
  y[AT(i)] = finish(sum, AT(i), alpha, beta, y0, y0_array, y0_value);
}

// bdia: a row per unit, band by band; a band's diagonals read x at consecutive columns.
__kernel void bdia_spmv(const long m, const long n, const long bands, __global const INDEX* offsets, __global const INDEX* band_ptr,
                        __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                        const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta) {
  const long i = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS;
  if (i >= m) return;
  REAL sum = 0;
  for (long b = 0; b < bands; ++b) {
    const long first = band_ptr[b], count = (band_ptr[b + 1] - first) / m, o = i + offsets[b];
    for (long d = 0; d < count; ++d)
      if (o + d >= 0 && o + d < n) sum += product(data[first + d * m + i], x, AT(o + d));
  }
  y[AT(i)] = finish(sum, AT(i), alpha, beta, y0, y0_array, y0_value);
}

// sbell (bell: one slice of every super-row, no slice_ptr): a super-row of BLOCK_H rows per unit, its sums
// in registers (the block's BLOCK_H x BLOCK_W are build options, so the loops over it unroll). Block k of super-row s * c + r is at place slice_ptr[s] + k * c + r; unit u (row r', columns
// 4 u' .. 4 u' + 3 of the block, u = r' * w / 4 + u') of the slice's place p at
// (slice_ptr[s] * h * w / 4 + u * places_s + p) * 4, so neighbouring units read neighbouring 1 x 4 units.
__kernel void sbell_spmv(const long m, const long n, const long super_rows, const long c, const long bell_places_most, __global const INDEX* slice_ptr, const int sliced, __global const INDEX* col,
                         __global const REAL* data, __global const REAL* x, __global REAL* y, __global const REAL* y0,
                         const int y0_array, const REAL y0_value, const REAL alpha, const REAL beta RUN_COUNT_ARG) {
  const long sr = get_global_id(0) / VECTORS, j = get_global_id(0) % VECTORS;
  if (sr >= super_rows) return;
  const long s = sr / c, r = sr % c;
  // A bell's places: its width (counted with -D RUN_COUNT) a super-row.
  const long bell_places = COUNTED(bell_places_most / super_rows) * super_rows;
  const long begin = sliced ? (long)slice_ptr[s] : 0, places = sliced ? (long)slice_ptr[s + 1] - begin : bell_places;
  __global const REAL* slice = data + begin * BLOCK_H * BLOCK_W;
  REAL sum[BLOCK_H];
  for (int q = 0; q < BLOCK_H; ++q) sum[q] = 0;
  for (long p = r; p < places; p += c) {
    const long first = col[begin + p];
    for (int u = 0; u < BLOCK_W / 4; ++u) {
      const long c0 = first + 4 * u;
      // x's four values, where they are in the matrix (a block may run past its last column).
      const REAL x0 = c0 < n ? x[AT(c0)] : 0, x1 = c0 + 1 < n ? x[AT(c0 + 1)] : 0, x2 = c0 + 2 < n ? x[AT(c0 + 2)] : 0,
                 x3 = c0 + 3 < n ? x[AT(c0 + 3)] : 0;
      for (int q = 0; q < BLOCK_H; ++q) {
        const long unit = q * (BLOCK_W / 4) + u;
        const VEC4 v = vload4(0, slice + (unit * places + p) * 4);
        // Only nonzero values multiply (padding and the columns past n are zeros).
        sum[q] += (v.s0 != (REAL)0 ? v.s0 * x0 : (REAL)0) + (v.s1 != (REAL)0 ? v.s1 * x1 : (REAL)0) +
                  (v.s2 != (REAL)0 ? v.s2 * x2 : (REAL)0) + (v.s3 != (REAL)0 ? v.s3 * x3 : (REAL)0);
      }
    }
  }
  for (int q = 0; q < BLOCK_H; ++q)
    if (sr * BLOCK_H + q < m) y[AT(sr * BLOCK_H + q)] = finish(sum[q], AT(sr * BLOCK_H + q), alpha, beta, y0, y0_array, y0_value);
}
