// row_vectors.h: the pairwise plugin's plan for CPUs (distance, kernel, nearest and kernel_sum). A CPU
// core runs a work-group's work-items one after another; the tiles' local memory and barriers then cost
// a pass over the work-group each (PoCL keeps every work-item's accumulators in memory between them).
// Here each work-item computes a block of D of a few rows by a few columns with no local memory and no
// barrier (nearest and kernel_sum: a band of a few rows walking every column block, reducing as it
// goes), reading its rows of X and Y from global memory (the caches hold them), `width` coordinates at
// a time in vectors of the device's native width: a vector load of each row, a vector update of each
// element's accumulators, the lanes summed (or, for chebyshev, maxed) at the end. The block is the
// largest whose accumulators and loaded rows fit the vector registers.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk_device.hpp"
#include "measures.h"

namespace fugue::pairwise {

struct VectorBlock {
  int64_t rows = 1, cols = 1;  // D's rows and columns a work-item computes
  int64_t width = 2;           // coordinates a vector holds
};

// The block for measure m summed in `dtype` on the device, rows of k coordinates.
VectorBlock vector_block(const fugue_device_desc& device, const Measure& m, fugue_dtype dtype, int64_t k);
// The dtype measure m sums in for the call (operand 0's dtype, or f64 for f32 data of a wide measure
// where it is not guarded).
fugue_dtype vector_dtype(const sdk::Call& call, const Measure& m);

// The text explain shows for the plan, `why` the table row or setting that chose it.
std::string vector_text(const VectorBlock& b, const std::string& why);

// Enqueues D [n, m] = the measure of every pair of rows of X [n, k] and Y [m, k] (operands x, y, d).
void enqueue_row_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x, uint32_t y,
                         uint32_t d);
// pairwise.nearest: a work-item a band of rows of X walks Y's rows block by block in order, each row's
// `count` best (value, then index) kept sorted in its rows of d and index (operands d, index).
void enqueue_nearest_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, int64_t count, uint32_t x,
                             uint32_t y, uint32_t d, uint32_t index);
// pairwise.kernel_sum: out[i] = sum_j K(x_i, y_j) v[j] (operands v, out), a work-item a band of rows, the
// columns added in order.
void enqueue_kernel_sum_vectors(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, uint32_t x, uint32_t y,
                                uint32_t v, uint32_t out);

}  // namespace fugue::pairwise
