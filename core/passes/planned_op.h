// planned_op.h: one operation call of the program with its plan: the plugin's plan and cost for the
// call's operand types, checked before the planner and the generator rely on them.
#pragma once
#include <string>
#include <vector>

#include "device/device_manager.h"
#include "program/program.h"

namespace fugue {

struct PlannedOp {
  const Statement* statement = nullptr;
  fugue_device_desc device{};  // what the plugin sees of the device (strings: the DeviceInfo's)
  CallDescriptor descriptor;
  const fugue_call& call = descriptor.call;
  const std::vector<fugue_type>& types = descriptor.types;
  abi::Plan plan;
  fugue_cost cost{};
  std::string label;  // "/body/0 array.mul t = (a, x)"

  PlannedOp() = default;
  PlannedOp(const PlannedOp&) = delete;  // call points into this object
  PlannedOp& operator=(const PlannedOp&) = delete;

  fugue_level level() const { return plan.level; }
  const abi::Partition& partition(size_t operand) const { return plan.partitions[operand]; }
  // Whether the op reads / writes the operand (an INOUT one both).
  bool reads(size_t operand) const { return statement->op->reads(operand); }
  bool writes(size_t operand) const { return statement->op->writes(operand); }
};

// Plans `statement` for `device`. Throws UserError for what the program must change (an f64 operand
// on a device without doubles) and DeviceError for a plan the plugin got wrong.
void plan_operation(const Program& program, const Statement& statement, const DeviceInfo& device, PlannedOp& out);

// "/body/2 array.add z = (z, 0.5)": the JSON pointer first, so truncated labels stay distinct; numbers
// written in the program appear as numbers.
std::string describe_call(const Program& program, const Statement& statement);

using abi::level_name;

// A BATCH partition of an array of type `t`: how many entries (the product of axes 0..batch_axis)
// and how many elements each holds (the product of the axes after it).
int64_t batch_entries(const fugue_type& t, const abi::Partition& part);
int64_t entry_elements(const fugue_type& t, const abi::Partition& part);

// Does `part` touch exactly the element being computed (ELEMENTWISE without halo)?
bool is_pointwise(const abi::Partition& part);

// "ELEMENTWISE with halo (1, 1)", "BATCH along axis 0": a partition as `fugue explain` names it.
std::string partition_text(const abi::Partition& part);
// "(1, 1)": per-axis values (a halo, a tile), at least one.
std::string axes_text(const std::vector<int64_t>& values);

// Does core-generated code touch operand k of `p` (an operand that is not compile-time, with a
// partition)? Compile-time operands are baked in; NONE is left to the operation.
bool touches(const Program& program, const PlannedOp& p, size_t k);

// Is operand k touched only at the work-item's own element, inside the element loop? Only then can
// its value live in a register between fused operations.
bool pointwise_access(const PlannedOp& p, size_t k);

}  // namespace fugue
