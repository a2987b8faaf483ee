// comparisons.h: the element-wise comparisons lt le gt ge eq ne, which give u8 1 where they hold
// and 0 elsewhere. eq and ne also compare complex numbers; the others need ordered (real) values.
#pragma once
#include <memory>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::vector<std::unique_ptr<sdk::Operation>> comparison_operations();

}  // namespace fugue::array
