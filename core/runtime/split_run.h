// split_run.h: a program run on several devices at once, as placement.h split it: each device plans,
// builds and runs the program for its rows of the split arrays, in its own thread; the inputs are read
// or generated once on the host and each device given its rows; outputs are read back row by row into
// one array. Where kernels read around each element (stencils), each device also holds a few of its
// neighbours' rows; when its kernels would read them stale, the devices trade them: each reads its
// first and last own rows, waits for the others to have done the same, and copies its neighbours'
// into the rows it holds of theirs.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "device/device_manager.h"
#include "device/profiler.h"
#include "device/program_cache.h"
#include "passes/placement.h"
#include "plugins/kind.h"
#include "runtime/executor.h"
#include "runtime/gather_rows.h"

namespace fugue {

// What a split run needs of one device: it, its program cache and profiler (the caller's).
struct DeviceSlot {
  Device* device;
  ProgramCache* cache;
  Profiler* profiler;
};

// A device's relative throughput for a split: its copy bandwidth, measured once per process and device
// model (a 64 MiB buffer copied, the best of three, from OpenCL events); 0 when the events gave no time.
double measured_weight(Device& device);

class SplitRun {
 public:
  // `whole`: the program as parsed for the first device; `parse`: parses it again (each device gets
  // a program of its own, its split arrays cut to its rows). `placement` must be split. Throws
  // SplitDeclined, before any device is used, where its gathers would move too much (gathers_too_wide).
  SplitRun(const Program& whole, const Placement& placement, std::vector<DeviceSlot> devices,
           const std::function<Program()>& parse, PlanOptions options);
  ~SplitRun();

  // Plans every device's program and builds its kernels. Throws SplitDeclined where a device's plan for
  // its rows could not be split the same way (another kind of device choosing another variant): the
  // caller runs the program on one device instead.
  void prepare();
  // Reads or generates the inputs once, gives each device its rows, and uploads them.
  void initialize();
  // Runs every device's program at once; returns when all have finished. A failure on any device is
  // rethrown, naming the device, once all have stopped: the first in time where the devices meet (the
  // others may only have failed waiting for it), else the first by device order.
  void run();
  // `symbol`'s value: a split one gathered from every device's rows, any other from the first device.
  HostArray read(const std::string& symbol);

  size_t devices() const { return executors_.size(); }
  // Trades of neighbours' rows and combinations of reductions in the last run(), by every device together.
  int64_t trades() const;
  int64_t combinations() const;
  int64_t gathers() const { return gathers_; }  // gathers of split arrays' rows into the whole copies
  // Each device's window of each gathered array (gather_rows.h).
  const GatherWindows& windows() const { return windows_; }

 private:
  class RowTrade;
  // Device d's part of trading the neighbours' rows of `symbol` (from its executor's thread).
  void trade(size_t d, const std::string& symbol);
  // Device d's part of combining the devices' parts of a reduction into `symbol`'s whole value.
  void combine(size_t d, const std::string& symbol);
  // Device d's part of gathering every device's rows of `symbol` into its whole copy (gather_rows.h).
  void gather(size_t d, const std::string& symbol, const fugue_device_services& services, cl_mem rows, cl_mem whole);

  const Program& whole_;
  Placement placement_;
  std::vector<DeviceSlot> slots_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::vector<std::unique_ptr<Executor>> executors_;
  bool given_ = false;  // inputs handed to the devices (once: repetitions upload the same rows)
  std::unique_ptr<RowTrade> meeting_;  // where the devices trade rows and combine reductions
  int64_t combinations_ = 0;           // in the last run (counted by the first device)
  int64_t gathers_ = 0;                // in the last run (counted by the first device)
  GatherWindows windows_;
};

// The rows [first, first + count) of `array` along axis 0; rows before 0 or past the end wrap around.
HostArray rows_of(const HostArray& array, int64_t first, int64_t count);

// Whether a device's (or rank's) plan of its rows, `here` (split_by_rows of its program), splits as
// `placement` does: the same arrays split and read whole (the gathered arrays' copies among the
// latter), nothing gathered of its own, and no kernel reading past the neighbours' rows held.
bool plans_as_placed(const RowSplit& here, const Placement& placement);

// The whole value of `s`, a kind with storage of `program`: from its own source (a file, a generator)
// or its parts' ("parts", checked together by its kind first).
HostArray whole_value(const Program& program, const Symbol& s);
// Rows [first, first + count) of `whole`, the value of `s`, a kind with storage: their value, and their
// type in `type` (its kind's rows_type and rows_value).
HostArray kind_rows(const Symbol& s, const HostArray& whole, int64_t first, int64_t count, DeclaredType& type);
// Gives `symbol` of `program` (one device's), a kind with storage, and its parts' symbols the type of
// that device's rows.
void take_rows_type(Program& program, const std::string& symbol, const DeclaredType& type);
// Hands `executor` the value of `s`, a kind with storage cut to its device's rows: to `s` itself, or to
// its parts where the program gives it part by part.
void give_rows(Executor& executor, const Symbol& s, HostArray value);

// The whole's value of a reduction from the devices' parts (of one dtype and shape), in device order,
// as `how` (FUGUE_COMBINE_*) says: sums of floats in double precision, of integers wrapping around in
// their dtype as the devices' own sums do.
HostArray combine_parts(const std::vector<HostArray>& parts, uint32_t how);

}  // namespace fugue
