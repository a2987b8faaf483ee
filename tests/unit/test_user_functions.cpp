// User functions without a device: the loader reads them (their bodies reading consts and numbers),
// types them for each set of argument dtypes, and evaluates them on the host through their body's
// references, as operations' references do.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "errors.h"
#include "load/program_loader.h"
#include "program/user_function.h"
#include "test_support.h"

using namespace fugue;

namespace {

// f(a, b) = max(|a * k|, |b|) + 0.5, k a const of the program; and a function returning a parameter.
Program functions(const test::TempDir& dir) {
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "k": {"kind": "const", "value": 3},
    "f": {"kind": "function", "params": ["a", "b"], "body": [
      {"op": "array.mul", "out": ["ak"], "in": ["a", "k"]},
      {"op": "array.abs", "out": ["p"], "in": ["ak"]},
      {"op": "array.abs", "out": ["q"], "in": ["b"]},
      {"op": "array.maximum", "out": ["m"], "in": ["p", "q"]},
      {"op": "array.add", "out": ["r"], "in": ["m", 0.5]}], "result": "r"},
    "g": {"kind": "function", "params": ["a", "b"], "body": [
      {"op": "array.mul", "out": ["ak"], "in": ["a", "k"]},
      {"op": "array.sub", "out": ["r"], "in": ["ak", "b"]}], "result": "r"},
    "first": {"kind": "function", "params": ["a", "b"], "body": [], "result": "a"}},
    "body": []})");
  return load_program(dir / "p.json", test::bundled_plugins());
}

}  // namespace

TEST(UserFunctions, LoadedWithTheirConsts) {
  test::TempDir dir;
  Program program = functions(dir);
  const Symbol& f = program.symbol("f");
  EXPECT_EQ(f.kind, SymbolKind::Function);
  EXPECT_TRUE(f.compile_time());
  ASSERT_TRUE(f.function);
  EXPECT_EQ(f.function->params, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.function->body.size(), 5u);
  EXPECT_EQ(f.function->result, "r");
  ASSERT_EQ(f.function->consts.count("k"), 1u);
  EXPECT_EQ(f.function->consts.at("k"), 3);
  EXPECT_EQ(f.function->consts.size(), 2u) << "k and the number 0.5";
  EXPECT_TRUE(f.function->local("ak"));
  EXPECT_FALSE(f.function->local("k"));
}

TEST(UserFunctions, TypedByTheirArguments) {
  test::TempDir dir;
  Program program = functions(dir);
  const UserFunction& f = *program.symbol("f").function;
  EXPECT_EQ(type_function(f, {DType::F32, DType::F32}).result, DType::F32);
  EXPECT_EQ(type_function(*program.symbol("g").function, {DType::I64, DType::I64}).result, DType::I64);
  // 0.5 does not fit an integer dtype: the body's add refuses it, naming the statement.
  try {
    type_function(f, {DType::I32, DType::I32});
    ADD_FAILURE() << "0.5 added to an integer";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/symbols/f/body/4"), std::string::npos) << e.what();
  }
  const TypedFunction mixed = type_function(*program.symbol("first").function, {DType::U8, DType::F64});
  EXPECT_EQ(mixed.result, DType::U8);
  // array.abs of c64 gives f32: the function of two c64 values returns f32.
  EXPECT_EQ(type_function(f, {DType::C64, DType::C64}).result, DType::F32);
  // maximum takes two operands of one dtype.
  try {
    type_function(f, {DType::F32, DType::F64});
    ADD_FAILURE() << "maximum of f32 and f64 typed";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/symbols/f/body/3: array.maximum"), std::string::npos) << e.what();
  }
  EXPECT_THROW(type_function(f, {DType::F32}), UserError);
}

// The host evaluation, element by element, against values computed here.
TEST(UserFunctions, EvaluatedOnTheHost) {
  test::TempDir dir;
  Program program = functions(dir);
  const UserFunction& f = *program.symbol("f").function;
  const std::vector<float> a = {1, -2, 0.25f, 0}, b = {-4, 5, 0, -0.5f};
  std::vector<float> r(a.size());
  evaluate_function(f, {DType::F32, DType::F32}, std::vector<const void*>{a.data(), b.data()}.data(), a.size(), r.data());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_FLOAT_EQ(r[i], std::fmax(std::fabs(a[i] * 3), std::fabs(b[i])) + 0.5f) << i;
  const std::vector<int32_t> ia = {7, -9}, ib = {-30, 2};
  std::vector<int32_t> ir(2);
  evaluate_function(*program.symbol("g").function, {DType::I32, DType::I32},
                    std::vector<const void*>{ia.data(), ib.data()}.data(), 2, ir.data());
  EXPECT_EQ(ir, (std::vector<int32_t>{51, -29}));
  // No calls: nothing read, nothing written.
  evaluate_function(f, {DType::F32, DType::F32}, std::vector<const void*>{nullptr, nullptr}.data(), 0, nullptr);
}
