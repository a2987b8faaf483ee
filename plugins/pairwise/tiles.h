// tiles.h: the tiled plan of pairwise.distance and pairwise.kernel (seed 003 §6.4, clPaDi): work-groups
// of 16 x 16 work-items, each computing a block of D of `rows` x `cols` (multiples of 16 up to 128: the
// seed's 36 blockings, 16 to 96, and sides of 112 and 128), every work-item a (rows / 16) x (cols / 16) block in registers, the rows of X and
// Y passing through local memory 16 coordinates at a time. A DEVICE-level kernel with a 2-D launch; the
// blocking comes from the call's "blocking" attribute, else FUGUE_PAIRWISE_TUNING (experiments and
// sweeps: "rows=64,cols=48,layout=contiguous", "row=gpu", "candidates=2", "dot=0", "division=exact"), else the table `fugue tune pairwise` measured
// for the device (pairwise_tuner.h), else a typed per-device table built in (CLBlast's database is the model).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "fugue/sdk_device.hpp"
#include "measures.h"

namespace fugue::pairwise {

// How the tiles divide f32 quotients (chi2, canberra: Measure::quotients) on devices with doubles:
// `native`, by NVIDIA's reciprocal instruction on NVIDIA's GPUs (by `/` elsewhere), the pairs whose
// value is not finite computed again in f64; `emulated`, the same with that instruction's range and
// flushes written out in OpenCL C on any device (for tests); `exact`, by `/`.
enum class Division { exact, native, emulated };

struct Blocking {
  std::string row;   // the table row that decided it ("NVIDIA GPU", ...; " table" when overridden)
  int64_t rows = 0;  // D's rows per work-group (X's), a multiple of 16 up to 128; 0: no tiles (ELEMENT plan)
  int64_t cols = 0;  // D's columns per work-group (Y's)
  // Each work-item's rows and columns of the tile: contiguous runs (vector loads from local memory,
  // vector stores into D), or strided by 16 (scalar).
  bool contiguous = false;
  int64_t depth = 16;     // coordinates staged in local memory at a time (the seed's z): 16 or 32
  bool prefetch = false;  // each work-item loads its share of the next chunk into registers first
  // pairwise.nearest: the most candidates of a row that wait in local memory at a time (0: as many as
  // local memory holds, up to the tile's columns); a tile whose row has more takes further rounds.
  int64_t candidates = 0;
  // pairwise.nearest of euclidean distances: candidates ranked by the dot form first (nearest_dot.h),
  // staging dot_depth coordinates at a time (the table's; FUGUE_PAIRWISE_TUNING's depth sets both).
  bool dot_form = true;
  int64_t dot_depth = 16;
  // CPUs: no tiles, each work-item a block of D (nearest and kernel_sum: a band of rows) with the
  // coordinates in vectors (row_vectors.h); rows and cols are then unused.
  bool vectors = false;
  // pairwise.nearest's dot-form sweep on NVIDIA's tensor cores (mma.sync m16n8k8 tf32) where tf32_sweep
  // allows; the bound of nearest_dot.h then takes the rounding of the coordinates to tf32.
  bool tensor_cores = false;
  // The table's NVIDIA row: native; FUGUE_PAIRWISE_TUNING=division=native|exact|emulated.
  Division division = Division::exact;
};

// Whether the dot-form sweep of pairwise.nearest with blocking b runs on the tensor cores: asked for (the
// table's NVIDIA row, FUGUE_PAIRWISE_TUNING=mma=1), f32 data, rows and cols multiples of 32 (8 warps of
// rows/2 x cols/4), and an sm_90 device (where it was measured) running warps of 32.
bool tf32_sweep(const sdk::Call& call, const Blocking& b);

// The OpenCL C function tf32_rna(float): f32 to tf32 (11 significant bits), as the tensor cores' sweep
// stages the coordinates and nearest_dot.h's norms measure what that takes off them.
std::string tf32_rounding();

// The blocking for the call's device and measure, or (per_row) for pairwise.nearest and kernel_sum (cheap measures, a multiply-add or two per coordinate,
// take larger blocks than those with divisions or powers); throws InvalidArgument naming
// FUGUE_PAIRWISE_TUNING when it does not parse. Blocks whose local tiles do not fit the device come back
// halved.
Blocking blocking_of(const sdk::Call& call, const Measure& m, bool per_row = false);

// The call's "blocking" attribute: "ROWSxCOLS" (multiples of 16 up to 128), "none" (rows = cols = 0),
// "vectors" (row_vectors.h), or nullopt where it is empty (the tables decide); InvalidArgument naming
// the attribute otherwise.
std::optional<Blocking> blocking_attribute(const sdk::Call& call);

// The blocking sides a table may hold, and the classes of measure it holds one for: cheap (a multiply-add
// or two a coordinate), dear (divisions, powers), normed (each row's own sums beside one multiply-add a
// pair: cosine), per_row (pairwise.nearest and kernel_sum's bands).
inline const int64_t kBlockSides[] = {16, 32, 48, 64, 80, 96, 112, 128};
inline const char* const kBlockingClasses[] = {"cheap", "dear", "normed", "per_row"};

// The text explain shows for a tiled plan.
std::string blocking_text(const Blocking& b);

// The OpenCL C function the tiles of measure m with blocking b multiply f32 quotients by (Blocking::division;
// a device with doubles, which the recomputed pairs take), "" where they divide; the text explain adds
// for them ("" if none).
std::string quotient_reciprocal(const sdk::Call& call, const Measure& m, const Blocking& b);
std::string native_quotients_text(const sdk::Call& call, const Measure& m, const Blocking& b);

// The DEVICE-level plan of a tiled operation (its kernels enqueued by execute, no operand reached by
// generated code), `variant` as explain shows it.
sdk::Plan tiled_plan(const sdk::Call& call, const std::string& variant);

// Enqueues D [n, m] = the measure of every pair of rows of X [n, k] and Y [m, k] (operands x, y, d of the
// call), with blocking b.
void enqueue_tiles(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
                   uint32_t y, uint32_t d);

// Where pairwise.nearest's tiled sweep keeps its lists and which rows it takes.
struct NearestSweep {
  cl_mem d = nullptr, index = nullptr;  // the lists [rows of X, width]: values ascending, then indices (i64)
  int64_t width = 0;                    // places a row
  // The dot form (nearest_dot.h): values |x|^2 + |y|^2 - 2 x.y of the rows less Y's first row, from these
  // norms [n] and [m] of theirs, one multiply-add a coordinate; null: the measure's own values.
  cl_mem nx = nullptr, ny = nullptr;
  // Only the rows rows[0 .. count[0]) of X (i64, i32 count), each kept at its own row of the lists; null:
  // every row.
  cl_mem rows = nullptr, count = nullptr;
  // Y's rows in `slices` runs of whole tiles, a work-group each (so that a few bands still fill the
  // device); above 1, the lists hold a row per listed row and slice, place i * slices + slice.
  int64_t slices = 1;
  int64_t listed = 0;  // the count of rows listed where the host knows it (sizes the launch), else 0
};

// The tiles in each of nearest's slices of m rows of Y (whole tiles, so that no tile crosses two).
int64_t slice_tiles(const Blocking& b, int64_t m, int64_t slices);

// Enqueues the tiled loop of pairwise.nearest over rows X [n, k] and Y [m, k] (operands x, y): bands of
// rows of X sweeping Y, each row's best so far kept sorted in its row of the lists, and each tile's
// values that enter them (its worst in local memory decides) inserted by a work-item of the row. No
// scratch; the tiles as large as pairwise.distance's.
void enqueue_nearest_sweep(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, uint32_t x,
                           uint32_t y, const NearestSweep& sweep);

// Enqueues pairwise.kernel_sum's y [n] = K v (operand out) for rows X [n, k], Y [m, k] and v [m]: the tiled
// loop over bands of rows of X sweeping Y, each work-item summing over its columns, then a row's 16
// partial sums added in local memory.
void enqueue_kernel_sum_tiles(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b,
                              uint32_t x, uint32_t y, uint32_t v, uint32_t out);

}  // namespace fugue::pairwise
