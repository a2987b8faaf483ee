// The stencil plugin's flow formats through the format ABI, as the core sees them: a PluginRegistry
// that loads the plugin lists `flo` and `flow_picture` after the core's formats, reads .flo files
// with `flo`, and writes [H, W, 2] flow to .png with `flow_picture` while the core's png format keeps
// 2-D arrays; the plugin's messages reach the core with the file's path in front.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "errors.h"
#include "flow_arrays.h"
#include "flow_files.h"
#include "plugins/plugin_registry.h"
#include "test_support.h"

namespace fs = std::filesystem;
using fugue::DType;
using fugue::HostArray;
using fugue::Shape;
using fugue::test::TempDir;

namespace {

// A registry with the core's formats and the stencil plugin's, loaded once.
const fugue::PluginRegistry& stencil_registry() {
  static const fugue::PluginRegistry* registry = [] {
    auto* r = new fugue::PluginRegistry;
    EXPECT_TRUE(r->load_file(fugue::test::bundled_plugin_folder() / "libfugue_stencil.so"));
    return r;
  }();
  return *registry;
}

std::vector<std::string> names(const std::vector<std::shared_ptr<const fugue::FileFormat>>& formats) {
  std::vector<std::string> n;
  for (const auto& f : formats) n.push_back(f->name());
  return n;
}

std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const fugue::UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected UserError, nothing thrown";
  return "";
}

HostArray flow_of(DType dtype, const Shape& shape) {
  HostArray a(dtype, shape);
  for (int64_t i = 0; i < a.elements(); ++i) a.set(i, 0.3 * static_cast<double>(i) - 1.1);
  return a;
}

}  // namespace

TEST(FlowFormats, StencilPluginAddsFloAndFlowPictureAfterTheCoresFormats) {
  const auto& r = stencil_registry();
  ASSERT_TRUE(r.refusals().empty()) << r.refusals().front().reason;
  const auto& all = r.formats();
  const std::vector<std::string> listed = names(all);
  ASSERT_GE(listed.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(listed.end() - 2, listed.end()), (std::vector<std::string>{"flo", "flow_picture"}));
  for (const auto& f : all) {
    if (f->name() != "flo" && f->name() != "flow_picture") {
      EXPECT_EQ(f->plugin(), nullptr) << f->name();  // the core's own, listed first
      continue;
    }
    ASSERT_NE(f->plugin(), nullptr) << f->name();
    EXPECT_EQ(f->plugin()->name, "stencil");
    EXPECT_FALSE(f->doc().empty());
  }
  const auto flo = r.reader_for(".flo");
  ASSERT_NE(flo, nullptr);
  EXPECT_EQ(flo->name(), "flo");
  EXPECT_EQ(flo->extensions(), (std::vector<std::string>{".flo"}));
  EXPECT_TRUE(flo->reads());
  EXPECT_TRUE(flo->writes());
  EXPECT_EQ(names(r.writers_for(".flo")), (std::vector<std::string>{"flo"}));
  // flow_picture only writes: .png files are still read by the core.
  ASSERT_NE(r.reader_for(".png"), nullptr);
  EXPECT_EQ(r.reader_for(".png")->name(), "png");
  EXPECT_EQ(names(r.writers_for(".png")), (std::vector<std::string>{"png", "flow_picture"}));
  EXPECT_NE(r.extensions_text(false).find(".flo"), std::string::npos) << r.extensions_text(false);
  EXPECT_NE(r.extensions_text(true).find(".flo"), std::string::npos) << r.extensions_text(true);
}

TEST(FlowFormats, FloReadsThroughTheAbi) {
  const auto flo = stencil_registry().reader_for(".flo");
  ASSERT_NE(flo, nullptr);
  TempDir dir;
  flow_test::Array flow(FUGUE_DTYPE_F32, {3, 4, 2});
  for (int64_t i = 0; i < flow.elements(); ++i) flow.set(i, 0.25 * static_cast<double>(i) - 2);
  fugue::stencil::write_flo(dir / "f.flo", flow.host());

  const fugue::FileContents c = flo->probe(dir / "f.flo");
  EXPECT_EQ(c.dtype, DType::F32);
  EXPECT_EQ(c.shape, (Shape{3, 4, 2}));
  const HostArray back = flo->read(dir / "f.flo", c);
  EXPECT_EQ(back.dtype, DType::F32);
  EXPECT_EQ(back.shape, (Shape{3, 4, 2}));
  ASSERT_EQ(back.bytes.size(), flow.bytes().size());
  EXPECT_EQ(std::memcmp(back.bytes.data(), flow.bytes().data(), back.bytes.size()), 0);

  // A bad file: the plugin's message, with the path in front (once).
  std::ofstream(dir / "bad.flo", std::ios::binary) << "XXXX12345678";
  std::string e = user_error([&] { flo->probe(dir / "bad.flo"); });
  EXPECT_EQ(e, (dir / "bad.flo").string() + ": tag 'XXXX' (0x58585858) where PIEH was expected: not a Middlebury .flo file");
  e = user_error([&] { flo->probe(dir / "none.flo"); });
  EXPECT_EQ(e, (dir / "none.flo").string() + ": cannot open (" + std::strerror(ENOENT) + ")");
}

TEST(FlowFormats, WritersAcceptFlowAndRefuseTheRest) {
  const auto& r = stencil_registry();
  const auto flo = r.writers_for(".flo").at(0);
  const auto png = r.writers_for(".png");
  ASSERT_EQ(png.size(), 2u);
  const auto& gray = png[0];
  const auto& picture = png[1];
  // Flow: the core's png refuses it and the flow picture takes it; 2-D arrays: the other way round.
  EXPECT_NE(gray->refuses(DType::F32, {4, 5, 2}), "");
  EXPECT_EQ(picture->refuses(DType::F32, {4, 5, 2}), "");
  EXPECT_EQ(picture->refuses(DType::F64, {4, 5, 2}), "");
  EXPECT_EQ(gray->refuses(DType::F32, {4, 5}), "");
  EXPECT_EQ(picture->refuses(DType::F32, {4, 5}),
            "a flow picture needs f32 or f64 flow of shape [H, W, 2] with H, W > 0; this is f32 [4, 5]");
  EXPECT_EQ(picture->refuses(DType::I32, {4, 5, 2}),
            "a flow picture needs f32 or f64 flow of shape [H, W, 2] with H, W > 0; this is i32 [4, 5, 2]");
  EXPECT_EQ(flo->refuses(DType::F32, {4, 5, 2}), "");
  EXPECT_EQ(flo->refuses(DType::F64, {1000000, 1, 2}), "");
  EXPECT_EQ(flo->refuses(DType::F32, {3, 4}),
            "a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1..1000000; this is f32 [3, 4]");
  EXPECT_EQ(flo->refuses(DType::F32, {1000001, 4, 2}),
            "a .flo file holds f32 or f64 flow of shape [H, W, 2] with H, W in 1..1000000; this is f32 [1000001, 4, 2]");
}

TEST(FlowFormats, WritesThroughTheAbi) {
  const auto& r = stencil_registry();
  const auto flo = r.writers_for(".flo").at(0);
  const auto picture = r.writers_for(".png").at(1);
  TempDir dir;
  // f64 flow to .flo: rounded to f32.
  const HostArray wide = flow_of(DType::F64, {2, 3, 2});
  flo->write(dir / "d.flo", wide);
  const HostArray back = flo->read(dir / "d.flo", flo->probe(dir / "d.flo"));
  ASSERT_EQ(back.shape, (Shape{2, 3, 2}));
  for (int64_t i = 0; i < wide.elements(); ++i)
    EXPECT_EQ(back.data<float>()[i], static_cast<float>(wide.data<double>()[i])) << i;

  // Flow to .png: the colour picture.
  const HostArray flow = flow_of(DType::F32, {2, 3, 2});
  picture->write(dir / "flow.png", flow);
  int w = 0, h = 0, comp = 0;
  unsigned char* pixels = stbi_load((dir / "flow.png").c_str(), &w, &h, &comp, 0);
  ASSERT_NE(pixels, nullptr);
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(comp, 3);
  flow_test::Array same(FUGUE_DTYPE_F32, {2, 3, 2});
  std::memcpy(same.data<float>(), flow.data<float>(), flow.bytes.size());
  EXPECT_EQ(std::vector<uint8_t>(pixels, pixels + 18), fugue::stencil::flow_picture(same.host()));
  stbi_image_free(pixels);

  // A failed write: the plugin's message with the path in front.
  fs::create_directories(dir / "folder.flo");
  const std::string e = user_error([&] { flo->write(dir / "folder.flo", flow); });
  EXPECT_EQ(e, (dir / "folder.flo").string() + ": cannot write: it is a folder");
}
