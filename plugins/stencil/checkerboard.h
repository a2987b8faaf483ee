// checkerboard.h: stencil.red and stencil.black, the two colours of a red-black ordering (as in
// red-black Gauss-Seidel or SOR): masks of the cells whose index sum is even, or odd.
#pragma once
#include "fugue/sdk.hpp"

namespace fugue::stencil {

// `like` lends only its shape: it is never read, so it may be any array of rank 1 or more.
class Checkerboard final : public sdk::Operation {
 public:
  // parity 0: red (even index sum); 1: black (odd).
  explicit Checkerboard(int parity);
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override;
  sdk::Plan plan(const sdk::Call& call) const override;
  void emit(const sdk::Call& call, const sdk::Plan& plan,
            const sdk::Emitter& emitter) const override;
  fugue_cost cost(const sdk::Call& call) const override;
  void reference(const sdk::Call& call, fugue_host_array* operands) const override;

 private:
  int parity_;
};

}  // namespace fugue::stencil
