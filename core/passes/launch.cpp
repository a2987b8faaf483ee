#include "passes/launch.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "errors.h"

namespace fugue {

namespace {
// FUGUE_TUNING="element_local=512,element_groups_per_cu=16": overrides for tuning experiments.
void apply_overrides(LaunchTuning& t) {
  const char* env = std::getenv("FUGUE_TUNING");
  if (!env || !*env) return;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    std::string key = item.substr(0, eq);
    int64_t value = 0;
    try {
      value = eq == std::string::npos ? throw std::invalid_argument(item) : std::stoll(item.substr(eq + 1));
    } catch (const std::exception&) {
      throw UserError("FUGUE_TUNING: expected key=integer, found '" + item + "'");
    }
    if (key == "element_local") t.element_local = value;
    else if (key == "element_groups_per_cu") t.element_groups_per_cu = value;
    else if (key == "item_local") t.item_local = value;
    else if (key == "item_groups_per_cu") t.item_groups_per_cu = value;
    else if (key == "blocked_items") t.blocked_items = value != 0;
    else if (key == "element_unroll") t.element_unroll = std::clamp<int64_t>(value, 1, 16);
    else if (key == "scatter_unroll") t.scatter_unroll = std::clamp<int64_t>(value, 1, 16);
    else if (key == "grid_tile_cols") t.grid_tile_cols = std::max<int64_t>(value, 0);
    else if (key == "grid_strip_rows") t.grid_strip_rows = std::max<int64_t>(value, 0);
    else if (key == "grid_strip_groups_per_cu") t.grid_strip_groups_per_cu = std::max<int64_t>(value, -1);
    else if (key == "grid_strip_unroll") t.grid_strip_unroll = std::clamp<int64_t>(value, 1, 16);
    else if (key == "local_tile_cols") t.local_tile_cols = std::max<int64_t>(value, 0);
    else if (key == "local_tile_passes") t.local_tile_passes = std::clamp<int64_t>(value, 1, 64);
    else if (key == "stage_tile_rows") t.stage_tile_rows = std::clamp<int64_t>(value, 1, 1024);
    else if (key == "stage_tile_cols") t.stage_tile_cols = std::clamp<int64_t>(value, 0, 1024);
    else if (key == "stage_local") t.stage_local = std::clamp<int64_t>(value, 0, 1024);
    else if (key == "grid3_cols") t.grid3_cols = std::clamp<int64_t>(value, 0, 1024);
    else if (key == "grid3_rows") t.grid3_rows = std::clamp<int64_t>(value, 1, 1024);
    else if (key == "grid3_planes") t.grid3_planes = std::clamp<int64_t>(value, 1, 64);
    else if (key == "block_groups_per_cu") t.block_groups_per_cu = std::max<int64_t>(value, 0);
    else if (key == "block_local") t.block_local = std::max<int64_t>(value, 0);
    else if (key == "entry_runs") t.entry_runs = value != 0;
    else if (key == "block_team_items") t.block_team_items = std::max<int64_t>(value, 1);
    else if (key == "extent_args") t.extent_arguments = value != 0;
    else if (key == "pad_rows") t.pad_rows = value != 0;
    else if (key == "split_bytes") t.split_bytes = std::max<int64_t>(value, 0);
    else if (key == "halo_depth") t.halo_depth = std::clamp<int64_t>(value, 1, 1024);
    else if (key == "gather_rows") t.gather_rows = value != 0;
    else if (key == "last_group_finalize") t.last_group_finalizes = value != 0;
    else
      throw UserError("FUGUE_TUNING: unknown key '" + key + "' (element_local, element_groups_per_cu, item_local, "
                      "item_groups_per_cu, blocked_items, element_unroll, scatter_unroll, grid_tile_cols, grid_strip_rows, grid_strip_unroll, grid_strip_groups_per_cu, "
                      "local_tile_cols, local_tile_passes, stage_tile_rows, stage_tile_cols, stage_local, grid3_cols, grid3_rows, grid3_planes, block_groups_per_cu, block_local, entry_runs, block_team_items, extent_args, pad_rows, split_bytes, halo_depth, gather_rows, last_group_finalize)");
  }
}
}  // namespace

LaunchTuning tuning_for(const DeviceInfo& device) {
  LaunchTuning t;
  if (device.is_cpu) {
    // PoCL runs a work-group as a loop on one core: large groups amortise the per-group cost, and a
    // work-item with many elements must stream through a contiguous run, not stride across pages.
    t.element_local = 1024;
    t.element_groups_per_cu = 16;
    t.item_local = 256;
    t.item_groups_per_cu = 4;
    t.blocked_items = true;
    t.element_unroll = 1;
    t.scatter_unroll = 1;
    t.block_groups_per_cu = 16;
    // A work-group per entry: PoCL's groups cost little to start, and entries side by side cost their
    // copies a division per element and their compiler its loops (fugue bench, 2 cores: gemm of 20,000
    // f64 products of 8 took 7.9 ms side by side and 2.0 in a group each, of 16 25.3 and 9.0, 2,000 of
    // 32 24.4 and 3.4; potrf of 20,000 of 8 4.7 and 2.5; softmax of 1024-wide rows 564 and 448 ms; the
    // rows of 16 of examples/bench/softmax_rows16.json 79.7 either way).
    t.block_team_items = 1;
    t.entry_runs = true;
    t.extent_arguments = true;
    t.grid_strip_rows = 0;  // blocked runs already walk rows in order
    t.stage_tile_cols = 0;  // tile stages: see LaunchTuning
    t.grid3_cols = 0;       // blocked runs already walk the grid in order
    // A finalize kernel costs little beside a CPU's kernels, and PoCL 3.1's optimizer has dropped code
    // of the last work-group's section (the count's reset, where it came first after the barrier).
    t.last_group_finalizes = false;
  }
  apply_overrides(t);
  return t;
}

Launch choose_launch(const abi::Plan& plan, const DeviceInfo& device, int64_t kernel_max_local) {
  const LaunchTuning tuning = tuning_for(device);
  const auto& range = plan.launch;
  bool item = plan.level == FUGUE_LEVEL_ITEM;
  int64_t want = plan.level == FUGUE_LEVEL_BLOCK ? (tuning.block_local > 0 ? tuning.block_local : range.local_preferred)
                 : item                          ? tuning.item_local
                                                 : tuning.element_local;
  if (want <= 0) want = range.local_preferred > 0 ? range.local_preferred : 256;
  int64_t hi = std::min<int64_t>(range.local_max > 0 ? range.local_max : 1024,
                                 static_cast<int64_t>(device.max_work_group_size));
  if (kernel_max_local > 0) hi = std::min(hi, kernel_max_local);
  int64_t lo = std::max<int64_t>(range.local_min, 1);
  int64_t multiple = std::max<int64_t>(range.local_multiple, 1);
  int64_t local = std::clamp(want, lo, std::max(lo, hi));
  local -= local % multiple;
  if (local < lo || local > hi || local == 0)
    throw DeviceError("no work-group size fits both the operation's range [" + std::to_string(lo) + ", " +
                      std::to_string(range.local_max) + "] (multiple of " + std::to_string(multiple) +
                      ") and the device's limit " + std::to_string(hi));
  Launch launch;
  launch.local_size = local;
  launch.extent_arguments = tuning.extent_arguments;
  int64_t n = range.iteration[0];
  if (plan.level == FUGUE_LEVEL_BLOCK) {
    // A work-group per entry, up to enough groups to fill the device; each then takes entries in turn, or
    // a run of them.
    const int64_t cap = tuning.block_groups_per_cu * std::max<unsigned>(device.compute_units, 1u);
    launch.num_groups = cap > 0 ? std::min(n, cap) : n;
    launch.blocked = tuning.blocked_items;  // copies of entries into local memory: a contiguous run per work-item
    launch.entry_runs = tuning.entry_runs;
    return launch;
  }
  int64_t groups = (n + local - 1) / local;
  int64_t per_cu = item ? tuning.item_groups_per_cu : tuning.element_groups_per_cu;
  if (per_cu > 0) groups = std::min<int64_t>(groups, per_cu * std::max<unsigned>(device.compute_units, 1u));
  // A reduction always runs one group, so that its finalize sees at least one partial.
  launch.num_groups = item ? std::max<int64_t>(groups, 1) : groups;
  launch.blocked = tuning.blocked_items;
  launch.unroll = launch.blocked ? 1 : tuning.element_unroll;
  return launch;
}

namespace {

// choose_group_launch's walk: the launch of the merged plan, then the walk its reads suit.
Launch choose_walk(const FusedGroup& group, const DeviceInfo& device, int64_t kernel_max_local) {
  Launch launch = choose_launch(group, device, kernel_max_local);
  const LaunchTuning tuning = tuning_for(device);
  if (updates_by_atomics(group) && !launch.blocked && launch.unroll > 1) launch.unroll = std::max(launch.unroll, tuning.scatter_unroll);
  if (group.teams) {
    // Entries side by side: as many teams as the group holds, local memory allows and the device's
    // (or the built kernel's) work-group limit takes.
    const int64_t team = launch.local_size;
    int64_t most = static_cast<int64_t>(device.max_work_group_size);
    if (kernel_max_local > 0) most = std::min(most, kernel_max_local);
    const uint64_t budget = device.local_memory > 0 ? device.local_memory : 32768;
    int64_t entries = std::min({tuning.block_team_items / team, most / team,
                                static_cast<int64_t>(budget / std::max<uint64_t>(group.local_bytes, 1)),
                                group.entries});
    entries = std::max<int64_t>(entries, 1);
    launch.team = team;
    launch.entries_per_group = entries;
    launch.entry_runs = false;  // rounds of entries side by side
    launch.local_size = team * entries;
    const int64_t rounds = (group.entries + entries - 1) / entries;
    const int64_t cap = tuning.block_groups_per_cu * std::max<unsigned>(device.compute_units, 1u);
    launch.num_groups = cap > 0 ? std::min(rounds, cap) : rounds;
    return launch;
  }
  if (!group.stage_of.empty()) {
    // Tile stages: a work-group per tile of the grid at a time, on a 2-D launch (columns along
    // dimension 0), its work-items taking the cells of each stage in turn. Dimension 1 takes the rows
    // of tiles in turn beyond the 65535 groups some devices allow there.
    const int64_t cols = std::max<int64_t>(tuning.stage_tile_cols, 1), rows = std::max<int64_t>(tuning.stage_tile_rows, 1);
    if (tuning.stage_local > 0) {  // within what the operations and the device (or the built kernel) accept
      const abi::Launch& range = group.plan.launch;
      int64_t most = std::min<int64_t>(range.local_max > 0 ? range.local_max : 1024, static_cast<int64_t>(device.max_work_group_size));
      if (kernel_max_local > 0) most = std::min(most, kernel_max_local);
      const int64_t multiple = std::max<int64_t>(range.local_multiple, 1);
      int64_t local = std::min(tuning.stage_local, most);
      local -= local % multiple;
      if (local >= std::max<int64_t>(range.local_min, 1)) launch.local_size = local;
    }
    const int64_t lx = std::min(cols, launch.local_size);
    launch.tile_stages = true;
    launch.blocked = false;
    launch.unroll = 1;
    launch.grid_rows = group.grid_rows;
    launch.grid_cols = group.grid_cols;
    launch.tile_rows = rows;
    launch.tile_cols = cols;
    launch.work_dim = 2;
    launch.local_dims[0] = lx;
    launch.local_dims[1] = launch.local_size / lx;
    launch.local_size = launch.local_dims[0] * launch.local_dims[1];
    launch.group_dims[0] = (group.grid_cols + cols - 1) / cols;
    launch.group_dims[1] = std::min<int64_t>((group.grid_rows + rows - 1) / rows, 65535);
    launch.num_groups = launch.group_dims[0] * launch.group_dims[1];
    return launch;
  }
  if (!group.wide_reads || launch.blocked) return launch;
  // A 3-D grid: a 3-D launch, a cell per work-item (within the 65535 groups dimensions 1 and 2 may have).
  if (group.grid_planes > 0 && tuning.grid3_cols > 0 && group.plan.level == FUGUE_LEVEL_ELEMENT && group.extent_symbol.empty()) {
    const int64_t lx = tuning.grid3_cols, ly = tuning.grid3_rows, lz = tuning.grid3_planes;
    const int64_t gy = (group.grid3_rows + ly - 1) / ly, gz = (group.grid_planes + lz - 1) / lz;
    const abi::Launch& range = group.plan.launch;
    const int64_t local = lx * ly * lz;
    const bool fits = local >= std::max<int64_t>(range.local_min, 1) && local <= range.local_max &&
                      local % std::max<int64_t>(range.local_multiple, 1) == 0 && local <= static_cast<int64_t>(device.max_work_group_size) &&
                      (kernel_max_local <= 0 || local <= kernel_max_local);
    if (fits && gy <= 65535 && gz <= 65535) {
      launch.work_dim = 3;
      launch.unroll = 1;
      launch.local_dims[0] = lx;
      launch.local_dims[1] = ly;
      launch.local_dims[2] = lz;
      launch.group_dims[0] = (group.grid3_cols + lx - 1) / lx;
      launch.group_dims[1] = gy;
      launch.group_dims[2] = gz;
      launch.grid_dims[0] = group.grid_planes;
      launch.grid_dims[1] = group.grid3_rows;
      launch.grid_dims[2] = group.grid3_cols;
      launch.local_size = local;
      launch.num_groups = launch.group_dims[0] * gy * gz;
      return launch;
    }
  }
  // Unrolled trips help streams of independent loads; neighbour reads already overlap in the caches.
  launch.unroll = 1;
  // Walks of their own need the grid's literal extents: not with a run-time length.
  if (!group.extent_symbol.empty()) return launch;
  // Tiles staged in local memory, where an operation reads the grid as TILE and the tiles fit: each
  // staged array holds (tile columns + 2 halo) x (tile rows + 2 halo) elements.
  const int64_t staged_cols = tuning.local_tile_cols;
  const int64_t staged_rows = staged_cols > 0 ? launch.local_size / staged_cols * tuning.local_tile_passes : 0;
  std::map<std::string, std::pair<int64_t, int64_t>> staged;  // per array: halo rows, halo columns
  std::map<std::string, size_t> element_bytes;
  for (const PlannedOp* op : group.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k) {
      const abi::Partition& part = op->partition(k);
      const std::string& s = op->statement->operands[k];
      const fugue_type& t = op->types[k];
      if (part.kind != FUGUE_PARTITION_TILE || !group.global_reads.count(s) || t.rank != 2 ||
          t.shape[0] != group.grid_rows || t.shape[1] != group.grid_cols)
        continue;
      auto& [hy, hx] = staged[s];
      hy = std::max(hy, abi::Partition::at(part.halo, 0));
      hx = std::max(hx, abi::Partition::at(part.halo, 1));
      element_bytes[s] = abi::dtype_size(t.dtype);
    }
  uint64_t staged_bytes = 0;
  for (const auto& [s, halo] : staged)
    staged_bytes += static_cast<uint64_t>((staged_cols + 2 * halo.second) * (staged_rows + 2 * halo.first)) * element_bytes[s];
  if (!staged.empty() && group.plan.level == FUGUE_LEVEL_ELEMENT && group.grid_cols > 0 && staged_cols > 0 &&
      launch.local_size % staged_cols == 0 && group.grid_cols >= staged_cols &&
      staged_bytes + group.local_bytes <= device.local_memory) {
    launch.grid_rows = group.grid_rows;
    launch.grid_cols = group.grid_cols;
    launch.tile_cols = staged_cols;
    launch.tile_passes = tuning.local_tile_passes;
    launch.tile_rows = staged_rows;
    launch.staged = std::move(staged);
    const int64_t tiles = ((group.grid_rows + launch.tile_rows - 1) / launch.tile_rows) *
                          ((group.grid_cols + staged_cols - 1) / staged_cols);
    launch.num_groups = std::min(launch.num_groups, tiles);
    return launch;
  }
  // Strips only where their walkers (one per column and strip) still fill every compute unit (2048
  // resident work-items each, as on NVIDIA's GPUs): a small grid keeps the flat walk's parallelism. And
  // only for kernels reading at most two arrays: with more streams the flat walk's order suits the
  // memory better (on the H100 the Horn-Schunck kernels on 4096^2, reading up to 8 arrays, took 0.1958 ms
  // per iteration with strips against 0.1876 flat).
  std::set<std::string> array_reads;
  for (const PlannedOp* op : group.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k)
      if (op->types[k].kind == FUGUE_KIND_ARRAY && group.global_reads.count(op->statement->operands[k]))
        array_reads.insert(op->statement->operands[k]);
  const int64_t strips = tuning.grid_strip_rows > 0 ? (group.grid_rows + tuning.grid_strip_rows - 1) / tuning.grid_strip_rows : 0;
  const bool fills = strips * group.grid_cols >= 2048 * static_cast<int64_t>(std::max<unsigned>(device.compute_units, 1u));
  if (group.plan.level == FUGUE_LEVEL_ELEMENT && group.grid_cols > 0 && tuning.grid_strip_rows > 0 && fills &&
      array_reads.size() <= 2) {
    // Column strips: a group's work-items take neighbouring columns (coalesced rows) and walk down them.
    launch.grid_rows = group.grid_rows;
    launch.grid_cols = group.grid_cols;
    launch.tile_cols = launch.local_size;
    launch.tile_rows = 1;
    launch.strip_rows = tuning.grid_strip_rows;
    launch.unroll = std::min(tuning.grid_strip_unroll, launch.strip_rows);
    const int64_t tiles = ((group.grid_rows + launch.strip_rows - 1) / launch.strip_rows) *
                          ((group.grid_cols + launch.tile_cols - 1) / launch.tile_cols);
    const int64_t per_cu = tuning.grid_strip_groups_per_cu;
    launch.num_groups = per_cu == 0  ? tiles
                        : per_cu > 0 ? std::min(tiles, per_cu * std::max<int64_t>(device.compute_units, 1))
                                     : std::min(launch.num_groups, tiles);
    return launch;
  }
  const int64_t cols = tuning.grid_tile_cols;
  if (group.plan.level != FUGUE_LEVEL_ELEMENT || group.grid_cols <= 0 || cols <= 0 || launch.local_size % cols != 0 ||
      group.grid_cols < cols)
    return launch;
  // Tiles of tile_rows x cols cells: the rows above and below a cell are mostly loaded by the same
  // work-group, so a halo costs cache hits in the group instead of a second trip through L2.
  launch.grid_rows = group.grid_rows;
  launch.grid_cols = group.grid_cols;
  launch.tile_cols = cols;
  launch.tile_rows = launch.local_size / cols;
  const int64_t tiles = ((group.grid_rows + launch.tile_rows - 1) / launch.tile_rows) *
                        ((group.grid_cols + cols - 1) / cols);
  launch.num_groups = std::min(launch.num_groups, tiles);
  return launch;
}

}  // namespace

Launch choose_launch(const FusedGroup& group, const DeviceInfo& device, int64_t kernel_max_local) {
  try {
    return choose_launch(group.plan, device, kernel_max_local);
  } catch (const DeviceError& e) {
    const Statement* first = group.ops.empty() ? nullptr : group.ops.front()->statement;
    if (!first || !first->op) throw;
    throw DeviceError(first->where + ": " + first->op->name() + (group.ops.size() > 1 ? " (and the operations fused with it)" : "") + ": " +
                      e.what());
  }
}

Launch choose_group_launch(const FusedGroup& group, const DeviceInfo& device, int64_t kernel_max_local) {
  Launch launch = choose_walk(group, device, kernel_max_local);
  // The last work-group to finish combines the partials: in a 1-D launch, where the groups' count and
  // ids are the kernel's (a batched kernel has no FINALIZE phase).
  // The FINALIZE phases' local memory then adds to the kernel's: it must still fit.
  bool finalizes = false;
  uint64_t local = 0, finalize_local = 0;
  for (const PlannedOp* op : group.ops) {
    local += op->plan.local_mem_bytes;
    if (op->plan.phases & FUGUE_PHASE_FINALIZE) finalizes = true, finalize_local += op->plan.local_mem_bytes;
  }
  const uint64_t budget = device.local_memory > 0 ? device.local_memory : 32768;
  // (A launch of no work-groups has no last one: its second kernel still runs the phase.)
  launch.last_group_finalizes = finalizes && tuning_for(device).last_group_finalizes && launch.work_dim == 1 &&
                                launch.num_groups > 0 && group.plan.level != FUGUE_LEVEL_BLOCK &&
                                local + finalize_local + 64 <= budget;
  return launch;
}

void choose_launches(const DeviceInfo& device, const PlanOptions& options, ExecutionPlan& plan) {
  plan.kernels.resize(plan.groups.size());
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    Launch& launch = plan.kernels[i].launch;
    launch = choose_group_launch(plan.groups[i], device);
    launch.sample_modulus = options.sample_modulus;
    launch.sample_residue = options.sample_residue;
  }
}

}  // namespace fugue
