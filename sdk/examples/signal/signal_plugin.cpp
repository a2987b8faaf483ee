// signal_plugin.cpp: the entry point of the `signal` example plugin (a third party's plugin, built out
// of Fugue's tree against an installed Fugue). softclip.cpp: an ELEMENT-level operation the core fuses
// into its own kernels; cumsum.cpp: a DEVICE-level operation that enqueues kernels of its own
// (kernels/cumsum.cl, embedded at build time).
#include <cstdio>

#include "signal_ops.h"

namespace signal_plugin {

std::string literal(double value, fugue_dtype dtype) {
  char buf[64];
  // %.9e / %.17e: enough digits to round-trip the dtype; the exponent form always reads as floating.
  if (dtype == FUGUE_DTYPE_F32) std::snprintf(buf, sizeof buf, "%.9ef", value);
  else std::snprintf(buf, sizeof buf, "%.17e", value);
  return buf;
}

}  // namespace signal_plugin

FUGUE_SDK_PLUGIN("signal", "0.1.0", "Example third-party plugin: soft clipping and prefix sums of signals",
                 [](fugue::sdk::Plugin& p) {
                   p.add(signal_plugin::make_softclip());
                   p.add(signal_plugin::make_cumsum());
                 })
