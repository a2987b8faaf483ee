// Kinds plugins define: declared from JSON by their plugin (errors point inside the declaration),
// accepted by operations by name, baked into fused kernels; the core names none of them.
#include <gtest/gtest.h>

#include <cmath>

#include "errors.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;
using json = nlohmann::json;

namespace {

json program_with(const json& symbols, const json& body, const json& outputs = json::object()) {
  json s = {{"x", {{"kind", "array"}, {"dtype", "f32"}, {"shape", {1000}}, {"from", {{"random", {{"seed", 5}}}}}}}};
  for (const auto& [name, decl] : symbols.items()) s[name] = decl;
  return {{"fugue", 1}, {"symbols", s}, {"body", body}, {"outputs", outputs}};
}

std::string load_error(const json& doc) {
  try {
    parse_program(doc, "kinds.json", test::plugins_with_test_ops());
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

// A third-party kind (testops' poly) in a chain: one kernel, the polynomial in its code, the reference's values.
TEST(Kinds, PluginKindIsBakedIntoAFusedKernel) {
  json doc = program_with({{"p", {{"kind", "poly"}, {"coefficients", {0.5, -2, 0.25}}}}},
                          {{{"op", "array.mul"}, {"out", {"t"}}, {"in", {"x", 2}}},
                           {{"op", "test.polyval"}, {"out", {"y"}}, {"in", {"p", "t"}}},
                           {{"op", "array.add"}, {"out", {"z"}}, {"in", {"y", 1}}}},
                          {{"z", "z.npy"}, {"x", "x.npy"}});
  Program program = parse_program(doc, "kinds.json", test::plugins_with_test_ops());
  EXPECT_EQ(program.symbol("p").kind_text(), "poly");
  int64_t launches = 0;
  auto device = test::run_on_device(program, std::nullopt, PlanOptions{}, &launches);
  auto reference = test::run_reference(program);
  EXPECT_EQ(launches, 1);
  const HostArray& x = reference.at("x");
  for (int64_t i = 0; i < x.elements(); ++i) {
    const double t = 2 * x.get(i), expected = 0.5 - 2 * t + 0.25 * t * t + 1;
    ASSERT_NEAR(device.at("z").get(i), expected, 1e-5 * std::max(1.0, std::fabs(expected))) << "element " << i;
    ASSERT_NEAR(reference.at("z").get(i), expected, 1e-6 * std::max(1.0, std::fabs(expected))) << "element " << i;
  }
}

TEST(Kinds, BadDeclarationsAreRefusedWithThePointerInsideThem) {
  const json use = {{{"op", "test.polyval"}, {"out", {"y"}}, {"in", {"p", "x"}}}};
  // Unknown kind, with the nearest name.
  std::string e = load_error(program_with({{"p", {{"kind", "polly"}, {"coefficients", {1}}}}}, use));
  EXPECT_CONTAINS(e, "kinds.json:/symbols/p/kind: unknown kind 'polly' (did you mean 'poly'?)");
  EXPECT_CONTAINS(e, "the kinds are array, const, function, scalar, bcsr, bdia, bell, cocktail, coo, csr, dia, ell, hyb, pair, poly, sbell, sell, sparse or stencil");
  // The plugin's own check, its pointer appended to the symbol's.
  e = load_error(program_with({{"p", {{"kind", "poly"}, {"coefficients", {1, "a"}}}}}, use));
  EXPECT_CONTAINS(e, "kinds.json:/symbols/p/coefficients/1: expected a finite number, found \"a\"");
  // A key the kind does not know.
  e = load_error(program_with({{"p", {{"kind", "poly"}, {"coeffs", {1}}}}}, use));
  EXPECT_CONTAINS(e, "kinds.json:/symbols/p/coeffs");
  // The stencil kind, now the stencil plugin's: a weight an f32 cannot hold is caught when declared.
  e = load_error(program_with(
      {{"R", {{"kind", "stencil"}, {"points", {{{"offset", {0}}, {"weight", 1e308}}}}}}},
      {{{"op", "stencil.apply"}, {"out", {"y"}}, {"in", {"R", "x"}}}}));
  EXPECT_CONTAINS(e, "kinds.json:/symbols/R/points/0/weight: expected a number an f32 holds");
  e = load_error(program_with(
      {{"R", {{"kind", "stencil"}, {"points", {{{"offset", {INT64_MIN}}, {"weight", 1}}}}}}},
      {{{"op", "stencil.apply"}, {"out", {"y"}}, {"in", {"R", "x"}}}}));
  EXPECT_CONTAINS(e, "kinds.json:/symbols/R/points/0/offset/0: expected an integer in [-1024, 1024]");
  // An operand that takes another kind.
  e = load_error(program_with(
      {{"R", {{"kind", "stencil"}, {"points", {{{"offset", {0}}, {"weight", 1}}}}}}},
      {{{"op", "test.polyval"}, {"out", {"y"}}, {"in", {"R", "x"}}}}));
  EXPECT_CONTAINS(e, "kinds.json:/body/0/in/0: operand 'p' of test.polyval: expected poly, found stencil 'R'");
  // A plugin kind is known when kernels are generated: nothing writes it.
  e = load_error(program_with({{"p", {{"kind", "poly"}, {"coefficients", {1}}}}},
                              {{{"op", "array.mul"}, {"out", {"p"}}, {"in", {"x", 2}}}}));
  EXPECT_CONTAINS(e, "kinds.json:/body/0/out/0: 'p' is a poly and cannot be written");
}

TEST(Kinds, PluginsListsEveryKindWithItsPlugin) {
  auto r = test::run_fugue("--plugin " + (test::test_plugin_folder() / "libfugue_testops.so").string() + " plugins");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_CONTAINS(r.out, "kind array");
  EXPECT_CONTAINS(r.out, "kind const");
  EXPECT_CONTAINS(r.out, "kind stencil");
  EXPECT_CONTAINS(r.out, "kind poly");
  // The stencil kind is listed under the stencil plugin, not the core.
  EXPECT_LT(r.out.find("\nstencil "), r.out.find("kind stencil")) << r.out;
}
