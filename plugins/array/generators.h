// generators.h: the generators of initial values the array plugin adds to programs' "from".
#pragma once
#include <memory>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::array {

// linspace: {"start": a, "stop": b} -> n evenly spaced values from a to b, both included (NumPy's
// linspace with endpoint=True), over the array's elements in row-major order.
std::vector<std::unique_ptr<sdk::Generator>> generators();

}  // namespace fugue::array
