// spd.h: the `spd` generator: random symmetric (Hermitian) positive definite matrices with a chosen condition
// number, for programs and the conformance suite ({"spd": {"seed": 1, "cond": 100}} on a [..., n, n]
// array of f32, f64, c64 or c128).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Generator> spd_generator();

}  // namespace fugue::linalg
