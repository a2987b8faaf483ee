// execution_plan.h: the plan the passes of lower.h build, from the program's operations to the
// generated kernels. Each pass fills in its part; the comment on each field names the pass.
//
// How a program runs: every operation statement is a Step — a kernel (a FusedGroup of consecutive
// ELEMENT / ITEM / BLOCK operations of one basic block), a device-level operation that enqueues its
// own work, or a copy turned into a swap of two buffers.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/generated_kernel.h"
#include "passes/dataflow.h"
#include "passes/planned_op.h"

namespace fugue {

struct PlanOptions {
  bool fuse = true;              // --no-fuse turns it off
  bool eliminate_copies = true;  // --no-swap turns it off
  // Conformance only (Instrumentation): > 1 makes generated kernels compute just the elements
  // i % sample_modulus == sample_residue.
  int64_t sample_modulus = 0, sample_residue = 0;
  // Conformance only: false keeps an operation that no other joins in its generated kernel even where it
  // asks to run as its own kernels alone (fugue_plan.own_kernels_alone), so that the kernel is checked too.
  bool own_kernels_alone = true;
};

// One kernel: consecutive operations of a basic block sharing one launch.
struct FusedGroup {
  // fusion_cost
  std::vector<const PlannedOp*> ops;
  abi::Plan plan;           // the merged level and launch range (partitions unused)
  double bytes_unfused = 0; // the ops' traffic as separate kernels
  double bytes_fused = 0;   // this kernel's traffic
  double flops = 0;
  int registers = 0;        // estimated live values per work-item
  // promote
  SymbolSet global_reads;   // read from global memory
  SymbolSet stored;         // written and stored to global memory
  SymbolSet promoted;       // written, kept in registers only
  SymbolSet shadowed;       // stored into a second buffer that replaces the symbol's after the kernel
  SymbolSet zeroed;         // outputs updated by atomics (SCATTER, not in place): zeroed before the kernel
  std::map<std::string, std::string> stored_why;  // why each stored value is not promoted
  bool wide_reads = false;  // some operand is read beyond the element being computed (halo, WHOLE array)
  // A 2-D grid read with a halo whose cells are the iteration space ([rows, cols]; 0: none): the
  // launch may then walk it tile by tile, so that neighbouring rows share a work-group's cache.
  int64_t grid_rows = 0, grid_cols = 0;
  // The same for a 3-D grid ([planes, rows, cols]; 0: none), which a 3-D launch may walk.
  int64_t grid_planes = 0, grid3_rows = 0, grid3_cols = 0;
  // Run-time extents: the symbol whose actual length bounds the iteration space ("" when it is all
  // static), and the elements per unit of that length (the iteration space is capacity * row).
  std::string extent_symbol;
  int64_t extent_row = 0;
  SymbolSet runtime_reads;   // operands with run-time lengths the kernel reads: theirs must agree
  SymbolSet runtime_writes;  // stored results with run-time lengths: they take the kernel's
  // Batched kernels (a BLOCK-level operation with BATCH operands, and the element-wise operations
  // fused around it): each work-group takes entries in turn; the kernel's operations run over the
  // entry as segments (a run of element-wise operations walking its elements, or one block-level
  // body) separated by barriers. A value that crosses segments lives in local memory, one entry's worth.
  int64_t entries = 0;                           // 0: not a batched kernel
  std::map<std::string, int64_t> local_values;   // held in local memory: elements per entry
  SymbolSet staged;                              // inputs copied into local memory before their first block-level read
  uint64_t local_bytes = 0;                      // local_values' and the operations' own local memory
  // Teams (fugue_plan.entry_teams): several entries per work-group, a team of work-items each; every
  // array reached through an entry is then in local_values, and local_bytes is per entry. The launch
  // picks the team's size and the entries per work-group.
  bool teams = false;
  // Teams on devices with memory banks: held values whose entries are matrices with rows of this many
  // elements (even), laid out a row and one spare element apart, so that the work-items of a team that
  // each walk a row of their own reach different banks at every step (rows of 16 doubles 16 apart
  // would all land in one bank). local_bytes counts the spare elements.
  std::map<std::string, int64_t> padded_rows;
  // Tile stages: a kernel in which an operation reads, around its element, a value an earlier one of the
  // same kernel computes (a stencil of a stencil). The work-group computes a tile of the grid in stages
  // separated by barriers: stage k computes its operations over the tile widened by stage_reach[k]
  // (rows, columns), so that every value a later stage reads around its cells is at hand; a value one
  // stage writes and a later one reads lives in a local-memory tile (tile_values: the stage whose
  // widened tile it covers). Cells beyond the grid take the wrapped-around cell's value (periodic
  // borders read them); only the tile's own cells are stored. Empty: no stages.
  std::vector<int> stage_of;                                // per operation
  std::vector<std::pair<int64_t, int64_t>> stage_reach;     // per stage
  std::map<std::string, int> tile_values;                   // value -> the stage whose widened tile holds it
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
  Dataflow dataflow;                           // dataflow
  std::vector<std::unique_ptr<PlannedOp>> ops; // plan_operations, in block order
  std::map<const Statement*, const PlannedOp*> planned;  // plan_operations: each statement's
  // eliminate_copies: the identity operations that may become swaps (and why each other one may not)
  std::map<const Statement*, std::string> copy_refusals;  // "" : may become a swap
  // group_operations: the longest runs of operations that may legally share a kernel, and the
  // statements that are not kernels (device-level operations, swaps) as steps
  std::vector<std::vector<const PlannedOp*>> legal_groups;
  std::map<const Statement*, size_t> legal_group_of;
  std::map<const Statement*, std::string> legal_refusals;  // why an operation starts a new one
  std::vector<FusedGroup> groups;              // fusion_cost, then promote
  std::map<const Statement*, Step> steps;      // group_operations and fusion_cost
  std::vector<GeneratedKernel> kernels;        // choose_launch (the launch), generate (the rest); one per group
  std::vector<PlanNote> not_fused;      // the op starts a new kernel: why
  // fusion_cost: operations planned as kernels that no other joined and that run as their own kernels
  // instead (fugue_plan.own_kernels_alone): device-level steps
  std::vector<const Statement*> alone_own_kernels;
  std::vector<PlanNote> swaps;          // copies that became buffer swaps
  std::vector<PlanNote> copies_kept;    // identity ops that stay kernels: why
};

// "1.20 MB": amounts of traffic in the planner's reasons and in `fugue explain`.
std::string bytes_text(double bytes);

// Whether an operation of the group updates an array at data-dependent places (a SCATTER partition):
// such kernels walk more elements a trip (choose_launch) and load them before any is used (generate).
bool updates_by_atomics(const FusedGroup& group);

}  // namespace fugue
