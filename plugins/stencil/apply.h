// apply.h: stencil.apply, y[p] = sum over the points k of w_k * x[border(p + offset_k)], for a
// stencil symbol R of any rank matching x's.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// The points, weights, border and x's shape are baked into the kernel: one work-item element is
// one element of y, which reads its neighbours of x straight from global memory (read_at), where
// they are shared through the cache with the neighbouring work-items.
class Apply final : public sdk::Operation {
 public:
  Apply();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

}  // namespace fugue::stencil
