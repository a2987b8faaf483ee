// put.h: array.put, h[index, ...] = x, one row of h written in place at a run-time index (the row of a
// Lanczos basis at a loop's step).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> put_operation();

}  // namespace fugue::array
