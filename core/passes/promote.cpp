#include "passes/promote.h"

namespace fugue {

namespace {

struct Access {
  bool write;
  bool pointwise;
};

void promote_group(const Program& program, const Dataflow& flow, FusedGroup& g) {
  // Every access to a symbol core-generated code touches, in order: an in-place operand's read, then
  // its write.
  std::map<std::string, std::vector<Access>> accesses;
  for (const PlannedOp* op : g.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k) {
      if (!touches(program, *op, k)) continue;
      auto& list = accesses[op->statement->operands[k]];
      if (op->reads(k)) list.push_back({false, pointwise_access(*op, k)});
      if (op->writes(k)) list.push_back({true, pointwise_access(*op, k)});
    }
  const int64_t iteration = g.plan.launch.iteration[0];
  const SymbolSet& live_after = flow.at(g.ops.back()->statement).live_out;
  for (const auto& [s, list] : accesses) {
    bool written = false, read_wide = false, all_writes_pointwise = true;
    for (const Access& a : list) {
      if (a.write) {
        written = true;
        all_writes_pointwise &= a.pointwise;
      } else {
        if (!written) g.global_reads.insert(s);
        if (!a.pointwise) read_wide = true;
        if (!a.pointwise && program.symbol(s).kind == SymbolKind::Array) g.wide_reads = true;
      }
    }
    if (!written) continue;
    if (read_wide) {  // written element-wise only (the group pass saw to it), after every wide read
      g.shadowed.insert(s);
      g.stored_why[s] = "read beyond its own element in this kernel, so written to a second buffer";
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
      bool halo = part.kind == FUGUE_PARTITION_ELEMENTWISE && !is_pointwise(part);
      if (halo && t.kind == FUGUE_KIND_ARRAY && t.rank == 2 && t.shape[0] * t.shape[1] == iteration) {
        g.grid_rows = t.shape[0];
        g.grid_cols = t.shape[1];
      }
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

}  // namespace

void promote(const Program& program, ExecutionPlan& plan) {
  for (FusedGroup& g : plan.groups) promote_group(program, plan.dataflow, g);
}

}  // namespace fugue
