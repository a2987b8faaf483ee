// even.h: histogram.even, NumPy's histogram over `bins` equal bins between `low` and `high` (the last
// bin closed; NaN and values outside ignored), counting into h [bins] or summing weights w; the bins
// found as NumPy finds them, in the same arithmetic (f32 data in f32 against f32 edges, the rest in
// f64), so h equals np.histogram's exactly for counts.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::histogram {

std::unique_ptr<sdk::Operation> even_operation();

}  // namespace fugue::histogram
