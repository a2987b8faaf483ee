// tuning.h: which plan serves a matrix of which order on which device, as a typed table (CLBlast's
// database is the model): one row per kind of device, matched by type, vendor and name, the most
// specific first, each with the measurements behind it. Every operation reads its plan limits here, so
// operations on the same matrices choose the same teams (and fuse); `fugue explain` shows the plan each
// chose, why, and the table row. FUGUE_LINALG_TUNING overrides a row for experiments and tests:
// "row=gpu" takes another row, "register_order=16,row_order=16,team_max=128" sets fields.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

struct Tuning {
  std::string row;         // the table row that matched ("NVIDIA GPU", "CPU", ...)
  int64_t register_order;  // one matrix per work-item, every loop unrolled, up to this order
  int64_t row_order;       // potrf and getrf: a row per work-item up to this order
  int64_t team_max;        // the largest team of work-items sharing a matrix (a power of two)
};

// The row for the call's device (plan and emit: the device is set), with FUGUE_LINALG_TUNING applied;
// throws InvalidArgument naming the variable when it does not parse.
Tuning tuning_of(const sdk::Call& call);

// Work-items sharing a matrix of order n: one up to the row's register_order (the matrix in its
// registers), else one per row, rounded up to a power of two, at most team_max.
int64_t team_size(const Tuning& t, int64_t n);
// Whether potrf and getrf keep a row in each work-item's registers (a team, n up to row_order).
inline bool row_plan(const Tuning& t, int64_t n) { return n > t.register_order && n <= t.row_order; }

// The text `fugue explain` shows for a plan (fugue_plan.variant): registers, rows (where the operation
// `has_rows`) or a team, the order that decided it against the row's limits, `detail` (where the working
// matrix lives, ...) and the row.
std::string variant_text(const Tuning& t, int64_t order, int64_t team, bool has_rows, const std::string& detail);

}  // namespace fugue::linalg
