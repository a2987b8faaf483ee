// child_process.h: runs plugin code in a forked child, so that a crash, an exception escaping the C
// boundary or a hang is reported instead of taking the suite down. Only host code may run there:
// fork before anything touches OpenCL in the same process is the safe order, and the suite keeps it.
#pragma once
#include <functional>
#include <string>

namespace fugue::conformance {

struct ChildOutcome {
  bool completed = false;  // the child ran `work` to its end and exited normally
  std::string output;      // what `work` wrote through its `say` function, in order
  std::string failure;     // !completed: "killed by signal 11 (Segmentation fault)", "timed out after 30 s"
};

// Runs work(say) in a child process; `say` sends a line back to the parent.
ChildOutcome run_in_child(const std::function<void(const std::function<void(const std::string&)>& say)>& work,
                          int timeout_seconds);

}  // namespace fugue::conformance
