// child_process.h: the conformance checks' way to run plugin code in a forked child
// (plugins/child_process.h, where the registry's probe of plugins finds it too), with the time
// limit in whole seconds.
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "plugins/child_process.h"

namespace fugue::conformance {

using fugue::ChildOutcome;

inline ChildOutcome run_in_child(const std::function<void(const std::function<void(const std::string&)>& say)>& work,
                                 int timeout_seconds) {
  return fugue::run_in_child(work, std::chrono::seconds(timeout_seconds));
}

}  // namespace fugue::conformance
