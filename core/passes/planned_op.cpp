#include "passes/planned_op.h"

#include <algorithm>
#include <cstdio>

#include "errors.h"

namespace fugue {

std::string describe_call(const Program& program, const Statement& st) {
  std::string outs, ins;
  const auto& op = *st.op;
  for (uint32_t i : op.outputs()) outs += (outs.empty() ? "" : ", ") + st.operands[i];
  for (uint32_t i : op.inputs()) {
    const Symbol& s = program.symbol(st.operands[i]);
    std::string text = s.name;
    if (s.inline_number) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", s.const_value);
      text = buf;
    }
    ins += (ins.empty() ? "" : ", ") + text;
  }
  auto colon = st.where.rfind(':');
  std::string pointer = colon == std::string::npos ? st.where : st.where.substr(colon + 1);
  return pointer + " " + op.name() + " " + outs + " = (" + ins + ")";
}

bool is_pointwise(const abi::Partition& part) {
  return part.kind == FUGUE_PARTITION_ELEMENTWISE && !part.has_halo();
}

std::string axes_text(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t d = 0; d < std::max<size_t>(v.size(), 1); ++d)
    s += (d ? ", " : "") + std::to_string(abi::Partition::at(v, d));
  return s + ")";
}

std::string partition_text(const abi::Partition& p) {
  switch (p.kind) {
    case FUGUE_PARTITION_NONE: return "NONE";
    case FUGUE_PARTITION_ELEMENTWISE: return p.has_halo() ? "ELEMENTWISE with halo " + axes_text(p.halo) : "ELEMENTWISE";
    case FUGUE_PARTITION_TILE: return "TILE with halo " + axes_text(p.halo);
    case FUGUE_PARTITION_BATCH: return "BATCH along axis " + std::to_string(p.batch_axis);
    case FUGUE_PARTITION_WHOLE: return "WHOLE";
    case FUGUE_PARTITION_SCATTER: return "SCATTER";
  }
  return "?";
}

int64_t batch_entries(const fugue_type& t, const abi::Partition& part) {
  int64_t n = 1;
  for (int32_t d = 0; d <= part.batch_axis && d < static_cast<int32_t>(t.rank); ++d) n *= t.shape[d];
  return n;
}

int64_t entry_elements(const fugue_type& t, const abi::Partition& part) {
  int64_t n = 1;
  for (uint32_t d = static_cast<uint32_t>(std::max(part.batch_axis + 1, 0)); d < t.rank; ++d) n *= t.shape[d];
  return n;
}

bool touches(const Program& program, const PlannedOp& p, size_t k) {
  return !program.symbol(p.statement->operands[k]).compile_time() && p.partition(k).kind != FUGUE_PARTITION_NONE;
}

bool pointwise_access(const PlannedOp& p, size_t k) {
  bool write = p.writes(k);
  if (write && p.level() != FUGUE_LEVEL_ELEMENT) return false;  // ITEM ops may write after the loop
  const auto& part = p.partition(k);
  if (is_pointwise(part)) return p.level() >= FUGUE_LEVEL_ITEM;
  // A scalar in a one-element iteration space is the single work-item's own element.
  return p.level() == FUGUE_LEVEL_ELEMENT && part.kind == FUGUE_PARTITION_WHOLE &&
         p.types[k].kind == FUGUE_KIND_SCALAR && p.plan.launch.iteration[0] == 1;
}

namespace {

// A plan is the plugin's word; check it before the planner and the generator rely on it.
void check_plan(const Program& program, const PlannedOp& p) {
  const auto& plan = p.plan;
  const auto& st = *p.statement;
  auto bad = [&](const std::string& what) { throw DeviceError(p.label + ": the plugin's plan " + what); };
  if (plan.partitions.size() != st.operands.size())
    bad("gives " + std::to_string(plan.partitions.size()) + " partitions for " + std::to_string(st.operands.size()) +
        " operands");
  if (plan.level < FUGUE_LEVEL_DEVICE || plan.level > FUGUE_LEVEL_ELEMENT)
    bad("has an unknown level " + std::to_string(plan.level));
  for (size_t w = 0; w < plan.workspaces.size(); ++w)
    if (!fugue_dtype_supported(plan.workspaces[w].dtype) || plan.workspaces[w].elements_per_group < 0)
      bad("describes workspace " + std::to_string(w) + " wrongly");
  if (plan.level != FUGUE_LEVEL_DEVICE && (plan.launch.iteration[0] < 0 || plan.launch.local_max < 1))
    bad("has a negative iteration space or no work-group size");
  if (plan.entry_teams && plan.level != FUGUE_LEVEL_BLOCK)
    bad("asks for entry teams at " + level_name(plan.level) + " level: teams share out a BLOCK-level operation's entries");
  if (plan.level == FUGUE_LEVEL_BLOCK && plan.phases != FUGUE_PHASE_BODY) bad("at BLOCK level emits phases other than BODY");
  if (plan.own_kernels_alone && plan.level == FUGUE_LEVEL_DEVICE)
    bad("asks to run its own kernels where it is alone at DEVICE level, where it always does (own_kernels_alone is for "
        "ELEMENT, ITEM and BLOCK plans)");
  if (plan.own_kernels_alone && !st.op->has_execute())
    bad("asks to run its own kernels where it is alone (own_kernels_alone), but the operation has no execute function");
  for (size_t k = 0; k < plan.partitions.size(); ++k) {
    const auto& part = plan.partitions[k];
    if (part.kind < FUGUE_PARTITION_NONE || part.kind > FUGUE_PARTITION_SCATTER)
      bad("gives operand " + std::to_string(k) + " an unknown partition kind " + std::to_string(part.kind));
    if (part.kind == FUGUE_PARTITION_TILE) {
      const auto nonzero = [](const std::vector<int64_t>& v) {
        return std::any_of(v.begin(), v.end(), [](int64_t e) { return e != 0; });
      };
      if (plan.level != FUGUE_LEVEL_ELEMENT || p.types[k].kind != FUGUE_KIND_ARRAY || p.writes(k))
        bad("gives operand " + std::to_string(k) + " a TILE partition: only arrays an ELEMENT-level operation reads "
            "are tiled");
      if (nonzero(part.group_tile) || nonzero(part.item_tile) || nonzero(part.item_stride) || part.cyclic)
        bad("gives operand " + std::to_string(k) + " a TILE partition with tile sizes: the core chooses them (leave "
            "group_tile, item_tile, item_stride and cyclic 0)");
    }
    const fugue_type& t = p.types[k];
    const bool touched = part.kind != FUGUE_PARTITION_NONE && !program.symbol(st.operands[k]).compile_time();
    if (part.kind == FUGUE_PARTITION_BATCH) {
      if (plan.level != FUGUE_LEVEL_BLOCK)
        bad("gives operand " + std::to_string(k) + " a BATCH partition at " + level_name(plan.level) +
            " level: batches are lowered at BLOCK level (an entry per work-group, or per team with entry_teams)");
      if (t.kind != FUGUE_KIND_ARRAY)
        bad("gives operand " + std::to_string(k) + ", which is not an array, a BATCH partition");
      if (part.batch_axis < -1 || part.batch_axis >= static_cast<int32_t>(t.rank))
        bad("gives operand " + std::to_string(k) + " a BATCH partition along axis " + std::to_string(part.batch_axis) +
            ", outside its " + std::to_string(t.rank) + " axes (-1: one entry)");
      if (batch_entries(t, part) != plan.launch.iteration[0])
        bad("gives operand " + std::to_string(k) + " " + std::to_string(batch_entries(t, part)) +
            " batch entries, but launches " + std::to_string(plan.launch.iteration[0]) + " work-groups");
    }
    if (part.kind == FUGUE_PARTITION_SCATTER &&
        (t.kind != FUGUE_KIND_ARRAY || !p.writes(k) || (plan.level != FUGUE_LEVEL_ITEM && plan.level != FUGUE_LEVEL_ELEMENT)))
      bad("gives operand " + std::to_string(k) + " a SCATTER partition: only arrays an ELEMENT- or ITEM-level plan "
          "writes (in place, or outputs the core zeroes first) are updated by atomics");
    // The program's fault: an array updated by atomics (zeroed first when an output) cannot also be what
    // the same operation reads, which the updates would change under it.
    if (part.kind == FUGUE_PARTITION_SCATTER)
      for (size_t j = 0; j < st.operands.size(); ++j)
        if (j != k && st.operands[j] == st.operands[k])
          throw UserError(st.where + ": " + st.op->name() + " updates '" + st.operands[k] + "' at positions its data decide, so it cannot "
                          "also read it (as its operand '" + st.op->operands()[j]->name + "'): give the result a name of its own");
    if (plan.level == FUGUE_LEVEL_BLOCK && touched) {
      if (part.kind != FUGUE_PARTITION_BATCH && part.kind != FUGUE_PARTITION_WHOLE)
        bad("gives operand " + std::to_string(k) + " of a BLOCK-level plan a " + partition_text(part) +
            " partition: a work-group reaches its entry (BATCH) or reads a whole value (WHOLE)");
      if (part.kind == FUGUE_PARTITION_WHOLE && p.writes(k))
        bad("writes operand " + std::to_string(k) + " WHOLE at BLOCK level, where every work-group would write "
            "it: partition it BATCH");
    }
    if (std::any_of(part.halo.begin(), part.halo.end(), [](int64_t h) { return h < 0; }))
      bad("gives operand " + std::to_string(k) + " a negative halo");
    // Generated kernels read a kind with storage's parts (read_part_at, 2.8); only DEVICE-level operations
    // write them or reach them otherwise.
    if (plan.level != FUGUE_LEVEL_DEVICE && program.symbol(st.operands[k]).compound() &&
        (p.writes(k) || part.kind != FUGUE_PARTITION_WHOLE))
      bad("reaches operand " + std::to_string(k) + ", a " + program.symbol(st.operands[k]).kind_text() +
          " (a kind with storage), at a level other than DEVICE " + (p.writes(k) ? "and writes it" : "partitioned " + partition_text(part)) +
          ": generated kernels only read the parts of such a value, partitioned WHOLE (read_part_at)");
  }
}

}  // namespace

void plan_operation(const Program& program, const Statement& st, const DeviceInfo& device, PlannedOp& p) {
  p.statement = &st;
  p.device = device.description();
  program.call(st, p.descriptor, &p.device);
  p.label = describe_call(program, st);
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const Symbol& s = program.symbol(st.operands[i]);
    if (s.dtype != DType::None && abi::component_dtype(static_cast<fugue_dtype>(s.dtype)) == FUGUE_DTYPE_F64 &&
        !device.fp64 && !s.inline_number)
      throw UserError(st.where + ": operand '" + s.name + "' is " + std::string(dtype_name(s.dtype)) + ", but " +
                      device.name + " has no double precision; choose another device with --device or use " +
                      (s.dtype == DType::F64 ? "f32" : "c64"));
  }
  try {
    p.plan = st.op->plan(p.call);
    p.cost = st.op->cost(p.call);
  } catch (const UserError& e) {
    throw UserError(st.where + st.pointer_of(e.what()) + ": " + e.what());
  }
  check_plan(program, p);
}

}  // namespace fugue
