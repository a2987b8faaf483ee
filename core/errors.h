// errors.h: the two kinds of failure Fugue reports, with the exit codes the CLI maps them to.
#pragma once
#include <stdexcept>
#include <string>

namespace fugue {

// The user's mistake: a bad program, input file, option or operand. `fugue` exits with 2.
// The message names the place (file, JSON pointer, operand) and what was expected and found.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device or the runtime failed (OpenCL error, build failure, out of memory, a plugin bug).
// `fugue` exits with 1. The message says what happened and what to do.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fugue
