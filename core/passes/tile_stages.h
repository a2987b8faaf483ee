// tile_stages.h: the stages of a kernel in which an operation reads, around its element, a value an
// earlier operation of the same kernel computes (a stencil of a stencil, a window sum of products).
// No work-item can wait for another work-group's cells, so the kernel computes the grid tile by tile,
// each work-group its own tile, in stages separated by barriers: an operation's stage is the one after
// the stage of every value it reads around its element, and never before the stage of the operation
// before it (operations keep their order). Stage k computes its cells over the tile widened by its
// reach, so that the values later stages read around their cells are at hand (cells near the tile's
// edge are computed again by the neighbouring tile's work-group); a value one stage writes and a later
// one reads lives in a local-memory tile of the widened size of the first stage that writes it.
//
// Used twice: the kernel builder asks what a candidate would cost in local memory, and the promote
// pass records the stages the generator writes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "passes/planned_op.h"

namespace fugue {

class TileStages {
 public:
  // One access of an operation to a value of the kernel's grid.
  struct Use {
    std::string symbol;
    bool write = false;
    bool around = false;                   // a read around the element, this far:
    int64_t halo_rows = 0, halo_cols = 0;
  };

  // Appends the kernel's next operation; returns its stage.
  int add(const std::vector<Use>& uses);

  int stages() const { return static_cast<int>(stage_of_.empty() ? 0 : stage_of_.back() + 1); }
  const std::vector<int>& stage_of() const { return stage_of_; }
  // How far beyond the tile each stage computes (rows, columns).
  std::vector<std::pair<int64_t, int64_t>> reach() const;
  // The values that cross stages, each with the stage whose widened tile holds it.
  const std::map<std::string, int>& tile_values() const { return tile_values_; }
  // Local memory the tiles take, for tiles of tile_rows x tile_cols cells; element_bytes(symbol).
  template <class ElementBytes>
  uint64_t local_bytes(int64_t tile_rows, int64_t tile_cols, ElementBytes element_bytes) const {
    const auto r = reach();
    uint64_t bytes = 0;
    for (const auto& [s, stage] : tile_values_)
      bytes += static_cast<uint64_t>((tile_rows + 2 * r[stage].first) * (tile_cols + 2 * r[stage].second)) * element_bytes(s);
    return bytes;
  }

 private:
  struct Crossing {
    int from, to;
    int64_t halo_rows, halo_cols;
  };
  std::vector<int> stage_of_;
  std::map<std::string, int> first_write_, last_write_;  // stage of each value's first and latest write
  std::map<std::string, int> tile_values_;
  std::vector<Crossing> crossings_;  // reads of a value in a later stage than the one that wrote it
};

// The accesses of operation p that the stages see: its array operands, reads of 2-D arrays beyond the
// element as reads around it with their halo.
std::vector<TileStages::Use> stage_uses(const Program& program, const PlannedOp& p);

}  // namespace fugue
