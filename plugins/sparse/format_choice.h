// format_choice.h: the kind a {"kind": "sparse", "format": "auto"} declaration takes: the layout whose
// SpMV the device's throughput table says is fastest for this matrix (seed 003's offline benchmark and
// online rules, reduced to one format a matrix: the bytes each layout moves, padding included, over its
// measured throughput at the matrix's entries a row). The throughputs come from the table `fugue tune
// sparse` measured for the device where there is one (sparse_tuner.h), else from the tables built in.
// bdia and the block layouts (bcsr, bell, sbell) are not candidates: they have no row in the tables yet;
// "format": "bell" names one.
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

// `device` null (a program loaded without one): the CPU table. InvalidArgument naming the file when the
// device's tuned table is there but malformed.
Choice choose_layout(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device);

// The layouts the tables measure, in their order, and the entries a row they measure them at.
inline const char* const kTableLayouts[] = {"csr", "coo", "ell", "sell", "dia"};
inline const int kTableWidths[] = {1, 4, 16, 64};
// SELL-C-sigma's slice height C for the device (its SIMD width, about): measured and chosen alike.
int64_t sell_slice_for(const fugue_device_desc* device);

}  // namespace fugue::sparse
