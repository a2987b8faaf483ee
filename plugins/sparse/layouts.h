// layouts.h: the sparse kinds' storage, as seed 003's Figs 6.2-6.10 draw it for
//
//       | 3 7 0 0 |
//   B = | 0 4 8 0 |   (4 by 4, 9 entries)
//       | 1 0 5 9 |
//       | 0 2 0 6 |
//
// csr   row_ptr [rows + 1], col [nnz], data [nnz]: row i's entries at row_ptr[i] .. row_ptr[i+1]-1, by
//       column.       B: row_ptr = [0 2 4 7 9], col = [0 1, 1 2, 0 2 3, 1 3], data = [3 7, 4 8, 1 5 9, 2 6]
// coo   row [nnz], col [nnz], data [nnz], by row then column.
//                     B: row = [0 0, 1 1, 2 2 2, 3 3], col and data as csr
// ell   col [width * rows], data [width * rows]: the k-th entry of row i at k * rows + i (column-major,
//       so consecutive rows are consecutive in memory); shorter rows padded with column 0, value 0.
//                     B: col = [0 1 0 1, 1 2 2 3, 0 0 3 0], data = [3 4 1 2, 7 8 5 6, 0 0 9 0]
// sell  SELL-C-sigma: slice_ptr [slices + 1], row [slices * C], col [stored], data [stored]. Rows are
//       sorted by length (longest first, stably) within windows of sigma rows (sigma = 1: not sorted);
//       row[p] is the matrix row stored at place p (-1 for the padding of the last slice). Slice s holds
//       places s*C .. s*C+C-1 as an ell of its own width w_s = (slice_ptr[s+1] - slice_ptr[s]) / C: the
//       k-th entry of place s*C + r at slice_ptr[s] + k*C + r.
//                     B, C = 2, sigma = 1: slice_ptr = [0 4 10], row = [0 1 2 3],
//                     col = [0 1, 1 2; 0 1, 2 3, 3 0], data = [3 4, 7 8; 1 2, 5 6, 9 0]
//       (the seed's figure prints the second slice's col as [0 2, 1 3, 3 0], which its data contradict.)
// dia   offsets [diagonals], data [diagonals * rows]: diagonal d (A[i, i + offsets[d]], offsets
//       ascending) at d * rows + i, zero where i + offsets[d] falls outside the matrix.
//                     B: offsets = [-2 0 1], data = [0 0 1 2, 3 4 5 6, 7 8 9 0]
// hyb   an ell of width w (ell_col, ell_data [w * rows], column-major) holding each row's first w entries,
//       and a coo (coo_row, coo_col, coo_data [nnz]) holding the rest (Bell and Garland's HYB: w is the
//       largest width that at least max(4096, rows / 3) rows fill, unless the declaration gives "width").
//                     B, w = 2: ell_col = [0 1 0 1, 1 2 2 3], ell_data = [3 4 1 2, 7 8 5 6],
//                     coo_row = [2], coo_col = [3], coo_data = [9]
// cocktail  seed 003's cocktail format, A = A_dia + A_blocks + A_flat + A_rest: the entries on dense
//       diagonals in a dia, those in dense h x w blocks in a sbell, each remaining row's first entries (up to
//       a width) in a sell, and the rest in a csr of the rows that hold any (any part may hold nothing).
//       Its parts are theirs one after another, prefixed: dia_offsets, dia_data, sbell_slice_ptr,
//       sbell_col, sbell_data, sell_slice_ptr, sell_row, sell_col, sell_data, then csr_rows (the csr's
//       rows, ascending: its row r is the matrix's row csr_rows[r]), csr_row_ptr [csr rows + 1], csr_col,
//       csr_data. A diagonal is dense where it holds at least diagonal_fill of its length, a block where
//       it holds block_fill of h x w.
//                     B, no diagonal (all are full: a dia would take every entry), 2 x 4 blocks filled
//                     0.6, slices of 2, width 1: dia offsets = [], data = []; sbell slice_ptr = [0 2],
//                     col = [0 0], data = [0 0 0 0, 1 0 5 9, 0 0 0 0, 0 2 0 6] (super-row 0 padding);
//                     sell slice_ptr = [0 2 2], row = [0 1 2 3], col = [0 1], data = [3 4];
//                     csr rows = [0 1], row_ptr = [0 1 2], col = [1 2], data = [7 8]
// bcsr  blocks of h x w (h 1, 2, 4 or 8; w 4 or 8; "block": [h, w]) aligned to multiples of h and w: row_ptr
//       [super-rows + 1] over the blocks of each h rows, col [blocks] (each block's first column), data
//       [blocks * h * w] in 1 x 4 units, unit u of every block before unit u + 1 (u = r * w / 4 + c / 4 for
//       the block's row r and column c; element c % 4 of it), so neighbouring blocks' units are neighbours.
//                     B, 2 x 4: row_ptr = [0 1 2], col = [0 0],
//                     data = [3 7 0 0, 1 0 5 9, 0 4 8 0, 0 2 0 6]
// bdia  bands of consecutive diagonals (Fig 6.3): offsets [bands] (each band's first diagonal), band_ptr
//       [bands + 1] (where each band starts in data), data [diagonals * rows] as dia's: diagonal j of band
//       b (A[i, i + offsets[b] + j]) at band_ptr[b] + j * rows + i. A band is a longest run of diagonals
//       that hold entries.
//                     B: offsets = [-2 0], band_ptr = [0 4 12], data = [0 0 1 2, 3 4 5 6, 7 8 9 0]
// bell  blocks of h x w as bcsr's (Fig 6.8), each super-row padded to the most blocks any holds (its
//       width W; padding blocks are column 0, values 0): col [W * super-rows], column-major as ell's
//       (block k of super-row s at k * super-rows + s), data [W * super-rows * h * w] in 1 x 4 units, unit u
//       of every place before unit u + 1 (unit u of place p at (u * W * super-rows + p) * 4).
//                     B, 2 x 4: col = [0 0], data = [3 7 0 0, 1 0 5 9, 0 4 8 0, 0 2 0 6]
//                     the seed's C (4 x 8, dense), 2 x 4: col = [0 0, 4 4], data: unit 0 of the blocks
//                     (0,0) (2,0) (0,4) (2,4), then their unit 1
// sbell slices of C super-rows (`"slice"`, default 32), each a bell of its own width W_s (Fig 6.9; rows are
//       not reordered): slice_ptr [slices + 1] (where each slice's blocks start in col), col [blocks],
//       data [blocks * h * w]; block k of super-row s * C + r at slice_ptr[s] + k * C + r, and its unit u at
//       (slice_ptr[s] * h * w / 4 + u * W_s * C + k * C + r) * 4: each slice's units one after another.
//                     B, 1 x 4, C = 2: slice_ptr = [0 2 4], col = [0 0, 0 0],
//                     data = [3 7 0 0, 0 4 8 0; 1 0 5 9, 0 2 0 6]
//                     the seed's C, 1 x 4, C = 2: slice_ptr = [0 4 8], col = [0 0 4 4, 0 0 4 4]
//
// Values are f32 or f64; indices i32, or i64 where a count or extent needs it. In ell, sell, dia and the
// block layouts a zero value is padding; every layout's y = A x adds only its nonzero values (so an infinite x_j next to
// a padding zero stays out of y).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <fugue/sdk.hpp>

#include "coordinates.h"

namespace fugue::sparse {

enum class Layout { Csr, Coo, Ell, Sell, Dia, Hyb, Bcsr, Bdia, Bell, Sbell, Cocktail };

const char* layout_name(Layout layout);
std::optional<Layout> layout_named(const std::string& name);
const std::vector<Layout>& every_layout();
// Its parts' names, in order.
const std::vector<std::string>& part_names(Layout layout);

// How a layout cuts a matrix, where it has a choice (the declaration's keys): sell's slice height and
// sorting window (sbell: super-rows a slice), hyb's width (-1: Bell and Garland's), the block layouts' block.
// A cocktail's split: its dia takes the diagonals filled diagonal_fill or more, its sbell (block, slices of
// block_slice super-rows) the blocks filled block_fill or more, its sell (slice, sigma) each row's first
// `width` entries left (-1: all), its csr the rest; a fill above 1 takes nothing.
struct Cut {
  int64_t slice = 32, sigma = 1;
  int64_t width = -1;
  int64_t block_rows = 2, block_cols = 4;
  double diagonal_fill = 2, block_fill = 2;
  int64_t block_slice = 32;
};

// What fixes the type of a value of a layout.
struct Facts {
  Layout layout = Layout::Csr;
  fugue_dtype dtype = FUGUE_DTYPE_F64;
  fugue_dtype index = FUGUE_DTYPE_I32;
  int64_t rows = 0, cols = 0;
  int64_t nnz = 0;        // csr, coo: entries; hyb: its coo part's
  // The layout's run count (run_count below: csr's and coo's entries, ell's width, ...) is counted at run
  // time (ABI 2.21) and the fact holds its capacity, except where a reference sees the value: its parts
  // are then as long as the count, and so is the fact.
  bool counted = false;
  int64_t width = 0;      // ell: the longest row; hyb: its ell part's width; bell: blocks a super-row
  int64_t slice = 32;     // sell: C, the slice height; sbell: super-rows a slice
  int64_t sigma = 1;      // sell: the sorting window
  int64_t stored = 0;     // sell: places in col and data
  int64_t diagonals = 0;  // dia, bdia
  int64_t bands = 0;      // bdia
  int64_t block_rows = 2, block_cols = 4;  // bcsr, bell, sbell
  int64_t blocks = 0;                      // bcsr; sbell: places for blocks in col (padding too)
  // cocktail: its dia, sbell, sell and csr (kCocktailParts), the split that made it (its type's metadata
  // holds it) and whether the declaration fixed that split rather than leaving it to the device's choice.
  std::vector<Facts> components;
  Cut split;
  bool split_declared = false;
};

// A cocktail's parts, in order; its csr holds only the rows its entries are in (their list is the
// cocktail's part kCocktailRowsPart, csr_rows), so that its kernels never walk the rows it leaves empty.
inline constexpr Layout kCocktailParts[] = {Layout::Dia, Layout::Sbell, Layout::Sell, Layout::Csr};
inline constexpr uint32_t kCocktailRowsPart = 9;

// The type (dtype, shape [rows, cols], parts) of a value with these facts.
sdk::Declared declared_type(const Facts& facts);
// The facts of a value's type (its kind's name and parts' shapes; sell's C from them).
Facts facts_of(const fugue_type& type);
// The facts of `m` stored in `layout`, cut as `cut` says; the index dtype is `index`, or where that is
// FUGUE_DTYPE_NONE, i32 unless a count needs i64. Throws InvalidArgument when the layout would hold far
// more places than entries (ell, sell, dia, bdia and the block layouts pad; not with `limit_padding` false:
// rows of a value already held), or `index` cannot count them.
Facts facts_for(const Coordinates& m, Layout layout, fugue_dtype dtype, fugue_dtype index, const Cut& cut = {},
                bool limit_padding = true);
// The blocks of h x w (aligned to multiples of h and w) each super-row of `m` touches: one pass over its
// entries, from which block_facts gives bcsr's, bell's and sbell's facts for that block (the automatic
// choice weighs every block size so).
std::vector<int64_t> blocks_per_super_row(const Coordinates& m, int64_t h, int64_t w);
Facts block_facts(const Coordinates& m, const std::vector<int64_t>& counts, Layout layout, fugue_dtype dtype, fugue_dtype index,
                  const Cut& cut, bool limit_padding = true);
// The count a declaration gives for a layout's type (nnz, width, stored, diagonals or blocks; hyb: its width),
// and its key ("nnz", "width", "stored", "diagonals", "blocks").
int64_t declared_count(const Facts& facts);
const char* count_key(Layout layout);
// Counts left to the run (ABI 2.21: a declaration's {"capacity": n}): the layouts that take one (every
// one but bdia, whose bands and diagonals are two counts, and cocktail, whose parts have one each), the
// count (the entries of a csr, a coo and hyb's coo part; ell's and bell's width; sell's stored places;
// dia's diagonals; bcsr's and sbell's blocks) and its key in a declaration. The parts that hold the count
// have it as their first axis: [width, rows] for ell's col and data, [diagonals, rows] for dia's data,
// [blocks, h * w] for bcsr's and sbell's data, [width, super-rows (times h * w)] for bell's parts. The
// value is stored as one declared with the count, in the parts' first places.
bool takes_run_count(Layout layout);
int64_t run_count(const Facts& facts);
void set_run_count(Facts& facts, int64_t count);
const char* run_count_key(Layout layout);
// A part's places: the product of its extents.
int64_t places_in(const sdk::PartType& part);
// The block layouts' super-rows: groups of block_rows rows, the last one short where they do not divide.
int64_t super_rows(const Facts& facts);
// a / b rounded up (a >= 0, b > 0): sell's slices, the block layouts' super-rows.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The parts of `m` stored with `facts`, each as numbers (indices are exact up to 2^53).
std::vector<std::vector<double>> stored_parts(const Facts& facts, const Coordinates& m);
// Fills the parts of `value` (allocated with declared_type(facts)) with `m`.
void store(const Facts& facts, const Coordinates& m, const sdk::HostView& value);
// The entries `value` holds (padding left out), sorted; InvalidArgument when its parts are not a
// well-formed value of the layout (an index out of range, row pointers that go back, ...).
Coordinates entries_of(const Facts& facts, const sdk::HostView& value);
// Rows [first, first + count) of `value` as a matrix of its own (count rows, the same columns) in the
// same layout, cut the same way (sell's slice height, hyb's width, the blocks) and with the same index
// dtype: its facts and entries. How a split across devices gives each device its rows.
std::pair<Facts, Coordinates> rows_of(const Facts& facts, const sdk::HostView& value, int64_t first, int64_t count);

}  // namespace fugue::sparse
