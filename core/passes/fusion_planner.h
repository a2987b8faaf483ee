// fusion_planner.h: decides how a program runs: which operations share a kernel, which temporaries
// never reach global memory, and which copies become buffer swaps. Every decision has a reason
// `fugue explain` prints.
//
// Within each basic block, operations are taken in program order; an operation joins the kernel being
// built when (1) it is legal (Hindemith's rule: same iteration space, a common work-group size in
// every op's range, and every operand written in the kernel partitioned identically by the ops that
// share it; a value produced in the kernel is never read beyond its own element, and a value read
// beyond its own element is never overwritten by a later op of the kernel), (2) it fits the device
// (registers, local memory) and (3) the cost model says one kernel is faster than two (bytes saved
// against parallelism lost). Read-only operands need no agreement: any partition of them is safe.
//
// Promotion: a value written in a kernel that is not live after its last operation is kept in a
// register and never allocated. Copy elimination: `x = t` by an identity operation becomes a swap of
// the two buffers when t's value is dead afterwards.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "passes/dataflow.h"
#include "device/device_manager.h"
#include "passes/planned_op.h"

namespace fugue {

struct PlanOptions {
  bool fuse = true;              // --no-fuse turns it off
  bool eliminate_copies = true;  // --no-swap turns it off
};

// One kernel: consecutive operations of a basic block sharing one launch.
struct FusedGroup {
  std::vector<const PlannedOp*> ops;
  abi::Plan plan;           // the merged level and launch range (partitions unused)
  SymbolSet global_reads;   // read from global memory
  SymbolSet stored;         // written and stored to global memory
  SymbolSet promoted;       // written, kept in registers only
  SymbolSet shadowed;       // stored into a second buffer that replaces the symbol's after the kernel
  std::map<std::string, std::string> stored_why;  // why each stored value is not promoted
  bool wide_reads = false;  // some operand is read beyond the element being computed (halo, WHOLE array)
  // A 2-D grid read with a halo whose cells are the iteration space ([rows, cols]; 0: none): the
  // launch may then walk it tile by tile, so that neighbouring rows share a work-group's cache.
  int64_t grid_rows = 0, grid_cols = 0;
  // Run-time extents: the symbol whose actual length bounds the iteration space ("" when it is all
  // static), and the elements per unit of that length (the iteration space is capacity * row).
  std::string extent_symbol;
  int64_t extent_row = 0;
  SymbolSet runtime_reads;   // operands with run-time lengths the kernel reads: theirs must agree
  SymbolSet runtime_writes;  // stored results with run-time lengths: they take the kernel's
  double bytes_unfused = 0; // the ops' traffic as separate kernels
  double bytes_fused = 0;   // this kernel's traffic
  double flops = 0;
  int registers = 0;        // estimated live values per work-item
};

// What running one operation statement means.
struct Step {
  enum class Kind { Kernel, Device, Swap };
  Kind kind = Kind::Kernel;
  size_t group = 0;         // Kernel: the group; the statement that starts it launches it
  bool starts_group = false;
  const PlannedOp* op = nullptr;
  std::string target, source;  // Swap: target takes source's buffer (and the other way round)
};

struct PlanNote {
  const Statement* statement = nullptr;
  std::string text;
};

struct ExecutionPlan {
  Dataflow dataflow;
  std::vector<std::unique_ptr<PlannedOp>> ops;
  std::vector<FusedGroup> groups;
  std::map<const Statement*, Step> steps;
  std::vector<PlanNote> not_fused;      // the op starts a new kernel: why
  std::vector<PlanNote> swaps;          // copies that became buffer swaps
  std::vector<PlanNote> copies_kept;    // identity ops that stay kernels: why
};

ExecutionPlan plan_execution(const Program& program, const DeviceInfo& device, const PlanOptions& options);

// "1.20 MB": amounts of traffic in the planner's reasons and in `fugue explain`.
std::string bytes_text(double bytes);

}  // namespace fugue
