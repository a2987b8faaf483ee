// Loader errors: every one names the file and JSON pointer, and says what was expected and found.
#include <gtest/gtest.h>

#include <fstream>

#include "errors.h"
#include "host_array.h"
#include "npy_io.h"
#include "program_loader.h"
#include "test_support.h"

using namespace fugue;
using fugue::test::TempDir;

namespace {

// Loads `text` from a file in `dir`; returns the error message ("" when it loads).
std::string load_error(const TempDir& dir, const std::string& text, const LoadOptions& options = {}) {
  auto file = dir / "prog.json";
  test::write_text(file, text);
  try {
    load_program(file, test::bundled_plugins(), options);
    return "";
  } catch (const UserError& e) {
    return e.what();
  }
}

const char* kHeader = R"("fugue": 1, "symbols": {
  "x": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"random": {"seed": 1}}},
  "y": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"fill": 2}},
  "w": {"kind": "array", "dtype": "f32", "shape": [4], "from": {"zeros": {}}},
  "k": {"kind": "array", "dtype": "i32", "shape": [8], "from": {"arange": {}}},
  "a": {"kind": "scalar", "dtype": "f32", "value": 2.5},
  "n": {"kind": "const", "value": 3}
})";

std::string program(const std::string& body) { return std::string("{") + kHeader + ", \"body\": " + body + "}"; }

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(ProgramLoader, AcceptsAValidProgram) {
  TempDir dir;
  EXPECT_EQ(load_error(dir, program(R"([{"op": "array.mul", "out": ["t"], "in": ["a", "x"]},
    {"for": "i", "count": "n", "body": [{"op": "array.add", "out": ["y"], "in": ["y", "t"]},
      {"op": "array.sum", "out": ["s"], "in": ["y"]}, {"if": {"gt": ["s", 1e9]}, "then": [{"break": true}]}]}])")),
            "");
}

TEST(ProgramLoader, MalformedJsonGivesLineAndColumn) {
  TempDir dir;
  auto e = load_error(dir, "{\n  \"fugue\": 1,\n  \"symbols\": {,}\n}");
  EXPECT_CONTAINS(e, "prog.json");
  EXPECT_CONTAINS(e, "malformed JSON at line 3");
}

TEST(ProgramLoader, UnknownOperationSuggestsTheNearest) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.ad", "out": ["t"], "in": ["x", "y"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/op");
  EXPECT_CONTAINS(e, "unknown operation 'array.ad'");
  EXPECT_CONTAINS(e, "did you mean 'array.add'");
}

TEST(ProgramLoader, WrongOperandCount) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/in");
  EXPECT_CONTAINS(e, "expected 2 operand(s) (a, b)");
  EXPECT_CONTAINS(e, "found 1");
}

TEST(ProgramLoader, WrongOperandKind) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.sum", "out": ["s"], "in": ["a"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/in/0");
  EXPECT_CONTAINS(e, "expected array");
  EXPECT_CONTAINS(e, "found scalar 'a'");
}

TEST(ProgramLoader, WrongOperandDtype) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.sqrt", "out": ["t"], "in": ["k"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/in/0");
  EXPECT_CONTAINS(e, "expected dtype f32, f64");
  EXPECT_CONTAINS(e, "found i32 'k'");
  // Mixed dtypes are the op's infer's business; the message still names the place.
  e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x", "k"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0");
  EXPECT_CONTAINS(e, "array.add");
}

TEST(ProgramLoader, WrongOperandShape) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x", "w"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0");
  EXPECT_CONTAINS(e, "[8]");
  EXPECT_CONTAINS(e, "[4]");
}

TEST(ProgramLoader, OutputTypeMustMatchItsDeclaration) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["w"], "in": ["x", "y"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/out/0");
  EXPECT_CONTAINS(e, "f32 array [8]");
  EXPECT_CONTAINS(e, "f32 array [4]");
}

TEST(ProgramLoader, UndeclaredInput) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x", "yy"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/in/1");
  EXPECT_CONTAINS(e, "undeclared symbol 'yy'");
  EXPECT_CONTAINS(e, "did you mean 'y'");
}

TEST(ProgramLoader, ReadBeforeWritten) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x", "u"]},
                                       {"op": "array.copy", "out": ["u"], "in": ["x"]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/in/1");
}

TEST(ProgramLoader, UnknownKeysAndAttributes) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "array.add", "out": ["t"], "in": ["x", "y"], "atrs": {}}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/atrs");
  e = load_error(dir, program(R"([{"op": "array.cast", "out": ["t"], "in": ["x"], "attrs": {"dtyp": "f64"}}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/attrs/dtyp");
  e = load_error(dir, program(R"([{"op": "array.cast", "out": ["t"], "in": ["x"], "attrs": {"dtype": "f16"}}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/attrs/dtype");
  EXPECT_CONTAINS(e, "f16");
}

TEST(ProgramLoader, BreakOutsideLoopAndBadCondition) {
  TempDir dir;
  EXPECT_CONTAINS(load_error(dir, program(R"([{"break": true}])")), "break outside a for loop");
  auto e = load_error(dir, program(R"([{"if": {"gt": ["x", 1]}, "then": []}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/if/gt/0");
}

TEST(ProgramLoader, MissingFile) {
  TempDir dir;
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "nothere.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/v/from");
  EXPECT_CONTAINS(e, "nothere.npy");
}

TEST(ProgramLoader, RelativeFilesResolveAgainstTheProgramFolder) {
  TempDir dir;
  HostArray a(DType::F64, {3});
  save_npy(dir / "v.npy", a);
  auto file = dir / "prog.json";
  test::write_text(file, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "v.npy"}}, "body": []})");
  Program p = load_program(file, test::bundled_plugins());
  EXPECT_EQ(p.symbol("v").dtype, DType::F64);
  EXPECT_EQ(p.symbol("v").shape, Shape{3});
}

TEST(ProgramLoader, NpyThatContradictsTheDeclaration) {
  TempDir dir;
  save_npy(dir / "v.npy", HostArray(DType::F32, {999}));
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "dtype": "f32", "shape": [1000],
                                "from": "v.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/v/from");
  EXPECT_CONTAINS(e, "[999]");
  EXPECT_CONTAINS(e, "[1000]");
}

TEST(ProgramLoader, BadNpyHeader) {
  TempDir dir;
  test::write_text(dir / "v.npy", "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',     \n");
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "v.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/v/from");
  EXPECT_CONTAINS(e, "v.npy");
}

TEST(ProgramLoader, TruncatedNpyFailsAtLoad) {
  TempDir dir;
  save_npy(dir / "v.npy", HostArray(DType::F32, {100}));
  std::filesystem::resize_file(dir / "v.npy", std::filesystem::file_size(dir / "v.npy") - 10);
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "v.npy"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/v/from");
  EXPECT_CONTAINS(e, "truncated");
}

TEST(ProgramLoader, ScalarFromAOneElementNpy) {
  TempDir dir;
  HostArray one(DType::F64, {1});
  one.set(0, 4.5);
  save_npy(dir / "s.npy", one);
  EXPECT_EQ(load_error(dir, R"({"fugue": 1, "symbols": {"s": {"kind": "scalar", "from": "s.npy"}}, "body": []})"), "");
}

TEST(ProgramLoader, UppercaseExtensionsAreFiles) {
  TempDir dir;
  save_npy(dir / "V.NPY", HostArray(DType::I32, {5}));
  auto file = dir / "prog.json";
  test::write_text(file, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "V.NPY"}},
    "body": [{"op": "array.copy", "out": ["w"], "in": ["v"]}], "outputs": {"w": "W.NPY"}})");
  Program p = load_program(file, test::bundled_plugins());
  EXPECT_EQ(test::run_on_device(p).at("w").elements(), 5);
}

TEST(ProgramLoader, NestedLoopsNeedTheirOwnVariables) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"for": "i", "count": 2, "body": [{"for": "i", "count": 2, "body": []}]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/body/0/for");
  EXPECT_CONTAINS(e, "enclosing loop");
  // One after the other is fine.
  EXPECT_EQ(load_error(dir, program(R"([{"for": "i", "count": 2, "body": []}, {"for": "i", "count": 3, "body": []}])")), "");
}

TEST(ProgramLoader, ValuesThatDoNotFitTheirDtypeFailAtLoad) {
  TempDir dir;
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"b": {"kind": "array", "dtype": "u8", "shape": [4],
                                "from": {"fill": 300}}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/b/from/fill");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"k": {"kind": "array", "dtype": "i32", "shape": [4],
                          "from": {"random": {"low": 0.2, "high": 0.7}}}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/k/from/random");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"z": {"kind": "array", "dtype": "f32", "shape": [4],
                          "from": {"zeros": "lots"}}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/z/from/zeros");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"n": {"kind": "const", "value": -2}},
                          "body": [{"for": "i", "count": "n", "body": []}]})");
  EXPECT_CONTAINS(e, "prog.json:/body/0/count");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"x": {"kind": 5}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/x/kind");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"c": {"kind": "const", "value": 1e400}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json");
}

TEST(ProgramLoader, OutputsStayInsideTheOutputFolder) {
  TempDir dir;
  std::string decl = R"({"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": "f32", "shape": [2, 2],
                          "from": {"zeros": {}}}}, "body": [], "outputs": )";
  EXPECT_CONTAINS(load_error(dir, decl + R"({"x": "/tmp/x.npy"}})"), "prog.json:/outputs/x");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"x": "../x.npy"}})"), "no absolute path, no ..");
  EXPECT_EQ(load_error(dir, decl + R"({"x": "sub/x.png"}})"), "");
}

TEST(ProgramLoader, AttributeStringsSurviveAGrowingBody) {
  // Attribute names and strings are pointers handed to plugins: they must outlive every move of the
  // statements that own them (the body vector grows while the program is read).
  TempDir dir;
  std::string body = "[";
  for (int i = 0; i < 40; ++i) body += std::string(i ? "," : "") + R"({"op": "array.fill", "out": ["f)" +
                                      std::to_string(i) + R"("], "in": ["x"], "attrs": {"value": 1, "dtype": "f64"}})";
  auto file = dir / "prog.json";
  test::write_text(file, program(body + "]"));
  Program p = load_program(file, test::bundled_plugins());
  ASSERT_EQ(p.body.size(), 40u);
  for (const auto& st : p.body) {
    ASSERT_EQ(st.attrs.size(), 2u);
    for (const auto& a : st.attrs) EXPECT_TRUE(std::string(a.name) == "value" || std::string(a.name) == "dtype");
    for (const auto& a : st.attrs) {
      if (std::string(a.name) == "dtype") {
        EXPECT_EQ(std::string(a.string), "f64");
      }
    }
  }
}

TEST(ProgramLoader, OverridesSetConstsAndScalars) {
  TempDir dir;
  LoadOptions options;
  options.overrides = {{"n", "7"}, {"a", "4.5"}};
  auto file = dir / "prog.json";
  test::write_text(file, program("[]"));
  Program p = load_program(file, test::bundled_plugins(), options);
  EXPECT_EQ(p.symbol("n").const_value, 7);
  options.overrides = {{"x", "1"}};
  EXPECT_CONTAINS(load_error(dir, program("[]"), options), "is an array");
  options.overrides = {{"nope", "1"}};
  EXPECT_CONTAINS(load_error(dir, program("[]"), options), "no symbol 'nope'");
  options.overrides = {{"n", "abc"}};
  EXPECT_CONTAINS(load_error(dir, program("[]"), options), "expected a number");
  options.overrides = {{"k_scale", "2.5"}};
  std::string with_int_scalar = std::string("{") + kHeader + R"(, "body": []})";
  with_int_scalar.replace(with_int_scalar.find("\"n\":"), 0, R"("k_scale": {"kind": "scalar", "dtype": "i32", "value": 1}, )");
  EXPECT_CONTAINS(load_error(dir, with_int_scalar, options), "--set k_scale=2.5");
}

TEST(ProgramLoader, ShapesMayNameConsts) {
  TempDir dir;
  auto file = dir / "prog.json";
  test::write_text(file, R"({"fugue": 1, "symbols": {"m": {"kind": "const", "value": 5},
     "v": {"kind": "array", "dtype": "f64", "shape": ["m", 2], "from": {"zeros": {}}}}, "body": []})");
  EXPECT_EQ(load_program(file, test::bundled_plugins()).symbol("v").shape, (Shape{5, 2}));
}
