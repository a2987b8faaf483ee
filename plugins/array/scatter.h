// scatter.h: array.scatter_add, h[index[i]] += values[i], updating h in place (an INOUT operand).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> scatter_add_operation();

}  // namespace fugue::array
