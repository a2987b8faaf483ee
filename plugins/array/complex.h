// complex.h: the operations only complex numbers have: conj, real and imag of c64/c128, and
// complex(re, im), which builds them from f32/f64 parts.
#pragma once
#include <memory>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::vector<std::unique_ptr<sdk::Operation>> complex_operations();

}  // namespace fugue::array
