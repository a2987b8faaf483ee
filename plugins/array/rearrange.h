// rearrange.h: array.transpose and array.slice, NumPy's np.transpose(x, axes) and x[index]: each element
// of out is one element of x, at a place that is an affine function of out's index (a stride a axis and
// an offset). ELEMENT-level operations over out's elements that read x whole (any element), so they join
// the kernels of the operations that consume out (a batch of matrices laid out with the batch last, or
// every other matrix of a larger array, read straight into a batched factorization's kernel), while x
// must exist before their kernel starts.
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::array {

std::unique_ptr<sdk::Operation> transpose_operation();
std::unique_ptr<sdk::Operation> slice_operation();

}  // namespace fugue::array
