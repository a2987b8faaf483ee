// weights.h: the weights operand histograms share ("w", optional): an array of the data's shape (h
// takes its dtype, each value adding its weight), or a number, the default 1 (h counts: i64 for an
// integer, f64 for a fraction, each value adding it).
#pragma once
#include <string>

#include "counting.h"
#include "fugue/sdk.hpp"

namespace fugue::histogram {

// The operand's spec, documented for `data` (the operand the weights go with).
sdk::OperandSpec weights_operand(const std::string& data);
// h's dtype for weights `w` going with `data`; throws InvalidArgument naming w when its shape or dtype
// does not fit.
fugue_dtype counts_dtype(const fugue_type& w, const std::vector<int64_t>& data_shape, const std::string& data);
// The Counting of h (operand `h`, `bins` of them) for weights operand `w`.
Counting counting_for(const sdk::Call& call, uint32_t h, uint32_t w, int64_t bins);
// The element's weight (ELEMENT phase), of h's dtype, for an array w (counting_for leaves a number to
// Counting::weight).
std::string weight_of(const sdk::Emitter& em, const Counting& c, uint32_t w);
// The reference's weight of element i.
long double reference_weight(const fugue_type& w, const sdk::HostView& values, int64_t i);

}  // namespace fugue::histogram
