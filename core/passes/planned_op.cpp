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
    case FUGUE_PARTITION_TILE:
      return "TILE group " + axes_text(p.group_tile) + " item " + axes_text(p.item_tile) + " stride " + axes_text(p.item_stride) +
             (p.cyclic ? " cyclic" : "");
    case FUGUE_PARTITION_BATCH: return "BATCH along axis " + std::to_string(p.batch_axis);
    case FUGUE_PARTITION_WHOLE: return "WHOLE";
  }
  return "?";
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
  for (size_t k = 0; k < plan.partitions.size(); ++k) {
    const auto& part = plan.partitions[k];
    if (part.kind < FUGUE_PARTITION_NONE || part.kind > FUGUE_PARTITION_WHOLE)
      bad("gives operand " + std::to_string(k) + " an unknown partition kind " + std::to_string(part.kind));
    if (part.kind == FUGUE_PARTITION_TILE || part.kind == FUGUE_PARTITION_BATCH)
      bad("gives operand " + std::to_string(k) + " a " +
          (part.kind == FUGUE_PARTITION_TILE ? "TILE" : "BATCH") +
          " partition, which the planner does not lower yet");
    if (std::any_of(part.halo.begin(), part.halo.end(), [](int64_t h) { return h < 0; }))
      bad("gives operand " + std::to_string(k) + " a negative halo");
    // Generated kernels have no accessor for parts yet: a kind with storage is reached at DEVICE level.
    if (plan.level != FUGUE_LEVEL_DEVICE && program.symbol(st.operands[k]).compound())
      bad("reaches operand " + std::to_string(k) + ", a " + program.symbol(st.operands[k]).kind_text() +
          " (a kind with storage), at a level other than DEVICE; its parts are reached only by DEVICE-level operations");
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
    throw UserError(st.where + ": " + e.what());
  }
  check_plan(program, p);
}

}  // namespace fugue
