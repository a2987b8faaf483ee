// affinity.h: sparse.affinity, the affinity matrix of an image for normalized cuts (Shi and Malik; seed
// 003 §5.1): pixels within a radius coupled by their brightness and distance, stored by diagonals (a
// radius of 5 gives the seed's 81), as the weights W or the normalized Laplacian
// I - D^-1/2 W D^-1/2 whose smallest eigenvectors segment the image.
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Operation> affinity_operation();

}  // namespace fugue::sparse
