// launch.h: the "choose launch" pass. Picks work-group size and group count for each kernel on a
// device, from a small typed table of per-device defaults (GPU vs CPU), within the range its
// operations accept, and the walk its reads suit (grid-stride, blocked, tiled).
//
// Before: kernels with their operations and promotions. After: plan.kernels[i].launch for each.
#pragma once
#include "device/device_manager.h"
#include "codegen/generated_kernel.h"
#include "passes/execution_plan.h"

namespace fugue {

struct LaunchTuning {
  int64_t element_local = 256;        // work-group size for ELEMENT level
  // Cap on groups (grid-stride beyond it); 0: one element per item. On the H100, 64 groups of 256 per
  // compute unit moved 2.61 TB/s for 2*x over 2^26 f32 against 1.97 TB/s with one element per item;
  // on the H200, 128 beat 64 for the fused chain (1.044 vs 1.068 ms), the 5-point Laplacian on 8192^2
  // (1.77 vs 1.82 ms per 10 iterations) and Jacobi (2.26 vs 2.32 ms), scripts/gpu_fusion_sweep.sh.
  int64_t element_groups_per_cu = 128;
  int64_t item_local = 256;           // ITEM level (reductions)
  int64_t item_groups_per_cu = 8;     // ITEM level: partial results per compute unit
  bool blocked_items = false;         // walk a work-item's elements as one contiguous run
  // Grid-stride walks: elements per work-item per loop trip, so several loads are in flight at once.
  // On the H200, 2 took the fused 6-op chain over 2^28 f32 from 1.124 to 1.084 ms, but slowed the
  // 5-point Laplacian from 1.81 to 1.99 ms per 10 iterations: kernels with halo reads keep 1.
  int64_t element_unroll = 2;
  // The same for kernels that update data-dependent places (SCATTER), whose loads are issued before
  // any element is binned (kernel_generator's preload): on the H200 a histogram of 2^28 f32 into 256
  // bins took 0.339 ms with 2, 0.275 with 4 and 0.257 with 8 (0.76x, 0.93x, 0.99x copy).
  int64_t scatter_unroll = 8;
  // Columns of the tiles in which a work-group walks a 2-D grid read with a halo (0: a flat walk).
  // Off: on the H200 tiles of 32 x 8 took the 5-point Laplacian on 8192^2 from 1.77 to 2.09 ms per 10
  // iterations (64 or 128 columns: 2.04-2.06 ms); the flat walk's neighbour rows already hit in L2.
  int64_t grid_tile_cols = 0;
  // Rows each work-item walks down its column of a 2-D grid read with a halo (0: no strips), its group
  // taking as many neighbouring columns as it has work-items: the rows above and below a cell are then
  // ones the same work-items just read, hits in their compute unit's cache rather than trips to L2. On
  // the H100 (8192^2 f32, scripts/gpu_stencil_sweep.sh) strips of 8 took the 5-point stencil from 0.81-0.84x
  // to 0.92-0.94x copy, the 9-point clamp stencil with an axpy from 0.66-0.71x to 0.80-0.82x and Jacobi
  // from 0.93-0.96x to 0.93-0.99x; 4 rows did as well, 16 to 64 less (0.88-0.83x for the 5-point).
  // With a work-group per block of strips (grid_strip_groups_per_cu 0), shorter strips won (H100, copy
  // 2.91-2.97 TB/s, scripts/gpu_stencil_sweep.sh): 3 rows took the 9-point stencil to 0.2108-0.2111 ms
  // (0.86-0.87x copy; 4 rows 0.2129, 8 rows 0.2236, 8 rows taking strips in turn 0.2261), Jacobi to
  // 0.2715-0.2749 ms (1.01x) and the 5-point stencil to 0.2043-0.2055 ms (0.88-0.90x; 0.1956 with 8).
  int64_t grid_strip_rows = 3;
  // Rows of a strip a work-item's loop takes per trip (their loads independent, so in flight together).
  int64_t grid_strip_unroll = 1;
  // Work-groups per compute unit of a strip walk, each taking strips in turn (0: a work-group per
  // block of strips, no loop over them; else element_groups_per_cu's cap applies as well).
  int64_t grid_strip_groups_per_cu = 0;  // -1: as element_groups_per_cu
  // Columns of the tiles in which a work-group stages the arrays its operations read as TILE (their
  // tile plus halo) in local memory (0: no staging; the reads go to global memory).
  int64_t local_tile_cols = 0;
  int64_t local_tile_passes = 1;  // cells each work-item computes per staged tile, a group's rows apart
  // Tile stages (FusedGroup::stage_of: a value read around its element in the kernel that computes
  // it): the tile a work-group computes, rows x columns (stage_tile_cols 0: no tile stages, such
  // reads end the kernel), and the work-group's size (0: element_local). On the H100 the biharmonic
  // step x - a L(L(x)) on 8192^2 f32 (examples/bench/stencil_chain.json, scripts/gpu_tile_stages.sh)
  // took 0.360 ms per iteration with tiles of 32 x 64 and 512 work-items, 0.385 with 16 x 32 and 256,
  // 0.414 with 32 x 32 and 256, against 0.479 as two kernels (0.365 against 0.480 once a cell's place
  // came from its number by a division, which PoCL needs). On PoCL here it took 3-5x as long as two
  // kernels (2048^2: 295-408 ms for 10 iterations against 70-105): its work-items cannot share the
  // index arithmetic the flat walk vectorizes, so CPUs keep them off.
  int64_t stage_tile_rows = 32;
  int64_t stage_tile_cols = 64;
  int64_t stage_local = 512;
  // (Unrolling each stage's loop over its cells was slower on the H100: 0.556 against 0.494 ms, tiles of
  // 32 x 32.)
  // A 3-D grid read with a halo: a 3-D launch, one cell per work-item, work-groups of grid3_cols x
  // grid3_rows x grid3_planes cells (0: the flat walk). On the H100 the 7-point stencil with an update
  // on 512^3 f32 (examples/bench/stencil3d.json) took 0.562 ms per iteration with 256 x 1 x 1, 0.577
  // with 128 x 2 x 1, 0.580 with 32 x 8 x 1 and 0.601 with 32 x 4 x 2, against 0.935 for the flat walk
  // (0.65x against 0.39x copy).
  int64_t grid3_cols = 256, grid3_rows = 1, grid3_planes = 1;
  // BLOCK level (one batch entry per work-group at a time): groups per compute unit before each group
  // takes several entries in turn (0: one group per entry). On the H100, softmax(x * s + b) over
  // [65536, 1024] f32 took 0.205 ms with 128, 0.207 with one group per entry, 0.212 with 64 and 0.227
  // with 32 (scripts/gpu_softmax.sh, copy 0.727 ms for 2 x 1 GiB in the same run).
  int64_t block_groups_per_cu = 128;
  int64_t block_local = 0;  // BLOCK level: the work-group size (0: the operation's preference)
  // BLOCK level without teams: each work-group takes a contiguous run of entries rather than entries a
  // stride of work-groups apart. On PoCL (2 cores) gemm of 20,000 f64 products of 8 took 1.0-1.1 ms in
  // runs against 3.4-3.8 in turn (a hand-written C = A + B over the same entries 1.1 against 2.5): a
  // CPU core's prefetchers follow a run, not a stride of 32 entries.
  bool entry_runs = false;
  // BLOCK level with teams (fugue_plan.entry_teams): the work-items a work-group holds at most, as
  // entries side by side, each given to a team of the size the operation prefers. A team of at most
  // half of it runs several entries per work-group; a larger one gets a work-group of its own. On the
  // H100, softmax(x * s + b) over 2^26 f32 (scripts/gpu_softmax_rows.sh) with 64 against 128: rows of 4
  // 0.222 against 0.218 ms, of 16 0.228 against 0.231, of 64 0.275 against 0.293, of 256 0.248 against
  // 0.253 (256 and 512 were slower still; teams of 128 for rows of 1024 took 0.280 ms against 0.207 with a
  // work-group per row). On PoCL, teams of 64 for rows of 1024 ran 377-384 ms against 354-365 ms with a
  // work-group per row ([16384, 1024]).
  int64_t block_team_items = 64;
  // Extents as kernel arguments (fugue_emit_api.extent), so that a new size compiles nothing: on CPUs,
  // where compiling is what a first run waits for (PoCL: the optical-flow programs on a new frame size
  // start in 0.2-0.5 s instead of 3.7-11.5 s). Not on GPUs: on the H100 the 5-point stencil on 8192^2 took
  // 2.28 ms against 2.22 with literals (divisions by a constant are cheaper), Jacobi 2.93 against 2.92
  // (scripts/gpu_extents.sh); NVIDIA's compiles are short.
  bool extent_arguments = false;
  // Teams on devices with banks (not blocked_items): matrices held in local memory laid out a row and a
  // spare element apart (FusedGroup::padded_rows), 0: packed (for measuring what it saves).
  bool pad_rows = true;
  // Several devices (placement.h): the least the arrays split by rows must hold together before a
  // program is split; smaller work stays on the first device. A split run costs about 0.25 ms more
  // than one device's: on four H200s batched LU of 32 x 32 f64 (examples/bench/lu_batch.json, wall
  // time) took 0.35 ms against 0.05 at 1,000 entries (16 MB), 0.44 against 0.31 at 16,000 (262 MB),
  // 0.67 against 1.06 at 64,000 (1 GB) and 4.40 against 16.27 at 10^6.
  int64_t split_bytes = int64_t{512} << 20;
  // A split whose kernels read around each element (placement.h): each device holds this many reaches
  // of its neighbours' rows and trades them once they have all been read stale, so that the devices
  // wait for each other once every `halo_depth` stencil steps, not at every one; the rows computed
  // twice (a few of 10^4) cost less than the waits.
  int64_t halo_depth = 8;
  // A split where the devices write an array by rows that an operation reads whole (placement.h's
  // gathered arrays: conjugate gradients' direction) gathers every device's rows into each device's copy
  // through the host after every write. That costs far more than the split saves: conjugate gradients
  // on a 4473^2 Poisson matrix (100 iterations, f32) took 50.4 ms on one H200, 4019 on two and 1851 on
  // four. Such programs stay on one device unless this is set (FUGUE_TUNING=gather_rows=1).
  bool gather_rows = false;
  // A reduction's FINALIZE phase (the work-groups' partials combined) run by the last work-group to
  // finish, found by counting finished groups with an atomic, rather than by a kernel of one
  // work-group after the main one: a launch less per reduction (FUGUE_TUNING=last_group_finalize=0:
  // the second kernel).
  bool last_group_finalizes = true;
};

LaunchTuning tuning_for(const DeviceInfo& device);

// `kernel_max_local`: the built kernel's CL_KERNEL_WORK_GROUP_SIZE when known (0: not yet).
Launch choose_launch(const abi::Plan& plan, const DeviceInfo& device, int64_t kernel_max_local = 0);

// choose_launch for a fused kernel's merged plan; a launch that cannot fit the device names the
// kernel's first statement.
Launch choose_launch(const FusedGroup& group, const DeviceInfo& device, int64_t kernel_max_local = 0);
// The launch of a fused kernel: choose_launch for its merged plan, then the walk its reads suit.
Launch choose_group_launch(const FusedGroup& group, const DeviceInfo& device, int64_t kernel_max_local = 0);

}  // namespace fugue

namespace fugue {

void choose_launches(const DeviceInfo& device, const PlanOptions& options, ExecutionPlan& plan);

}  // namespace fugue
