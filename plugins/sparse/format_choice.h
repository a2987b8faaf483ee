// format_choice.h: the kind a {"kind": "sparse", "format": "auto"} declaration takes: the layout whose
// SpMV the device's throughput table says is fastest for this matrix (seed 003's offline benchmark and
// online rules, reduced to one format a matrix: the bytes each layout moves, padding included, over its
// measured throughput at the matrix's entries a row). The block layout (bcsr) is not a candidate: it has
// no row in the tables yet; "format": "bcsr" names it.
#pragma once

#include <string>

#include <fugue/sdk.hpp>

#include "coordinates.h"
#include "layouts.h"

namespace fugue::sparse {

struct Choice {
  Layout layout = Layout::Csr;
  int64_t slice = 32, sigma = 1;  // sell
  std::string note;               // why, for fugue explain: every candidate's estimate
};

// `device` null (a program loaded without one): the CPU table.
Choice choose_layout(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device);

}  // namespace fugue::sparse
