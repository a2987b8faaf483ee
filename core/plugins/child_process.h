// child_process.h: runs plugin code in a forked child, so that a crash, an exception escaping the C
// boundary or a hang is reported instead of taking the caller down (the registry's probe of a plugin
// on the search path, the conformance suite's checks). Fork before anything touches OpenCL in the
// same process: its threads and locks do not survive a fork.
#pragma once
#include <chrono>
#include <functional>
#include <string>

namespace fugue {

struct ChildOutcome {
  bool completed = false;  // the child ran `work` to its end and exited normally
  bool timed_out = false;  // it was still running at the time limit, and was killed
  int signal = 0;          // the signal that ended it (0: none)
  std::string output;      // what `work` wrote through its `say` function, in order
  std::string failure;     // !completed: "killed by signal 11 (Segmentation fault)", "did not finish within 30 s"
};

// Runs work(say) in a child process; `say` sends a line back to the parent. The child is killed at
// `timeout`; it never runs the parent's atexit handlers or static destructors.
ChildOutcome run_in_child(const std::function<void(const std::function<void(const std::string&)>& say)>& work,
                          std::chrono::milliseconds timeout);

// "10 s", "1.5 s", "200 ms": a time limit as messages name it.
std::string duration_text(std::chrono::milliseconds duration);

}  // namespace fugue
