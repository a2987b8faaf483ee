#include "passes/plan_report.h"

#include "codegen/kernel_generator.h"
#include "passes/launch.h"

#include <cstdio>
#include <sstream>

namespace fugue {

namespace {



std::string list_or_none(const SymbolSet& set) { return set.empty() ? "none" : set_string(set); }

// A batched kernel's local memory: the entries it holds there, and why.
std::string local_text(const Program& program, const FusedGroup& g) {
  std::string held;
  for (const auto& [s, per_entry] : g.local_values) {
    const double bytes = static_cast<double>(per_entry) * dtype_size(program.symbol(s).dtype);
    held += (held.empty() ? "" : ", ") + s + " (" + bytes_text(bytes) +
            (g.staged.count(s) ? ", an input read again and again" : ", crosses segments of the kernel") +
            (g.padded_rows.count(s) ? ", its rows of " + std::to_string(g.padded_rows.at(s)) + " one element apart" : "") + ")";
  }
  if (g.teams)  // every entry a team reaches is held, one per team of the work-group
    return "    local memory per entry (times the entries a work-group holds): " + bytes_text(static_cast<double>(g.local_bytes)) +
           (held.empty() ? "" : "; held: " + held) + "\n";
  return "    local memory per work-group: " + bytes_text(static_cast<double>(g.local_bytes)) +
         (held.empty() ? "" : "; entries held: " + held) + "\n";
}

// How a batched kernel's work-groups take its entries.
std::string entries_text(const Launch& launch) {
  if (launch.team == 0) return launch.entry_runs ? "each takes a run of consecutive entries" : "each takes entries in turn";
  const std::string side = std::to_string(launch.entries_per_group) + " entries side by side, ";
  return (launch.team == 1 ? side + "one work-item each (thread model)"
                           : side + "a team of " + std::to_string(launch.team) + " work-items each") +
         ", copied in and out of local memory by the whole work-group";
}

std::string walk_text(const Launch& launch) {
  auto n = [](int64_t v) { return std::to_string(v); };
  if (launch.work_dim == 3)
    return "a 3-D launch of " + n(launch.group_dims[0]) + " x " + n(launch.group_dims[1]) + " x " + n(launch.group_dims[2]) +
           " work-groups of " + n(launch.local_dims[0]) + " x " + n(launch.local_dims[1]) + " x " + n(launch.local_dims[2]) +
           ", a cell of the grid per work-item";
  if (launch.tile_stages)
    return "a 2-D launch of " + n(launch.group_dims[0]) + " x " + n(launch.group_dims[1]) + " work-groups of " +
           n(launch.local_dims[0]) + " x " + n(launch.local_dims[1]) + ", a tile of " + n(launch.tile_rows) + " x " +
           n(launch.tile_cols) + " cells each at a time, computed in stages";
  return launch.blocked          ? std::string("each work-item a contiguous run")
         : launch.strip_rows > 0 ? "column strips: each work-item walks " + std::to_string(launch.strip_rows) +
                                       " rows down one of its group's " + std::to_string(launch.tile_cols) + " columns"
         : launch.tile_cols > 0  ? "tiles of " + std::to_string(launch.tile_rows) + " x " +
                                      std::to_string(launch.tile_cols) + " cells"
         : launch.unroll > 1    ? "grid-stride, " + std::to_string(launch.unroll) + " elements per trip"
                                : std::string("grid-stride");
}

std::string pointer_of(const Statement& st) {
  auto colon = st.where.rfind(':');
  return colon == std::string::npos ? st.where : st.where.substr(colon + 1);
}

std::string ops_text(const std::vector<const PlannedOp*>& ops) {
  std::string text;
  for (const PlannedOp* op : ops) text += (text.empty() ? "" : ", ") + pointer_of(*op->statement);
  return text;
}

// Tile stages: each stage's operations and reach, and the values held in local-memory tiles.
std::string stages_text(const FusedGroup& g) {
  std::ostringstream out;
  out << "    tile stages (a value read around its element where the kernel computes it), with barriers between:\n";
  for (size_t k = 0; k < g.stage_reach.size(); ++k) {
    out << "      stage " << k << ", the tile and " << g.stage_reach[k].first << " row(s), " << g.stage_reach[k].second
        << " column(s) around it:";
    for (size_t o = 0; o < g.ops.size(); ++o)
      if (g.stage_of[o] == static_cast<int>(k)) out << " " << pointer_of(*g.ops[o]->statement);
    out << "\n";
  }
  out << "    held in local-memory tiles between stages:";
  for (const auto& [s, stage] : g.tile_values) out << " " << s << " (stage " << stage << "'s widened tile)";
  out << "\n";
  return out.str();
}

}  // namespace

std::string explain_plan(const Program& program, const Executor& executor, const DeviceInfo& device) {
  return explain_plan(program, executor.plan(), device);
}

std::string explain_plan(const Program& program, const ExecutionPlan& plan, const DeviceInfo& device) {
  const std::vector<GeneratedKernel>& kernels = plan.kernels;
  std::ostringstream out;
  out << "Plan of " << program.file.string() << " for " << device.name << " (" << device.platform_name << ")\n";
  bool chosen = false;  // symbols whose kind a chooser kind picked (a sparse matrix's format), and why
  for (const auto& [name, symbol] : program.symbols)
    if (!symbol.note.empty()) {
      if (!chosen) out << "\nKinds chosen for the device\n";
      chosen = true;
      out << "  " << name << ": " << symbol.note << "\n";
    }

  out << "\nBasic blocks (live sets from the program's sources and sinks; after the end: the outputs)\n";
  for (const auto& block : plan.dataflow.blocks) {
    out << "  B" << block.id << " " << block.label << ": live-in " << set_string(block.live_in) << ", live-out "
        << set_string(block.live_out);
    if (!block.successors.empty()) {
      out << ", then";
      for (int s : block.successors) out << " B" << s;
    }
    out << "\n";
    for (const Statement* st : block.ops) {
      const OpLiveness& l = plan.dataflow.at(st);
      out << "      " << describe_call(program, *st) << "\n        live-in " << set_string(l.live_in) << ", live-out "
          << set_string(l.live_out) << "\n";
    }
  }

  out << "\nKernels (" << kernels.size() << ")\n";
  for (size_t k = 0; k < kernels.size(); ++k) {
    const GeneratedKernel& kernel = kernels[k];
    const FusedGroup& g = plan.groups[k];
    const Launch& launch = kernel.launch;
    out << "  kernel " << k << ": " << g.ops.size() << " operation" << (g.ops.size() > 1 ? "s" : "") << " at "
        << level_name(g.plan.level) << " level over " << g.plan.launch.iteration[0]
        << (g.entries > 0 ? " batch entries" : " elements") << "; " << launch.num_groups << " work-groups of "
        << launch.local_size << " (" << (g.entries > 0 ? entries_text(launch) : walk_text(launch))
        << "; the ops accept ["
        << g.plan.launch.local_min << ", " << g.plan.launch.local_max << "] in multiples of "
        << g.plan.launch.local_multiple << ")" << (!kernel.finalize_name.empty() ? ", then a finalize kernel" : kernel.launch.last_group_finalizes ? ", the last work-group to finish combining the partials" : "")
        << "\n";
    for (const auto* op : g.ops) {
      out << "      " << op->label << "\n";
      if (!op->plan.variant.empty()) out << "        plan: " << op->plan.variant << "\n";
    }
    SymbolSet reads;  // a kind with storage as the parts the kernel reads
    for (const auto& s : g.global_reads)
      for (const auto& held : program.storage_of(s)) reads.insert(held);
    out << "    reads from global memory: " << list_or_none(reads) << "\n";
    out << "    writes to global memory: " << list_or_none(g.stored) << "\n";
    for (const auto& [s, why] : g.stored_why) out << "      " << s << ": " << why << "\n";
    if (!g.shadowed.empty())
      out << "    written into a second buffer, swapped in after the kernel: " << set_string(g.shadowed) << "\n";
    out << "    promoted (registers, never in global memory): " << list_or_none(g.promoted) << "\n";
    if (!g.stage_of.empty()) out << stages_text(g);
    if (!g.zeroed.empty()) out << "    zeroed before the kernel (outputs updated by atomics): " << set_string(g.zeroed) << "\n";
    if (g.entries > 0) out << local_text(program, g);
    out << "    traffic " << bytes_text(g.bytes_fused);
    if (g.ops.size() > 1)
      out << " against " << bytes_text(g.bytes_unfused) << " as separate kernels (saves "
          << bytes_text(g.bytes_unfused - g.bytes_fused) << ")";
    out << "; about " << g.registers << " live values per work-item\n";
  }

  // Operations that enqueue their own kernels: no group above shows them, so their plans show here.
  // Those planned as kernels that no other operation joined run as their own kernels too (ABI 2.19).
  std::vector<const PlannedOp*> device_ops;
  for (const auto& p : plan.ops) {
    auto step = plan.steps.find(p->statement);
    if (p->level() == FUGUE_LEVEL_DEVICE || (step != plan.steps.end() && step->second.kind == Step::Kind::Device))
      device_ops.push_back(p.get());
  }
  if (!device_ops.empty()) {
    out << "\nDevice-level operations, enqueuing their own kernels (" << device_ops.size() << ")\n";
    for (const auto* op : device_ops) {
      out << "  " << op->label << "\n";
      if (op->level() != FUGUE_LEVEL_DEVICE)
        out << "    alone: no other operation joins its " << level_name(op->level())
            << "-level kernel, and its own kernels run it faster\n";
      if (!op->plan.variant.empty()) out << "    plan: " << op->plan.variant << "\n";
    }
  }

  out << "\nCopies that became buffer swaps (" << plan.swaps.size() << ")\n";
  for (const auto& n : plan.swaps) out << "  " << describe_call(program, *n.statement) << ": " << n.text << "\n";
  if (!plan.copies_kept.empty()) {
    out << "\nCopies kept (as kernels or register moves)\n";
    for (const auto& n : plan.copies_kept) out << "  " << describe_call(program, *n.statement) << ": " << n.text << "\n";
  }
  out << "\nNot fused with the operation before (" << plan.not_fused.size() << ")\n";
  for (const auto& n : plan.not_fused) out << "  " << describe_call(program, *n.statement) << ": " << n.text << "\n";

  out << "\nGenerated OpenCL\n";
  for (size_t k = 0; k < kernels.size(); ++k)
    out << "\n/* ---- kernel " << k << " ---- */\n" << kernels[k].source;
  return out.str();
}

std::string describe_plan_state(const Program& program, const ExecutionPlan& plan) {
  std::ostringstream out;
  out << "  blocks:";
  for (const auto& block : plan.dataflow.blocks) out << " B" << block.id << " (" << block.ops.size() << " ops)";
  out << "\n";
  if (!plan.ops.empty()) out << "  operations:\n";
  for (const auto& p : plan.ops) {
    const Statement& st = *p->statement;
    out << "    " << p->label << ": " << level_name(p->level());
    if (p->level() != FUGUE_LEVEL_DEVICE) {
      out << " over " << p->plan.launch.iteration[0] << (p->level() == FUGUE_LEVEL_BLOCK ? " work-groups" : " elements")
          << ", work-groups of [" << p->plan.launch.local_min << ", " << p->plan.launch.local_max << "]";
      std::string parts;
      for (size_t k = 0; k < st.operands.size(); ++k)
        if (touches(program, *p, k))
          parts += (parts.empty() ? "" : "; ") + st.operands[k] + " " + partition_text(p->partition(k));
      if (!parts.empty()) out << "; " << parts;
    }
    if (!p->plan.variant.empty()) out << "; plan: " << p->plan.variant;
    out << "\n";
  }
  for (const auto& [st, why] : plan.copy_refusals)
    out << "  copy " << pointer_of(*st) << ": " << (why.empty() ? "may become a buffer swap" : "kept: " + why) << "\n";
  for (size_t r = 0; r < plan.legal_groups.size(); ++r) {
    out << "  legal run " << r << ": " << ops_text(plan.legal_groups[r]);
    auto why = plan.legal_refusals.find(plan.legal_groups[r].front()->statement);
    if (why != plan.legal_refusals.end()) out << " (cut before: " << why->second << ")";
    out << "\n";
  }
  for (const auto& [st, step] : plan.steps) {
    if (step.kind == Step::Kind::Device)
      out << "  device-level step " << pointer_of(*st)
          << (step.op && step.op->level() != FUGUE_LEVEL_DEVICE ? " (alone: its own kernels)" : "") << "\n";
    if (step.kind == Step::Kind::Swap)
      out << "  swap " << pointer_of(*st) << ": " << step.target << " <-> " << step.source << "\n";
  }
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const FusedGroup& g = plan.groups[k];
    out << "  kernel " << k << ": " << ops_text(g.ops) << " at " << level_name(g.plan.level) << " level, traffic "
        << bytes_text(g.bytes_fused) << ", about " << g.registers << " live values per work-item\n";
    if (!g.stored.empty() || !g.promoted.empty())
      out << "    stored " << list_or_none(g.stored) << ", promoted " << list_or_none(g.promoted) << "\n";
    if (g.entries > 0) out << local_text(program, g);
    if (k < plan.kernels.size()) {
      const GeneratedKernel& kernel = plan.kernels[k];
      out << "    launch: " << kernel.launch.num_groups << " work-groups of " << kernel.launch.local_size << " ("
          << (g.entries > 0 ? entries_text(kernel.launch) : walk_text(kernel.launch)) << ")\n";
      if (!kernel.source.empty())
        out << "    source: " << kernel.source.size() << " characters, " << kernel.main_args.size() << " arguments"
            << (kernel.finalize_name.empty() ? "" : ", and a finalize kernel") << "\n";
    }
  }
  return out.str();
}

}  // namespace fugue
