// generated_kernel.h: what code generation produces for one kernel of a plan: its launch, its
// OpenCL source and what each kernel argument is bound to. Plain data: the plan holds it, the
// executor builds and runs it, `fugue explain` prints it.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fugue {
struct Statement;
}

namespace fugue {

// The launch the core chose for a kernel.
struct Launch {
  int64_t local_size = 1;
  int64_t num_groups = 0;  // 0: nothing to do (empty iteration space)
  // How a work-item walks its elements when there are more elements than items: false = cyclic
  // (grid-stride; neighbouring items touch neighbouring elements, which GPUs coalesce), true =
  // blocked (each item a contiguous run, which CPUs stream through their caches).
  bool blocked = false;
  // BLOCK level without teams: each work-group takes a contiguous run of entries (CPUs), not entries a
  // stride of work-groups apart.
  bool entry_runs = false;
  int64_t unroll = 1;  // grid-stride: elements per work-item per loop trip
  // Tiled walk of a [grid_rows, grid_cols] iteration space (tile_cols 0: flat): each work-group takes
  // tiles of tile_rows x tile_cols cells in turn, tile_cols * tile_rows = local_size.
  int64_t grid_rows = 0, grid_cols = 0, tile_rows = 0, tile_cols = 0;
  // Column strips of a [grid_rows, grid_cols] iteration space (0: none): work-item lx of a group takes
  // column (block * tile_cols + lx), tile_cols = local_size, and walks strip_rows rows down it, so
  // that the rows above and below a cell are ones it has just read (hits in its compute unit's cache).
  int64_t strip_rows = 0;
  // Tiled walk only: the arrays the operations read as TILE, staged each tile with its halo (rows,
  // columns) in local memory before the tile's cells are computed (read_offset then reads them there).
  std::map<std::string, std::pair<int64_t, int64_t>> staged;
  bool stage_tiles() const { return !staged.empty(); }
  int64_t tile_passes = 1;  // staged tiles: each work-item computes this many cells, tile_rows apart
  // Tile stages (FusedGroup::stages): one [tile_rows, tile_cols] tile of the [grid_rows, grid_cols]
  // grid per work-group at a time, on a 2-D launch: work-groups of local_dims, group_dims of them
  // (dimension 0 along the columns; dimension 1 takes tile rows in turn beyond group_dims[1]).
  bool tile_stages = false;
  // The NDRange (1 to 3 dimensions): local_size is the product of local_dims and num_groups that of
  // group_dims when work_dim > 1; a 1-D launch uses local_size and num_groups alone.
  uint32_t work_dim = 1;
  // work_dim 3 without tile stages: one cell of a [grid_dims[0] planes, [1] rows, [2] columns] grid per
  // work-item, columns along dimension 0.
  int64_t grid_dims[3] = {0, 0, 0};
  int64_t local_dims[3] = {1, 1, 1};
  int64_t group_dims[3] = {1, 1, 1};
  // Batched kernels with teams (FusedGroup::teams): the work-items per entry and the entries a
  // work-group holds side by side (local_size = team * entries_per_group); team 0: one entry per group.
  int64_t team = 0, entries_per_group = 1;
  // Extents the operations ask for (fugue_emit_api.extent) are kernel arguments, so that one compiled
  // kernel serves every size; else literals the compiler may fold.
  bool extent_arguments = false;
  // Conformance only (Instrumentation): > 1 computes just the elements i % sample_modulus == residue.
  int64_t sample_modulus = 0, sample_residue = 0;
  // Operations with a FINALIZE phase (reductions over the work-groups' partials): the last work-group
  // to finish runs it at the end of the kernel, counting finished groups in a buffer of its own
  // (KernelArg::Kind::GroupsDone), instead of a second kernel of one work-group (1-D launches only).
  bool last_group_finalizes = false;
};

// What a kernel argument is bound to.
struct KernelArg {
  enum class Kind { Symbol, Shadow, Workspace, Extent, Dimension, GroupsDone };
  Kind kind = Kind::Symbol;
  // Symbol: its buffer; Shadow: the buffer that replaces it after the kernel; Extent: the buffer
  // holding its run-time length
  std::string symbol;
  size_t op = 0;           // Workspace: index of the op in the group
  uint32_t workspace = 0;  // Workspace: its index within the op's plan
  uint32_t axis = 0;       // Dimension: the symbol's extent along this axis, a long
  // GroupsDone: the kernel's own int, 0 between launches, counting the work-groups that have finished
  // (Launch::last_group_finalizes).
};

// Arguments: main_args, then the element count (`int` or `long`, as `wide_index` says); the finalize
// kernel takes finalize_args, then the number of work-groups of the main kernel (`int`).
struct GeneratedKernel {
  std::string source;  // both kernels, ready to build
  std::string main_name;
  std::string finalize_name;  // empty when no op has a FINALIZE phase, or the last work-group runs it
  std::vector<KernelArg> main_args;
  std::vector<KernelArg> finalize_args;
  Launch launch;
  int64_t elements = 0;  // the main kernel's iteration count
  bool wide_index = false;
  bool uses_fp64 = false;
  // Operations whose code asked where it stands in the whole launch (the element's flat index, the
  // entry's number, the work-group's): placement.h keeps such programs whole.
  std::set<const Statement*> asks_position;
};

}  // namespace fugue
