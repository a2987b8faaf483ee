// bincount.h: histogram.bincount, NumPy's bincount with a fixed length: h[idx[i]] counts (or sums the
// weights w[i]) for every idx[i] in 0..length-1; indices outside are not counted (NumPy refuses negative
// ones and grows h for larger ones; here h's length is the program's).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::histogram {

std::unique_ptr<sdk::Operation> bincount_operation();

}  // namespace fugue::histogram
