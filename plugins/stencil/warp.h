// warp.h: stencil.warp, the bilinear backward warp of an image by a displacement field.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// y[r, c] samples image at (r + v[r, c], c + u[r, c]): u moves along columns (horizontally), v
// along rows. The sample point is computed in the images' dtype (as the device does), clamped into
// [0, H - 1] x [0, W - 1], and interpolated between its four surrounding cells. A NaN
// displacement samples the first row or column.
class Warp final : public sdk::Operation {
 public:
  Warp();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

}  // namespace fugue::stencil
