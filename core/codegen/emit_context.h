// emit_context.h: what stands behind the opaque fugue_emit_context of the emit API: the writer that
// answers the accessors (a kernel's, or a user function's body), and the call being emitted. Internal
// to core/codegen/.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

struct fugue_emit_context {
  void* writer = nullptr;  // the KernelWriter or FunctionWriter whose accessors the api points at
  size_t op = 0;           // the operation's place in its kernel, or in the function's body
  uint32_t phase = 0;
  bool finalize = false;
  std::string* code = nullptr;
  std::deque<std::string> strings;  // keeps returned strings alive until emit returns
  std::string misuse;               // the first accessor misuse (the plugin's fault), reported after emit
  std::string user_error;           // the program's fault found while emitting (a user function's body)
};
