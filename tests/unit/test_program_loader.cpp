// Loader errors: every one names the file and JSON pointer, and says what was expected and found.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "errors.h"
#include "program/host_array.h"
#include "io/image_io.h"
#include "io/initial_values.h"
#include "io/npy_io.h"
#include "load/program_loader.h"
#include "program/program.h"
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

// An attribute the operation refuses is pointed at where the program writes it; one left to its default
// (which the program cannot be pointed at) leaves the statement as the place.
TEST(ProgramLoader, AttributesAnOperationRefusesArePointedAt) {
  TempDir dir;
  auto e = load_error(dir, program(R"([{"op": "histogram.even", "out": ["h"], "in": ["x"], "attrs": {"bins": 0, "low": 0, "high": 1}}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/attrs/bins: histogram.even: attribute bins: expected 1 to");
  e = load_error(dir, program(R"([{"for": "i", "count": 2, "body": [
    {"op": "array.copy", "out": ["t"], "in": ["x"]},
    {"op": "array.transpose", "out": ["u"], "in": ["t"], "attrs": {"axes": "1, 0"}}]}])"));
  EXPECT_CONTAINS(e, "prog.json:/body/0/body/1/attrs/axes: array.transpose: attribute axes:");

  Statement st;
  st.written_attrs = {"window"};
  EXPECT_EQ(st.pointer_of("attribute window: expected an odd number"), "/attrs/window");
  EXPECT_EQ(st.pointer_of("attribute windows: expected"), "");      // another attribute's, not written
  EXPECT_EQ(st.pointer_of("attributes low and high: low > high"), "");  // about two: the statement
  EXPECT_EQ(st.pointer_of("operand x: expected an array"), "");
  EXPECT_EQ(st.pointer_of("attribute window"), "");
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
  // Decimal numbers as people write them, and the infinities JSON cannot write; nothing else.
  for (const auto& [text, value] : std::vector<std::pair<std::string, double>>{
           {".5", 0.5}, {"5.", 5}, {"+2", 2}, {"-1E3", -1000}, {"007", 7}, {"-inf", -HUGE_VAL}, {"inf", HUGE_VAL}}) {
    options.overrides = {{"n", text}};
    EXPECT_EQ(load_program(file, test::bundled_plugins(), options).symbol("n").const_value, value) << text;
  }
  for (const char* text : {"abc", "0x10", " 4", "4 ", "nan", "-nan", "1e", "-", ".", "1.2.3", "1e5.5", "Inf", "1e400", ""}) {
    options.overrides = {{"n", text}};
    EXPECT_CONTAINS(load_error(dir, program("[]"), options), "expected a decimal number (as 4, -0.5, 1e-3 or -inf), found '" + std::string(text) + "'");
  }
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

// ---- .flo sources and outputs

namespace {

// A Middlebury .flo file written here, byte by byte (the reader is the stencil plugin's).
void save_flo(const std::filesystem::path& path, const HostArray& flow) {
  std::ofstream out(path, std::ios::binary);
  const int32_t width = static_cast<int32_t>(flow.shape[1]), height = static_cast<int32_t>(flow.shape[0]);
  out.write("PIEH", 4);
  out.write(reinterpret_cast<const char*>(&width), 4);  // little-endian, as every machine this runs on
  out.write(reinterpret_cast<const char*>(&height), 4);
  out.write(reinterpret_cast<const char*>(flow.bytes.data()), static_cast<std::streamsize>(flow.bytes.size()));
}

HostArray small_flow() {
  HostArray flow(DType::F32, {2, 3, 2});
  for (int64_t i = 0; i < flow.elements(); ++i) flow.set(i, 0.5 * static_cast<double>(i) - 1);
  flow.set(3, 2e9);  // unknown
  return flow;
}

// Runs in `folder` while it lives (relative --set paths resolve against the working directory).
struct InFolder {
  std::filesystem::path previous = std::filesystem::current_path();
  explicit InFolder(const std::filesystem::path& folder) { std::filesystem::current_path(folder); }
  ~InFolder() { std::filesystem::current_path(previous); }
};

}  // namespace

TEST(ProgramLoader, FloFileIsAnF32FlowArray) {
  TempDir dir;
  const HostArray flow = small_flow();
  save_flo(dir / "f.flo", flow);
  auto file = dir / "prog.json";
  test::write_text(file, R"({"fugue": 1, "symbols": {"f": {"kind": "array", "from": "f.flo"},
    "g": {"kind": "array", "dtype": "f32", "shape": [2, 3, 2], "from": {"file": "F.FLO"}}}, "body": []})");
  std::filesystem::copy_file(dir / "f.flo", dir / "F.FLO");
  Program p = load_program(file, test::bundled_plugins());
  EXPECT_EQ(p.symbol("f").dtype, DType::F32);
  EXPECT_EQ(p.symbol("f").shape, (Shape{2, 3, 2}));
  EXPECT_EQ(initial_value(p.symbol("f")).bytes, flow.bytes);
  EXPECT_EQ(initial_value(p.symbol("g")).bytes, flow.bytes);
}

TEST(ProgramLoader, FloThatContradictsTheDeclaration) {
  TempDir dir;
  save_flo(dir / "f.flo", small_flow());
  auto e = load_error(dir, R"({"fugue": 1, "symbols": {"f": {"kind": "array", "dtype": "f32", "shape": [3, 2, 2],
                                "from": "f.flo"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/f/from: expected a file of shape [3, 2, 2] (the declared shape)");
  EXPECT_CONTAINS(e, "of shape [2, 3, 2]");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"f": {"kind": "array", "dtype": "f64", "shape": [2, 3, 2],
                           "from": "f.flo"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/f/from: expected a file of f64 (the declared dtype), found ");
  EXPECT_CONTAINS(e, "f.flo holding f32");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"f": {"kind": "scalar", "from": "f.flo"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/f/from: expected a file holding one value (a scalar)");
  test::write_text(dir / "bad.flo", "NOPE and some more bytes");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"f": {"kind": "array", "from": "bad.flo"}}, "body": []})");
  EXPECT_CONTAINS(e, "prog.json:/symbols/f/from: ");
  EXPECT_CONTAINS(e, "bad.flo: tag 'NOPE' (0x4e4f5045) where PIEH was expected");
  e = load_error(dir, R"({"fugue": 1, "symbols": {"f": {"kind": "array", "from": "f.txt"}}, "body": []})");
  EXPECT_CONTAINS(e, "expected a .npy, .png, .pgm, .mtx, .npz or .flo file");
}

TEST(ProgramLoader, FlowOutputsAreFloFilesOrPictures) {
  TempDir dir;
  std::string decl = R"({"fugue": 1, "symbols": {
    "f": {"kind": "array", "dtype": "f32", "shape": [4, 5, 2], "from": {"zeros": {}}},
    "d": {"kind": "array", "dtype": "f64", "shape": [4, 5, 2], "from": {"zeros": {}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [4, 5], "from": {"zeros": {}}},
    "k": {"kind": "array", "dtype": "i32", "shape": [4, 5, 2], "from": {"zeros": {}}},
    "t": {"kind": "array", "dtype": "f32", "shape": [4, 5, 3], "from": {"zeros": {}}}}, "body": [], "outputs": )";
  EXPECT_EQ(load_error(dir, decl + R"({"f": "f.flo", "d": "d.FLO"}})"), "");
  EXPECT_EQ(load_error(dir, decl + R"({"f": "f.png", "d": "d.png", "x": "x.png"}})"), "");
  auto e = load_error(dir, decl + R"({"x": "x.flo"}})");
  EXPECT_CONTAINS(e, "prog.json:/outputs/x: no format writes 'x' (f32 array [4, 5]) to a .flo file: flo: a .flo file "
                    "holds f32 or f64 flow of shape [H, W, 2]");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"k": "k.flo"}})"), "no format writes 'k' (i32 array [4, 5, 2])");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"k": "k.png"}})"), "prog.json:/outputs/k");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"t": "t.png"}})"), "prog.json:/outputs/t");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"f": "f.pgm"}})"), "prog.json:/outputs/f");
  EXPECT_CONTAINS(load_error(dir, decl + R"({"f": "f.txt"}})"), "an output file name ending in .npy, .png, .pgm, .mtx, .npz or .flo");
}

TEST(ProgramLoader, SetReplacesTheFileOfAFileSourcedArray) {
  TempDir dir;
  std::filesystem::create_directories(dir / "prog");
  save_npy(dir / "prog" / "a.npy", HostArray(DType::F64, {3}));
  save_npy(dir / "b.npy", HostArray(DType::F64, {5}));
  save_npy(dir / "prog" / "b.npy", HostArray(DType::F64, {7}));  // not this one: --set is not program-relative
  auto file = dir / "prog" / "prog.json";
  test::write_text(file, R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "a.npy"}}, "body": []})");
  InFolder here(dir.path());
  EXPECT_EQ(load_program(file, test::bundled_plugins()).symbol("v").shape, Shape{3});

  LoadOptions options;
  options.overrides = {{"v", "b.npy"}};
  Program p = load_program(file, test::bundled_plugins(), options);
  EXPECT_EQ(p.symbol("v").shape, Shape{5});  // the shape comes from the new file
  EXPECT_EQ(p.symbol("v").source.file, std::filesystem::path("b.npy"));
  EXPECT_EQ(initial_value(p.symbol("v")).shape, Shape{5});

  // Another format: the dtype and shape follow the file.
  HostArray image(DType::F32, {2, 4});
  save_gray_png(dir / "img.png", image);
  options.overrides = {{"v", "img.png"}};
  p = load_program(file, test::bundled_plugins(), options);
  EXPECT_EQ(p.symbol("v").dtype, DType::F32);
  EXPECT_EQ(p.symbol("v").shape, (Shape{2, 4}));
  save_flo(dir / "flow.flo", small_flow());
  options.overrides = {{"v", (dir / "flow.flo").string()}};  // absolute paths work too
  p = load_program(file, test::bundled_plugins(), options);
  EXPECT_EQ(p.symbol("v").shape, (Shape{2, 3, 2}));
  EXPECT_EQ(initial_value(p.symbol("v")).bytes, small_flow().bytes);
}

TEST(ProgramLoader, SetFileMustMatchADeclaredShape) {
  TempDir dir;
  save_npy(dir / "a.npy", HostArray(DType::F32, {3}));
  save_npy(dir / "b.npy", HostArray(DType::F32, {5}));
  save_npy(dir / "c.npy", HostArray(DType::F32, {3}));
  const std::string text = R"({"fugue": 1, "symbols": {"v": {"kind": "array", "dtype": "f32", "shape": [3],
                               "from": "a.npy"}}, "body": []})";
  InFolder here(dir.path());
  LoadOptions options;
  options.overrides = {{"v", "b.npy"}};
  auto e = load_error(dir, text, options);
  EXPECT_EQ(e.rfind("--set v=b.npy: ", 0), 0u) << e;
  EXPECT_CONTAINS(e, "prog.json:/symbols/v/from: expected a file of shape [3] (the declared shape), found b.npy of shape [5]");
  options.overrides = {{"v", "c.npy"}};
  EXPECT_EQ(load_error(dir, text, options), "");
  options.overrides = {{"v", "nothere.npy"}};
  e = load_error(dir, text, options);
  EXPECT_EQ(e.rfind("--set v=nothere.npy: ", 0), 0u) << e;
  EXPECT_CONTAINS(e, "nothere.npy");
  options.overrides = {{"v", "b.txt"}};
  EXPECT_CONTAINS(load_error(dir, text, options), "expected a .npy, .png, .pgm, .mtx, .npz or .flo file, found 'b.txt'");
}

TEST(ProgramLoader, SetFileNeverReadsTheDeclaredFile) {
  TempDir dir;
  save_npy(dir / "b.npy", HostArray(DType::I32, {4}));
  const std::string text = R"({"fugue": 1, "symbols": {"v": {"kind": "array", "from": "missing.npy"}}, "body": []})";
  EXPECT_CONTAINS(load_error(dir, text), "missing.npy");
  InFolder here(dir.path());
  LoadOptions options;
  options.overrides = {{"v", "missing.npy"}, {"v", "b.npy"}};  // the last one wins
  EXPECT_EQ(load_error(dir, text, options), "");
}

TEST(ProgramLoader, SetRefusesArraysThatAreNotFileSourced) {
  TempDir dir;
  LoadOptions options;
  options.overrides = {{"x", "other.npy"}};
  EXPECT_CONTAINS(load_error(dir, program("[]"), options),
                  "--set x=other.npy: 'x' is an array generated by random; only consts, scalars and file-sourced "
                  "arrays can be set");
  options.overrides = {{"k", "1"}};
  EXPECT_CONTAINS(load_error(dir, program("[]"), options), "'k' is an array generated by arange");
  options.overrides = {{"t", "t.npy"}};
  EXPECT_CONTAINS(load_error(dir, program(R"([{"op": "array.mul", "out": ["t"], "in": ["a", "x"]}])"), options),
                  "--set t=t.npy: the program has no symbol 't'");  // temporaries are not symbols yet
  std::string declared = std::string("{") + kHeader + R"(, "body": [{"op": "array.mul", "out": ["z"], "in": ["a", "x"]}]})";
  declared.replace(declared.find("\"n\":"), 0, R"("z": {"kind": "array"}, )");
  options.overrides = {{"z", "z.npy"}};
  EXPECT_CONTAINS(load_error(dir, declared, options), "'z' is an array computed by the program");
}
