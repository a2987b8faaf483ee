// flow_formats.cpp: the `flo` and `flow_picture` formats (see flow_formats.h).
#include "flow_formats.h"

#include <stdexcept>

#include "flow_files.h"

namespace fugue::stencil {

namespace {

class FloFormat : public sdk::Format {
 public:
  FloFormat() {
    name = "flo";
    doc = "Middlebury optical flow: read as f32 [H, W, 2] (u to the right, v downwards, in pixels; |value| > 1e9 "
          "marks unknown flow); f32 or f64 [H, W, 2] written as f32";
    extensions = {".flo"};
  }
  bool reads() const override { return true; }
  bool writes() const override { return true; }

  sdk::Declared probe(const std::string& path) const override {
    sdk::Declared d;
    d.dtype = FUGUE_DTYPE_F32;
    d.shape = read_flo_shape(path);
    return d;
  }
  void read(const std::string& path, fugue_host_array& array) const override {
    if (!array.type || array.type->dtype != FUGUE_DTYPE_F32 || array.type->kind != FUGUE_KIND_ARRAY)
      throw std::logic_error("flo: the core allocated another type than the f32 array probe gave");
    const std::vector<int64_t> shape = sdk::shape_of(*array.type);
    if (array.bytes < static_cast<uint64_t>(sdk::elements(shape)) * sizeof(float) || !array.data)
      throw std::logic_error("flo: the core allocated fewer bytes than " + sdk::shape_string(shape) + " f32 needs");
    read_flo(path, static_cast<float*>(array.data), shape);
  }
  void accepts(const fugue_type& type) const override { check_flo_type(type); }
  void write(const std::string& path, const fugue_host_array& array) const override { write_flo(path, array); }
};

class FlowPictureFormat : public sdk::Format {
 public:
  FlowPictureFormat() {
    name = "flow_picture";
    doc = "optical flow f32 or f64 [H, W, 2] written as its Middlebury colour picture (8-bit RGB PNG): the "
          "direction picks the hue, the magnitude relative to the largest the saturation; zero flow white, "
          "unknown flow black";
    extensions = {".png"};
  }
  bool writes() const override { return true; }
  void accepts(const fugue_type& type) const override { check_flow_picture_type(type); }
  void write(const std::string& path, const fugue_host_array& array) const override { write_flow_png(path, array); }
};

}  // namespace

std::unique_ptr<sdk::Format> flo_format() { return std::make_unique<FloFormat>(); }
std::unique_ptr<sdk::Format> flow_picture_format() { return std::make_unique<FlowPictureFormat>(); }

}  // namespace fugue::stencil
