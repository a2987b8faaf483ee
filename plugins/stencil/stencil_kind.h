// stencil_kind.h: the `stencil` kind this plugin defines, and the layout of its metadata for every
// operation (of this plugin or another) that takes one.
//
// A stencil is known when kernels are generated: points with integer offsets and weights, and a border
// rule. Its type has the weights' dtype (f32 or f64), rank = the grid's rank and shape = the footprint
// (2 * radius + 1 per axis); its points are the type's metadata:
//   fugue_stencil_metadata, then num_points * rank int64_t offsets (point p's offset along axis d at
//   p * rank + d, row-major axis order: for 2-D, [row, column]), then num_points double weights.
// Declared in a program as
//   {"kind": "stencil", "dtype": "f32", "border": "clamp",
//    "points": [{"offset": [-1, 0], "weight": 0.25}, ...]}
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"

/* What a grid stencil does at the border (reads outside the grid). */
typedef int32_t fugue_border;
#define FUGUE_BORDER_CLAMP 1    /* the nearest cell inside */
#define FUGUE_BORDER_ZERO 2     /* zero */
#define FUGUE_BORDER_PERIODIC 3 /* wraps around */
#define FUGUE_BORDER_MIRROR 4   /* reflected about the edge cell: -1 -> 1, n -> n - 2 */

typedef struct fugue_stencil_metadata {
  uint32_t struct_size;
  uint32_t rank;
  uint32_t num_points;
  fugue_border border;
} fugue_stencil_metadata;

namespace fugue::stencil {

// The points of a stencil, decoded.
struct Stencil {
  uint32_t rank = 0;
  std::vector<int64_t> offsets;  // [points * rank]
  std::vector<double> weights;   // [points]
  fugue_border border = FUGUE_BORDER_CLAMP;

  size_t points() const { return weights.size(); }
  std::vector<unsigned char> encode() const;
  // Throws std::invalid_argument when the bytes are not a well-formed stencil.
  static Stencil decode(const void* data, uint64_t size);
  // 2 * radius + 1 per axis.
  std::vector<int64_t> footprint() const;
};

// The stencil operand i of a call (logic_error if it is none: the signature lets only stencils in).
Stencil stencil_of(const sdk::Call& call, uint32_t i);

// The kind, for the plugin's table.
std::unique_ptr<sdk::Kind> stencil_kind();

}  // namespace fugue::stencil
