#include "passes/promote.h"

#include <optional>
#include <set>

#include "passes/launch.h"
#include "passes/tile_stages.h"

namespace fugue {

namespace {

struct Access {
  bool write;
  bool pointwise;
  bool scatter;  // an atomic update (SCATTER): in place, whatever else
  bool widened;  // by an operation of a tile stage that computes cells around its tile (other tiles')
};

void promote_group(const Program& program, const Dataflow& flow, const DeviceInfo& device, FusedGroup& g) {
  // Tile stages, where a value of the kernel is read around its element.
  TileStages stages;
  for (const PlannedOp* op : g.ops) stages.add(stage_uses(program, *op));
  std::vector<std::pair<int64_t, int64_t>> reach;
  if (stages.stages() > 1) reach = stages.reach();
  // Every access to a symbol core-generated code touches, in order: an in-place operand's read, then
  // its write.
  std::map<std::string, std::vector<Access>> accesses;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    const PlannedOp* op = g.ops[o];
    const bool widened = !reach.empty() && reach[stages.stage_of()[o]] != std::make_pair<int64_t, int64_t>(0, 0);
    for (size_t k = 0; k < op->statement->operands.size(); ++k) {
      if (!touches(program, *op, k)) continue;
      auto& list = accesses[op->statement->operands[k]];
      const bool scatter = op->partition(k).kind == FUGUE_PARTITION_SCATTER;
      if (op->reads(k)) list.push_back({false, pointwise_access(*op, k), scatter, widened});
      if (op->writes(k)) list.push_back({true, pointwise_access(*op, k), scatter, widened});
    }
  }
  const int64_t iteration = g.plan.launch.iteration[0];
  const SymbolSet& live_after = flow.at(g.ops.back()->statement).live_out;
  for (const auto& [s, list] : accesses) {
    if (list.front().scatter) {  // the only access of the kernel (the group pass saw to it)
      g.stored.insert(s);
      if (list.front().write) {  // an output (not in place): its atomic updates start from zero
        g.zeroed.insert(s);
        g.stored_why[s] = "updated by atomics at positions its data decide, from zeros the core writes before the kernel";
        continue;
      }
      g.global_reads.insert(s);
      g.stored_why[s] = "updated in place at positions its data decide (atomics, or stores of distinct elements)";
      continue;
    }
    bool written = false, read_wide = false, read_by_widened = false, all_writes_pointwise = true;
    for (const Access& a : list) {
      if (a.write) {
        written = true;
        all_writes_pointwise &= a.pointwise;
      } else {
        if (!written) g.global_reads.insert(s);
        // Read around its element before the kernel writes it (or at cells of other tiles, by a
        // widened tile stage): the new value needs a second buffer. (After the write, from a tile
        // stage's local memory.)
        if (!a.pointwise && !written) read_wide = true;
        if (a.pointwise && a.widened && !written) read_by_widened = true;
        if (!a.pointwise && program.symbol(s).kind == SymbolKind::Array) g.wide_reads = true;
      }
    }
    if (!written) continue;
    if (read_wide) {  // written element-wise only (the group pass saw to it), after every wide read
      g.shadowed.insert(s);
      g.stored_why[s] = "read beyond its own element in this kernel, so written to a second buffer";
    } else if (read_by_widened) {
      g.shadowed.insert(s);
      g.stored_why[s] = "read in this kernel at cells of other work-groups' tiles (a widened tile stage), so written "
                        "to a second buffer";
    } else if (!all_writes_pointwise) {
      g.stored_why[s] = "written outside the element loop";
    } else if (live_after.count(s)) {
      g.stored_why[s] = "live after the kernel's last operation";
    }
    if (g.stored_why.count(s)) g.stored.insert(s);
    else g.promoted.insert(s);
  }
  for (const PlannedOp* op : g.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k) {
      const abi::Partition& part = op->partition(k);
      const fugue_type& t = op->types[k];
      bool halo = (part.kind == FUGUE_PARTITION_ELEMENTWISE && !is_pointwise(part)) || part.kind == FUGUE_PARTITION_TILE;
      if (halo && t.kind == FUGUE_KIND_ARRAY && t.rank == 2 && t.shape[0] * t.shape[1] == iteration) {
        g.grid_rows = t.shape[0];
        g.grid_cols = t.shape[1];
      }
      if (halo && t.kind == FUGUE_KIND_ARRAY && t.rank == 3 && t.shape[0] * t.shape[1] * t.shape[2] == iteration) {
        g.grid_planes = t.shape[0];
        g.grid3_rows = t.shape[1];
        g.grid3_cols = t.shape[2];
      }
    }
  if (stages.stages() > 1) {
    // The tiles' grid: that of a value read around its element from a stage's tile (a global array of
    // another shape, read with a halo too, must not set it; set above from the last such read).
    for (size_t o = 0; o < g.ops.size(); ++o)
      for (size_t k = 0; k < g.ops[o]->statement->operands.size(); ++k) {
        const fugue_type& t = g.ops[o]->types[k];
        if (g.ops[o]->reads(k) && !pointwise_access(*g.ops[o], k) && t.kind == FUGUE_KIND_ARRAY && t.rank == 2 &&
            stages.tile_values().count(g.ops[o]->statement->operands[k])) {
          g.grid_rows = t.shape[0];
          g.grid_cols = t.shape[1];
        }
      }
    g.stage_of = stages.stage_of();
    g.stage_reach = reach;
    g.tile_values = stages.tile_values();
    const LaunchTuning tuning = tuning_for(device);
    g.local_bytes += stages.local_bytes(tuning.stage_tile_rows, tuning.stage_tile_cols,
                                        [&](const std::string& s) { return dtype_size(program.symbol(s).dtype); });
  }
  // Run-time lengths: the elements present of an array the kernel walks element by element bound
  // its iteration space (every such array of the kernel must have the same length at run time).
  for (const PlannedOp* op : g.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k) {
      const std::string& name = op->statement->operands[k];
      const Symbol& sym = program.symbol(name);
      if (!sym.runtime_axes || op->partition(k).kind == FUGUE_PARTITION_NONE) continue;
      if (op->reads(k) && g.global_reads.count(name) && !g.runtime_writes.count(name)) g.runtime_reads.insert(name);
      if (op->writes(k) && g.stored.count(name)) g.runtime_writes.insert(name);
      if (g.extent_symbol.empty() && op->reads(k) && op->partition(k).kind == FUGUE_PARTITION_ELEMENTWISE &&
          !sym.shape.empty() && shape_elements(sym.shape) == iteration) {
        g.extent_symbol = name;
        g.extent_row = shape_elements(Shape(sym.shape.begin() + 1, sym.shape.end()));  // elements per row
      }
    }
}

// Segments of a batched kernel: a run of element-wise operations over the same elements, or one
// block-level operation. segment[i] is op i's.
std::vector<size_t> segments_of(const FusedGroup& g) {
  std::vector<size_t> segment;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const PlannedOp& op = *g.ops[i];
    bool same = i > 0 && op.level() != FUGUE_LEVEL_BLOCK && g.ops[i - 1]->level() != FUGUE_LEVEL_BLOCK &&
                g.ops[i - 1]->plan.launch.iteration[0] == op.plan.launch.iteration[0];
    segment.push_back(i == 0 ? 0 : segment.back() + (same ? 0 : 1));
  }
  return segment;
}

// Teams (fugue_plan.entry_teams): when every block-level operation's body is written for a team of
// work-items, the team it wants is small beside the work-group the device fills best, and two entries
// fit local memory, a work-group holds several entries side by side, each given to a team. Every array
// the block-level operations reach through their entries then lives in local memory: inputs copied in
// by the whole group at once (the group's entries are neighbours in global memory, so the copy is
// coalesced, where a team reading its own entry would stride), outputs copied out, and a team past the
// last entry writes nothing. True when the group was given teams.
template <class EntryBytes>
bool choose_teams(const Program& program, const DeviceInfo& device, uint64_t budget, EntryBytes entry_bytes,
                  FusedGroup& g) {
  std::set<std::string> held;    // arrays reached through entries by the block-level operations
  std::set<std::string> walked;  // ... by operations whose work-items each walk rows (fugue_plan.walks_rows)
  uint64_t bytes = 0;
  for (const PlannedOp* op : g.ops) {
    if (op->level() != FUGUE_LEVEL_BLOCK) continue;
    if (!op->plan.entry_teams) return false;
    bytes += op->plan.local_mem_bytes;  // per team
    for (size_t k = 0; k < op->statement->operands.size(); ++k)
      if (op->partition(k).kind == FUGUE_PARTITION_BATCH && touches(program, *op, k)) {
        held.insert(op->statement->operands[k]);
        if (op->plan.walks_rows) walked.insert(op->statement->operands[k]);
      }
  }
  for (const auto& [s, per_entry] : g.local_values) held.insert(s);
  const int64_t team = choose_launch(g, device).local_size;
  const LaunchTuning tuning = tuning_for(device);
  // Rows padded by one element (FusedGroup::padded_rows) where a team's work-items each walk rows of
  // their own: teams of several work-items, on devices with banks (a CPU's copies, tuning.blocked_items,
  // keep entries packed), matrices of at least two even rows of at least 4. (Only there: a team walking
  // columns would pay the index's arithmetic for nothing. H100, geqrf of 20,000 16 x 16 f32, a column per
  // work-item: 0.102 ms packed, 0.125 padded.)
  std::map<std::string, int64_t> padded;
  for (const std::string& s : walked) {
    const Symbol& sym = program.symbol(s);
    const int64_t per_entry = shape_elements(sym.shape) / g.entries, row = sym.shape.empty() ? 0 : sym.shape.back();
    if (team > 1 && !tuning.blocked_items && tuning.pad_rows && sym.shape.size() >= 2 && row >= 4 && row % 2 == 0 && per_entry % row == 0 &&
        per_entry / row >= 2)
      padded[s] = row;
  }
  uint64_t spare = 0;  // the padding's elements, in bytes
  for (const std::string& s : held) {
    bytes += entry_bytes(s);
    if (padded.count(s)) spare += entry_bytes(s) / static_cast<uint64_t>(padded[s]);
  }
  if (team * 2 > tuning.block_team_items || bytes * 2 > budget) return false;
  // Two entries side by side matter more than banks: packed where padded they would not fit.
  if ((bytes + spare) * 2 > budget) padded.clear();
  else bytes += spare;
  for (const std::string& s : held) {
    if (g.local_values.count(s)) continue;
    if (g.global_reads.count(s)) g.staged.insert(s);
    g.local_values[s] = shape_elements(program.symbol(s).shape) / g.entries;
  }
  g.padded_rows = padded;
  g.teams = true;
  g.local_bytes = bytes;  // per entry; the launch multiplies it by the entries a work-group holds
  return true;
}

void promote_batched(const Program& program, const Dataflow& flow, const DeviceInfo& device, FusedGroup& g) {
  g.entries = g.plan.launch.iteration[0];
  const std::vector<size_t> segment = segments_of(g);
  struct Access {
    size_t op;
    bool write;
    size_t operand;
  };
  std::map<std::string, std::vector<Access>> accesses;
  std::vector<std::string> order;  // symbols in order of first access
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const PlannedOp& op = *g.ops[i];
    for (size_t k = 0; k < op.statement->operands.size(); ++k) {
      if (!touches(program, op, k)) continue;
      const std::string& s = op.statement->operands[k];
      auto [it, fresh] = accesses.try_emplace(s);
      if (fresh) order.push_back(s);
      if (op.reads(k)) it->second.push_back({i, false, k});
      if (op.writes(k)) it->second.push_back({i, true, k});
    }
  }
  const SymbolSet& live_after = flow.at(g.ops.back()->statement).live_out;
  auto entry_bytes = [&](const std::string& s) {
    const Symbol& sym = program.symbol(s);
    return static_cast<uint64_t>(shape_elements(sym.shape) / g.entries) * dtype_size(sym.dtype);
  };
  for (const PlannedOp* op : g.ops) g.local_bytes += op->plan.local_mem_bytes;
  const uint64_t budget = device.local_memory > 0 ? device.local_memory : 32768;
  std::vector<std::string> stage_candidates;
  for (const std::string& s : order) {
    const auto& list = accesses[s];
    const bool array = program.symbol(s).kind == SymbolKind::Array;
    std::optional<size_t> writer;  // the op whose value later reads see
    bool needs_local = false, written = false;
    for (const Access& a : list) {
      const bool block = g.ops[a.op]->level() == FUGUE_LEVEL_BLOCK;
      if (a.write) {
        written = true;
        writer = a.op;
        continue;
      }
      if (!written) {
        g.global_reads.insert(s);
        // An operation that reads its entry once (fugue_plan.reads_once, ABI 2.17) reads it where it is.
        const bool once = a.operand < 64 && ((g.ops[a.op]->plan.reads_once >> a.operand) & 1u);
        if (block && array && !once) stage_candidates.push_back(s);
      } else if (writer && (block || g.ops[*writer]->level() == FUGUE_LEVEL_BLOCK ||
                            segment[*writer] != segment[a.op])) {
        needs_local = true;  // read in another segment than the one that wrote it
      }
    }
    if (!written) continue;
    const bool live = live_after.count(s) > 0;
    // A block-level write with no later read still needs a place when the value is dead after.
    if (array && writer && g.ops[*writer]->level() == FUGUE_LEVEL_BLOCK && !live) needs_local = true;
    // An entry larger than what local memory has left stays in global memory, written there (an
    // operation that writes and reads back a large matrix, such as a factorization whose factor is not
    // used later, would otherwise ask the device for more local memory than it has).
    const bool fits = g.local_bytes + entry_bytes(s) <= budget;
    if (needs_local && array && fits) {
      g.local_values[s] = shape_elements(program.symbol(s).shape) / g.entries;
      g.local_bytes += entry_bytes(s);
    }
    if (live) {
      g.stored.insert(s);
      g.stored_why[s] = "live after the kernel's last operation";
    } else if (needs_local && array && !fits) {
      g.stored.insert(s);
      g.stored_why[s] = "an entry too large for local memory, kept in global memory";
    } else {
      g.promoted.insert(s);
    }
  }
  // Its traffic, now that what stays in local memory is known: each global read once, each stored value once.
  g.bytes_fused = 0;
  for (const std::string& s : order)
    if (g.global_reads.count(s) || g.stored.count(s)) {
      const Symbol& sym = program.symbol(s);
      const double n = sym.kind == SymbolKind::Array ? static_cast<double>(shape_elements(sym.shape)) : 1.0;
      g.bytes_fused += n * dtype_size(sym.dtype) * ((g.global_reads.count(s) ? 1 : 0) + (g.stored.count(s) ? 1 : 0));
    }
  if (choose_teams(program, device, budget, entry_bytes, g)) return;
  // Inputs of block-level operations, copied in once, while local memory lasts.
  for (const std::string& s : stage_candidates) {
    if (g.local_values.count(s) || g.staged.count(s)) continue;
    if (g.local_bytes + entry_bytes(s) > budget) continue;
    g.staged.insert(s);
    g.local_values[s] = shape_elements(program.symbol(s).shape) / g.entries;
    g.local_bytes += entry_bytes(s);
  }
}

}  // namespace

void promote(const Program& program, const DeviceInfo& device, ExecutionPlan& plan) {
  for (FusedGroup& g : plan.groups) {
    if (g.plan.level == FUGUE_LEVEL_BLOCK) promote_batched(program, plan.dataflow, device, g);
    else promote_group(program, plan.dataflow, device, g);
  }
}

}  // namespace fugue
