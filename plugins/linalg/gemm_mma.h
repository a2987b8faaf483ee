// gemm_mma.h: linalg.gemm of f64 on the tensor cores of NVIDIA GPUs (their OpenCL compiler takes
// inline PTX): mma.sync m16n8k8 multiplies a 16 x 8 tile by a warp's 32
// lanes at about twice the rate of their fused multiply-adds (H200: 66 against 31 TFLOP/s in f64, each
// measured alone), and rounds as they do (IEEE double products and sums); taken on sm_90, where it was
// measured. C in panels of PM x PN; the
// team's warps (32 consecutive work-items each) in a WM x WN grid, each warp holding TM x TN tiles of
// 16 x 8 of its block of the panel in registers, four values a lane as PTX lays them out; the k axis
// staged KC values at a time in local memory as the tiles (gemm_tiles.h) stage it, the next chunk read
// into registers while this one is multiplied, laid out (swizzled) so that a fragment's loads meet no bank twice.
#pragma once
#include <cstdint>
#include <string>

#include "fugue/sdk.hpp"
#include "gemm_tiles.h"
#include "scalars.h"
#include "tuning.h"

namespace fugue::linalg {

struct MmaShape {
  int64_t wm, wn;  // the team's warps: WM rows of WN
  int64_t tm, tn;  // each warp's tiles: TM of 16 rows by TN of 8 columns
  int64_t depth;   // KC: values of the k axis staged at a time (a multiple of 16, as the panels' sides)
  int64_t team() const { return wm * wn * 32; }
  int64_t panel_rows() const { return wm * tm * 16; }
  int64_t panel_columns() const { return wn * tn * 8; }
  // Local memory for op(A)'s PM x KC and op(B)'s KC x PN.
  uint64_t local_bytes() const;
};

// The device's tensor cores take f64 products as measured: NVIDIA's sm_90 (ABI 2.15), warps of 32.
bool has_f64_mma(const fugue_device_desc& device);
// Whether linalg.gemm multiplies an m x n product of `dtype` on the tensor cores: f64 on such a device,
// min(m, n) at least the table's mma_order, the team within the device's work-groups and the stages
// within three quarters of its local memory.
bool mma_plan(const Tuning& t, int64_t m, int64_t n, int64_t k, fugue_dtype dtype, const fugue_device_desc& device);
// The shape for an m x n x k product: panels of min(m, n, the table's mma_panel) rounded to 128, 64 or 32.
MmaShape mma_shape(const Tuning& t, int64_t m, int64_t n, int64_t k, const fugue_device_desc& device);
// explain's text for the shape.
std::string mma_variant(const MmaShape& s, const Tuning& t, const fugue_device_desc& device);

// The body (every work-item of the team runs it; barriers inside): reads and writes through `ops` as
// tiled_product does. The team must be whole warps from a multiple of 32 in the work-group (mma.sync
// takes every lane of a warp, converged).
std::string mma_product(const sdk::Emitter& em, const Scalars& sc, const MmaShape& shape, const TileOperands& ops,
                        const std::string& lane);

}  // namespace fugue::linalg
