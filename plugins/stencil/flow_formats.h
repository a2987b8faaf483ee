// flow_formats.h: the file formats the stencil plugin adds for optical flow (flow_files.h does the work).
//   flo           .flo  reads f32 [H, W, 2]; writes f32 or f64 [H, W, 2] (f64 rounded to f32)
//   flow_picture  .png  writes f32 or f64 [H, W, 2] as the Middlebury colour picture (8-bit RGB);
//                       the core's png format, listed before it, keeps reading pictures and writing
//                       2-D arrays as gray ones
#pragma once
#include <memory>

#include "fugue/sdk.hpp"

namespace fugue::stencil {

std::unique_ptr<sdk::Format> flo_format();
std::unique_ptr<sdk::Format> flow_picture_format();

}  // namespace fugue::stencil
