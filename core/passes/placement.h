// placement.h: where a program's work runs when several devices are selected.
//
// A program whose every operation partitions its arrays by the rows of one leading axis (BATCH
// entries numbered from axis 0, or element-wise arrays of one shape) runs on every device over a
// share of those rows, in proportion to the devices' weights: each device plans, builds and runs the
// program for its rows alone, so no value crosses between devices. Inputs are written to each device's
// rows, outputs read back from them; arrays and scalars only read whole (a matrix every entry
// multiplies: BATCH with no entry axis, beside entries numbered from axis 0) go to every device. Anything
// else keeps the program on the first device, and the placement says why: a scalar written on the device
// (a sum over the rows, an `if` on it), a halo or any other partition, code that asks where it stands in
// the whole launch, a device-level operation, a kind with storage, a run-time length, or work too small
// to be worth splitting (LaunchTuning::split_bytes).
#pragma once
#include <string>
#include <vector>

#include "device/device_manager.h"
#include "passes/execution_plan.h"
#include "program/program.h"

namespace fugue {

// One device's rows of the split arrays: [first, first + count) along axis 0.
struct DeviceShare {
  int64_t first = 0;
  int64_t count = 0;
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
};
RowSplit split_by_rows(const Program& program, const ExecutionPlan& plan);

// Places `program`, planned as `plan` for the first device, on devices of the given weights (relative
// throughputs, > 0). `min_bytes`: the least the split arrays must hold together for a split.
Placement place_program(const Program& program, const ExecutionPlan& plan, const std::vector<double>& weights,
                        double min_bytes);

// `fugue explain`'s account: the devices and their rows, which values are split and which go whole,
// and the transfers; or why the program stays on one device.
std::string describe_placement(const Placement& placement, const std::vector<DeviceInfo>& devices);

}  // namespace fugue
