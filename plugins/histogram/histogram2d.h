// histogram2d.h: histogram.histogram2d, NumPy's histogram2d over bins_x x bins_y equal bins: h[i, j]
// counts the pairs (x, y) with x in bin i and y in bin j (each axis's last bin closed; NaN and pairs
// outside either range ignored), or sums their weights; the bins found as NumPy's histogramdd finds
// them (the values against np.linspace's edges, in f64; an f32 value equal to high rounded to f32 but
// below high counts in the last bin, where NumPy 1.x, comparing it in f32, moves it one bin down).
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::histogram {

std::unique_ptr<sdk::Operation> histogram2d_operation();

}  // namespace fugue::histogram
