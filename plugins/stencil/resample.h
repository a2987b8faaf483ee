// resample.h: stencil.downsample and stencil.upsample, the two steps between the levels of an
// image pyramid.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// [H, W] -> [ceil(H / 2), ceil(W / 2)]: the 5 x 5 binomial filter (1 4 6 4 1)^2 / 256, clamped at
// the border, kept at the even cells (2r, 2c).
class Downsample final : public sdk::Operation {
 public:
  Downsample();
  void infer(const sdk::Call& call, fugue_type* types) const override;
  fugue_plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const fugue_plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

// [H, W] -> [rows, cols] (default [2H, 2W]) by bilinear interpolation between cell centres:
// y[r, c] samples x at ((r + 0.5) H / rows - 0.5, (c + 0.5) W / cols - 0.5), clamped into x.
// The sample's cell comes from exact integer arithmetic; only its fraction is rounded.
class Upsample final : public sdk::Operation {
 public:
  Upsample();
  void infer(const sdk::Call& call, fugue_type* types) const override;
  fugue_plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const fugue_plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

}  // namespace fugue::stencil
