// convert.h: sparse.convert, a sparse matrix from one layout into another (layouts.h): B holds A's
// entries (A's padding left out) in the layout B is declared with, cut as its declaration says (sell's
// slice and sigma, the block layouts' block, hyb's width, the index dtype), which infer reads from the
// call (ABI 2.18). The counts a conversion makes (nnz, width,
// stored, diagonals, bands, blocks) come from counting A's entries; B's declaration must give them, and a
// run that finds others stops naming the count to declare, before B is written. A cocktail is split when
// it is read ("from"), not converted into. The pairs convert_device.h names convert on the device, the
// others on the host (A's parts read back, converted by layouts.cpp, B's written).
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Operation> convert_operation();

}  // namespace fugue::sparse
