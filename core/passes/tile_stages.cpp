#include "passes/tile_stages.h"

#include <algorithm>

namespace fugue {

int TileStages::add(const std::vector<Use>& uses) {
  int stage = stage_of_.empty() ? 0 : stage_of_.back();
  for (const Use& u : uses) {
    if (u.write) continue;
    auto w = last_write_.find(u.symbol);
    if (w == last_write_.end()) continue;  // read from global memory
    stage = std::max(stage, w->second + (u.around ? 1 : 0));
  }
  for (const Use& u : uses) {
    if (u.write) continue;
    auto w = last_write_.find(u.symbol);
    if (w == last_write_.end() || w->second == stage) continue;  // global memory, or a register of this stage
    crossings_.push_back({w->second, stage, u.halo_rows, u.halo_cols});
    tile_values_[u.symbol] = first_write_.at(u.symbol);
  }
  for (const Use& u : uses)
    if (u.write) {
      first_write_.try_emplace(u.symbol, stage);
      last_write_[u.symbol] = stage;
    }
  stage_of_.push_back(stage);
  return stage;
}

std::vector<std::pair<int64_t, int64_t>> TileStages::reach() const {
  std::vector<std::pair<int64_t, int64_t>> r(static_cast<size_t>(std::max(stages(), 1)), {0, 0});
  for (int k = stages() - 2; k >= 0; --k) {
    r[k] = r[k + 1];
    for (const Crossing& c : crossings_)
      if (c.from == k) {
        r[k].first = std::max(r[k].first, r[c.to].first + c.halo_rows);
        r[k].second = std::max(r[k].second, r[c.to].second + c.halo_cols);
      }
  }
  return r;
}

std::vector<TileStages::Use> stage_uses(const Program& program, const PlannedOp& p) {
  std::vector<TileStages::Use> uses;
  for (size_t k = 0; k < p.statement->operands.size(); ++k) {
    if (!touches(program, p, k) || p.types[k].kind != FUGUE_KIND_ARRAY) continue;
    const bool around = !pointwise_access(p, k) && p.types[k].rank == 2;
    const abi::Partition& part = p.partition(k);
    if (p.reads(k))
      uses.push_back({p.statement->operands[k], false, around, around ? abi::Partition::at(part.halo, 0) : 0,
                      around ? abi::Partition::at(part.halo, 1) : 0});
    if (p.writes(k)) uses.push_back({p.statement->operands[k], true, false, 0, 0});
  }
  return uses;
}

}  // namespace fugue
