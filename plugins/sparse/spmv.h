// spmv.h: sparse.spmv, y = alpha * A x + beta * y0, for A of any sparse kind (layouts.h), a device-level
// operation with a kernel per layout (kernels/spmv.cl).
#pragma once

#include <memory>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::unique_ptr<sdk::Operation> spmv_operation();
// sparse.spmm, Y = alpha * A X + beta * Y0 for k vectors X [n, k], with the same kernels.
std::unique_ptr<sdk::Operation> spmm_operation();

}  // namespace fugue::sparse
