// arithmetic.h: the arithmetic element-wise operations: add sub mul div minimum maximum pow atan2,
// neg abs, the float functions sqrt rsqrt exp log sin cos acos asin tanh floor ceil, and copy.
// add sub mul div neg abs copy also take complex numbers; the others order or need real values.
#pragma once
#include <memory>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::vector<std::unique_ptr<sdk::Operation>> arithmetic_operations();

}  // namespace fugue::array
