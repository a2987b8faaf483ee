// getrs.h: linalg.getrs, solving A X = B ({"trans": "N"}, the default) or A^T X = B ("T") with the LU
// factors and pivots from linalg.getrf: LU [..., n, n], ipiv [..., n] (i32, 1-based), B [..., n, k] →
// X [..., n, k]. Pivots outside 1..n make that matrix's X NaN (the factors cannot be theirs); the other
// matrices go on. Teams as getrf's, so that getrf then getrs on the same matrices fuse into one kernel.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::linalg {

std::unique_ptr<sdk::Operation> getrs_operation();

}  // namespace fugue::linalg
