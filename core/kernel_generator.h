// kernel_generator.h: turns planned ELEMENT / ITEM / BLOCK operations into OpenCL C, calling each
// plugin's emit through the operand accessors. One kernel (plus an optional one-group finalize
// kernel for reductions) for a list of operations that share a launch; consts are baked in, the
// element count is an argument.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "program.h"

namespace fugue {

// One operation as the generator sees it: the statement, its call (types valid while this lives)
// and its plan.
struct PlannedOp {
  const Statement* statement = nullptr;
  std::vector<fugue_type> types;
  fugue_call call{};
  fugue_plan plan{};
  std::string label;  // "array.mul t = (a, x) at prog.json:/body/0"
};

// The launch the core chose for a kernel.
struct Launch {
  int64_t local_size = 1;
  int64_t num_groups = 0;  // 0: nothing to do (empty iteration space)
  // How a work-item walks its elements when there are more elements than items: false = cyclic
  // (grid-stride; neighbouring items touch neighbouring elements, which GPUs coalesce), true =
  // blocked (each item a contiguous run, which CPUs stream through their caches).
  bool blocked = false;
};

// What a kernel argument is bound to.
struct KernelArg {
  enum class Kind { Symbol, Workspace };
  Kind kind = Kind::Symbol;
  std::string symbol;      // Symbol: the program symbol
  size_t op = 0;           // Workspace: index of the op in the group
  uint32_t workspace = 0;  // Workspace: its index within the op's plan
};

// Arguments: main_args, then the element count (`int` or `long`, as `wide_index` says); the finalize
// kernel takes finalize_args, then the number of work-groups of the main kernel (`int`).
struct GeneratedKernel {
  std::string source;  // both kernels, ready to build
  std::string main_name;
  std::string finalize_name;  // empty when no op has a FINALIZE phase
  std::vector<KernelArg> main_args;
  std::vector<KernelArg> finalize_args;
  Launch launch;
  int64_t elements = 0;  // the main kernel's iteration count
  bool wide_index = false;
  bool uses_fp64 = false;
};

// Generates the kernels for `ops` (one op, or a fusible group) under `launch`.
GeneratedKernel generate_kernel(const std::vector<const PlannedOp*>& ops, const Launch& launch,
                                const std::string& kernel_name);

// A double literal that OpenCL C parses exactly ("2.5", "1e+30", "INFINITY", "NAN").
std::string c_literal(double value);

}  // namespace fugue
