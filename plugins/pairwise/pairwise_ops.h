// pairwise_ops.h: pairwise.distance and pairwise.kernel, D[i, j] of rows i of X [n, k] and j of Y [m, k]
// by one of measures.h's metrics or kernels. Plan: one element of D per work-item, its two rows read
// from global memory (the caches share them between neighbours), at ELEMENT level, so element-wise
// consumers of D join the kernel (a kernel's exp(-gamma d) or a threshold). The register-blocked tiles
// of the seed (a work-group's tile of X and Y rows staged in local memory) are not written yet.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::pairwise {

std::unique_ptr<sdk::Operation> distance_operation();
std::unique_ptr<sdk::Operation> kernel_operation();

}  // namespace fugue::pairwise
