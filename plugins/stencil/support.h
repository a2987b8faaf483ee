// support.h: what every stencil operation shares: dtype facts and literals, error messages, the
// plan skeleton and cost arithmetic, and reading inputs the way the device sees them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "stencil_kind.h"

namespace fugue::stencil {

using Real = long double;  // the references compute in it

inline constexpr uint32_t kArray = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
inline constexpr uint32_t kFloat = FUGUE_DTYPES_FLOAT;
inline constexpr uint32_t kAll = FUGUE_DTYPES_REAL;

std::size_t dtype_bytes(fugue_dtype dtype);
// "float", "double", "int", "uchar", ...
std::string ctype(fugue_dtype dtype);
// `value` rounded to `dtype` and spelled as an OpenCL C literal of it: "0.1f", "(-2.0)", "3".
std::string literal(fugue_dtype dtype, double value);
// `value` rounded to float when dtype is f32, as the device's literal or load holds it.
Real rounded(fugue_dtype dtype, Real value);

// "f32 array [4, 5]", "a stencil of rank 2 with 5 points".
std::string describe(const fugue_type& type);
// "<subject>: expected <expected>, found <found>" (the core puts the operation's name in front).
sdk::InvalidArgument rejection(const std::string& subject, const std::string& expected,
                               const std::string& found);

// Checks: operand i is an array of rank `rank` (0: any rank from 1).
void require_rank(const sdk::Call& call, uint32_t i, uint32_t rank);
// Operand i has the shape and dtype of operand `like`.
void require_like(const sdk::Call& call, uint32_t i, uint32_t like);

std::vector<int64_t> shape_of(const fugue_type& type);
sdk::Type array_type(fugue_dtype dtype, const std::vector<int64_t>& shape);

// An ELEMENT-level plan over `iteration` elements in which every operand starts out NONE; the
// operation then states what it touches, and how.
sdk::Plan grid_plan(const sdk::Call& call, int64_t iteration);
sdk::Partition elementwise(uint32_t rank, const std::vector<int64_t>& halo = {});
// An input read around each element within `halo`, which the core may stage tile by tile in local
// memory for the element's neighbours read through read_offset.
sdk::Partition tile(uint32_t rank, const std::vector<int64_t>& halo);
sdk::Partition whole(uint32_t rank);

// The global memory an array operand costs when it is read or written once.
double array_bytes(const fugue_type& type);

// The C type of flat indices over `elements` (int while every index and a small multiple of it
// fits, long beyond).
std::string index_ctype(int64_t elements);

// Element i of a host input, as the device sees it, in the references' precision.
inline Real host_value(const sdk::HostView& view, int64_t i) {
  return static_cast<Real>(view.get(i));
}

// Emit helpers: ELEMENT is the only phase the stencil operations plan.
void require_element_phase(const std::string& op, const sdk::Emitter& emitter);

}  // namespace fugue::stencil
