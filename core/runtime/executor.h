// executor.h: runs a typed program on an OpenCL device. Every operation is planned and its kernels
// generated and built before anything runs; data stays on the device from the first input to the
// last output; the body's control flow comes from interpreter.h.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include <CL/opencl.hpp>

#include "device/device_manager.h"
#include "passes/lower.h"
#include "runtime/interpreter.h"
#include "codegen/kernel_generator.h"
#include "program/program.h"
#include "device/program_cache.h"
#include "device/profiler.h"

namespace fugue {

// One fused group prepared for the device: its generated kernels, built.
struct KernelSite {
  const FusedGroup* group = nullptr;
  GeneratedKernel kernel;
  cl::Kernel main;
  cl::Kernel finalize;
  std::map<std::pair<size_t, uint32_t>, cl::Buffer> workspaces;  // (op in group, workspace)
  cl::Buffer groups_done;  // Launch::last_group_finalizes: the finished work-groups' count, 0 between launches
  std::string label;
};

// What `fugue conformance` uses to check an operation's promises; every other run leaves it off.
struct Instrumentation {
  // > 0: every symbol's buffer sits between two guard regions of at least this many bytes, and the
  // guards and the buffer start out filled with kPoison.
  size_t guard_bytes = 0;
  // > 1: generated kernels compute only the elements i with i % sample_modulus == sample_residue,
  // so an operation that writes another element's output shows (the rest must stay poisoned).
  int64_t sample_modulus = 0;
  int64_t sample_residue = 0;
  static constexpr uint32_t kPoison = 0x7FC5A5A5u;  // a NaN as f32; the byte pattern repeats
};

class Executor : public Backend {
 public:
  Executor(const Program& program, Device& device, ProgramCache& cache, Profiler& profiler,
           PlanOptions options = {});
  ~Executor() override;

  // Plans the program (fusion, promotion, swaps) and builds every kernel (the only compiles of a run).
  // `progress`, if given, hears (kernels prepared, kernels in all) after each one.
  void prepare(const std::function<void(size_t done, size_t total)>& progress = {});
  const ExecutionPlan& plan() const { return plan_; }
  const std::vector<std::unique_ptr<KernelSite>>& kernels() const { return kernels_; }
  // Uploads every symbol's initial value; forgets values computed by an earlier run.
  void initialize();
  // Before initialize(): `symbol`'s initial value is `value` (of its dtype and shape; a kind with storage:
  // of its kind and parts' types), not the one its declaration gives (a split run hands each device its
  // rows of the whole).
  void give_initial(const std::string& symbol, HostArray value);
  // Runs the body; returns when the device has finished.
  void run();

  // A split run whose kernels read split arrays around each element (split_run.h): `symbols` hold
  // `ghost` rows of the neighbouring devices' beyond this device's own. A kernel reading its inputs
  // `reach` rows beyond an element (kernel_reach) leaves its results good `reach` rows less deep into
  // those; before a kernel would read rows gone stale, `trade(symbol)` brings them all again. Every
  // device calls it at the same points in the same order (its plan is the same), so it may wait for
  // the others.
  struct NeighbourRows {
    std::set<std::string> symbols;
    int64_t ghost = 0;
    std::function<void(const std::string&)> trade;
  };
  // Before initialize().
  void hold_neighbour_rows(NeighbourRows rows) { neighbours_ = std::move(rows); }
  // A split run's scalars reduced over the rows (placement.h): once a kernel has stored one of
  // `symbols`, the device's part, `combine(symbol)` replaces it by the whole's (every device calls it
  // at the same points, so it may wait for the others). Before initialize().
  struct CombinedScalars {
    std::set<std::string> symbols;
    std::function<void(const std::string&)> combine;
  };
  void combine_scalars(CombinedScalars scalars) { combined_ = std::move(scalars); }
  // Overwrites `symbol`'s current value (of its dtype and shape; returns once copied).
  void write_value(const std::string& symbol, const HostArray& value);
  // Rows [first, first + count) along axis 0 of `symbol`'s current value (after the device's work so
  // far); overwriting them (returns once copied).
  std::vector<uint8_t> read_rows(const std::string& symbol, int64_t first, int64_t count);
  void write_rows(const std::string& symbol, int64_t first, const std::vector<uint8_t>& rows);
  // A symbol's current value, read back from the device. Throws UserError if it was never written.
  HostArray read(const std::string& symbol);
  // Reads every output first, then writes each file atomically into `folder` (created if needed).
  void write_outputs(const std::filesystem::path& folder);
  // Before prepare(): guard regions and element sampling (see Instrumentation).
  void instrument(const Instrumentation& instrumentation) { instrumentation_ = instrumentation; }
  // With guards: "" when both guard regions of `symbol`'s buffer (and of its second buffer, if it has
  // one) still hold the poison, otherwise where the first overwritten byte is ("3 bytes past the end").
  std::string guard_damage(const std::string& symbol);
  // With guards: every write outside the scratch buffers device-level operations asked for, so far.
  const std::vector<std::string>& scratch_damage() const { return scratch_damage_; }
  // Kernels enqueued since the executor was made (device-level operations' own kernels excluded).
  int64_t kernel_launches() const { return launches_; }
  // Buffers device-level operations keep across calls (fugue_device_services.workspace).
  size_t persistent_workspaces() const { return persistent_.size(); }

  // Backend
  void run_op(const Statement& statement) override;
  double scalar_value(const std::string& symbol) override;
  void set_loop_variable(const std::string& symbol, int64_t value) override;

 private:
  struct Value {
    cl::Buffer buffer;
    cl::Buffer guarded;  // instrumented: the allocation `buffer` is a region of, guards included
    size_t guard = 0;    // bytes before `buffer` in `guarded`
    size_t bytes = 0;
    bool defined = false;
    // A symbol with a run-time length: the device buffer (one long) holding it, and where that length
    // came from (values that share an origin have the same length, without asking the device).
    cl::Buffer extent;
    uint64_t extent_origin = 0;
  };
  void prepare_kernel(size_t index, const PlanOptions& options);
  void run_kernel(KernelSite& site, const Statement& where);
  void run_swap(const Step& step, const Statement& where);
  // Split with neighbours' rows: trades those of `reads` that are good fewer rows deep into them than
  // `reach` (a kernel reading that far around); returns how deep all of them are good then.
  template <class Names>
  int64_t trade_stale(const Names& reads, int64_t reach);
  // `written` is good `depth` rows deep into the neighbours' rows.
  template <class Names>
  void mark_good(const Names& written, int64_t depth);
  void run_time_lengths(const FusedGroup& group, const Statement& where);
  // The actual length of a symbol's run-time axis 0 (waits for the device).
  int64_t actual_rows(const std::string& symbol);
  Value& value_for_write(const std::string& symbol);
  // The second buffer of `symbol` (made on first use, guarded when instrumented).
  Value& shadow_of(const std::string& symbol);
  // Makes the second buffer the symbol's and the symbol's the second (guard regions with them).
  void swap_with_shadow(const std::string& symbol);
  // "" when both guard regions of `v` hold the poison; else where the first written byte is.
  std::string region_damage(const Value& v, const std::string& symbol);
  const Value& value_for_read(const std::string& symbol, const Statement& where);
  cl::Buffer allocate(size_t bytes, const std::string& what);
  void allocate_guarded(Value& v, const std::string& symbol);
  void upload(const std::string& symbol, const HostArray& array);
  void run_device_level(const PlannedOp& op, const std::map<std::string, cl::Buffer>& replaced);
  void release_after_work(std::vector<cl::Buffer> buffers, const std::string& label);
  // Instrumented: reads the guard regions around a device-level op's scratch (waits for its work).
  void check_scratch_guards(const std::vector<std::pair<cl::Buffer, size_t>>& scratch, const Statement& st);
  // `shape`: a generated kernel's launch, whose work_dim > 1 gives the NDRange's dimensions.
  void enqueue(const cl::Kernel& kernel, int64_t groups, int64_t local, const std::string& name, double bytes,
               double flops, const Launch* shape = nullptr);

  const Program& program_;
  Device& device_;
  ProgramCache& cache_;
  Profiler& profiler_;
  PlanOptions options_;
  ExecutionPlan plan_;
  std::vector<std::unique_ptr<KernelSite>> kernels_;
  std::map<std::string, Value> values_;
  // Second buffers: of symbols written while read wide (kernels), or written by a device-level op
  // while another operand reads them; between guard regions too when instrumented, swapped with them.
  std::map<std::string, Value> shadows_;
  std::vector<std::string> scratch_damage_;  // instrumented: writes outside a device-level op's scratch
  uint64_t extent_origins_ = 0;  // the last origin given to a run-time length
  std::map<std::string, cl::Buffer> persistent_;  // workspaces by "plugin/key", as long as the executor
  std::multimap<size_t, cl::Buffer> scratch_pool_;  // device-level operations' scratch, by size, for reuse
  size_t scratch_pooled_bytes_ = 0;
  std::map<std::string, HostArray> initial_;   // initial values, kept for repetitions
  bool given_parts_checked_ = false;          // values given part by part: checked by their kinds once
  std::map<std::string, int64_t> loop_values_;
  std::set<std::string> symbols_read_;  // inputs of some operation
  NeighbourRows neighbours_;
  CombinedScalars combined_;
  std::map<std::string, int64_t> good_rows_;  // how many of the neighbours' rows each value has right
  int64_t launches_ = 0;
  Instrumentation instrumentation_;
};

}  // namespace fugue
