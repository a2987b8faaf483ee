// generators.h: arrays made from a description (fill value, seeded random, arange, inline JSON).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "program/host_array.h"

namespace fugue {

// Every element equal to `value`. For integer dtypes `value` must be an integer that fits the dtype;
// for f32 it must be within f32's range. Throws UserError otherwise (the caller adds the location).
HostArray make_filled(DType dtype, const Shape& shape, double value);

// Seeded uniform random values, identical on every platform and compiler for the same arguments
// (xoshiro256** seeded by splitmix64; no std:: distributions). Floats are uniform in [low, high)
// (all equal to low when low == high); integer dtypes get integers uniform in
// [ceil(low), floor(high)], both ends included. Throws UserError if low > high, a bound is not
// finite, the integer range is empty, or the range does not fit the dtype.
HostArray make_random(DType dtype, const Shape& shape, uint64_t seed, double low, double high);

// Element i (flat, C order) = start + i * step. For integer dtypes start and step must be integers
// and every element must fit the dtype (computed exactly, not through double).
HostArray make_arange(DType dtype, const Shape& shape, double start, double step);

// Inline values from a program: a number when `shape` is empty, otherwise nested lists matching
// `shape` exactly, or one flat list of shape_elements(shape) numbers. Integer dtypes take integers
// (3.0 is accepted, 3.5 is not) within the dtype's range; f32 takes numbers within its range.
// `where` (e.g. "prog.json:/symbols/x/value") starts every error message, extended with the index
// of the offending element, e.g. "prog.json:/symbols/x/value/1: expected 4 values along axis 1,
// found 3". The structure is checked before anything is allocated.
HostArray array_from_json(const nlohmann::json& value, DType dtype, const Shape& shape,
                          const std::string& where);

}  // namespace fugue
