// compact.h: array.compact, the selected elements of an array, in order, as an array whose length is
// known at run time (NumPy's x[mask != 0]).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> compact_operation();

}  // namespace fugue::array
