#include "passes/kernel_builder.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "passes/launch.h"
#include "passes/range_max.h"
#include "passes/tile_stages.h"
#include "program/dtype.h"

namespace fugue {

namespace {

// What one device can afford, for the cost model.
struct Budget {
  int registers = 128;               // live values per work-item before spilling
  uint64_t local_memory = 32768;     // per work-group
  double launch_overhead_bytes = 0;  // a kernel launch, in bytes of traffic it costs as much as
  double saturation_items = 1;       // work-items the device needs in flight to reach full bandwidth
};

Budget budget_for(const DeviceInfo& d) {
  Budget b;
  b.registers = d.is_cpu ? 512 : 128;
  if (d.local_memory > 0) b.local_memory = d.local_memory;
  // About 4 us at 3 TB/s on a GPU; about 10 us at 40 GB/s on a CPU.
  b.launch_overhead_bytes = d.is_cpu ? 4e5 : 1.2e7;
  b.saturation_items = d.is_cpu ? std::max(1u, d.compute_units) : std::max(1u, d.compute_units) * 2048.0;
  return b;
}

// Identical partitions (Hindemith's rule; the planner's tiles and entries are the same at every level):
// halos are not part of the identity (they are checked as reads of values produced in the kernel), and
// a TILE is an element's neighbourhood, as ELEMENTWISE with a halo, whose tiles the core chooses.
bool same_partition(const abi::Partition& a, const abi::Partition& b) {
  auto kind = [](fugue_partition_kind k) { return k == FUGUE_PARTITION_TILE ? FUGUE_PARTITION_ELEMENTWISE : k; };
  if (kind(a.kind) != kind(b.kind)) return false;
  return a.kind != FUGUE_PARTITION_BATCH || a.batch_axis == b.batch_axis;
}

std::string pointer_of(const Statement& st) {
  auto colon = st.where.rfind(':');
  return colon == std::string::npos ? st.where : st.where.substr(colon + 1);
}
std::string who(const PlannedOp& p) { return p.statement->op->name() + " at " + pointer_of(*p.statement); }


}  // namespace

// A kernel being built: its operations and every access they make to non-compile-time symbols.
//
// Everything a candidate is judged by (the accesses that must agree, the registers, the traffic) is
// kept as a running summary of the kernel so far, updated as each operation joins, so that judging a
// candidate costs what the candidate touches, not what the kernel holds: the kernels of a block of n
// operations are built in about n log n, however long they grow and however many values are live
// (the live sets themselves, from the dataflow analysis, cost what they hold).
class KernelBuilder::State {
 public:
  // Builds the kernels of `block`, whose operations are offered in order.
  State(const Program& program, const Dataflow& flow, const DeviceInfo& device, const BasicBlock& block)
      : program_(program), flow_(flow), device_(device), budget_(budget_for(device)), tuning_(tuning_for(device)) {
    for (size_t i = 0; i < block.ops.size(); ++i) position_.emplace(block.ops[i], i);
  }

  bool empty() const { return ops_.empty(); }

  // Does an operation of this kernel write `symbol` into a register?
  bool in_register(const std::string& symbol) const {
    auto it = accesses_.find(symbol);
    return it != accesses_.end() && it->second.pointwise_write;
  }

  // Empty when `x` may legally join the kernel (Hindemith's rule); otherwise the reason it may not.
  std::string why_illegal(const PlannedOp& x) const {
    const abi::Plan& g = merged_;
    if (x.level() == FUGUE_LEVEL_BLOCK || entries_ > 0) return why_illegal_batched(x);
    if (x.plan.launch.iteration[0] != g.launch.iteration[0])
      return "its iteration space (" + std::to_string(x.plan.launch.iteration[0]) +
             " elements) differs from the kernel's (" + std::to_string(g.launch.iteration[0]) + ")";
    // A kernel walks one run-time length (or none): the elements present of the arrays it shares.
    const SymbolSet rx = runtime_operands(x);
    if (rx.empty() != runtime_.empty())
      return rx.empty() ? "the kernel walks a run-time length, and this operation a fixed one"
                        : "it walks a run-time length, and the kernel a fixed one";
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      const std::string& s = x.statement->operands[k];
      if (x.reads(k) && rx.count(s) && !runtime_.count(s))
        return "it reads '" + s + "', whose run-time length may differ from the kernel's";
    }
    abi::Launch range;
    if (!merge_range(g.launch, x.plan.launch, range))
      return "no work-group size suits both: the kernel accepts [" + std::to_string(g.launch.local_min) + ", " +
             std::to_string(g.launch.local_max) + "] in multiples of " + std::to_string(g.launch.local_multiple) +
             ", the operation [" + std::to_string(x.plan.launch.local_min) + ", " +
             std::to_string(x.plan.launch.local_max) + "] in multiples of " +
             std::to_string(x.plan.launch.local_multiple);
    if (tiled_) {
      if (x.level() != FUGUE_LEVEL_ELEMENT)
        return "the kernel computes in tile stages (a value read around its element where it is computed), "
               "which only element-wise operations join";
      if (updates_scattered(x))
        return "it updates values at positions its data decide, but the kernel computes in tile stages, where "
               "cells near a tile's edge are computed twice";
    }
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      if (!touched(x, k)) continue;
      // An in-place operand is read, then written: both accesses must suit the kernel.
      if (x.reads(k))
        if (std::string why = why_not_access(x, k, false); !why.empty()) return why;
      if (x.writes(k))
        if (std::string why = why_not_access(x, k, true); !why.empty()) return why;
    }
    return "";
  }

  // A batched kernel (one entry per work-group): an element-wise operation joins when it walks whole
  // entries element by element, and a block-level one when it has the kernel's entries; a value
  // produced in the kernel is read only at its own element or through its entry, and nothing read
  // beyond an entry is written.
  std::string why_illegal_batched(const PlannedOp& x) const {
    const bool block = x.level() == FUGUE_LEVEL_BLOCK;
    const int64_t entries = entries_ > 0 ? entries_ : x.plan.launch.iteration[0];
    if (entries_ > 0 && block && x.plan.launch.iteration[0] != entries_)
      return "it has " + std::to_string(x.plan.launch.iteration[0]) + " batch entries, the kernel " +
             std::to_string(entries_);
    // The operations of the kernel so far, when x is the first block-level one, and x itself.
    std::vector<const PlannedOp*> element_ops;
    if (entries_ == 0) element_ops = ops_;
    if (!block) element_ops.push_back(&x);
    for (const PlannedOp* p : element_ops) {
      if (p->level() == FUGUE_LEVEL_ITEM)
        return who(*p) + " combines its whole iteration space (ITEM level), but each work-group of a batched "
               "kernel owns one entry";
      // A work-group's entry is arrays' elements: a scalar written in the kernel has no entry to live in.
      for (size_t k = 0; k < p->statement->operands.size(); ++k)
        if (p->writes(k) && touched(*p, k) && p->types[k].kind != FUGUE_KIND_ARRAY)
          return who(*p) + " writes '" + p->statement->operands[k] + "', a scalar, which the work-groups of a batched "
                 "kernel cannot share";
      const int64_t n = p->plan.launch.iteration[0];
      if (entries == 0 || n % entries != 0)
        return who(*p) + " walks " + std::to_string(n) + " elements, not a whole number per each of the " +
               std::to_string(entries) + " batch entries";
    }
    if (!runtime_.empty() || !runtime_operands(x).empty())
      return "run-time lengths do not join batched kernels";
    if (entries_ == 0)  // x opens the batch: the element-wise operations so far must stay within entries
      for (const auto& [s, sa] : accesses_)
        if (sa.last_write && sa.first_wide_read)
          return "'" + s + "' is read beyond its own element in this kernel, which a batched kernel's entries "
                 "cannot see";
    abi::Launch range;
    if (!merge_range(merged_.launch, x.plan.launch, range))
      return "no work-group size suits both: the kernel accepts [" + std::to_string(merged_.launch.local_min) + ", " +
             std::to_string(merged_.launch.local_max) + "], the operation [" + std::to_string(x.plan.launch.local_min) +
             ", " + std::to_string(x.plan.launch.local_max) + "]";
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      if (!touched(x, k)) continue;
      const std::string& s = x.statement->operands[k];
      const abi::Partition& part = x.partition(k);
      const bool through_entry = block ? part.kind == FUGUE_PARTITION_BATCH : pointwise_access(x, k);
      auto found = accesses_.find(s);
      const SymbolAccesses* sa = found == accesses_.end() ? nullptr : &found->second;
      if (x.reads(k) && !through_entry && sa && sa->last_write)
        return "it reads '" + s + "' as " + partition_text(part) + ", but " + who(*ops_[sa->list[*sa->last_write].op]) +
               " produces it in this kernel, one entry per work-group";
      if (x.writes(k)) {
        if (!through_entry)
          return "it writes '" + s + "' as " + partition_text(part) + ", not entry by entry";
        if (sa)  // a read through the entry (BATCH) or at the element stays within the work-group's entry
          for (const Access& a : sa->list)
            if (!a.write && !a.pointwise && a.part.kind != FUGUE_PARTITION_BATCH)
              return "it writes '" + s + "', which " + who(*ops_[a.op]) +
                     " reads beyond its own entry in this kernel: other work-groups may still need the old value";
      }
    }
    return "";
  }

  // Local memory a batched kernel with `x` needs at least: every array it writes, one entry each (the
  // values that cross segments live there; promote decides which), and the operations' own.
  uint64_t batched_local_bytes(const PlannedOp& x) const {
    const int64_t entries = entries_ > 0 ? entries_ : x.plan.launch.iteration[0];
    uint64_t bytes = local_bytes_ + x.plan.local_mem_bytes;
    std::set<std::string> written;
    for (const auto& [s, sa] : accesses_)
      if (sa.last_write) written.insert(s);
    for (size_t k = 0; k < x.statement->operands.size(); ++k)
      if (touched(x, k) && x.writes(k)) written.insert(x.statement->operands[k]);
    for (const auto& s : written) {
      const Symbol& sym = program_.symbol(s);
      if (sym.kind == SymbolKind::Array && entries > 0)
        bytes += static_cast<uint64_t>(shape_elements(sym.shape) / entries) * dtype_size(sym.dtype);
    }
    return bytes;
  }

  // Empty when one kernel with `x` appended (legal: why_illegal(x) is empty) fits the device and is
  // faster than two; otherwise why not.
  std::string why_unprofitable(const PlannedOp& x) const {
    if (x.level() == FUGUE_LEVEL_BLOCK || entries_ > 0) {
      // A batched kernel runs on the entries' work-groups fused or not: fusing saves every byte of a
      // value that never leaves the kernel, if its entries fit in local memory.
      const uint64_t local = batched_local_bytes(x);
      if (local > budget_.local_memory)
        return "one batched kernel would keep " + bytes_text(static_cast<double>(local)) +
               " per work-group in local memory, over the device's " +
               bytes_text(static_cast<double>(budget_.local_memory));
      return "";
    }
    abi::Launch range;
    merge_range(merged_.launch, x.plan.launch, range);
    const fugue_level level = std::min(merged_.level, x.level());
    // Fits the device?
    int regs = registers_with(&x);
    if (regs > budget_.registers)
      return "one kernel would keep about " + std::to_string(regs) + " values per work-item, over the budget of " +
             std::to_string(budget_.registers) + " registers";
    const uint64_t stage_bytes = stage_local_bytes(x);
    uint64_t local = local_bytes_ + x.plan.local_mem_bytes + stage_bytes;
    if (local > budget_.local_memory)
      return "one kernel would need " + std::to_string(local) + " bytes of local memory, more than the device's " +
             std::to_string(budget_.local_memory);
    // Faster as one kernel?
    const double kernel_bytes = traffic_with(nullptr), x_bytes = single_traffic(x);
    const double fused_bytes = traffic_with(&x), alone_bytes = kernel_bytes + x_bytes;
    abi::Plan fused_plan = merged_;
    fused_plan.level = level;
    fused_plan.launch = range;
    // A kernel in tile stages runs a work-group per tile: as many work-items as the tiles give.
    const double fused_items = stage_bytes > 0 ? stage_items(x) : items(fused_plan);
    double t_fused = time(fused_bytes, fused_items);
    double t_apart = time(kernel_bytes, items(merged_)) + time(x_bytes, items(x.plan));
    if (t_fused >= t_apart)
      return "the cost model prefers two kernels: one saves " + bytes_text(alone_bytes - fused_bytes) +
             " of traffic but runs on " + std::to_string(static_cast<long long>(fused_items)) +
             " work-items instead of " + std::to_string(static_cast<long long>(items(x.plan))) +
             ", too few to keep the device busy";
    return "";
  }

  // Why x's read (write = false) or write of operand k cannot join the kernel's earlier accesses.
  std::string why_not_access(const PlannedOp& x, size_t k, bool write) const {
    const std::string& s = x.statement->operands[k];
    const abi::Partition& part = x.partition(k);
    const bool pw = pointwise_access(x, k);
    auto found = accesses_.find(s);
    if (found == accesses_.end()) return "";  // first touched here
    const SymbolAccesses& sa = found->second;
    // Atomic updates at data-dependent places race with any other access in the kernel, before or after.
    if (part.kind == FUGUE_PARTITION_SCATTER)
      return "it updates '" + s + "' at positions its data decide, but " + who(*ops_[sa.list.front().op]) +
             " accesses it in this kernel too";
    for (const Access& a : sa.list)
      if (a.part.kind == FUGUE_PARTITION_SCATTER)
        return "it accesses '" + s + "', which " + who(*ops_[a.op]) +
               " updates at positions its data decide in this kernel: the value exists only once that kernel has finished";
    const auto& acc = sa.list;
    const Access* last_write = sa.last_write ? &acc[*sa.last_write] : nullptr;
    if (!write && last_write) {
      const PlannedOp& w = *ops_[last_write->op];
      if (!last_write->pointwise)
        return "it reads '" + s + "', which " + who(w) + " produces in this kernel outside the element loop: "
               "the value exists only once that kernel has finished";
      if (!pw) {
        if (part.kind != FUGUE_PARTITION_ELEMENTWISE && part.kind != FUGUE_PARTITION_TILE)
          return "it reads '" + s + "' as " + partition_text(part) + ", but " + who(w) + " produces it in this kernel " +
                 partition_text(last_write->part) + ": the partitions differ";
        // Around its element: from a local-memory tile the kernel computes in stages, where it can.
        if (std::string why = why_not_staged(x, k); !why.empty())
          return "it reads '" + s + "' with a halo of " + axes_text(part.halo) + ", but " + who(w) + " produces '" + s +
                 "' in this kernel, and " + why;
      }
    }
    if (write && sa.read_around)
      return "it writes '" + s + "', which " + who(*ops_[acc[*sa.first_wide_read].op]) +
             " reads around its elements from the local-memory tile this kernel computes it into";
    if (write) {
      // A value read beyond its own element earlier in the kernel may still be written element by
      // element: the new value goes to a second buffer, swapped in after the kernel (finish()), so
      // every work-item reads the old one. Written any other way, other work-items may miss it.
      if (!pw && sa.first_wide_read) {
        const Access& a = acc[*sa.first_wide_read];
        return "it writes '" + s + "' as " + partition_text(part) + ", which " + who(*ops_[a.op]) +
               " reads beyond its own element (" + partition_text(a.part) +
               ") in this kernel: other work-items may still need the old value";
      }
      if (last_write && !(last_write->pointwise && pw))
        return "it writes '" + s + "' as " + partition_text(part) + " after " + who(*ops_[last_write->op]) +
               " wrote it as " + partition_text(last_write->part) + ": the partitions differ";
    }
    // The accesses that must agree: those of the value x sees (from the last write on), or, for a
    // first write, the reads of the old value (non-pointwise ones were refused above). The first of
    // them partitioned otherwise is the first of its kind (sa.kinds) partitioned otherwise.
    if (write || last_write)
      for (size_t i : sa.kinds)
        if (!same_partition(acc[i].part, part))
          return "'" + s + "' is partitioned " + partition_text(acc[i].part) + " by " + who(*ops_[acc[i].op]) +
                 " but " + partition_text(part) + " by this operation: the partitions differ";
    return "";
  }

  // Empty when operand k of x, read around its element, may come from a local-memory tile of a value
  // computed earlier in the kernel (tile stages); otherwise why not, finishing a sentence.
  std::string why_not_staged(const PlannedOp& x, size_t k) const {
    const fugue_type& t = x.types[k];
    const int64_t n = merged_.launch.iteration[0];
    if (tuning_.stage_tile_cols <= 0)
      return "tile stages are off for this device (on CPUs they ran slower than separate kernels; FUGUE_TUNING "
             "stage_tile_cols=N turns them on)";
    if (x.level() != FUGUE_LEVEL_ELEMENT || merged_.level != FUGUE_LEVEL_ELEMENT)
      return "only kernels of element-wise operations compute in tile stages";
    if (t.kind != FUGUE_KIND_ARRAY || t.rank != 2 || t.shape[0] * t.shape[1] != n)
      return "only a 2-D grid whose cells are the kernel's elements is computed in tiles";
    if (tiled_ && (t.shape[0] != grid_rows_ || t.shape[1] != grid_cols_))
      return "the kernel's tiles are of another grid shape";
    const abi::Partition& part = x.partition(k);
    // TILE promises reads at offsets from the element (read_offset: one local load each); ELEMENTWISE
    // with a halo reads through read_at, which a tile would serve through index arithmetic per read
    // (Lucas-Kanade's 9x9 windows ran 3.6x slower on the H100 so).
    if (part.kind != FUGUE_PARTITION_TILE)
      return "it reads it through read_at (ELEMENTWISE with a halo), and only TILE reads (read_offset) come from "
             "tile stages";
    if (abi::Partition::at(part.halo, 0) > kMaxStageHalo || abi::Partition::at(part.halo, 1) > kMaxStageHalo)
      return "a halo over " + std::to_string(kMaxStageHalo) + " cells would compute too much of each tile twice";
    if (!runtime_.empty()) return "the kernel walks a run-time length";
    if (scatter_ || updates_scattered(x))
      return "the kernel updates values at positions its data decide, which tile stages would update twice";
    return "";
  }

  static bool updates_scattered(const PlannedOp& p) {
    for (size_t k = 0; k < p.statement->operands.size(); ++k)
      if (p.partition(k).kind == FUGUE_PARTITION_SCATTER) return true;
    return false;
  }

  // Local memory the tile stages of the kernel with `x` appended would take (0 without stages).
  uint64_t stage_local_bytes(const PlannedOp& x) const {
    TileStages with = stages_;
    with.add(stage_uses(program_, x));
    if (with.stages() <= 1) return 0;
    return with.local_bytes(tuning_.stage_tile_rows, tuning_.stage_tile_cols,
                            [&](const std::string& s) { return dtype_size(program_.symbol(s).dtype); });
  }

  // The work-items of the kernel with `x` appended in tile stages: a work-group per tile of the grid.
  double stage_items(const PlannedOp& x) const {
    int64_t rows = grid_rows_, cols = grid_cols_;
    if (!tiled_)  // x's read around its element makes the kernel tiled: its grid
      for (size_t k = 0; k < x.statement->operands.size(); ++k)
        if (touched(x, k) && !pointwise_access(x, k) && x.types[k].kind == FUGUE_KIND_ARRAY && x.types[k].rank == 2) {
          rows = x.types[k].shape[0];
          cols = x.types[k].shape[1];
        }
    const int64_t tr = std::max<int64_t>(tuning_.stage_tile_rows, 1), tc = std::max<int64_t>(tuning_.stage_tile_cols, 1);
    const double tiles = static_cast<double>((rows + tr - 1) / tr) * static_cast<double>((cols + tc - 1) / tc);
    return tiles * static_cast<double>(tuning_.stage_local > 0 ? tuning_.stage_local : tuning_.element_local);
  }

  void add(const PlannedOp& x) {
    stages_.add(stage_uses(program_, x));
    scatter_ |= updates_scattered(x);
    if (ops_.empty()) {
      merged_ = x.plan;
    } else {
      abi::Launch range;
      merge_range(merged_.launch, x.plan.launch, range);
      merged_.launch = range;
      merged_.level = std::min(merged_.level, x.level());
      merged_.phases |= x.plan.phases;
    }
    if (x.level() == FUGUE_LEVEL_BLOCK) {  // a batched kernel: its iteration space is the entries
      // The work-group size the first block-level operation prefers (it knows its entries' sizes).
      if (entries_ == 0 && x.plan.launch.local_preferred > 0) merged_.launch.local_preferred = x.plan.launch.local_preferred;
      entries_ = x.plan.launch.iteration[0];
      merged_.launch.iteration[0] = entries_;
    }
    local_bytes_ += x.plan.local_mem_bytes;
    live_stored_bytes_ = live_stored_with(x, touches_of(x));  // before x's accesses are recorded
    size_t index = ops_.size();
    ops_.push_back(&x);
    record(x, index);
    add_registers(x, index);
    // Its results with run-time lengths follow the kernel's length (why_illegal saw to its inputs).
    for (const auto& s : runtime_operands(x)) runtime_.insert(s);
  }

  // The operands with run-time lengths an operation walks in core-generated code.
  SymbolSet runtime_operands(const PlannedOp& p) const {
    SymbolSet out;
    for (size_t k = 0; k < p.statement->operands.size(); ++k)
      if (program_.symbol(p.statement->operands[k]).runtime_axes && p.partition(k).kind != FUGUE_PARTITION_NONE)
        out.insert(p.statement->operands[k]);
    return out;
  }

  // The kernel's operations, merged plan, traffic (as one kernel and as separate ones) and peak
  // registers, into `g`; then the builder starts a new kernel.
  void finish(FusedGroup& g) {
    g.ops = ops_;
    g.plan = merged_;
    g.bytes_fused = traffic_with(nullptr);
    g.bytes_unfused = g.flops = 0;
    for (const auto* op : ops_) {
      g.bytes_unfused += single_traffic(*op);
      g.flops += op->cost.flops;
    }
    g.registers = registers_with(nullptr);
    ops_.clear();
    merged_ = abi::Plan{};
    local_bytes_ = 0;
    entries_ = 0;
    accesses_.clear();
    runtime_.clear();
    read_bytes_ = stored_wide_bytes_ = live_stored_bytes_ = 0;
    spans_.clear();
    live_at_.clear();
    persistent_ = 0;
    stages_ = TileStages{};
    tiled_ = scatter_ = false;
    grid_rows_ = grid_cols_ = 0;
  }

 private:
  struct Access {
    size_t op;
    abi::Partition part;
    bool write;
    bool pointwise;
    fugue_type type;
  };

  // What global traffic a symbol's accesses so far cost (traffic_with): read from global memory (read
  // before any write, or beyond its own element), written, written outside the element loop.
  struct TrafficFlags {
    bool written = false, read_global = false, stored_wide = false;
    void apply(bool write, bool pointwise) {
      if (write) {
        written = true;
        stored_wide |= !pointwise;
      } else if (!written) {  // a value of the kernel is read from a register or a stage's tile
        read_global = true;
      }
    }
  };

  // Every access of the kernel to one symbol, in order, with what why_illegal and traffic_with ask of them.
  struct SymbolAccesses {
    std::vector<Access> list;
    std::optional<size_t> last_write;       // in list
    std::optional<size_t> first_wide_read;  // the first read beyond its own element
    // From the last write on (from the first access before any write): the first access of each
    // partition, in order. Accesses with identical partitions (same_partition at the finest level)
    // agree or disagree with any other partition alike, so only these need comparing.
    std::vector<size_t> kinds;
    bool pointwise_write = false;  // written into a register (in_register)
    bool read_around = false;      // read around its elements after a write of the kernel: a tile stage's
    TrafficFlags traffic;
    double bytes = 0;              // operand_bytes of the symbol's first access
  };

  // Appends the accesses of op `p`, the kernel's op `index`: an in-place operand's read, then its write.
  void record(const PlannedOp& p, size_t index) {
    for (size_t k = 0; k < p.statement->operands.size(); ++k) {
      if (!touched(p, k)) continue;
      const std::string& s = p.statement->operands[k];
      auto [it, fresh] = accesses_.try_emplace(s);
      if (fresh) it->second.bytes = operand_bytes(p, k);
      if (p.reads(k)) append(it->second, {index, p.partition(k), false, pointwise_access(p, k), p.types[k]});
      if (p.writes(k)) append(it->second, {index, p.partition(k), true, pointwise_access(p, k), p.types[k]});
    }
  }

  void append(SymbolAccesses& sa, Access a) {
    const size_t i = sa.list.size();
    if (a.write) {
      sa.last_write = i;
      sa.kinds.assign(1, i);
      sa.pointwise_write |= a.pointwise;
    } else {
      if (!a.pointwise && !sa.first_wide_read) sa.first_wide_read = i;
      if (!a.pointwise && sa.last_write) {  // from the tile of a stage before (why_not_staged allowed it)
        sa.read_around = true;
        tiled_ = true;
        grid_rows_ = a.type.shape[0];
        grid_cols_ = a.type.shape[1];
      }
      if (std::none_of(sa.kinds.begin(), sa.kinds.end(),
                       [&](size_t j) { return same_partition(sa.list[j].part, a.part); }))
        sa.kinds.push_back(i);
    }
    const TrafficFlags before = sa.traffic;
    sa.traffic.apply(a.write, a.pointwise);
    read_bytes_ += (sa.traffic.read_global - before.read_global) * sa.bytes;
    stored_wide_bytes_ += (sa.traffic.stored_wide - before.stored_wide) * sa.bytes;
    sa.list.push_back(std::move(a));
  }

  bool touched(const PlannedOp& p, size_t k) const {
    const Symbol& s = program_.symbol(p.statement->operands[k]);
    return !s.compile_time() && p.partition(k).kind != FUGUE_PARTITION_NONE;
  }

  static bool merge_range(const abi::Launch& a, const abi::Launch& b, abi::Launch& out) {
    out = a;
    out.local_min = std::max(a.local_min, b.local_min);
    out.local_max = std::min(a.local_max, b.local_max);
    int64_t ma = std::max<int64_t>(a.local_multiple, 1), mb = std::max<int64_t>(b.local_multiple, 1);
    out.local_multiple = ma / std::gcd(ma, mb) * mb;
    if (b.local_preferred > 0 && (a.local_preferred <= 0 || b.local_multiple > a.local_multiple))
      out.local_preferred = b.local_preferred;
    int64_t first = (std::max<int64_t>(out.local_min, 1) + out.local_multiple - 1) / out.local_multiple * out.local_multiple;
    return first <= out.local_max;
  }

  double bytes_of(const std::string& symbol) const {
    const Symbol& s = program_.symbol(symbol);
    if (s.compound()) {  // a kind with storage: its parts
      double bytes = 0;
      for (const auto& part : s.parts) bytes += bytes_of(part);
      return bytes;
    }
    double n = s.kind == SymbolKind::Array ? static_cast<double>(shape_elements(s.shape)) : 1.0;
    return n * static_cast<double>(dtype_size(s.dtype));
  }
  // What operand k of p moves: all of it, but a SCATTER operand (read and updated where the data say)
  // no more than half of what the operation moves alone (array.put writes one row of h).
  double operand_bytes(const PlannedOp& p, size_t k) const {
    const double whole = bytes_of(p.statement->operands[k]);
    return p.partition(k).kind == FUGUE_PARTITION_SCATTER && p.cost.bytes > 0 ? std::min(whole, p.cost.bytes / 2) : whole;
  }

  // A symbol an operation names, with its traffic flags before and after the operation's accesses.
  struct Touch {
    const std::string* symbol;
    TrafficFlags before, after;
    double bytes;  // bytes_of the symbol (0 for one that neither the kernel nor the operation touches)
  };

  // The symbols `x` names as operands (touched or not: x may end the life of a value it does not
  // touch), each once, with what x's accesses, appended to the kernel's, make of their flags.
  std::vector<Touch> touches_of(const PlannedOp& x) const {
    std::vector<Touch> touches;
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      const std::string& s = x.statement->operands[k];
      auto t = std::find_if(touches.begin(), touches.end(), [&](const Touch& t) { return *t.symbol == s; });
      if (t == touches.end()) {
        Touch fresh{&s, {}, {}, 0};
        auto it = accesses_.find(s);
        if (it != accesses_.end()) fresh = {&s, it->second.traffic, it->second.traffic, it->second.bytes};
        touches.push_back(fresh);
        t = touches.end() - 1;
      }
      if (!touched(x, k)) continue;
      if (t->bytes == 0) t->bytes = operand_bytes(x, k);
      const bool pw = pointwise_access(x, k);
      if (x.reads(k)) t->after.apply(false, pw);
      if (x.writes(k)) t->after.apply(true, pw);
    }
    return touches;
  }

  // A value written in the kernel, element by element only, is stored when it is live after the
  // kernel's last operation.
  static bool stored_if_live(const TrafficFlags& f) { return f.written && !f.stored_wide; }

  // The bytes of the values stored because they are live after `x` (stored_if_live), were x appended
  // with `touches` (touches_of(x)). When x follows the kernel's last operation in its block, the values
  // live after x and after that operation differ only in x's operands (x's live-in is the other's
  // live-out, and x's live-out differs from its live-in only in what x reads and writes), and so do
  // the flags: the running sum for that operation is corrected for x's operands alone.
  double live_stored_with(const PlannedOp& x, const std::vector<Touch>& touches) const {
    const SymbolSet& after = flow_.at(x.statement).live_out;
    double bytes = 0;
    if (ops_.empty()) {  // only x's symbols are written
      for (const auto& t : touches)
        if (stored_if_live(t.after) && after.count(*t.symbol)) bytes += t.bytes;
      return bytes;
    }
    if (follows_last(x)) {
      const SymbolSet& before = flow_.at(ops_.back()->statement).live_out;
      bytes = live_stored_bytes_;
      for (const auto& t : touches) {
        if (stored_if_live(t.before) && before.count(*t.symbol)) bytes -= t.bytes;
        if (stored_if_live(t.after) && after.count(*t.symbol)) bytes += t.bytes;
      }
      return bytes;
    }
    for (const auto& s : after) {  // anywhere else: every value live after x
      auto t = std::find_if(touches.begin(), touches.end(), [&](const Touch& t) { return *t.symbol == s; });
      if (t != touches.end()) {
        if (stored_if_live(t->after)) bytes += t->bytes;
        continue;
      }
      auto it = accesses_.find(s);
      if (it != accesses_.end() && stored_if_live(it->second.traffic)) bytes += it->second.bytes;
    }
    return bytes;
  }

  // Is x the operation right after the kernel's last one in their block?
  bool follows_last(const PlannedOp& x) const {
    auto at = position_.find(x.statement), last = position_.find(ops_.back()->statement);
    return at != position_.end() && last != position_.end() && at->second == last->second + 1;
  }

  // Global traffic of the kernel with `extra` appended: each value read from global memory once, and
  // each value live after the kernel's last operation written once (every value written outside the
  // element loop too). The running sums hold the reads, the writes outside the loop and the values
  // stored because they are live after the last operation; `extra`'s accesses are applied on top of
  // them. The amounts are whole numbers of bytes, so the sums do not depend on their order.
  double traffic_with(const PlannedOp* extra) const {
    if (!extra) return ops_.empty() ? 0 : read_bytes_ + stored_wide_bytes_ + live_stored_bytes_;
    const std::vector<Touch> touches = touches_of(*extra);
    double bytes = read_bytes_ + stored_wide_bytes_;
    for (const auto& t : touches)
      bytes += (t.after.read_global - t.before.read_global) * t.bytes +
               (t.after.stored_wide - t.before.stored_wide) * t.bytes;
    return bytes + live_stored_with(*extra, touches);
  }

  double single_traffic(const PlannedOp& p) const {
    if (p.cost.bytes > 0) return p.cost.bytes;
    double bytes = 0;
    for (size_t k = 0; k < p.statement->operands.size(); ++k)
      if (touched(p, k)) bytes += bytes_of(p.statement->operands[k]);
    return bytes;
  }

  // Registers: each value an operation of the kernel writes element by element is a register from
  // the operation that first writes it to the last that touches it (its span), and counts at every
  // operation after the first up to that last one.
  static int own(const PlannedOp& p) {
    return p.plan.registers > 0 ? static_cast<int>(p.plan.registers) : static_cast<int>(p.statement->operands.size());
  }
  // Accumulators declared before the loop (reductions) stay alive through all of it.
  static bool persistent(const PlannedOp& p) { return p.plan.phases & FUGUE_PHASE_PROLOGUE; }

  // The ends of the spans that `x`, appended at `index`, extends to itself: the registers written
  // earlier in the kernel that x touches element by element.
  template <class Each>
  void extended_spans(const PlannedOp& x, Each each) const {
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      if (!touched(x, k) || !pointwise_access(x, k)) continue;
      const std::string& s = x.statement->operands[k];
      bool again = false;  // an earlier operand already took the span to x
      for (size_t j = 0; j < k && !again; ++j)
        again = x.statement->operands[j] == s && touched(x, j) && pointwise_access(x, j);
      if (again) continue;
      auto it = spans_.find(s);
      if (it != spans_.end()) each(s, it->second.second);
    }
  }

  // Peak values a work-item holds: at each operation, its own estimate plus the registers written
  // earlier in the kernel and read at or after it, plus every reduction's accumulators. live_at_
  // holds, per operation, its own estimate plus the spans over it; `extra` adds one to the
  // operations after the end of each span it extends, and its own count at its position.
  int registers_with(const PlannedOp* extra) const {
    const size_t m = ops_.size();
    if (!extra) return m == 0 ? 0 : std::max(0, persistent_ + live_at_.max(0, m - 1));
    std::vector<size_t> ends;
    extended_spans(*extra, [&](const std::string&, size_t end) { ends.push_back(end); });
    std::sort(ends.begin(), ends.end());
    int peak = (persistent(*extra) ? 0 : own(*extra)) + static_cast<int>(ends.size());  // at extra
    size_t from = 0;  // positions [from, ends[i]] gain i
    for (size_t i = 0; i <= ends.size(); ++i) {
      const size_t to = i < ends.size() ? ends[i] : m - 1;
      if (m > 0 && from <= to) peak = std::max(peak, live_at_.max(from, to) + static_cast<int>(i));
      if (i < ends.size()) from = ends[i] + 1;
    }
    return std::max(0, persistent_ + (persistent(*extra) ? own(*extra) : 0) + peak);
  }

  // Appends op `x`, the kernel's op `index`, to the spans and live_at_.
  void add_registers(const PlannedOp& x, size_t index) {
    int over = 0;  // spans over x
    extended_spans(x, [&](const std::string&, size_t end) {
      live_at_.add(end + 1, index - 1, 1);
      ++over;
    });
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      if (!touched(x, k) || !pointwise_access(x, k)) continue;
      const std::string& s = x.statement->operands[k];
      auto it = spans_.find(s);
      if (x.writes(k) && it == spans_.end()) spans_[s] = {index, index};
      else if (it != spans_.end()) it->second.second = index;
    }
    live_at_.push((persistent(x) ? 0 : own(x)) + over);
    if (persistent(x)) persistent_ += own(x);
  }

  double items(const abi::Plan& plan) const {
    try {
      Launch l = choose_launch(plan, device_);
      return static_cast<double>(l.num_groups) * static_cast<double>(l.local_size);
    } catch (const std::exception&) {
      return 0;
    }
  }

  double time(double bytes, double items) const {
    double efficiency = std::min(1.0, std::max(items, 1.0) / budget_.saturation_items);
    return budget_.launch_overhead_bytes + bytes / efficiency;
  }

  const Program& program_;
  const Dataflow& flow_;
  const DeviceInfo& device_;
  Budget budget_;
  std::vector<const PlannedOp*> ops_;
  abi::Plan merged_;
  uint64_t local_bytes_ = 0;
  int64_t entries_ = 0;  // a batched kernel's entries (0: not batched)
  std::map<std::string, SymbolAccesses> accesses_;
  SymbolSet runtime_;  // symbols with run-time lengths the kernel walks: all of one length
  double read_bytes_ = 0;         // symbols read from global memory
  double stored_wide_bytes_ = 0;  // symbols written outside the element loop
  double live_stored_bytes_ = 0;  // symbols written element by element and live after the last operation
  std::unordered_map<const Statement*, size_t> position_;  // in the block
  std::map<std::string, std::pair<size_t, size_t>> spans_;  // register: written at, last touched at
  RangeMax live_at_;
  int persistent_ = 0;            // accumulators of the kernel's reductions
  // Tile stages: the stages so far, whether a value of the kernel is read around its element (then the
  // grid's shape), and whether an operation updates values at positions its data decide.
  static constexpr int64_t kMaxStageHalo = 8;
  LaunchTuning tuning_;
  TileStages stages_;
  bool tiled_ = false, scatter_ = false;
  int64_t grid_rows_ = 0, grid_cols_ = 0;
};

KernelBuilder::KernelBuilder(const Program& program, const Dataflow& flow, const DeviceInfo& device,
                             const BasicBlock& block)
    : state_(std::make_unique<State>(program, flow, device, block)) {}
KernelBuilder::~KernelBuilder() = default;
bool KernelBuilder::empty() const { return state_->empty(); }
bool KernelBuilder::in_register(const std::string& symbol) const { return state_->in_register(symbol); }
std::string KernelBuilder::why_illegal(const PlannedOp& x) const { return state_->why_illegal(x); }
std::string KernelBuilder::why_unprofitable(const PlannedOp& x) const { return state_->why_unprofitable(x); }
void KernelBuilder::add(const PlannedOp& x) { state_->add(x); }
void KernelBuilder::finish(FusedGroup& group) { state_->finish(group); }

}  // namespace fugue
