// reference_executor.h: runs a program on the CPU with every operation's reference implementation:
// the oracle that integration tests and `fugue run --reference` compare the device against.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "program/host_array.h"
#include "runtime/interpreter.h"
#include "program/program.h"

namespace fugue {

class ReferenceExecutor : public Backend {
 public:
  explicit ReferenceExecutor(const Program& program) : program_(program) {}

  // Loads initial values and runs the body.
  void run();
  // A symbol's value (a kind with storage: assembled from its parts). Throws UserError if it was never
  // written.
  const HostArray& value(const std::string& symbol) const;

  // `fugue conformance`: every array a reference is handed sits between guard regions of `bytes`
  // bytes (inputs in copies of their own), checked after each call.
  void guard_host_arrays(size_t bytes) { guard_bytes_ = bytes; }
  // What the references wrote outside the arrays they were given, or into their inputs, in order.
  const std::vector<std::string>& guard_damage() const { return guard_damage_; }

  void run_op(const Statement& statement) override;
  double scalar_value(const std::string& symbol) override;
  void set_loop_variable(const std::string& symbol, int64_t value) override;

 private:
  size_t guard_bytes_ = 0;
  std::vector<std::string> guard_damage_;
  const Program& program_;
  std::map<std::string, HostArray> values_;  // by symbol; a kind with storage's by part
  mutable std::map<std::string, HostArray> assembled_;  // kinds with storage, as value() last gave them
};

}  // namespace fugue
