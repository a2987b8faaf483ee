// stencil_plugin.cpp: the entry point of the stencil plugin, which registers the `stencil` kind
// and every operation of the `stencil` family, and the optical-flow file formats (.flo files, colour
// pictures of flow).
#include <memory>

#include "apply.h"
#include "channels.h"
#include "checkerboard.h"
#include "flow_formats.h"
#include "fugue/sdk.hpp"
#include "lucas_kanade.h"
#include "median.h"
#include "resample.h"
#include "stencil_kind.h"
#include "warp.h"

namespace {

void populate(fugue::sdk::Plugin& plugin) {
  using namespace fugue::stencil;
  plugin.add_kind(stencil_kind());
  plugin.add(std::make_unique<Apply>());
  plugin.add(std::make_unique<Warp>());
  plugin.add(std::make_unique<Downsample>());
  plugin.add(std::make_unique<Upsample>());
  plugin.add(std::make_unique<UpsampleTo>());
  plugin.add(std::make_unique<Median>(1));
  plugin.add(std::make_unique<Median>(2));
  plugin.add(std::make_unique<Checkerboard>(0));
  plugin.add(std::make_unique<Checkerboard>(1));
  plugin.add(std::make_unique<Channel>());
  plugin.add(std::make_unique<Stack>());
  plugin.add(std::make_unique<LucasKanade>());
  plugin.add_format(flo_format());
  plugin.add_format(flow_picture_format());
}

}  // namespace

FUGUE_SDK_PLUGIN("stencil", "0.1.0",
                 "Grid stencils with border rules, bilinear warps, pyramid resampling, median "
                 "filters, red-black masks, channel splitting and stacking, Lucas-Kanade flow "
                 "steps, and optical flow in files (.flo read and written, colour pictures as .png)",
                 populate)
