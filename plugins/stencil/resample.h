// resample.h: stencil.downsample, stencil.upsample and stencil.upsample_to, the steps between
// the levels of an image pyramid.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// [H, W] -> [ceil(H / 2), ceil(W / 2)]: the 5 x 5 binomial filter (1 4 6 4 1)^2 / 256, clamped at
// the border, kept at the even cells (2r, 2c).
class Downsample final : public sdk::Operation {
 public:
  Downsample();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

// Bilinear interpolation between cell centres, [H, W] -> [rows, cols]: y[r, c] samples x at
// ((r + 0.5) H / rows - 0.5, (c + 0.5) W / cols - 0.5), clamped into x. The sample's cell comes
// from exact integer arithmetic; only its fraction is rounded. x is operand "x" and the result
// "y"; the operations below differ only in where [rows, cols] comes from.
class BilinearUpsample : public sdk::Operation {
 public:
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 protected:
  // Operand x, checked: [H, W] with at least one row and one column.
  const fugue_type& image(const sdk::Call& call) const;
};

// stencil.upsample: [rows, cols] from attributes, by default [2H, 2W].
class Upsample final : public BilinearUpsample {
 public:
  Upsample();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
};

// stencil.upsample_to: [rows, cols] is the shape of operand like (never read), so that a pyramid
// program need not spell out the size of every level.
class UpsampleTo final : public BilinearUpsample {
 public:
  UpsampleTo();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
};

}  // namespace fugue::stencil
