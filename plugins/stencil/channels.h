// channels.h: stencil.channel and stencil.stack, between a field of 2-vectors (or any number of
// channels) stored interleaved along the last axis and one array per channel.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// [..., C] -> [...]: y = x[..., index]. One work-item element per element of y, which reads x at
// flat index i * C + index: x is read beyond the element, so WHOLE.
class Channel final : public sdk::Operation {
 public:
  Channel();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

// [...] and [...] -> [..., 2]: y[..., 0] = a, y[..., 1] = b. One work-item element per element
// of y (an element writes only its own output, as ELEMENTWISE promises), which picks a or b at
// flat index i / 2 by the parity of i: a and b are read at another index than i, so WHOLE.
class Stack final : public sdk::Operation {
 public:
  Stack();
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;
};

}  // namespace fugue::stencil
