// timing_report.h: per-kernel device-time tables for `fugue run --stats` and `fugue bench`.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "device/profiler.h"

namespace fugue {

// Kernel time per name, one map per repetition (sum over a name's executions in that repetition).
struct RepetitionTimes {
  std::map<std::string, double> seconds;  // kernel name -> seconds
  std::map<std::string, double> bytes;    // kernel name -> bytes moved (from the op's cost)
  std::map<std::string, double> flops;
  double wall_seconds = 0;  // the host's clock around the whole run (bench), launches and waits included
  std::map<std::string, int> count;
};

RepetitionTimes summarize(const std::vector<ProfileRecord>& records);

// `fugue run --stats`: one repetition.
std::string stats_table(const RepetitionTimes& times);
// `fugue bench`: median/min/max over repetitions per kernel and in total, with GB/s and GFLOP/s.
std::string bench_table(const std::vector<RepetitionTimes>& repetitions);
// The same as JSON, one object.
std::string bench_json(const std::vector<RepetitionTimes>& repetitions, const std::string& program,
                       const std::string& device);

}  // namespace fugue
