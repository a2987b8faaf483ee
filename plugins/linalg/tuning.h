// tuning.h: which plan serves a matrix of which order on which device, as a typed table (CLBlast's
// database is the model): one row per kind of device, matched by type, vendor and name, the most
// specific first, each with the measurements behind it. Every operation reads its plan limits here, so
// operations on the same matrices choose the same teams (and fuse) unless a grid's blocks ask for a
// larger team (grid_of); `fugue explain` shows the plan each
// chose, why, and the table row. FUGUE_LINALG_TUNING overrides a row for experiments and tests:
// "row=gpu" takes another row, "register_order=16,row_order=16,grid_order=64,team_max=128" sets fields
// (tile_order=0 turns gemm's tiles off, mma_order=0 its tensor cores, vector_rows=0 its vectors, loop_order=0 the loop plans,
// blocked_order=0, lu_blocked_order=0 and qr_blocked_order=0 the blocked ones, lanes_order=0 the lanes).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

struct Tuning {
  std::string row;         // the table row that matched ("NVIDIA GPU", "CPU", ...)
  int64_t register_order;  // one matrix per work-item, every loop unrolled, up to this order
  int64_t row_order;       // potrf, getrf, posv, gesv and gesv_nopiv: a row per work-item up to this order
  int64_t team_max;        // the largest team of work-items sharing a matrix (a power of two)
  int64_t grid_order;      // potrf, getrf: a grid of work-items, each a block of the matrix in registers, up to this order
  int64_t grid_elements;   // the most elements of the matrix a work-item of a grid holds
  int64_t grid_rows;       // a grid's rows of work-items (P, at most the team), 0: as many as its columns or twice as many
  int64_t tile_order;      // gemm: tiles staged in local memory (gemm_tiles.h) where m and n are at least this, 0: never
  int64_t tile_block;      // gemm's tiles: the most rows (and columns) of C a work-item holds
  int64_t tile_depth;      // gemm's tiles: 4-byte values of the k axis staged at a time (half as many wider ones; fewer where local memory is short)
  bool tile_prefetch;      // gemm's tiles: the next chunk read into registers while one is multiplied
  int64_t vector_rows;     // gemm in vectors (gemm_vectors.h): rows of C per block of one native vector, 0: never
  int64_t loop_order;      // potrf, getrf, geqrf, posv, gesv, gels, gebrd: one matrix per work-item in local memory, its loops kept (not unrolled), above register_order up to this order (0: never)
  int64_t blocked_order;     // potrf: kernels over the whole batch, panel by panel (blocked_cholesky.h), above this order (0: never)
  int64_t blocked_panel;     // the blocked plans: columns a panel (8, 16, 32 or 64; fewer where local memory or registers are short)
  int64_t lu_blocked_order;  // getrf: the same (blocked_lu.h) above this order (0: never)
  int64_t qr_blocked_order;  // geqrf: the same (blocked_qr.h) above this order (0: never)
  int64_t lu_wide_row_order;  // getrf of values of 8 bytes or more (f64, c64, c128): a row per work-item up to this order where it is above row_order (0: row_order)
  int64_t mma_order;          // gemm of f64: on the tensor cores (gemm_mma.h) where m and n are at least this and the device has them, 0: never
  int64_t mma_panel;          // the tensor cores' largest panel side: 128, 64 or 32
  int64_t spread_tiles;       // gemm of fewer entries than compute units: C's tiles spread over work-groups (gemm_spread.h) where an entry has at least this many of 64 x 64, 0: never
  int64_t spread_vectors;     // gemm of one product in vectors (CPUs): its blocks spread over work-groups (gemm_spread.h) where m n k is at least this many times 2^20, 0: never
  int64_t qr_column_order;    // geqrf and gels: a column per work-item in registers (householder.h's column_householder) above register_order up to this order for real values, half of it for complex ones (at most 64), 0: never
  int64_t lanes_order;        // potrf, getrf and geqrf of real values alone on CPUs: a native vector's width of matrices a work-item side by side (lanes.h) up to this order (at most 16), 0: never
};

// The row for the call's device (plan and emit: the device is set), with FUGUE_LINALG_TUNING applied;
// throws InvalidArgument naming the variable when it does not parse.
Tuning tuning_of(const sdk::Call& call);
// getrf's view of the row for values of `value_bytes`: row_order raised to lu_wide_row_order for values of
// 8 bytes or more, so that every choice and explain's text read one limit.
Tuning lu_tuning(Tuning t, int64_t value_bytes);

// Work-items sharing a matrix of order n: one up to the row's register_order (the matrix in its
// registers), else one per row, rounded up to a power of two, at most team_max.
int64_t team_size(const Tuning& t, int64_t n);
// Whether potrf and getrf keep a row in each work-item's registers (a team, n up to row_order); posv,
// gesv and gesv_nopiv too, with limits of their own on B's width.
inline bool row_plan(const Tuning& t, int64_t n) { return n > t.register_order && n <= t.row_order && n > t.loop_order; }
// The order up to which geqrf and gels give each work-item of a team a column in registers (householder.h's
// column_householder): qr_column_order for real values, half of it for complex ones, whose arithmetic
// holds twice the registers (on an H200 columns of c64 lost to the teams from order 40, of c128 by 2x);
// never above team_max, as every column needs its work-item.
inline int64_t column_order(const Tuning& t, bool complex) {
  return std::min(complex ? t.qr_column_order / 2 : t.qr_column_order, t.team_max);
}
inline bool column_plan(const Tuning& t, int64_t n, bool complex) {
  return n > t.register_order && n <= column_order(t, complex) && n > t.loop_order;
}
// Whether potrf and getrf take one matrix per work-item with loops (a CPU's core runs one work-item's
// loops in its vector units; teams pay a pass over the work-group at every barrier there).
inline bool loop_plan(const Tuning& t, int64_t n) { return n > t.register_order && n <= t.loop_order; }

// Whether a factorization of order n whose blocked plan starts above `limit` (blocked_order for potrf,
// lu_blocked_order for getrf, qr_blocked_order for geqrf; 0: never) runs blocked: above it, or above register_order where the loop
// plan would take it but its matrix does not fit in local memory (`loop_fits`).
inline bool blocked_plan(int64_t limit, const Tuning& t, int64_t n, bool loop_fits) {
  return limit > 0 && n > t.register_order && (n > limit || (loop_plan(t, n) && !loop_fits));
}

// A P x Q grid of work-items sharing a matrix of order n, work-item (p, q) holding the elements (i, j)
// with i % P == p and j % Q == q in its registers (seed 000's 2-D cyclic layout), lane p * Q + q: P
// rows of Q consecutive lanes, so that a row of the matrix is read by consecutive lanes.
struct Grid {
  int64_t rows, columns;  // P and Q
  int64_t team() const { return rows * columns; }
  int64_t block_rows(int64_t n) const { return (n + rows - 1) / rows; }  // the rows of the matrix a work-item holds
  int64_t block_columns(int64_t n) const { return (n + columns - 1) / columns; }
};
// Whether potrf and getrf factor a matrix of order n in a grid: above row_order, up to grid_order, where
// a grid of 2 to team_max work-items, within the device's largest work-group, holds it in grid_elements
// per work-item.
bool grid_plan(const Tuning& t, int64_t n, int64_t value_bytes, uint64_t max_work_group);
// The grid for order n and values of `value_bytes`: the team team_size(t, n) when its blocks are at
// most grid_elements (so that potrs, a team of that size, joins potrf's kernel), else the smallest power
// of two that gives such blocks; Q the largest power of two whose square is at most the team (or team /
// grid_rows). grid_elements counts 4-byte values: wider ones take fewer where the team stays within
// team_max (H100, 2,000 f64 matrices of 64: potrf 0.26 against 0.35 ms, getrf 0.71 against 0.89 in blocks
// of 32 rather than 64; of 128, the team of 512 that blocks of 32 need is over team_max).
Grid grid_of(const Tuning& t, int64_t n, int64_t value_bytes);

// The text `fugue explain` shows for a plan (fugue_plan.variant): registers, rows (where the operation
// `has_rows`), a grid (where `grid` is not null) or a team, the order that decided it against the row's
// limits, `detail` (where the working matrix lives, ...) and the row.
// A grid's blocks are those of a matrix of `rows` x `columns` (0: the order).
std::string variant_text(const Tuning& t, int64_t order, int64_t team, bool has_rows, const std::string& detail,
                         const Grid* grid = nullptr, int64_t rows = 0, int64_t columns = 0);
// The same for a loop plan (loop_plan): one work-item per matrix, `detail` saying how it works.
std::string loop_variant_text(const Tuning& t, int64_t order, const std::string& detail);
// The same for the columns in registers (column_plan): `what` each work-item holds, `detail` what follows.
std::string column_variant_text(const Tuning& t, int64_t order, int64_t team, bool complex, const std::string& what,
                                const std::string& detail);

}  // namespace fugue::linalg
