// placement.h: where a program's work runs when several devices are selected.
//
// A program whose every operation partitions its arrays by the rows of one leading axis (BATCH
// entries numbered from axis 0, or element-wise arrays of one shape) runs on every device over a
// share of those rows, in proportion to the devices' weights: each device plans, builds and runs the
// program for its rows alone, so no value crosses between devices. Inputs are written to each device's
// rows, outputs read back from them; arrays and scalars only read whole (a matrix every entry
// multiplies: BATCH with no entry axis, beside entries numbered from axis 0) go to every device. Arrays
// read around each element along axis 0 (stencils, whose operations say how they treat the arrays'
// ends) are split too: each device also holds a few rows of its neighbours' and trades them with them
// when its kernels have read them stale (split_run.h). Scalars reduced over the rows by operations
// that say how parts combine (sums, extremes, norms) are combined from every device's part and handed
// back to all, so an `if` on them takes the same branch everywhere. Operations that say which operands
// their rows cut (fugue_plan.split_rows: a sparse product's A, y0 and y) split so, device-level ones
// too, their other operands going whole to every device; a kind with storage so cut (a sparse matrix)
// is held by each device as its kind's rows of the whole (fugue_kind_desc.rows_type). Anything else
// keeps the program on the first device, and the placement says why: another scalar written on the
// device, another partition, code that asks where it stands in the whole launch, a device-level
// operation that does not say its rows, a kind with storage that gives no rows, a value read whole and
// written on the device, a run-time length, or work too small to be worth splitting
// (LaunchTuning::split_bytes).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "device/device_manager.h"
#include "passes/execution_plan.h"
#include "program/program.h"

namespace fugue {

// The core's operation that gathers every device's rows of a split array into each device's whole copy
// of it (runtime/gather_rows.h): its first operand split by rows, its second whole.
constexpr const char* kGatherRowsOp = "core.gather_rows";
// The plugin name the core's own operations carry (no plugin's name: plugins' are identifiers).
constexpr const char* kCorePlugin = "(core)";
// Whether `op` is the core's gathering operation.
bool is_gather_rows(const Operation& op);

// One device's rows of the split arrays: [first, first + count) along axis 0, its own; with a halo
// it also holds `before` rows of the previous device's and `after` of the next one's (wrapping around
// the ends of the whole where the reads do), its arrays then before + count + after rows long.
struct DeviceShare {
  int64_t first = 0;
  int64_t count = 0;
  int64_t before = 0;
  int64_t after = 0;
  int64_t held() const { return before + count + after; }
};

struct Placement {
  bool split = false;
  std::string reason;                     // not split: why (the operation and operand where it applies)
  int64_t rows = 0;                       // axis 0 of every split array
  double split_bytes = 0;                 // what the split arrays hold together
  std::vector<std::string> split_symbols; // each device holds its rows of these
  std::vector<std::string> whole_symbols; // every device holds all of these (read, never written)
  std::vector<double> weights;            // per device, as given
  std::vector<DeviceShare> shares;        // per device
  // Kernels reading split arrays around each element (a stencil): the most rows beyond its own one
  // kernel reads (`reach`), how many of its neighbours' rows each device holds (`ghost_rows`, a few
  // reaches: they are traded between devices once they have all been read stale, not before every
  // kernel), and whether the reads wrap around the ends of the whole.
  int64_t reach = 0;
  int64_t ghost_rows = 0;
  bool wrap = false;
  std::vector<std::string> traded;        // split arrays some kernel reads around each element
  // Scalars reduced from the split arrays (sums, extremes, norms): each device's result over its rows,
  // combined into the whole's (FUGUE_COMBINE_*) and handed back to every device before anything reads it.
  std::map<std::string, uint32_t> combined;
  // Split arrays some operation also reads whole (x of y = A x where the device computes x): every
  // device holds a whole copy, filled with every device's rows after each write (gather_rows.h); which
  // operands of which statements (by `where`) read the copy.
  std::vector<std::string> gathered;
  std::set<std::pair<std::string, size_t>> whole_reads;
  // Gathered arrays that every operation reading them whole reads only at the columns of a split
  // matrix's entries (fugue_plan.read_at_columns; x of y = A x): those matrices. Each device keeps current
  // only the rows of its copy that its rows of them reach (their columns), and the devices exchange
  // those rows alone (gather_rows.h's windows). Others are gathered whole.
  std::map<std::string, std::vector<std::string>> windows;
  // Gathered whatever the windows' width (FUGUE_TUNING=gather_rows=1); otherwise a run whose windows would
  // move too much between devices runs on one device (gather_rows.h's gathers_too_wide).
  bool gather_always = false;
  bool is_split(const std::string& symbol) const;
};

// Whether `program`, planned as `plan`, can be split by the rows of axis 0: the rows, which arrays
// are split and which go whole; else `reason` names the operation and operand that keep it whole.
struct RowSplit {
  std::string reason;
  int64_t rows = 0;
  std::string first_split;  // the array that set `rows`
  double split_bytes = 0;
  std::vector<std::string> split_symbols;
  std::vector<std::string> whole_symbols;
  // Read around each element along axis 0 (by operations that say how they treat the arrays' ends,
  // fugue_plan.ends): the largest kernel's reach (kernel_reach), whether the ends wrap around, and
  // the split arrays so read.
  int64_t reach = 0;
  bool wrap = false;
  std::vector<std::string> traded;
  std::map<std::string, uint32_t> combined;  // scalars reduced over the rows, and how parts combine
  std::vector<std::string> gathered;         // as Placement's
  std::set<std::pair<std::string, size_t>> whole_reads;
  std::map<std::string, std::vector<std::string>> windows;
};
RowSplit split_by_rows(const Program& program, const ExecutionPlan& plan);

// What devices splitting a program alike must agree on: how their plans split it (`split`, from
// split_by_rows) and, where they meet during the run (`trading`: rows traded, reductions combined),
// which kernels they run in turn, each reaching how far.
std::string split_signature(const RowSplit& split, const ExecutionPlan& plan, bool trading);

// How many rows beyond its own a fused kernel reads its inputs at most: the sum, over its operations,
// of each one's largest halo along axis 0 (a chain of stencils in one kernel reaches as far as all).
int64_t kernel_reach(const FusedGroup& group);

// Places `program`, planned as `plan` for the first device, on devices of the given weights (relative
// throughputs, > 0). `min_bytes`: the least the split arrays must hold together for a split, times the
// most iterations its loops run (counts known before the run);
// `halo_depth`: with a halo, each device holds this many reaches of its neighbours' rows (fewer where
// its share is narrower), traded once every so many kernels.
// `gather_rows`: splits with gathered arrays allowed whatever they move (LaunchTuning::gather_rows);
// without it, only arrays read at the columns of a split matrix's entries are gathered.
Placement place_program(const Program& program, const ExecutionPlan& plan, const std::vector<double>& weights,
                        double min_bytes, int64_t halo_depth = 1, bool gather_rows = false);

// `fugue explain`'s account: the devices and their rows, which values are split and which go whole,
// and the transfers; or why the program stays on one device.
// `link`: how rows cross between devices.
std::string describe_placement(const Placement& placement, const std::vector<DeviceInfo>& devices,
                               const std::string& link = "through the host");

}  // namespace fugue
