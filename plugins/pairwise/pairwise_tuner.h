// pairwise_tuner.h: `fugue tune pairwise`, the seed's offline sampling of the register blockings (§6.4):
// every one of the 64 (rows and columns of D per work-group, 16 to 128 each) timed for a cheap measure
// (euclidean), a dear one (chi2), cosine and the row reductions (16 nearest), the fastest of each kept as the
// device's table, which tiles.cpp reads back.
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::pairwise {

std::unique_ptr<sdk::Tuner> pairwise_tuner();

}  // namespace fugue::pairwise
