// ranks.h: a program split by rows across MPI ranks (`fugue run --mpi`, started by mpirun): each rank
// holds one device and the rows the placement (placement.h) gives it, as a device of a split run on
// one host does (split_run.h), and every transfer between ranks goes through MPI: rank 0 reads or
// generates the inputs and scatters to each rank its rows (with the neighbours' rows it holds), and
// broadcasts what every rank reads whole; ranks trade neighbours' rows with the ranks beside them
// (MPI_Sendrecv) and gather every rank's part of a reduction (MPI_Allgather) to combine it; rank 0
// gathers the outputs' rows and writes the files.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "passes/placement.h"
#include "runtime/executor.h"
#include "runtime/split_run.h"

namespace fugue {

// MPI, started for as long as the object lives (MPI_Init; MPI_Finalize when it goes).
class Ranks {
 public:
  Ranks();
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // among the ranks on this host: which of its devices
  // Every rank's `value`, in rank order.
  std::vector<double> gather_all(double value) const;
  // Whether every rank gave the same text.
  bool all_same(const std::string& text) const;
  // Every rank's `text`, in rank order.
  std::vector<std::string> gather_texts(const std::string& text) const;
  // Returns once every rank has called it (MPI_Barrier).
  void barrier() const;
  // Stops every rank (MPI_Abort): what a failing rank does, so that none waits for it.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

// One rank's part of a split run: its program (the split arrays cut to its rows and the neighbours'
// rows it holds), planned, built and run on its device. Every method is collective: all ranks call it,
// in the same order.
class RankRun {
 public:
  // `parse`: the program parsed again, for this rank's device; `placement` must be split over the
  // ranks (one share per rank). Throws SplitDeclined on every rank where the gathers would move too much
  // (gather_rows.h's gathers_too_wide).
  RankRun(const Ranks& ranks, const Program& whole, const Placement& placement, DeviceSlot device,
          const std::function<Program()>& parse, PlanOptions options);
  RankRun(const RankRun&) = delete;  // its executor calls back into it
  RankRun& operator=(const RankRun&) = delete;
  // Plans and builds; throws SplitDeclined on every rank where some rank planned its rows otherwise.
  void prepare();
  // Rank 0 reads or generates the inputs (once) and hands each rank its part; all upload.
  void initialize();
  void run();
  // `symbol`'s value on rank 0: split ones gathered from every rank's own rows; empty on other ranks.
  HostArray gather(const std::string& symbol);
  // Trades of neighbours' rows and combinations of reductions this rank took part in during the last run().
  int64_t trades() const { return trades_; }
  int64_t combinations() const { return combinations_; }
  int64_t gathers() const { return gathers_; }
  const GatherWindows& windows() const { return windows_; }  // each rank's, of each gathered array

 private:
  void trade(const std::string& symbol);
  void combine(const std::string& symbol);
  // The rows of `symbol` each rank's window wants from the others into this rank's whole copy
  // (MPI_Alltoallv; gather_rows.h).
  void gather(const std::string& symbol, const fugue_device_services& services, cl_mem rows, cl_mem whole);
  // A kind with storage split by rows (a sparse matrix): rank 0 reads it whole and sends each rank its
  // rows, their type first; every rank's program takes its rows' type. Returns this rank's rows. Where
  // a gathered array is read at its columns, rank 0 also sends every rank's columns (columns_).
  HostArray hand_out_kind_rows(const std::string& symbol);

  const Ranks& ranks_;
  const Program& whole_;
  Placement placement_;
  DeviceSlot slot_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<Executor> executor_;
  bool given_ = false;
  int64_t trades_ = 0;
  int64_t combinations_ = 0;
  int64_t gathers_ = 0;
  std::map<std::string, std::vector<RowWindow>> columns_;  // a matrix's: the columns each rank's rows reach
  GatherWindows windows_;
};

}  // namespace fugue
