#include "passes/fusion_planner.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "program/dtype.h"
#include "errors.h"
#include "passes/launch.h"

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

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t d = 0; d < std::max<size_t>(v.size(), 1); ++d)
    s += (d ? ", " : "") + std::to_string(abi::Partition::at(v, d));
  return s + ")";
}

std::string partition_string(const abi::Partition& p) {
  switch (p.kind) {
    case FUGUE_PARTITION_NONE: return "NONE";
    case FUGUE_PARTITION_ELEMENTWISE: return p.has_halo() ? "ELEMENTWISE with halo " + ints(p.halo) : "ELEMENTWISE";
    case FUGUE_PARTITION_TILE:
      return "TILE group " + ints(p.group_tile) + " item " + ints(p.item_tile) + " stride " + ints(p.item_stride) +
             (p.cyclic ? " cyclic" : "");
    case FUGUE_PARTITION_BATCH: return "BATCH along axis " + std::to_string(p.batch_axis);
    case FUGUE_PARTITION_WHOLE: return "WHOLE";
  }
  return "?";
}

// Identical at levels 0..level (Hindemith): halos are not part of the identity (they are checked as
// reads of values produced in the kernel).
bool same_partition(const abi::Partition& a, const abi::Partition& b, fugue_level level) {
  if (a.kind != b.kind) return false;
  auto eq = [&](const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
    for (size_t d = 0; d < std::max(x.size(), y.size()); ++d)
      if (abi::Partition::at(x, d) != abi::Partition::at(y, d)) return false;
    return true;
  };
  switch (a.kind) {
    case FUGUE_PARTITION_TILE:
      return a.cyclic == b.cyclic && eq(a.group_tile, b.group_tile) &&
             (level < FUGUE_LEVEL_ITEM || (eq(a.item_tile, b.item_tile) && eq(a.item_stride, b.item_stride)));
    case FUGUE_PARTITION_BATCH: return a.batch_axis == b.batch_axis;
    default: return true;
  }
}

std::string pointer_of(const Statement& st) {
  auto colon = st.where.rfind(':');
  return colon == std::string::npos ? st.where : st.where.substr(colon + 1);
}
std::string who(const PlannedOp& p) { return p.statement->op->name() + " at " + pointer_of(*p.statement); }


// A kernel being built: its operations and every access they make to non-compile-time symbols.
class GroupBuilder {
 public:
  GroupBuilder(const Program& program, const Dataflow& flow, const DeviceInfo& device)
      : program_(program), flow_(flow), device_(device), budget_(budget_for(device)) {}

  bool empty() const { return ops_.empty(); }

  // Does an operation of this kernel write `symbol` into a register?
  bool in_register(const std::string& symbol) const {
    auto it = accesses_.find(symbol);
    if (it == accesses_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [](const Access& a) { return a.write && a.pointwise; });
  }

  // Empty when `x` may join; otherwise the reason it may not.
  std::string why_not(const PlannedOp& x) const {
    const abi::Plan& g = merged_;
    if (x.level() == FUGUE_LEVEL_BLOCK || g.level == FUGUE_LEVEL_BLOCK)
      return "block-level operations own the whole work-group body, so they run alone";
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
    const fugue_level level = std::min(g.level, x.level());
    for (size_t k = 0; k < x.statement->operands.size(); ++k) {
      if (!touched(x, k)) continue;
      // An in-place operand is read, then written: both accesses must suit the kernel.
      if (x.reads(k))
        if (std::string why = why_not_access(x, k, false, level); !why.empty()) return why;
      if (x.writes(k))
        if (std::string why = why_not_access(x, k, true, level); !why.empty()) return why;
    }
    // Fits the device?
    int regs = registers_with(&x);
    if (regs > budget_.registers)
      return "one kernel would keep about " + std::to_string(regs) + " values per work-item, over the budget of " +
             std::to_string(budget_.registers) + " registers";
    uint64_t local = local_bytes_ + x.plan.local_mem_bytes;
    if (local > budget_.local_memory)
      return "one kernel would need " + std::to_string(local) + " bytes of local memory, more than the device's " +
             std::to_string(budget_.local_memory);
    // Faster as one kernel?
    const double kernel_bytes = traffic_with(nullptr), x_bytes = single_traffic(x);
    const double fused_bytes = traffic_with(&x), alone_bytes = kernel_bytes + x_bytes;
    abi::Plan fused_plan = merged_;
    fused_plan.level = level;
    fused_plan.launch = range;
    double t_fused = time(fused_bytes, items(fused_plan));
    double t_apart = time(kernel_bytes, items(merged_)) + time(x_bytes, items(x.plan));
    if (t_fused >= t_apart)
      return "the cost model prefers two kernels: one saves " + bytes_text(alone_bytes - fused_bytes) +
             " of traffic but runs on " + std::to_string(static_cast<long long>(items(fused_plan))) +
             " work-items instead of " + std::to_string(static_cast<long long>(items(x.plan))) +
             ", too few to keep the device busy";
    return "";
  }

  // Why x's read (write = false) or write of operand k cannot join the kernel's earlier accesses.
  std::string why_not_access(const PlannedOp& x, size_t k, bool write, fugue_level level) const {
    const std::string& s = x.statement->operands[k];
    const abi::Partition& part = x.partition(k);
    const bool pw = pointwise_access(x, k);
    auto found = accesses_.find(s);
    if (found == accesses_.end()) return "";  // first touched here
    const auto& acc = found->second;
    const Access* last_write = nullptr;
    for (const auto& a : acc)
      if (a.write) last_write = &a;
    if (!write && last_write) {
      const PlannedOp& w = *ops_[last_write->op];
      if (!last_write->pointwise)
        return "it reads '" + s + "', which " + who(w) + " produces in this kernel outside the element loop: "
               "the value exists only once that kernel has finished";
      if (!pw) {
        if (part.kind == FUGUE_PARTITION_ELEMENTWISE)
          return "it reads '" + s + "' with a halo of " + ints(part.halo) + ", but " + who(w) +
                 " produces '" + s + "' in this kernel: elements computed by other work-items need a global barrier";
        return "it reads '" + s + "' as " + partition_string(part) + ", but " + who(w) + " produces it in this kernel " +
               partition_string(last_write->part) + ": the partitions differ";
      }
    }
    if (write) {
      // A value read beyond its own element earlier in the kernel may still be written element by
      // element: the new value goes to a second buffer, swapped in after the kernel (finish()), so
      // every work-item reads the old one. Written any other way, other work-items may miss it.
      if (!pw)
        for (const auto& a : acc)
          if (!a.write && !a.pointwise)
            return "it writes '" + s + "' as " + partition_string(part) + ", which " + who(*ops_[a.op]) +
                   " reads beyond its own element (" + partition_string(a.part) +
                   ") in this kernel: other work-items may still need the old value";
      if (last_write && !(last_write->pointwise && pw))
        return "it writes '" + s + "' as " + partition_string(part) + " after " + who(*ops_[last_write->op]) +
               " wrote it as " + partition_string(last_write->part) + ": the partitions differ";
    }
    // The accesses that must agree: those of the value x sees (from the last write on), or, for a
    // first write, the reads of the old value (non-pointwise ones were refused above).
    auto from = acc.begin();
    if (last_write) from += last_write - acc.data();
    if (write || last_write)
      for (auto a = from; a != acc.end(); ++a)
        if (!same_partition(a->part, part, level))
          return "'" + s + "' is partitioned " + partition_string(a->part) + " by " + who(*ops_[a->op]) + " but " +
                 partition_string(part) + " by this operation: the partitions differ";
    return "";
  }

  void add(const PlannedOp& x) {
    if (ops_.empty()) {
      merged_ = x.plan;
    } else {
      abi::Launch range;
      merge_range(merged_.launch, x.plan.launch, range);
      merged_.launch = range;
      merged_.level = std::min(merged_.level, x.level());
      merged_.phases |= x.plan.phases;
    }
    local_bytes_ += x.plan.local_mem_bytes;
    size_t index = ops_.size();
    ops_.push_back(&x);
    record(accesses_, x, index);
    // Its results with run-time lengths follow the kernel's length (why_not saw to its inputs).
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

  FusedGroup finish() {
    FusedGroup g;
    g.ops = ops_;
    g.plan = merged_;
    const SymbolSet& live_after = flow_.at(ops_.back()->statement).live_out;
    for (const auto& [s, acc] : accesses_) {
      bool written = false, read_wide = false, all_writes_pointwise = true;
      for (const auto& a : acc) {
        if (a.write) {
          written = true;
          all_writes_pointwise &= a.pointwise;
        } else {
          if (!written) g.global_reads.insert(s);
          if (!a.pointwise) read_wide = true;
          if (!a.pointwise && program_.symbol(s).kind == SymbolKind::Array) g.wide_reads = true;
        }
      }
      if (!written) continue;
      if (read_wide) g.shadowed.insert(s);  // written element-wise only (why_not), after every wide read
      if (read_wide)
        g.stored_why[s] = "read beyond its own element in this kernel, so written to a second buffer";
      else if (!all_writes_pointwise)
        g.stored_why[s] = "written outside the element loop";
      else if (live_after.count(s))
        g.stored_why[s] = "live after the kernel's last operation";
      if (g.stored_why.count(s)) g.stored.insert(s);
      else g.promoted.insert(s);
    }
    for (const auto* op : ops_)
      for (size_t k = 0; k < op->statement->operands.size(); ++k) {
        const abi::Partition& part = op->partition(k);
        const fugue_type& t = op->types[k];
        bool halo = part.kind == FUGUE_PARTITION_ELEMENTWISE && !is_pointwise(part);
        if (halo && t.kind == FUGUE_KIND_ARRAY && t.rank == 2 && t.shape[0] * t.shape[1] == merged_.launch.iteration[0]) {
          g.grid_rows = t.shape[0];
          g.grid_cols = t.shape[1];
        }
      }
    // Run-time lengths: the elements present of an array the kernel walks element by element bound
    // its iteration space (every such array of the kernel must have the same length at run time).
    for (const auto* op : ops_)
      for (size_t k = 0; k < op->statement->operands.size(); ++k) {
        const std::string& name = op->statement->operands[k];
        const Symbol& sym = program_.symbol(name);
        if (!sym.runtime_axes || op->partition(k).kind == FUGUE_PARTITION_NONE) continue;
        if (op->reads(k) && g.global_reads.count(name) && !g.runtime_writes.count(name)) g.runtime_reads.insert(name);
        if (op->writes(k) && g.stored.count(name)) g.runtime_writes.insert(name);
        if (g.extent_symbol.empty() && op->reads(k) && op->partition(k).kind == FUGUE_PARTITION_ELEMENTWISE &&
            !sym.shape.empty() && shape_elements(sym.shape) == merged_.launch.iteration[0]) {
          g.extent_symbol = name;
          g.extent_row = shape_elements(Shape(sym.shape.begin() + 1, sym.shape.end()));  // elements per row
        }
      }
    g.bytes_fused = traffic_with(nullptr);
    for (const auto* op : ops_) {
      g.bytes_unfused += single_traffic(*op);
      g.flops += op->cost.flops;
    }
    g.registers = registers_with(nullptr);
    ops_.clear();
    merged_ = abi::Plan{};
    local_bytes_ = 0;
    accesses_.clear();
    runtime_.clear();
    return g;
  }

 private:
  struct Access {
    size_t op;
    abi::Partition part;
    bool write;
    bool pointwise;
  };

  // Appends the accesses of op `p`, the kernel's op `index`: an in-place operand's read, then its write.
  void record(std::map<std::string, std::vector<Access>>& acc, const PlannedOp& p, size_t index) const {
    for (size_t k = 0; k < p.statement->operands.size(); ++k) {
      if (!touched(p, k)) continue;
      auto& list = acc[p.statement->operands[k]];
      if (p.reads(k)) list.push_back({index, p.partition(k), false, pointwise_access(p, k)});
      if (p.writes(k)) list.push_back({index, p.partition(k), true, pointwise_access(p, k)});
    }
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
    double n = s.kind == SymbolKind::Array ? static_cast<double>(shape_elements(s.shape)) : 1.0;
    return n * static_cast<double>(dtype_size(s.dtype));
  }

  // Global traffic of the kernel with `extra` appended: each value read from global memory once, and
  // each value live after the kernel's last operation written once.
  double traffic_with(const PlannedOp* extra) const {
    std::map<std::string, std::vector<Access>> acc = accesses_;
    std::vector<const PlannedOp*> ops = ops_;
    if (extra) {
      ops.push_back(extra);
      record(acc, *extra, ops.size() - 1);
    }
    if (ops.empty()) return 0;
    const SymbolSet& live_after = flow_.at(ops.back()->statement).live_out;
    double bytes = 0;
    for (const auto& [s, list] : acc) {
      bool written = false, read_global = false, stored = false;
      for (const auto& a : list) {
        if (a.write) {
          written = true;
          stored |= !a.pointwise;
        } else if (!written || !a.pointwise) {
          read_global = true;
        }
      }
      stored |= written && live_after.count(s);
      bytes += (read_global ? bytes_of(s) : 0) + (stored ? bytes_of(s) : 0);
    }
    return bytes;
  }

  double single_traffic(const PlannedOp& p) const {
    if (p.cost.bytes > 0) return p.cost.bytes;
    double bytes = 0;
    for (size_t k = 0; k < p.statement->operands.size(); ++k)
      if (touched(p, k)) bytes += bytes_of(p.statement->operands[k]);
    return bytes;
  }

  // Peak values a work-item holds: at each operation, its own estimate plus the registers written
  // earlier in the kernel and read at or after it, plus every reduction's accumulators.
  int registers_with(const PlannedOp* extra) const {
    std::vector<const PlannedOp*> ops = ops_;
    if (extra) ops.push_back(extra);
    std::map<std::string, std::pair<size_t, size_t>> span;  // register: written at, last read at
    for (size_t o = 0; o < ops.size(); ++o)
      for (size_t k = 0; k < ops[o]->statement->operands.size(); ++k) {
        if (!touched(*ops[o], k) || !pointwise_access(*ops[o], k)) continue;
        const std::string& s = ops[o]->statement->operands[k];
        auto it = span.find(s);
        if (ops[o]->writes(k) && it == span.end()) span[s] = {o, o};
        else if (it != span.end()) it->second.second = o;
      }
    auto own = [](const PlannedOp& p) {
      return p.plan.registers > 0 ? static_cast<int>(p.plan.registers) : static_cast<int>(p.statement->operands.size());
    };
    // Accumulators declared before the loop (reductions) stay alive through all of it.
    int persistent = 0;
    for (const auto* p : ops)
      if (p->plan.phases & FUGUE_PHASE_PROLOGUE) persistent += own(*p);
    int peak = 0;
    for (size_t o = 0; o < ops.size(); ++o) {
      const PlannedOp& p = *ops[o];
      int regs = persistent + (p.plan.phases & FUGUE_PHASE_PROLOGUE ? 0 : own(p));
      for (const auto& [s, when] : span) regs += when.first < o && when.second >= o;
      peak = std::max(peak, regs);
    }
    return peak;
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
  std::map<std::string, std::vector<Access>> accesses_;
  SymbolSet runtime_;  // symbols with run-time lengths the kernel walks: all of one length
};

// Why the identity operation `p` cannot become a buffer swap (empty: it can).
std::string why_no_swap(const Program& program, const Dataflow& flow, const SymbolSet& loop_variables,
                        const PlannedOp& p) {
  const Statement& st = *p.statement;
  const std::string& target = st.operands[st.op->outputs()[0]];
  const std::string& source = st.operands[st.op->inputs()[0]];
  const Symbol& t = program.symbol(target);
  const Symbol& s = program.symbol(source);
  if (target == source) return "it copies '" + source + "' onto itself";
  if (s.compile_time()) return "its input '" + source + "' is a " + s.kind_text();
  if (loop_variables.count(source))
    return "its input '" + source + "' is a loop variable, whose buffer the loop refills every iteration";
  if (s.kind != t.kind || s.dtype != t.dtype || s.shape != t.shape)
    return "'" + target + "' and '" + source + "' differ in kind, dtype or shape";
  if (flow.at(&st).live_out.count(source))
    return "'" + source + "' is still live after the copy, so its buffer cannot be given away";
  return "";
}

}  // namespace

std::string bytes_text(double b) {
  char buf[64];
  if (b >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else if (b >= 1e6) std::snprintf(buf, sizeof buf, "%.2f MB", b / 1e6);
  else if (b >= 1e3) std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f B", b);
  return buf;
}

ExecutionPlan plan_execution(const Program& program, const DeviceInfo& device, const PlanOptions& options) {
  ExecutionPlan plan;
  plan.dataflow = analyze_dataflow(program);
  std::map<const Statement*, PlannedOp*> planned;
  for (const auto& block : plan.dataflow.blocks)
    for (const Statement* st : block.ops) {
      auto p = std::make_unique<PlannedOp>();
      plan_operation(program, *st, device, *p);
      planned[st] = p.get();
      plan.ops.push_back(std::move(p));
    }

  SymbolSet loop_variables;  // only loop bodies define symbols before their ops
  for (const auto& block : plan.dataflow.blocks)
    loop_variables.insert(block.header_defs.begin(), block.header_defs.end());

  for (const auto& block : plan.dataflow.blocks) {
    GroupBuilder builder(program, plan.dataflow, device);
    auto close = [&] {
      if (builder.empty()) return;
      FusedGroup g = builder.finish();
      size_t index = plan.groups.size();
      for (size_t i = 0; i < g.ops.size(); ++i) {
        Step step;
        step.kind = Step::Kind::Kernel;
        step.group = index;
        step.starts_group = i == 0;
        step.op = g.ops[i];
        plan.steps[g.ops[i]->statement] = step;
      }
      plan.groups.push_back(std::move(g));
    };
    for (const Statement* st : block.ops) {
      const PlannedOp& p = *planned.at(st);
      bool identity = st->op->traits() & FUGUE_OP_IDENTITY && st->op->operands().size() == 2 &&
                      st->op->inputs().size() == 1 && st->op->outputs().size() == 1;
      // A copy of a value this kernel holds in a register is a register move: fuse it. Otherwise a
      // swap avoids moving any data at all.
      if (identity && options.fuse && builder.in_register(st->operands[st->op->inputs()[0]]) &&
          builder.why_not(p).empty()) {
        plan.copies_kept.push_back({st, "fused as a register move: its input is a register of the kernel"});
        builder.add(p);
        continue;
      }
      if (identity) {
        std::string why = options.eliminate_copies ? why_no_swap(program, plan.dataflow, loop_variables, p)
                                                   : "copy elimination is off (--no-swap)";
        if (why.empty()) {
          close();
          Step step;
          step.kind = Step::Kind::Swap;
          step.op = &p;
          step.target = st->operands[st->op->outputs()[0]];
          step.source = st->operands[st->op->inputs()[0]];
          plan.steps[st] = step;
          plan.swaps.push_back({st, "'" + step.target + "' takes the buffer of '" + step.source +
                                        "' (and the other way round): '" + step.source + "' is dead after the copy"});
          continue;
        }
        plan.copies_kept.push_back({st, why});
      }
      if (p.level() == FUGUE_LEVEL_DEVICE) {
        close();
        Step step;
        step.kind = Step::Kind::Device;
        step.op = &p;
        plan.steps[st] = step;
        plan.not_fused.push_back({st, "a device-level operation enqueues its own kernels"});
        continue;
      }
      if (!builder.empty()) {
        std::string why = options.fuse ? builder.why_not(p) : "fusion is off (--no-fuse)";
        if (!why.empty()) {
          close();
          plan.not_fused.push_back({st, why});
        }
      }
      builder.add(p);
    }
    close();
  }
  return plan;
}

}  // namespace fugue
