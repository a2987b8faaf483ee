// Every stencil operation against its CPU reference on fresh random inputs (f32, f64, and i32 where
// the op takes it), over grids of 1 x 1, 7 x 5, 64 x 64 and 257 x 129 (and 1-D and 3-D ones for
// stencil.apply, with every border rule); hand-checked small cases that check the references
// themselves; and the loader's errors for programs the operations refuse.
#include <gtest/gtest.h>

#include <tuple>

#include <nlohmann/json.hpp>

#include "program/dtype.h"
#include "errors.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------
// Stencils

json point(std::vector<int64_t> offset, double weight) { return {{"offset", offset}, {"weight", weight}}; }

json stencil(const std::string& border, json points, DType dtype) {
  return {{"kind", "stencil"}, {"dtype", dtype_name(dtype)}, {"border", border}, {"points", std::move(points)}};
}

// The 5-point star, weights unequal so that a swapped axis or sign shows.
json five_point() {
  return {point({-1, 0}, 0.2), point({1, 0}, 0.15), point({0, -1}, 0.25), point({0, 1}, 0.1), point({0, 0}, -0.7)};
}

// Nine points of radius 2, no symmetry at all.
json asymmetric_nine() {
  return {point({-2, 1}, 0.05), point({-1, -1}, 0.1), point({-1, 2}, -0.2),  point({0, 0}, 0.5),  point({0, -2}, 0.3),
          point({1, 0}, -0.15), point({1, 1}, 0.125), point({2, -1}, 0.075), point({2, 2}, -0.33)};
}

// 1-D, reaching 3 cells left: beyond the whole of a short grid.
json one_dimensional() { return {point({-3}, 0.25), point({-1}, 0.5), point({0}, -1.0), point({2}, 0.75)}; }

// The 3-D 7-point Laplacian-like star, unequal weights.
json three_dimensional() {
  return {point({0, 0, 0}, -1.5), point({-1, 0, 0}, 0.1), point({1, 0, 0}, 0.2), point({0, -1, 0}, 0.3),
          point({0, 1, 0}, 0.4),  point({0, 0, -1}, 0.5), point({0, 0, 1}, 0.6)};
}

// ---------------------------------------------------------------------------------------------
// Cases against the reference

struct Case {
  std::string op;
  DType dtype;
  std::vector<int64_t> shape;
  std::string border;  // stencil.apply
  std::string points;  // stencil.apply: "five", "nine", "1d", "3d"
  json attrs = json::object();
  std::vector<int64_t> like = {};  // stencil.upsample_to: the shape of like
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.op << " " << dtype_name(c.dtype) << " " << json(c.shape).dump() << " " << c.points << " " << c.border << " "
      << c.attrs.dump();
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = c.op.substr(c.op.find('.') + 1) + "_" + std::string(dtype_name(c.dtype));
  for (int64_t n : c.shape) s += "_" + std::to_string(n);
  if (!c.points.empty()) s += "_" + c.points + "_" + c.border;
  for (const auto& [key, value] : c.attrs.items()) s += "_" + key + "_" + value.dump();
  if (!c.like.empty()) s += "_like" + json(c.like).dump();
  for (auto& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s + "_" + std::to_string(info.index);
}

// A case of an operation without a stencil.
Case plain(const std::string& op, DType dtype, std::vector<int64_t> shape, json attrs = json::object()) {
  return {op, dtype, std::move(shape), "", "", std::move(attrs)};
}

json points_of(const std::string& name) {
  if (name == "five") return five_point();
  if (name == "nine") return asymmetric_nine();
  if (name == "1d") return one_dimensional();
  return three_dimensional();
}

std::vector<Case> cases() {
  const DType f32 = DType::F32, f64 = DType::F64, i32 = DType::I32;
  const std::vector<int64_t> tiny = {1, 1}, small = {7, 5}, square = {64, 64}, large = {257, 129};
  std::vector<Case> out;
  const char* borders[] = {"clamp", "zero", "periodic", "mirror"};
  // apply: every border with the 5-point star (f32 64 x 64, f64 7 x 5) ...
  for (const char* b : borders) {
    out.push_back({"stencil.apply", f32, square, b, "five"});
    out.push_back({"stencil.apply", f64, small, b, "five"});
  }
  // ... with the asymmetric radius-2 stencil on every size ...
  out.push_back({"stencil.apply", f32, large, "clamp", "nine"});
  out.push_back({"stencil.apply", f64, large, "zero", "nine"});
  out.push_back({"stencil.apply", f32, small, "periodic", "nine"});
  out.push_back({"stencil.apply", f64, small, "mirror", "nine"});
  out.push_back({"stencil.apply", f32, square, "mirror", "nine"});
  out.push_back({"stencil.apply", f64, tiny, "periodic", "nine"});
  out.push_back({"stencil.apply", f32, tiny, "mirror", "nine"});
  out.push_back({"stencil.apply", f32, small, "zero", "nine"});
  // ... and in 1-D (shorter than the stencil's reach too) and 3-D.
  out.push_back({"stencil.apply", f32, {1000}, "clamp", "1d"});
  out.push_back({"stencil.apply", f64, {7}, "mirror", "1d"});
  out.push_back({"stencil.apply", f32, {2}, "periodic", "1d"});
  out.push_back({"stencil.apply", f64, {64}, "zero", "1d"});
  out.push_back({"stencil.apply", f32, {9, 8, 7}, "zero", "3d"});
  out.push_back({"stencil.apply", f64, {5, 6, 7}, "periodic", "3d"});
  out.push_back({"stencil.apply", f32, {4, 5, 3}, "mirror", "3d"});
  out.push_back({"stencil.apply", f64, {1, 6, 4}, "clamp", "3d"});

  for (auto [t, s] : std::vector<std::pair<DType, std::vector<int64_t>>>{
           {f32, square}, {f64, small}, {f32, tiny}, {f64, large}, {f32, large}})
    out.push_back(plain("stencil.warp", t, s));
  for (auto [t, s] : std::vector<std::pair<DType, std::vector<int64_t>>>{
           {f32, small}, {f64, square}, {f32, large}, {f64, tiny}, {f32, {2, 3}}})
    out.push_back(plain("stencil.downsample", t, s));
  out.push_back(plain("stencil.upsample", f32, small));
  out.push_back(plain("stencil.upsample", f64, small, {{"rows", 13}, {"cols", 9}}));  // odd pyramid sizes
  out.push_back(plain("stencil.upsample", f32, square));
  out.push_back(plain("stencil.upsample", f64, tiny));
  out.push_back(plain("stencil.upsample", f32, large, {{"rows", 300}, {"cols", 129}}));  // columns unchanged
  for (auto [t, s] :
       std::vector<std::pair<DType, std::vector<int64_t>>>{{f32, square}, {f64, small}, {i32, large}, {f32, tiny}})
    out.push_back(plain("stencil.median3", t, s));
  for (auto [t, s] : std::vector<std::pair<DType, std::vector<int64_t>>>{
           {f32, small}, {f64, square}, {i32, square}, {f32, large}, {f64, tiny}})
    out.push_back(plain("stencil.median5", t, s));
  out.push_back(plain("stencil.red", f32, small));
  out.push_back(plain("stencil.black", f64, square, {{"dtype", "f32"}}));
  out.push_back(plain("stencil.red", i32, {7}, {{"dtype", "i32"}}));
  out.push_back(plain("stencil.black", i32, {3, 4, 5}));
  // Optical-flow helpers: u and v out of a [H, W, 2] flow and back, pyramid steps to a shape.
  out.push_back(plain("stencil.channel", f32, {7, 5, 2}, {{"index", 0}}));
  out.push_back(plain("stencil.channel", f64, {257, 129, 2}, {{"index", 1}}));
  out.push_back(plain("stencil.channel", i32, {4, 3, 5}, {{"index", 4}}));
  out.push_back(plain("stencil.channel", f32, {1, 1}, {{"index", 0}}));
  out.push_back(plain("stencil.stack", f32, small));
  out.push_back(plain("stencil.stack", f64, large));
  out.push_back(plain("stencil.stack", i32, {3, 4, 5}));
  out.push_back(plain("stencil.stack", f32, tiny));
  for (auto [t, s, like] : std::vector<std::tuple<DType, std::vector<int64_t>, std::vector<int64_t>>>{
           {f32, small, {13, 9}}, {f64, small, {14, 10}}, {f32, tiny, {3, 2}}, {f64, {129, 65}, large}})
    out.push_back({"stencil.upsample_to", t, s, "", "", json::object(), like});
  out.push_back(plain("stencil.lucas_kanade", f32, small));
  out.push_back(plain("stencil.lucas_kanade", f64, small, {{"window", 15}}));  // wider than the image
  out.push_back(plain("stencil.lucas_kanade", f32, large));
  out.push_back(plain("stencil.lucas_kanade", f64, large, {{"window", 5}}));
  out.push_back(plain("stencil.lucas_kanade", f32, square, {{"window", 3}}));
  out.push_back(plain("stencil.lucas_kanade", f64, tiny));  // singular: 0
  return out;
}

json random_array(DType dtype, const std::vector<int64_t>& shape, uint64_t seed, double low, double high) {
  return {{"kind", "array"},
          {"dtype", dtype_name(dtype)},
          {"shape", shape},
          {"from", {{"random", {{"seed", seed}, {"low", low}, {"high", high}}}}}};
}

class StencilOps : public testing::TestWithParam<Case> {};

TEST_P(StencilOps, MatchesReference) {
  const Case& c = GetParam();
  const auto& registry = test::bundled_plugins();
  auto op = registry.find(c.op);
  ASSERT_NE(op, nullptr) << c.op;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (set FUGUE_TEST_SEED to repeat)");

  const bool integer = !dtype_is_float(c.dtype);
  const double low = integer ? -100 : -1, high = integer ? 100 : 1;
  json symbols = json::object(), in = json::array();
  if (c.op == "stencil.warp") {
    symbols["image"] = random_array(c.dtype, c.shape, seed, low, high);
    // Displacements of a few cells, which push samples past every border.
    symbols["u"] = random_array(c.dtype, c.shape, seed + 1, op->desc().test_low, op->desc().test_high);
    symbols["v"] = random_array(c.dtype, c.shape, seed + 2, op->desc().test_low, op->desc().test_high);
    in = {"image", "u", "v"};
  } else {
    // Every input an array of the case's shape (like: its own where the case gives one), R the
    // case's stencil.
    uint64_t k = 0;
    for (uint32_t i : op->inputs()) {
      const std::string name = op->operands()[i]->name;
      const bool own_shape = name == "like" && !c.like.empty();
      if (name == "R") symbols[name] = stencil(c.border, points_of(c.points), c.dtype);
      else symbols[name] = random_array(c.dtype, own_shape ? c.like : c.shape, seed + k++, low, high);
      in.push_back(name);
    }
  }
  json out = json::array(), outputs = json::object();
  for (uint32_t o : op->outputs()) {
    const std::string name = op->operands()[o]->name;
    out.push_back(name);
    outputs[name] = name + ".npy";
  }
  json doc = {{"fugue", 1},
              {"symbols", symbols},
              {"body", {{{"op", c.op}, {"in", in}, {"out", out}, {"attrs", c.attrs}}}},
              {"outputs", outputs}};
  Program program = parse_program(doc, "stencil_op_test.json", registry);
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  const double tolerance =
      integer ? 0.0 : c.dtype == DType::F64 ? op->desc().tolerance_f64 : op->desc().tolerance_f32;
  for (const auto& [name, file] : outputs.items()) {
    std::string mismatch = test::compare_arrays(device.at(name), reference.at(name), tolerance);
    EXPECT_TRUE(mismatch.empty()) << c.op << " " << name << ": " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, StencilOps, testing::ValuesIn(cases()), case_name);

// ---------------------------------------------------------------------------------------------
// Hand-checked values, on the device and in the reference

// Runs `body` over `symbols` and expects output y to hold `expected` (row-major) on both sides.
void expect_values(const json& symbols, const json& body, const std::map<std::string, std::vector<double>>& expected,
                   double tolerance = 1e-12) {
  json outputs = json::object();
  for (const auto& [name, values] : expected) outputs[name] = name + ".npy";
  json doc = {{"fugue", 1}, {"symbols", symbols}, {"body", body}, {"outputs", outputs}};
  Program program = parse_program(doc, "stencil_hand_test.json", test::bundled_plugins());
  auto device = test::run_on_device(program);
  auto reference = test::run_reference(program);
  for (const auto& [name, values] : expected)
    for (const auto* side : {&device, &reference}) {
      const char* which = side == &device ? "device" : "reference";
      const HostArray& got = side->at(name);
      ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << name << " " << which;
      for (size_t i = 0; i < values.size(); ++i)
        EXPECT_NEAR(got.get(static_cast<int64_t>(i)), values[i], tolerance * std::max(1.0, std::fabs(values[i])))
            << name << " (" << which << ") element " << i;
    }
}

json inline_array(DType dtype, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  return {{"kind", "array"}, {"dtype", dtype_name(dtype)}, {"shape", shape}, {"value", values}};
}

json call(const std::string& op, const std::vector<std::string>& in, const std::string& out,
          const json& attrs = json::object()) {
  return {{"op", op}, {"in", in}, {"out", json::array({out})}, {"attrs", attrs}};
}

TEST(StencilHandChecked, FivePointClampOnThreeByThree) {
  // y = x + 0.1 up + 0.2 down + 0.3 left + 0.4 right, the nearest cell inside at the border.
  json points = {point({0, 0}, 1.0), point({-1, 0}, 0.1), point({1, 0}, 0.2), point({0, -1}, 0.3), point({0, 1}, 0.4)};
  json symbols = {{"R", stencil("clamp", points, DType::F64)},
                  {"x", inline_array(DType::F64, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}};
  // E.g. y[0, 0] = 1 + 0.1 * 1 + 0.2 * 4 + 0.3 * 1 + 0.4 * 2 = 3.0.
  expect_values(symbols, json::array({call("stencil.apply", {"R", "x"}, "y")}),
                {{"y", {3.0, 4.7, 6.3, 8.7, 10.4, 12.0, 14.1, 15.8, 17.4}}});
}

TEST(StencilHandChecked, EveryBorderInOneDimension) {
  // y[i] = x[i - 1] + 10 x[i + 1] over x = 1 2 3 4: only the ends differ between the borders.
  json points = {point({-1}, 1.0), point({1}, 10.0)};
  json symbols = {{"x", inline_array(DType::F64, {4}, {1, 2, 3, 4})}};
  json body = json::array();
  for (const char* b : {"clamp", "zero", "periodic", "mirror"}) {
    symbols[std::string("R_") + b] = stencil(b, points, DType::F64);
    body.push_back(call("stencil.apply", {std::string("R_") + b, "x"}, std::string("y_") + b));
  }
  expect_values(symbols, body,
                {{"y_clamp", {21, 31, 42, 43}},     // x[-1] = x[0], x[4] = x[3]
                 {"y_zero", {20, 31, 42, 3}},       // outside reads 0
                 {"y_periodic", {24, 31, 42, 13}},  // x[-1] = x[3], x[4] = x[0]
                 {"y_mirror", {22, 31, 42, 33}}});  // x[-1] = x[1], x[4] = x[2]
}

TEST(StencilHandChecked, ResamplingMediansAndMasks) {
  json symbols = {
      {"row", inline_array(DType::F32, {1, 2}, {0, 1})},
      {"img", inline_array(DType::F64, {3, 3}, {9, 1, 5, 3, 7, 2, 8, 4, 6})},
      {"spike", inline_array(DType::F32, {1, 5}, {0, 0, 16, 0, 0})},
  };
  json body = {call("stencil.upsample", {"row"}, "up", {{"cols", 4}, {"rows", 1}}),
               call("stencil.median3", {"img"}, "med"), call("stencil.downsample", {"spike"}, "down"),
               call("stencil.red", {"img"}, "red"), call("stencil.black", {"row"}, "black")};
  expect_values(symbols, body,
                {// Columns sample x at c / 2 - 0.25: -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
                 {"up", {0, 0.25, 0.75, 1}},
                 // Window of (0, 0), clamped: 9 9 1 / 9 9 1 / 3 3 7 -> sorted 1 1 3 3 7 9 9 9 9 -> 7.
                 {"med", {7, 5, 5, 7, 5, 5, 7, 6, 6}},
                 // Kept columns 0, 2, 4; the single row is its own neighbour (weights 16/16). Column 0
                 // sees 16 at +2 (weight 1/16), column 2 at 0 (6/16), column 4 at -2 (1/16).
                 {"down", {1, 6, 1}},
                 {"red", {1, 0, 1, 0, 1, 0, 1, 0, 1}},
                 {"black", {0, 1}}},
                1e-6);
}

TEST(StencilHandChecked, ChannelsOfAStackedFlow) {
  // [2, 3] planes -> a [2, 3, 2] flow, interleaved (u0 v0 u1 v1 ...), and back; integers too.
  for (DType t : {DType::F32, DType::I32}) {
    json symbols = {{"a", inline_array(t, {2, 3}, {1, 2, 3, 4, 5, 6})},
                    {"b", inline_array(t, {2, 3}, {-1, -2, -3, -4, -5, -6})}};
    json body = {call("stencil.stack", {"a", "b"}, "flow"), call("stencil.channel", {"flow"}, "u", {{"index", 0}}),
                 call("stencil.channel", {"flow"}, "v", {{"index", 1}})};
    expect_values(symbols, body,
                  {{"flow", {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}},
                   {"u", {1, 2, 3, 4, 5, 6}},
                   {"v", {-1, -2, -3, -4, -5, -6}}},
                  0);
  }
}

TEST(StencilHandChecked, UpsampleToTakesLikesShapeOnly) {
  // like is [1, 4] of another dtype (never read): the same samples as stencil.upsample to cols 4.
  json symbols = {{"row", inline_array(DType::F32, {1, 2}, {0, 1})},
                  {"like", inline_array(DType::U8, {1, 4}, {9, 9, 9, 9})}};
  expect_values(symbols, json::array({call("stencil.upsample_to", {"row", "like"}, "up")}),
                {{"up", {0, 0.25, 0.75, 1}}}, 1e-6);
}

// Lucas-Kanade on a quadratic image f moved by (u0, v0): I1 = f, I2(r, c) = f(r - v0, c - u0), so
// that the content of I1 at (r, c) is at (r + v0, c + u0) in I2. For a quadratic,
// I2 - I1 = -grad f(midpoint) . (v0, u0) exactly, so with the gradients taken at the midpoint
// (as of the mean of both frames) every window's least squares recovers (u0, v0) exactly.
TEST(StencilHandChecked, LucasKanadeRecoversTheShiftOfAQuadratic) {
  const int64_t rows = 5, cols = 6;
  const double u0 = 0.75, v0 = -0.5;
  auto f = [](double r, double c) { return 0.5 * c * c + 0.25 * r * r + 0.1 * r * c; };
  std::vector<double> it, ix, iy;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const double mr = r - v0 / 2, mc = c - u0 / 2;  // the midpoint
      it.push_back(f(r - v0, c - u0) - f(r, c));
      ix.push_back(mc + 0.1 * mr);        // df/dcolumn
      iy.push_back(0.5 * mr + 0.1 * mc);  // df/drow
    }
  for (auto [t, tolerance] : {std::pair{DType::F64, 1e-10}, std::pair{DType::F32, 1e-4}}) {
    json symbols = {{"It", inline_array(t, {rows, cols}, it)},
                    {"Ix", inline_array(t, {rows, cols}, ix)},
                    {"Iy", inline_array(t, {rows, cols}, iy)}};
    for (int window : {3, 9}) {
      json body = json::array({{{"op", "stencil.lucas_kanade"},
                                {"in", {"It", "Ix", "Iy"}},
                                {"out", {"u", "v"}},
                                {"attrs", {{"window", window}}}}});
      expect_values(symbols, body,
                    {{"u", std::vector<double>(rows * cols, u0)}, {"v", std::vector<double>(rows * cols, v0)}},
                    tolerance);
    }
  }
}

// Where every gradient of the window points one way (a linear ramp: the aperture problem) or there
// is none (a flat image), A is singular, and both components are 0 rather than noise.
TEST(StencilHandChecked, LucasKanadeGivesZeroWhereTheWindowIsSingular) {
  for (DType t : {DType::F32, DType::F64}) {
    auto constant = [&](double value) {
      return json{{"kind", "array"}, {"dtype", dtype_name(t)}, {"shape", {6, 7}}, {"from", {{"fill", value}}}};
    };
    // The ramp 0.7 c + 0.3 r moved by (0.3, 0.2): It = -(0.7 * 0.3 + 0.3 * 0.2). Neither gradient
    // is exact in binary, so an f32 det carries rounding the threshold must stay above.
    json symbols = {{"It", constant(-0.27)}, {"Ix", constant(0.7)}, {"Iy", constant(0.3)}, {"zero", constant(0)}};
    json body = json::array({{{"op", "stencil.lucas_kanade"}, {"in", {"It", "Ix", "Iy"}}, {"out", {"u", "v"}}},
                             {{"op", "stencil.lucas_kanade"},
                              {"in", {"It", "zero", "zero"}},
                              {"out", {"u_flat", "v_flat"}},
                              {"attrs", {{"window", 1}}}}});
    const std::vector<double> zeros(42, 0.0);
    expect_values(symbols, body, {{"u", zeros}, {"v", zeros}, {"u_flat", zeros}, {"v_flat", zeros}}, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Programs the operations refuse

std::string load_error(const json& symbols, const json& body) {
  json doc = {{"fugue", 1}, {"symbols", symbols}, {"body", body}, {"outputs", json::object()}};
  try {
    parse_program(doc, "stencil_error_test.json", test::bundled_plugins());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

json f32_array(const std::vector<int64_t>& shape) { return random_array(DType::F32, shape, 1, -1, 1); }

TEST(StencilErrors, StencilRankDiffersFromTheArrays) {
  auto e = load_error({{"R", stencil("clamp", one_dimensional(), DType::F32)}, {"x", f32_array({7, 5})}},
                      json::array({call("stencil.apply", {"R", "x"}, "y")}));
  EXPECT_CONTAINS(e, "stencil_error_test.json:/body/0");
  EXPECT_CONTAINS(e, "stencil.apply");
  EXPECT_CONTAINS(e, "operand R");
  EXPECT_CONTAINS(e, "rank 2");
  EXPECT_CONTAINS(e, "found a stencil of rank 1");
}

TEST(StencilErrors, WarpWithMismatchedShapes) {
  auto e = load_error({{"image", f32_array({7, 5})}, {"u", f32_array({7, 5})}, {"v", f32_array({5, 7})}},
                      json::array({call("stencil.warp", {"image", "u", "v"}, "y")}));
  EXPECT_CONTAINS(e, "stencil.warp");
  EXPECT_CONTAINS(e, "operand v");
  EXPECT_CONTAINS(e, "shape [7, 5] like operand image");
  EXPECT_CONTAINS(e, "[5, 7]");
}

TEST(StencilErrors, WarpWithMismatchedDtypes) {
  auto e = load_error(
      {{"image", f32_array({7, 5})}, {"u", random_array(DType::F64, {7, 5}, 1, -1, 1)}, {"v", f32_array({7, 5})}},
      json::array({call("stencil.warp", {"image", "u", "v"}, "y")}));
  EXPECT_CONTAINS(e, "operand u");
  EXPECT_CONTAINS(e, "dtype f32 like operand image");
}

TEST(StencilErrors, MedianOfAVector) {
  for (const char* op : {"stencil.median3", "stencil.median5"}) {
    auto e = load_error({{"x", f32_array({16})}}, json::array({call(op, {"x"}, "y")}));
    EXPECT_CONTAINS(e, op);
    EXPECT_CONTAINS(e, "operand x");
    EXPECT_CONTAINS(e, "rank 2");
    EXPECT_CONTAINS(e, "f32 array [16]");
  }
}

TEST(StencilErrors, UpsampleThatWouldShrink) {
  auto e = load_error({{"x", f32_array({7, 5})}}, json::array({call("stencil.upsample", {"x"}, "y", {{"rows", 6}})}));
  EXPECT_CONTAINS(e, "stencil.upsample");
  EXPECT_CONTAINS(e, "attribute rows");
  EXPECT_CONTAINS(e, "never shrinks");
  EXPECT_CONTAINS(e, "found 6");
}

TEST(StencilErrors, ApplyToIntegers) {
  auto e =
      load_error({{"R", stencil("zero", five_point(), DType::F32)}, {"x", random_array(DType::I32, {7, 5}, 1, 0, 9)}},
                 json::array({call("stencil.apply", {"R", "x"}, "y")}));
  EXPECT_CONTAINS(e, "operand 'x' of stencil.apply");
}

TEST(StencilErrors, ChannelOutOfRange) {
  auto e = load_error({{"flow", f32_array({7, 5, 2})}},
                      json::array({call("stencil.channel", {"flow"}, "y", {{"index", 2}})}));
  EXPECT_CONTAINS(e, "stencil.channel");
  EXPECT_CONTAINS(e, "attribute index");
  EXPECT_CONTAINS(e, "from 0 to 1");
  EXPECT_CONTAINS(e, "found 2");
  e = load_error({{"x", f32_array({7})}}, json::array({call("stencil.channel", {"x"}, "y", {{"index", 0}})}));
  EXPECT_CONTAINS(e, "operand x");
  EXPECT_CONTAINS(e, "rank 2 or more");
}

TEST(StencilErrors, StackOfMismatchedArrays) {
  auto e = load_error({{"a", f32_array({7, 5})}, {"b", f32_array({5, 7})}},
                      json::array({call("stencil.stack", {"a", "b"}, "y")}));
  EXPECT_CONTAINS(e, "stencil.stack");
  EXPECT_CONTAINS(e, "operand b");
  EXPECT_CONTAINS(e, "shape [7, 5] like operand a");
}

TEST(StencilErrors, UpsampleToASmallerShape) {
  auto e = load_error({{"x", f32_array({7, 5})}, {"like", f32_array({14, 4})}},
                      json::array({call("stencil.upsample_to", {"x", "like"}, "y")}));
  EXPECT_CONTAINS(e, "stencil.upsample_to");
  EXPECT_CONTAINS(e, "operand like");
  EXPECT_CONTAINS(e, "never shrinks");
  EXPECT_CONTAINS(e, "[14, 4]");
}

TEST(StencilErrors, LucasKanadeWindowAndShapes) {
  json symbols = {{"It", f32_array({7, 5})}, {"Ix", f32_array({7, 5})}, {"Iy", f32_array({7, 5})},
                  {"Iz", f32_array({5, 7})}};
  for (int window : {0, 4, 65}) {
    auto e = load_error(symbols, json::array({{{"op", "stencil.lucas_kanade"},
                                               {"in", {"It", "Ix", "Iy"}},
                                               {"out", {"u", "v"}},
                                               {"attrs", {{"window", window}}}}}));
    EXPECT_CONTAINS(e, "attribute window");
    EXPECT_CONTAINS(e, "an odd side from 1 to 63");
    EXPECT_CONTAINS(e, "found " + std::to_string(window));
  }
  auto e = load_error(symbols,
                      json::array({{{"op", "stencil.lucas_kanade"}, {"in", {"It", "Iz", "Iy"}}, {"out", {"u", "v"}}}}));
  EXPECT_CONTAINS(e, "operand Ix");
  EXPECT_CONTAINS(e, "shape [7, 5] like operand It");
}

TEST(StencilPlugin, HasEveryOperationWithDocs) {
  for (const char* name : {"apply", "warp", "downsample", "upsample", "upsample_to", "median3", "median5", "red",
                           "black", "channel", "stack", "lucas_kanade"}) {
    auto op = test::bundled_plugins().find(std::string("stencil.") + name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_FALSE(op->doc().empty()) << name;
    for (const auto* operand : op->operands()) EXPECT_STRNE(operand->doc, "") << name << " " << operand->name;
  }
}

}  // namespace
