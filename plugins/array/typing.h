// typing.h: how the array operations type their inputs and results: array and scalar inputs share
// one dtype, consts take it, and scalars and consts broadcast against arrays of one shape.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

namespace fugue::array {

// "f32 array [4, 5]", "f64 scalar", "const 0.1" (with every digit the const has).
std::string describe(const fugue_type& type);

// The error for a program the operation cannot accept, worded as
// "<op>: <subject>: expected <expected>, found <found>".
sdk::InvalidArgument rejection(const std::string& op, const std::string& subject,
                               const std::string& expected, const std::string& found);

// The dtype `inputs` compute in: that of their arrays and scalars, which must agree. Consts adapt
// to it, and must fit it.
fugue_dtype common_dtype(const sdk::Call& call, const std::string& op,
                         const std::vector<uint32_t>& inputs);

// The type of an element-wise result over `inputs`: an array of the shape all their arrays share,
// or a scalar when none of them is an array.
sdk::Type broadcast(const sdk::Call& call, const std::string& op,
                     const std::vector<uint32_t>& inputs, fugue_dtype dtype);

}  // namespace fugue::array
