// signal_ops.h: the operations of the `signal` example plugin, and what they share.
#pragma once

#include <fugue/sdk.hpp>

#include <memory>
#include <string>

namespace signal_plugin {

std::unique_ptr<fugue::sdk::Operation> make_softclip();
std::unique_ptr<fugue::sdk::Operation> make_cumsum();

// Operand `operand` of `call`, which must be an f32 or f64 array (of rank `rank` unless it is -1).
// infer is also called with types the signature does not allow (`fugue conformance` does it through
// the C ABI), so it checks everything it relies on, naming the operation and the operand.
inline const fugue_type& float_array(const fugue::sdk::Call& call, const std::string& op,
                                     const std::string& operand, int rank = -1) {
  const fugue_type& t = call.operand(operand);
  if (t.kind != FUGUE_KIND_ARRAY || !fugue::sdk::is_float(t.dtype))
    throw fugue::sdk::InvalidArgument(op + ": operand '" + operand + "': expected an f32 or f64 array, found " +
                                      fugue::sdk::type_string(t));
  if (rank >= 0 && t.rank != static_cast<uint32_t>(rank))
    throw fugue::sdk::InvalidArgument(op + ": operand '" + operand + "': expected a " + std::to_string(rank) +
                                      "-D array, found " + fugue::sdk::type_string(t));
  return t;
}

// An OpenCL C literal of `value` in the dtype's precision ("5.000000000e-01f" for f32), so a constant
// baked into f32 code never needs double support on the device.
std::string literal(double value, fugue_dtype dtype);

}  // namespace signal_plugin
