#include "passes/plan_report.h"

#include "codegen/kernel_generator.h"
#include "passes/launch.h"

#include <cstdio>
#include <sstream>

namespace fugue {

namespace {

std::string level_name(fugue_level level) {
  switch (level) {
    case FUGUE_LEVEL_DEVICE: return "DEVICE";
    case FUGUE_LEVEL_BLOCK: return "BLOCK";
    case FUGUE_LEVEL_ITEM: return "ITEM";
    case FUGUE_LEVEL_ELEMENT: return "ELEMENT";
  }
  return "?";
}


std::string list_or_none(const SymbolSet& set) { return set.empty() ? "none" : set_string(set); }

}  // namespace

std::vector<ExplainedKernel> generate_kernels(const Program& program, const ExecutionPlan& plan, const DeviceInfo& device) {
  std::vector<ExplainedKernel> kernels;
  for (const auto& group : plan.groups)
    kernels.push_back({&group, generate_kernel(program, group, choose_group_launch(group, device), "fugue_kernel")});
  return kernels;
}

std::string explain_plan(const Program& program, const Executor& executor, const DeviceInfo& device) {
  std::vector<ExplainedKernel> kernels;
  for (const auto& site : executor.kernels()) kernels.push_back({site->group, site->kernel});
  return explain_plan(program, executor.plan(), kernels, device);
}

std::string explain_plan(const Program& program, const ExecutionPlan& plan, const std::vector<ExplainedKernel>& kernels,
                         const DeviceInfo& device) {
  std::ostringstream out;
  out << "Plan of " << program.file.string() << " for " << device.name << " (" << device.platform_name << ")\n";

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
    const ExplainedKernel& site = kernels[k];
    const FusedGroup& g = *site.group;
    const Launch& launch = site.kernel.launch;
    out << "  kernel " << k << ": " << g.ops.size() << " operation" << (g.ops.size() > 1 ? "s" : "") << " at "
        << level_name(g.plan.level) << " level over " << g.plan.launch.iteration[0] << " elements; "
        << launch.num_groups << " work-groups of " << launch.local_size << " ("
        << (launch.blocked            ? std::string("each work-item a contiguous run")
            : launch.tile_cols > 0    ? "tiles of " + std::to_string(launch.tile_rows) + " x " +
                                         std::to_string(launch.tile_cols) + " cells"
            : launch.unroll > 1       ? "grid-stride, " + std::to_string(launch.unroll) + " elements per trip"
                                      : std::string("grid-stride"))
        << "; the ops accept ["
        << g.plan.launch.local_min << ", " << g.plan.launch.local_max << "] in multiples of "
        << g.plan.launch.local_multiple << ")" << (site.kernel.finalize_name.empty() ? "" : ", then a finalize kernel")
        << "\n";
    for (const auto* op : g.ops) out << "      " << op->label << "\n";
    out << "    reads from global memory: " << list_or_none(g.global_reads) << "\n";
    out << "    writes to global memory: " << list_or_none(g.stored) << "\n";
    for (const auto& [s, why] : g.stored_why) out << "      " << s << ": " << why << "\n";
    if (!g.shadowed.empty())
      out << "    written into a second buffer, swapped in after the kernel: " << set_string(g.shadowed) << "\n";
    out << "    promoted (registers, never in global memory): " << list_or_none(g.promoted) << "\n";
    out << "    traffic " << bytes_text(g.bytes_fused);
    if (g.ops.size() > 1)
      out << " against " << bytes_text(g.bytes_unfused) << " as separate kernels (saves "
          << bytes_text(g.bytes_unfused - g.bytes_fused) << ")";
    out << "; about " << g.registers << " live values per work-item\n";
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
    out << "\n/* ---- kernel " << k << " ---- */\n" << kernels[k].kernel.source;
  return out.str();
}

}  // namespace fugue
