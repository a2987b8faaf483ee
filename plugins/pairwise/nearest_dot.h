// nearest_dot.h: pairwise.nearest of euclidean and squared euclidean distances by the dot form
// |x - y|^2 = |x|^2 + |y|^2 - 2 x.y, exact all the same.
//
// The tiled sweep costs two operations a coordinate in the difference form ((x - y), then a multiply-add)
// and one in the dot form. But the dot form's rounding grows with the norms, not the distance, so
// it may rank near ties apart from the distances users are given (those of the difference form). So:
//  1. the squared norms of the rows less Y's first row (distances are the same, and data far from the
//     origin, pixels or coordinates with a common offset, keeps norms near the distances and the bound
//     below small), and the largest of Y's (any that is not finite: infinity);
//  2. the sweep in the dot form, on the rows less Y's first row, keeps each row's `width` (> count) best
//     candidates (nearest_width);
//  3. a work-item a row computes their distances in the difference form, keeps the `count` best (value,
//     then index), and proves that no other row of Y could enter: every row left out has a dot-form value
//     at least the last candidate's g, so a distance at least g - delta, where delta bounds both forms'
//     rounding ((5k + 40) u (|x|^2 + max |y|^2), plus as many smallest normals for what underflows); where
//     g - delta (g finite) exceeds the count-th distance by a margin, the row is decided;
//     On sm_90 (tf32_sweep) the sweep runs on the tensor cores with the coordinates rounded to tf32 (11
//     bits): delta then adds twice |x~ - x| (|y| + |y~ - y|) + |x| |y~ - y| for the rounded rows x~, y~
//     (norms of what the rounding took, measured in step 1), and doubles its factor for the tensor
//     cores' sums. Data of 11 significant bits or fewer (small integers) loses nothing to the rounding.
//  4. the rows left undecided (near ties at the edge, norms that overflow, NaN or inf in the data) take
//     the sweep in the difference form, listed, so the answer is the difference form's in every row.
#pragma once
#include <cstdint>

#include "fugue/sdk_device.hpp"
#include "measures.h"
#include "tiles.h"

namespace fugue::pairwise {

// Whether the call's `count` nearest run by the dot form: a tiled plan of euclidean or sqeuclidean
// distances whose candidates' lists fit the device's memory (FUGUE_PAIRWISE_TUNING=dot=0 turns it off).
bool nearest_by_dot(const sdk::Call& call, const Measure& m, const Blocking& b, int64_t count);

// The candidates a row keeps in the dot form for `count` nearest of m rows.
int64_t nearest_width(int64_t count, int64_t m);

// Enqueues pairwise.nearest's d and index [n, count] (operands d, index) for rows X [n, k] and Y [m, k]
// (operands x, y): by the dot form where nearest_by_dot says so, else the sweep in the measure's own form.
void enqueue_nearest(const sdk::Call& call, const fugue_device_services& s, const Measure& m, const Parameters& p, const Blocking& b, int64_t count,
                     uint32_t x, uint32_t y, uint32_t d, uint32_t index);

}  // namespace fugue::pairwise
