// interpreter.h: runs a program body's control flow (for, if, break) over a backend that executes
// operations: the device executor, or the CPU reference executor. Both share these semantics.
#pragma once
#include <string>
#include <vector>

#include "program/program.h"

namespace fugue {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual void run_op(const Statement& statement) = 0;
  // The current value of a scalar symbol (reads it back from the device if needed).
  virtual double scalar_value(const std::string& symbol) = 0;
  // Sets the loop variable for the next iteration.
  virtual void set_loop_variable(const std::string& symbol, int64_t value) = 0;
};

// Runs `body`. Throws UserError for run-time problems of the program (a bad loop count).
void interpret(const Program& program, const std::vector<Statement>& body, Backend& backend);

// Does `lhs <compare> rhs` hold? compare is lt le gt ge eq ne.
bool compare_values(const std::string& compare, double lhs, double rhs);

}  // namespace fugue
