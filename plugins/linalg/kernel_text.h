// kernel_text.h: how the linalg operations write OpenCL C: code patterns with named holes, and the
// loops a team of work-items shares.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "fugue/sdk.hpp"
#include "tuning.h"

namespace fugue::linalg {

// `pattern` with every $name (letters, digits, underscores after a '$') replaced by vars[name];
// throws std::logic_error naming a hole `vars` does not fill.
std::string fill(const std::string& pattern, const std::map<std::string, std::string>& vars);

// A loop that shares `count` indices among a team of `team` work-items (this one `lane`): `index`
// (declared const int) takes lane, lane + team, ... and `body` runs where index < bound (an OpenCL C
// expression, at most count). Every work-item runs the same ceil(count / team) trips: loops whose trip
// counts differed between the work-items of a group, between barriers, were miscompiled by PoCL.
// `trip` names the loop counter. One trip takes no loop (PoCL miscompiled one-trip loops too).
std::string team_loop(const std::string& trip, const std::string& lane, int64_t team, const std::string& index,
                      int64_t count, const std::string& bound, const std::string& body);

// Code that fills the registers into[offset] .. into[offset + columns - 1] with row `row` (an OpenCL C
// expression, a work-item's lane in the rows plans) of the operand's row-major rows x columns matrix, and
// with `zero` where row is past the matrix (the read clamped to its last row, so that it stays inside).
std::string row_into_registers(const sdk::Emitter& em, uint32_t operand, const std::string& row, int64_t rows, int64_t columns,
                               const std::string& into, int64_t offset, const std::string& zero);

// How a grid of work-items (tuning.h's Grid) names its part of an m x n matrix in a kernel: work-item
// (p, q) of lane p * Q + q holds element (row(bi), col(bj)) = (p + bi P, q + bj Q) as el(bi, bj), for
// bi < BR, bj < BC (rows and columns past the matrix included: callers keep them out of what is stored).
struct GridCode {
  GridCode(const sdk::Emitter& em, const Grid& g, int64_t m, int64_t n);
  int64_t P, Q, BR, BC;
  std::string p, q, a;
  std::string row(int64_t bi) const { return p + "_" + std::to_string(bi); }
  std::string col(int64_t bj) const { return q + "_" + std::to_string(bj); }
  std::string el(int64_t bi, int64_t bj) const { return a + "[" + std::to_string(bi * BC + bj) + "]"; }
  // Declares p, q, every row(bi) and col(bj), and the array a of `type` (not filled).
  std::string declarations(const std::string& lane, const std::string& type) const;
};

}  // namespace fugue::linalg
