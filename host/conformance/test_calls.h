// test_calls.h: the calls of an operation the conformance suite runs, each a one-operation program.
// They come from the operation's declared test_cases (ABI 1.2), or are derived from its signature:
// arrays of one shape (degenerate, odd, large) of each rank from 1 to 3, every dtype it accepts.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "program/dtype.h"
#include "plugins/operation.h"
#include "plugins/plugin_registry.h"

namespace fugue::conformance {

struct TestCall {
  std::string label;          // "f32 [7, 5]", "case 2 f64 [1]", "f32 [7] b const"
  DType dtype = DType::None;  // the dtype under test
  std::string size_class;     // "degenerate", "odd", "large" ("" for declared calls)
  size_t rank = 0;            // of the array inputs
  bool declared = false;      // from the operation's test_cases: it must be valid
  nlohmann::json program;     // one operation; its outputs are the program's outputs
  // Outputs compared as rankings (test_cases' "ranked"): output name -> the output that orders it.
  std::map<std::string, std::string> ranked;
};

// Every candidate call. Throws UserError (naming the JSON pointer) for malformed test_cases. Derived
// candidates may be invalid for the operation; the infer check keeps the valid ones. Operands of a
// plugin kind get the kind's example declaration (from `registry`).
std::vector<TestCall> candidate_calls(const Operation& op, const PluginRegistry& registry, uint64_t seed);

// The fusion-neutrality program: the listed array inputs renamed and produced by the neighbour
// (x = neighbour(x_source, identity)), the listed array outputs consumed by it (y_next =
// neighbour(y, identity)); the outputs become y_next. `identity` leaves values as they are (1 for a
// multiplication, 0 for an addition).
nlohmann::json with_neighbours(const Operation& op, const nlohmann::json& program, const std::string& neighbour,
                               double identity, const std::vector<uint32_t>& inputs,
                               const std::vector<uint32_t>& outputs);

}  // namespace fugue::conformance
