#pragma once
// Outputs that rank candidates by another output (k nearest: indices ordered by their distances).
// Two candidates whose values differ by less than the tolerance may come in either order on a
// device that rounds differently from the reference, so their indices are compared as a ranking,
// not element by element.

#include <string>

#include "program/host_array.h"

namespace fugue::conformance {

// `index` and `value` hold rows along their last axis (same shape). "" when every device index is the
// reference's, or the reference ranks it within `tolerance` of the value at its place (a near tie
// swapped, or past the row's end); else what differs, naming the element. The outputs hold no distance
// of a candidate the reference left out, so the last place of a row accepts any such candidate.
std::string compare_ranked(const HostArray& index, const HostArray& expected_index, const HostArray& expected_value,
                           double tolerance);

}  // namespace fugue::conformance
