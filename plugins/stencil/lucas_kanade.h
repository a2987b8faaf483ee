// lucas_kanade.h: stencil.lucas_kanade, the per-pixel least-squares step of Lucas-Kanade optical
// flow over a square window.
#pragma once
#include <cstdint>

#include "fugue/sdk.hpp"

namespace fugue::stencil {

// Per pixel, with sums over the window x window neighbourhood (clamped at the border):
//   A = sum [[Ix Ix, Ix Iy], [Ix Iy, Iy Iy]],  (u, v) = -A^-1 [sum Ix It, sum Iy It],
// the (u, v) minimising sum (Ix u + Iy v + It)^2. Sign convention: It = I2 - I1 with I2 warped
// back by the current flow (stencil.warp(I2, u, v) - I1), so the result is the increment that
// moves a pixel of I1 to where it is in I2; u runs along columns (Ix = dI/dcolumn) and v along
// rows (Iy = dI/drow), as in stencil.warp. Where det A <= kSingular * trace(A)^2 (the window is
// flat or its gradients all point one way: A's condition number is above about 1 / kSingular)
// both are 0. One work-item element per pixel; the inputs are read with a halo of window / 2.
class LucasKanade final : public sdk::Operation {
 public:
  // Relative to trace^2, so that it holds at any scale of the gradients. Far above the rounding
  // of an f32 det of an exactly singular window (about 1e-6 trace^2 for 81 terms), so that such
  // a window gives 0 on the device as in the reference; far below any window worth solving.
  static constexpr double kSingular = 1e-4;
  static constexpr int64_t kLargestWindow = 63;

  LucasKanade();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

}  // namespace fugue::stencil
