// cholesky.h: the Cholesky factorization A = L L^H (L L^T for reals) written for one work-item in
// registers and for a team of work-items, shared by potrf (the factor itself) and posv (a solve after
// it, the factor never leaving the kernel). The diagonal's real part is what is tested and rooted.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "scalars.h"

namespace fugue::linalg {

// Code that factors the n x n private array `f` (row-major, its lower triangle filled; every loop
// unrolled, so every index is a constant) into L in place, and declares `int info`: 0, or k when the
// leading minor of order k is not positive definite (the columns from k on are then left as they were).
// Column k is scaled by 1 / L(k, k), one division a step, as LAPACK's potf2 scales it.
std::string register_cholesky(const Scalars& sc, int64_t n, const std::string& f, const std::string& info);

// The same for em's team, on an n x n matrix W reached through `read`/`write` (flat row-major index ->
// an rvalue / lvalue), its lower triangle filled and a barrier passed before the code, which ends with a
// barrier. Right-looking, each work-item owning columns (lane, lane + T, ...), one barrier a step: at
// step k every work-item reads the pivot alike (so the team decides alike) and updates its columns right
// of k from column k, scaled as it is read; column k's owner scales it in place only at the next step,
// when nobody reads it. Loops around barriers run the same trip count in every work-item (a team that
// failed goes on doing nothing: its neighbours share the barriers).
std::string team_cholesky(const sdk::Emitter& em, const Scalars& sc, int64_t n,
                          const std::function<std::string(const std::string&)>& read,
                          const std::function<std::string(const std::string&)>& write, const std::string& info);

// The same for em's team with a row of the matrix in each work-item's registers: `a[n]` holds row `row`
// (the work-item's local id) of the lower triangle, zeros right of the diagonal and in rows past n, which
// stay idle. At step k every row leaves its element of column k in local memory, and every row below k
// updates itself from that column (two barriers a step; the code ends with one). The loops are unrolled,
// so every register index is a constant. Declares `int info` as above; the rows' elements from column
// info - 1 on are then left as they were (partly updated).
std::string rows_cholesky(const sdk::Emitter& em, const Scalars& sc, int64_t n, const std::string& a, const std::string& row,
                          const std::string& info);

// The same for one work-item with its loops kept (a CPU's loop plan: tuning.h's loop_plan) on U = L^H
// in a local array reached as U(row, col) (an lvalue), filled first from A (A(row, col) an rvalue of A's
// element): U's row r from A's row r (upper), or U's column r from A's row r conjugated (lower: A's lower
// triangle), so that A is read along its rows. Factored right-looking in its upper form, so that every
// update runs along a row, consecutive values the compiler turns into vector operations (L's columns
// would be a stride of n apart), in blocks of rows: the rows below a block are updated by all of its rows
// at once, each of their elements read and written once a block. Declares `int info` as above; the rows
// from info - 1 on then hold partial updates, which no caller keeps. `name` makes the temporaries' names
// (em.name). potrf's lower factors of real values take a plan of their own (potrf.cpp's by_rows_of_l).
std::string loop_cholesky(const Scalars& sc, int64_t n, bool lower, const std::function<std::string(const std::string&, const std::string&)>& A,
                          const std::function<std::string(const std::string&, const std::string&)>& U,
                          const std::function<std::string(const char*)>& name, const std::string& info);

// The reference: factors f (row-major n x n, its lower triangle filled) into L with A = L L^H in place,
// in extended precision; returns info (0, or the order of the first leading minor not positive definite,
// the columns from there on left as they were).
int64_t cholesky_reference(std::vector<Complex>& f, int64_t n);
// The reference solve of L L^H y = b in place (y holds b), L the lower triangle of f as above.
void cholesky_solve_reference(const std::vector<Complex>& f, int64_t n, std::vector<Complex>& y);

}  // namespace fugue::linalg
