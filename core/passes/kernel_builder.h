// kernel_builder.h: a kernel being built from consecutive operations of a basic block, and the two
// questions the planner asks of each candidate: may it legally join (Hindemith's rule: the same
// iteration space, a common work-group size, every operand written in the kernel partitioned
// identically by the operations that share it, a value produced in the kernel never read beyond its
// own element, a value read beyond its own element never overwritten element-wise except into a
// second buffer; read-only operands need no agreement), and is one kernel worth it (registers and
// local memory within the device's budget, and the cost model: bytes saved against parallelism lost).
//
// Everything a candidate is judged by is kept as a running summary of the kernel so far, so that
// building the kernels of a block of n operations costs about n log n.
#pragma once
#include <memory>
#include <string>

#include "device/device_manager.h"
#include "passes/execution_plan.h"

namespace fugue {

class KernelBuilder {
 public:
  KernelBuilder(const Program& program, const Dataflow& flow, const DeviceInfo& device, const BasicBlock& block);
  ~KernelBuilder();

  bool empty() const;
  // Does an operation of this kernel write `symbol` into a register?
  bool in_register(const std::string& symbol) const;
  // Empty when `x` may legally join the kernel; otherwise the reason it may not.
  std::string why_illegal(const PlannedOp& x) const;
  // Empty when the kernel with `x` (legal) fits the device and beats two kernels; otherwise why not.
  std::string why_unprofitable(const PlannedOp& x) const;
  void add(const PlannedOp& x);
  // The kernel's operations, merged plan, traffic and peak registers into `group`; the builder then
  // starts a new kernel.
  void finish(FusedGroup& group);

 private:
  class State;
  std::unique_ptr<State> state_;
};

}  // namespace fugue
