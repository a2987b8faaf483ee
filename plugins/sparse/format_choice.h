// format_choice.h: the kind a {"kind": "sparse", "format": "auto"} declaration takes: the layout whose
// SpMV the device's throughput table says is fastest for this matrix (seed 003's offline benchmark and
// online rules: the bytes each layout moves, padding included, over its measured throughput at the
// matrix's entries a row), or the cocktail split for the device (choose_split: the seed's greedy
// policies, its parts' estimates added) where that is faster. The throughputs come from the table `fugue tune
// sparse` measured for the device where there is one (sparse_tuner.h), else from the tables built in.
// The block layouts (bcsr, bell, sbell) are weighed at every block size of the seed (1 x 4 .. 8 x 8)
// whose blocks the matrix fills at least 40% (a pass over the entries a size), and not at all where its
// 1 x 4 units are filled less. bdia is measured but not a candidate: it ran slower than dia on the same
// matrices on both devices (Poisson 2048^2: an H100 0.0953 against 0.0832 ms, PoCL 26.8 against 11.8 ms;
// its bands' lengths are read at run time, and x is not yet kept in local memory as the seed's kernel keeps it).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <fugue/sdk.hpp>

#include "coordinates.h"
#include "layouts.h"

namespace fugue::sparse {

struct Choice {
  Layout layout = Layout::Csr;
  Cut cut;           // sell's slice and window, sbell's slice, the blocks, a cocktail's split
  std::string note;  // why, for fugue explain: every candidate's estimate
};

// `device` null (a program loaded without one): the CPU table. InvalidArgument naming the file when the
// device's tuned table is there but malformed. `reads`: the products the program runs with the matrix
// (its operations that read it, times their loops' counts; -1 where unknown): each candidate then costs
// its conversion and upload on the host besides that many products, and the analyses of the block
// layouts and the cocktail are skipped where the products could not repay them.
Choice choose_layout(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, int64_t reads = -1);
// The keys of a cocktail's cut a declaration gives while leaving the split to the device: kept as given.
struct SplitKeys {
  std::optional<int64_t> slice, sigma, block_slice;
  std::optional<std::pair<int64_t, int64_t>> block;
};
// The cocktail's split for `m` on the device (seed 003's greedy policies), its estimate in `note`. Where
// the split would pad a part past what its layout allows, the dia and then the sbell are left out.
Choice choose_split(const Coordinates& m, fugue_dtype dtype, const fugue_device_desc* device, const SplitKeys& given = {});

// The layouts the tables measure, in their order, and the entries a row they measure them at.
inline const char* const kTableLayouts[] = {"csr", "coo", "ell", "sell", "dia", "bdia", "bcsr", "bell", "sbell"};
inline constexpr int kTableRows = 9;
inline const int kTableWidths[] = {1, 4, 16, 64};
// SELL-C-sigma's slice height C for the device (its SIMD width, about), sbell's super-rows a slice:
// measured and chosen alike.
int64_t sell_slice_for(const fugue_device_desc* device);

}  // namespace fugue::sparse
