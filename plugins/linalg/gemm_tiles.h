// gemm_tiles.h: the tiled body of a product C = op(A) op(B) for one matrix per team (a work-group), the
// plan of linalg.gemm for larger matrices: C in panels of PM x PN, a TP x TQ grid of work-items each
// holding RR x CC elements of the panel in registers, cyclically (rows p + TP r, columns q + TQ c, so
// that neighbouring work-items read neighbouring local words and write neighbouring columns of C), the
// k axis staged KC at a time in local memory (op(A)'s rows of the panel, op(B)'s columns), each value
// staged read RR or CC times from registers' worth of loads: a multiply-add per local load RR CC / (RR +
// CC) times. Reads and writes go through the caller's expressions, so fused producers and consumers join.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "fugue/sdk.hpp"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

struct TileShape {
  int64_t tp, tq;    // the grid of work-items (TP rows of TQ)
  int64_t rr, cc;    // the elements of a panel each holds: RR rows by CC columns
  int64_t depth;     // KC: values of the k axis staged at a time
  bool prefetch;     // the next chunk read into registers while this one is multiplied
  int64_t team() const { return tp * tq; }
  int64_t panel_rows() const { return tp * rr; }
  int64_t panel_columns() const { return tq * cc; }
  // Local memory: op(A)'s KC x PM and op(B)'s KC x PN, each row padded by one value.
  uint64_t local_bytes(int64_t value_bytes) const {
    return static_cast<uint64_t>(depth * (panel_rows() + 1 + panel_columns() + 1) * value_bytes);
  }
};

// Whether linalg.gemm multiplies an m x n x k product in tiles on this device (the table's
// gemm_tile_order: min(m, n) at least it; a team within the device's work-groups; the stages within its
// local memory), and the shape it takes.
bool tile_plan(const Tuning& t, int64_t m, int64_t n, int64_t value_bytes, const fugue_device_desc& device);
TileShape tile_shape(const Tuning& t, int64_t m, int64_t n, int64_t value_bytes, const fugue_device_desc& device);

// What the tiled body reads and writes: op(A)(i, k) and op(B)(k, j) as OpenCL C expressions (called
// only inside the product's bounds), and the statement storing `value` as C(i, j). `a_k_contiguous`
// says whether op(A)'s k axis is contiguous in memory (A not transposed), `b_j_contiguous` whether
// op(B)'s j axis is (B not transposed): the stages walk memory in that order.
struct TileOperands {
  int64_t m, n, k;
  bool a_k_contiguous, b_j_contiguous;
  std::function<std::string(const std::string& i, const std::string& k)> a_at, b_at;
  std::function<std::string(const std::string& i, const std::string& j, const std::string& value)> store;
};

// `code` then `body` over a product's panels of pm x pn in turn (m x n in all), every work-item running
// every trip (barriers inside): `body` sees its panel's first row and column as i0 and j0 (names).
std::string panels_in_turn(const std::string& code, const std::string& body, int64_t m, int64_t n, int64_t pm, int64_t pn,
                           const std::string& panel, const std::string& i0, const std::string& j0);

// The body: every work-item of the team runs it (barriers inside); `lane` its place in the team.
std::string tiled_product(const sdk::Emitter& em, const Scalars& sc, const TileShape& shape, const TileOperands& ops,
                          const std::string& lane);

}  // namespace fugue::linalg
