// median.h: stencil.median3 and stencil.median5, the median of each cell's 3 x 3 or 5 x 5
// window, clamped at the border.
#pragma once
#include <vector>

#include "fugue/sdk.hpp"
#include "median_network.h"

namespace fugue::stencil {

// Exact: the window's values go through a comparator network (median_network.h) in private
// registers, so the result is one of the window's values, the same the reference sorts out.
// Windows holding a NaN give an unspecified one of their values.
class Median final : public sdk::Operation {
 public:
  explicit Median(int radius);
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 private:
  int radius_;
  int window_;  // values in a window: (2 radius + 1)^2
  std::vector<Comparator> network_;
};

}  // namespace fugue::stencil
