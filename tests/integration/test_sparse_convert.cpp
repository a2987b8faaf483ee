// sparse.convert: a matrix converted from any layout into any other holds the arrays that reading it
// into that layout gives (which test_sparse.cpp checks against the seed's figures and SciPy); a matrix an
// operation made converts on the device's copy; a declaration whose counts are not the conversion's is
// refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/npy_io.h"
#include "passes/plan_report.h"
#include "test_support.h"

namespace fs = std::filesystem;
namespace test = fugue::test;
using namespace std::string_literals;

namespace {

// `program` run on the device ("device"), with csr's products in chunks ("chunks") or by the operations'
// references ("reference"), its outputs into `out`.
test::CliResult run_as(const std::string& how, const fs::path& program, const fs::path& out) {
  return test::run_fugue(std::string("run ") + (how == "reference" ? "--reference " : "") + program.string() + " --out " + out.string(),
                         how == "chunks" ? "FUGUE_SPARSE_CSR=chunks" : "");
}

// The largest magnitude in `y`.
double largest_in(const fugue::HostArray& y) {
  double largest = 0;
  for (int64_t i = 0; i < y.elements(); ++i) largest = std::max(largest, std::fabs(y.get(i)));
  return largest;
}

// Every layout, cut as its declaration says (cocktail: a split of its own, so that it has several parts).
const std::vector<std::pair<std::string, std::string>> kLayouts = {
    {"csr", ""},
    {"coo", ""},
    {"ell", ""},
    {"sell", R"(, "slice": 4, "sigma": 8)"},
    {"dia", ""},
    {"bdia", ""},
    {"hyb", R"(, "width": 2)"},
    {"bcsr", R"(, "block": [2, 4])"},
    {"bell", R"(, "block": [1, 4])"},
    {"sbell", R"(, "block": [4, 8], "slice": 2)"},
    {"cocktail", R"(, "diagonal_fill": 0.3, "block_fill": 0.4, "block": [2, 4], "width": 2, "slice": 4, "sigma": 8)"}};

const std::map<std::string, std::vector<std::string>> kParts = {
    {"csr", {"row_ptr", "col", "data"}},
    {"coo", {"row", "col", "data"}},
    {"ell", {"col", "data"}},
    {"sell", {"slice_ptr", "row", "col", "data"}},
    {"dia", {"offsets", "data"}},
    {"bdia", {"offsets", "band_ptr", "data"}},
    {"hyb", {"ell_col", "ell_data", "coo_row", "coo_col", "coo_data"}},
    {"bcsr", {"row_ptr", "col", "data"}},
    {"bell", {"col", "data"}},
    {"sbell", {"slice_ptr", "col", "data"}},
    {"cocktail", {"dia_offsets", "dia_data", "sbell_slice_ptr", "sbell_col", "sbell_data", "sell_slice_ptr", "sell_row", "sell_col",
                  "sell_data", "csr_rows", "csr_row_ptr", "csr_col", "csr_data"}}};

fs::path matrices() { return test::source_root() / ".." / "shared" / "data" / "matrices"; }

std::string outputs_of(const std::string& symbol, const std::string& layout) {
  std::string outputs;
  for (const auto& part : kParts.at(layout)) outputs += R"(, ")" + symbol + "." + part + R"(": ")" + symbol + "_" + part + R"(.npy")";
  return outputs;
}

int64_t length(const fs::path& folder, const std::string& symbol, const std::string& part) {
  return fugue::load_npy(folder / (symbol + "_" + part + ".npy"), std::nullopt, std::nullopt).elements();
}

// The declaration of `symbol`'s result: its layout's counts as the arrays read directly hold them.
std::string counted_declaration(const fs::path& read, const std::string& layout, const std::string& cut, const std::string& dtype,
                                const std::string& index, int64_t rows, int64_t cols) {
  const std::string direct = "R_" + layout;
  auto n = [&](const std::string& part) { return length(read, direct, part); };
  std::string counts;
  if (layout == "csr" || layout == "coo") counts = R"("nnz": )" + std::to_string(n("data"));
  if (layout == "ell") counts = R"("width": )" + std::to_string(n("col") / rows);
  if (layout == "sell") counts = R"("stored": )" + std::to_string(n("data"));
  if (layout == "dia") counts = R"("diagonals": )" + std::to_string(n("offsets"));
  if (layout == "bdia") counts = R"("diagonals": )" + std::to_string(n("data") / rows) + R"(, "bands": )" + std::to_string(n("offsets"));
  if (layout == "hyb") counts = R"("nnz": )" + std::to_string(n("coo_data"));  // its width is in `cut`
  if (layout == "bcsr" || layout == "sbell") counts = R"("blocks": )" + std::to_string(n("col"));
  if (layout == "bell") counts = R"("width": )" + std::to_string(n("col") / rows);  // 1 x 4: a super-row a row
  if (layout == "cocktail")
    counts = R"("diagonals": )" + std::to_string(n("dia_offsets")) + R"(, "blocks": )" + std::to_string(n("sbell_col")) + R"(, "stored": )" +
             std::to_string(n("sell_data")) + R"(, "csr_rows": )" + std::to_string(n("csr_rows")) + R"(, "nnz": )" + std::to_string(n("csr_data"));
  return R"({"kind": ")" + layout + R"(", "dtype": ")" + dtype + R"(", "index": ")" + index + R"(", "shape": [)" + std::to_string(rows) + ", " +
         std::to_string(cols) + "], " + counts + cut + "}";
}

}  // namespace

// The seed's B, a rectangular matrix and a mesh, read into every layout and converted from each into
// every other (into a cocktail split as its declaration fixes it): each conversion's parts are, byte for
// byte, those of the matrix read into that layout, i64 indices where the result's declaration asks for them.
TEST(SparseConvert, EveryLayoutIntoEveryOtherHoldsWhatReadingGives) {
  test::TempDir dir;
  test::write_text(dir / "B.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 9\n1 1 3\n1 2 7\n2 2 4\n2 3 8\n3 1 1\n3 3 5\n3 4 9\n4 2 2\n4 4 6\n");
  struct Case {
    fs::path file;
    std::string dtype, index;
    int64_t rows, cols;
  };
  const std::vector<Case> cases = {{dir / "B.mtx", "f64", "i32", 4, 4},
                                   {matrices() / "lp_afiro.mtx", "f32", "i32", 27, 51},
                                   {matrices() / "jagmesh7.mtx", "f64", "i64", 1138, 1138}};
  for (const Case& c : cases) {
    const std::string what = c.file.filename().string() + " " + c.dtype;
    ASSERT_TRUE(fs::exists(c.file)) << c.file;
    // Read directly into every layout, and as the conversions' sources.
    std::string symbols, outputs;
    for (const auto& [layout, cut] : kLayouts) {
      symbols += std::string(symbols.empty() ? "" : ",\n") + R"("R_)" + layout + R"(": {"kind": ")" + layout + R"(", "dtype": ")" + c.dtype +
                 R"(", "index": ")" + (layout == "cocktail" ? "i32" : c.index) + R"(", "from": ")" + c.file.string() + "\"" + cut + "}";
      outputs += outputs_of("R_" + layout, layout);
    }
    test::write_text(dir / "read.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [], "outputs": {)" + outputs.substr(2) + "}}");
    fs::remove_all(dir / "read");
    auto r = test::run_fugue("run " + (dir / "read.json").string() + " --out " + (dir / "read").string());
    ASSERT_EQ(r.code, 0) << what << ": " << r.out;

    // Every source into every other layout.
    std::string body;
    outputs.clear();
    int conversions = 0;
    for (const auto& [to, cut] : kLayouts) {
      const std::string declaration = counted_declaration(dir / "read", to, cut, c.dtype, to == "cocktail" ? "i32" : c.index, c.rows, c.cols);
      for (const auto& from : kLayouts) {
        if (from.first == to) continue;
        const std::string result = "C_" + from.first + "_" + to;
        symbols += ",\n\"" + result + "\": " + declaration;
        body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.convert", "out": [")" + result + R"("], "in": ["R_)" + from.first +
                R"("]})";
        outputs += outputs_of(result, to);
        ++conversions;
      }
    }
    EXPECT_EQ(conversions, 110);
    test::write_text(dir / "convert.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body + R"(], "outputs": {)" +
                                               outputs.substr(2) + "}}");
    fs::remove_all(dir / "converted");
    r = test::run_fugue("run " + (dir / "convert.json").string() + " --out " + (dir / "converted").string());
    ASSERT_EQ(r.code, 0) << what << ": " << r.out;
    for (const auto& [to, cut] : kLayouts) {
      for (const auto& from : kLayouts) {
        if (from.first == to) continue;
        for (const auto& part : kParts.at(to)) {
          const auto want = fugue::load_npy(dir / "read" / ("R_" + to + "_" + part + ".npy"), std::nullopt, std::nullopt);
          const auto got = fugue::load_npy(dir / "converted" / ("C_" + from.first + "_" + to + "_" + part + ".npy"), std::nullopt, std::nullopt);
          EXPECT_TRUE(got.dtype == want.dtype && got.shape == want.shape && got.bytes == want.bytes)
              << what << ": " << from.first << " -> " << to << ", part " << part << ": " << got.type_text() << " vs " << want.type_text();
        }
      }
    }
  }
}

// A layout converted into itself cut anew (a sell sorted in other windows, a hyb of another width, other
// blocks, another index dtype) runs on the device through a csr of its own, and holds, byte for byte, what
// reading the matrix into the new cut gives.
TEST(SparseConvert, ALayoutCutAnewConvertsIntoItselfOnTheDevice) {
  test::TempDir dir;
  const fs::path file = matrices() / "jagmesh7.mtx";
  ASSERT_TRUE(fs::exists(file)) << file;
  struct Recut {
    std::string layout, from_cut, to_cut, from_index, to_index;
  };
  const std::vector<Recut> recuts = {{"sell", R"(, "slice": 4, "sigma": 8)", R"(, "slice": 32, "sigma": 1)", "i32", "i64"},
                                     {"hyb", R"(, "width": 2)", R"(, "width": 4)", "i64", "i32"},
                                     {"bcsr", R"(, "block": [8, 4])", R"(, "block": [2, 4])", "i32", "i32"},
                                     {"bell", R"(, "block": [2, 8])", R"(, "block": [1, 4])", "i32", "i32"},
                                     {"sbell", R"(, "block": [4, 4], "slice": 3)", R"(, "block": [2, 8], "slice": 8)", "i64", "i32"},
                                     {"dia", "", "", "i32", "i64"},
                                     {"coo", "", "", "i64", "i32"},
                                     {"ell", "", "", "i32", "i64"}};
  std::string symbols, outputs;
  for (const Recut& c : recuts) {
    symbols += std::string(symbols.empty() ? "" : ",\n") + R"("S_)" + c.layout + R"(": {"kind": ")" + c.layout + R"(", "dtype": "f64", "index": ")" +
               c.from_index + R"(", "from": ")" + file.string() + "\"" + c.from_cut + "},\n" + R"("R_)" + c.layout + R"(": {"kind": ")" + c.layout +
               R"(", "dtype": "f64", "index": ")" + c.to_index + R"(", "from": ")" + file.string() + "\"" + c.to_cut + "}";
    outputs += outputs_of("R_" + c.layout, c.layout);
  }
  test::write_text(dir / "read.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [], "outputs": {)" + outputs.substr(2) + "}}");
  auto r = test::run_fugue("run " + (dir / "read.json").string() + " --out " + (dir / "read").string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::string body;
  for (const Recut& c : recuts) {
    symbols += ",\n\"C_" + c.layout + "\": " + counted_declaration(dir / "read", c.layout, c.to_cut, "f64", c.to_index, 1138, 1138);
    body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.convert", "out": ["C_)" + c.layout + R"("], "in": ["S_)" + c.layout + R"("]})";
    outputs += outputs_of("C_" + c.layout, c.layout);
  }
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body + R"(], "outputs": {)" + outputs.substr(2) + "}}");
  r = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const Recut& c : recuts) EXPECT_NE(r.out.find("on the device: " + c.layout + " -> " + c.layout + " ("), std::string::npos) << c.layout << "\n" << r.out;
  r = test::run_fugue("run --profile " + (dir / "trace.json").string() + " " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string trace = test::read_text(dir / "trace.json");
  for (const Recut& c : recuts) {
    EXPECT_NE(trace.find("convert: " + c.layout + " -> csr"), std::string::npos) << c.layout;
    EXPECT_NE(trace.find("convert: csr -> " + c.layout), std::string::npos) << c.layout;
    for (const auto& part : kParts.at(c.layout)) {
      const auto want = fugue::load_npy(dir / "read" / ("R_" + c.layout + "_" + part + ".npy"), std::nullopt, std::nullopt);
      const auto got = fugue::load_npy(dir / "out" / ("C_" + c.layout + "_" + part + ".npy"), std::nullopt, std::nullopt);
      EXPECT_TRUE(got.dtype == want.dtype && got.shape == want.shape && got.bytes == want.bytes)
          << c.layout << ", part " << part << ": " << got.type_text() << " vs " << want.type_text();
    }
  }
}

// A matrix an operation made on the device (the affinity of an image, a dia) converted into csr and
// ell: their products give the dia's, and a run whose declared counts are not the conversion's stops
// with the counts to declare, writing nothing, naming the statement on the device and in the reference.
TEST(SparseConvert, AMatrixMadeOnTheDeviceConvertsAndWrongCountsStop) {
  test::TempDir dir;
  // radius 1 on a 6 x 7 image: each pixel and its 4 neighbours, those inside the image.
  const int64_t h = 6, w = 7, pixels = h * w, nnz = pixels + 2 * (h * (w - 1) + (h - 1) * w);
  auto program = [&](int64_t csr_nnz) {
    return R"({"fugue": 1, "symbols": {
      "image": {"kind": "array", "dtype": "f64", "shape": [6, 7], "from": {"random": {"seed": 3}}},
      "W": {"kind": "dia", "dtype": "f64", "shape": [42, 42], "diagonals": 5},
      "C": {"kind": "csr", "dtype": "f64", "shape": [42, 42], "nnz": )" + std::to_string(csr_nnz) + R"(},
      "E": {"kind": "ell", "dtype": "f64", "shape": [42, 42], "width": 5},
      "x": {"kind": "array", "dtype": "f64", "shape": [42], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
     "body": [{"op": "sparse.affinity", "out": ["W"], "in": ["image"], "attrs": {"radius": 1, "sigma_intensity": 0.5}},
              {"op": "sparse.convert", "out": ["C"], "in": ["W"]},
              {"op": "sparse.convert", "out": ["E"], "in": ["C"]},
              {"op": "sparse.spmv", "out": ["y_dia"], "in": ["W", "x"]},
              {"op": "sparse.spmv", "out": ["y_csr"], "in": ["C", "x"]},
              {"op": "sparse.spmv", "out": ["y_ell"], "in": ["E", "x"]}],
     "outputs": {"y_dia": "y_dia.npy", "y_csr": "y_csr.npy", "y_ell": "y_ell.npy", "C.row_ptr": "row_ptr.npy"}})";
  };
  test::write_text(dir / "p.json", program(nnz));
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const auto y = fugue::load_npy(dir / "out" / "y_dia.npy", std::nullopt, std::nullopt);
  double largest = 0;
  for (int64_t i = 0; i < y.elements(); ++i) largest = std::max(largest, std::fabs(y.get(i)));
  EXPECT_GT(largest, 0.0);
  for (const char* other : {"y_csr.npy", "y_ell.npy"}) {
    const auto z = fugue::load_npy(dir / "out" / other, std::nullopt, std::nullopt);
    ASSERT_EQ(z.elements(), pixels) << other;
    for (int64_t i = 0; i < pixels; ++i) EXPECT_NEAR(z.get(i), y.get(i), 1e-13 * largest) << other << " row " << i;
  }
  const auto row_ptr = fugue::load_npy(dir / "out" / "row_ptr.npy", std::nullopt, std::nullopt);
  EXPECT_EQ(row_ptr.get(pixels), static_cast<double>(nnz));

  test::write_text(dir / "wrong.json", program(nnz + 1));
  r = test::run_fugue("run " + (dir / "wrong.json").string() + " --out " + (dir / "wrong").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("wrong.json:/body/1/out/0: sparse.convert: operand B: A's " + std::to_string(nnz) +
                       " entries (its nonzero values: zeros are padding in a dia) need \"nnz\": " +
                       std::to_string(nnz) + " in the csr B, which is declared with \"nnz\": " + std::to_string(nnz + 1) +
                       ": declare \"nnz\": " + std::to_string(nnz)),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir / "wrong" / "y_dia.npy"));
  // The reference run names the statement too.
  r = test::run_fugue("run --reference " + (dir / "wrong.json").string() + " --out " + (dir / "wrong_reference").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("wrong.json:/body/1/out/0: sparse.convert: operand B: A's " + std::to_string(nnz) + " entries (its nonzero values"), std::string::npos)
      << r.out;
}

// From a csr into a coo, an ell or a dia, and from a dia into a csr, the device converts (explain says
// so), with the index dtype the result declares, on rows left empty and a row longer than any
// work-group: the parts are those of the matrix read into that layout, byte for byte. Counts other than
// the matrix's fall back to the host's conversion, which names the count to declare.
TEST(SparseConvert, OnTheDeviceHoldsWhatReadingGivesAndChecksTheCounts) {
  test::TempDir dir;
  // 6 x 700: row 1 holds 600 entries (explicit zeros among them), rows 0, 3 and 5 none.
  std::string entries;
  int64_t nnz = 0;
  auto add = [&](int64_t r, int64_t c, double v) { entries += std::to_string(r + 1) + " " + std::to_string(c + 1) + " " + std::to_string(v) + "\n", ++nnz; };
  for (int64_t c = 0; c < 600; ++c) add(1, c + 50, c % 7 == 0 ? 0.0 : 0.25 * static_cast<double>(c % 13) - 1.125);
  add(2, 0, 2.5), add(2, 699, -3.0), add(4, 350, 1.0), add(4, 351, 0.5);
  const int64_t zeros = 600 / 7 + 1, diagonals = 600 + 2;  // row 4's entries lie on row 1's diagonals
  test::write_text(dir / "M.mtx", "%%MatrixMarket matrix coordinate real general\n6 700 " + std::to_string(nnz) + "\n" + entries);
  const std::string m = (dir / "M.mtx").string();
  auto program = [&](int64_t ell_width, int64_t coo_nnz, int64_t dia_diagonals, int64_t csr_nnz, int64_t hyb_nnz = 598) {
    return R"({"fugue": 1, "symbols": {
      "A": {"kind": "csr", "dtype": "f32", "index": "i64", "from": ")" + m + R"("},
      "R_csr": {"kind": "csr", "dtype": "f32", "index": "i32", "from": ")" + m + R"("},
      "R_coo": {"kind": "coo", "dtype": "f32", "index": "i32", "from": ")" + m + R"("},
      "R_ell": {"kind": "ell", "dtype": "f32", "index": "i64", "from": ")" + m + R"("},
      "R_dia": {"kind": "dia", "dtype": "f32", "index": "i32", "from": ")" + m + R"("},
      "C_coo": {"kind": "coo", "dtype": "f32", "index": "i32", "shape": [6, 700], "nnz": )" + std::to_string(coo_nnz) + R"(},
      "C_ell": {"kind": "ell", "dtype": "f32", "index": "i64", "shape": [6, 700], "width": )" + std::to_string(ell_width) + R"(},
      "C_dia": {"kind": "dia", "dtype": "f32", "index": "i32", "shape": [6, 700], "diagonals": )" + std::to_string(dia_diagonals) + R"(},
      "C_csr": {"kind": "csr", "dtype": "f32", "index": "i32", "shape": [6, 700], "nnz": )" + std::to_string(csr_nnz) + R"(},
      "C_hyb": {"kind": "hyb", "dtype": "f32", "index": "i32", "shape": [6, 700], "width": 2, "nnz": )" + std::to_string(hyb_nnz) + R"(}},
     "body": [{"op": "sparse.convert", "out": ["C_coo"], "in": ["A"]},
              {"op": "sparse.convert", "out": ["C_ell"], "in": ["R_csr"]},
              {"op": "sparse.convert", "out": ["C_dia"], "in": ["A"]},
              {"op": "sparse.convert", "out": ["C_csr"], "in": ["R_dia"]},
              {"op": "sparse.convert", "out": ["C_hyb"], "in": ["A"]}],
     "outputs": {)" + (outputs_of("R_coo", "coo") + outputs_of("R_ell", "ell") + outputs_of("R_dia", "dia") + outputs_of("R_csr", "csr") +
                       outputs_of("C_coo", "coo") + outputs_of("C_ell", "ell") + outputs_of("C_dia", "dia") + outputs_of("C_csr", "csr")).substr(2) + "}}";
  };
  const int64_t csr_nnz = nnz - zeros;  // the dia's explicit zeros are padding
  test::write_text(dir / "p.json", program(600, nnz, diagonals, csr_nnz));
  auto r = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string& line : {"on the device: csr -> coo (nnz " + std::to_string(nnz) + ", as declared)",
                                  std::string("on the device: csr -> ell (width 600, as declared)"),
                                  "on the device: csr -> dia (diagonals " + std::to_string(diagonals) + ", as declared)",
                                  "on the device: dia -> csr (nnz " + std::to_string(csr_nnz) + ", as declared)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  r = test::run_fugue("run --stats " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* kernel : {"convert: csr -> coo", "convert: csr -> ell", "convert: csr -> dia", "convert: dia -> csr"})
    EXPECT_NE(r.out.find(kernel), std::string::npos) << kernel << "\n" << r.out;
  auto same = [&](const std::string& got_symbol, const std::string& want_symbol, const std::string& layout) {
    for (const auto& part : kParts.at(layout)) {
      const auto want = fugue::load_npy(dir / "out" / (want_symbol + "_" + part + ".npy"), std::nullopt, std::nullopt);
      const auto got = fugue::load_npy(dir / "out" / (got_symbol + "_" + part + ".npy"), std::nullopt, std::nullopt);
      EXPECT_TRUE(got.dtype == want.dtype && got.shape == want.shape && got.bytes == want.bytes)
          << got_symbol << " part " << part << ": " << got.type_text() << " vs " << want.type_text();
    }
  };
  same("C_coo", "R_coo", "coo");
  same("C_ell", "R_ell", "ell");
  same("C_dia", "R_dia", "dia");
  EXPECT_EQ(length(dir / "out", "C_ell", "col"), 600 * 6);
  EXPECT_EQ(length(dir / "out", "C_dia", "offsets"), diagonals);
  // The dia's zeros are padding: the csr made from it holds the nonzero entries, as the mtx holds them.
  const auto ptr = fugue::load_npy(dir / "out" / "C_csr_row_ptr.npy", std::nullopt, std::nullopt);
  const auto col = fugue::load_npy(dir / "out" / "C_csr_col.npy", std::nullopt, std::nullopt);
  const auto data = fugue::load_npy(dir / "out" / "C_csr_data.npy", std::nullopt, std::nullopt);
  const auto want_ptr = fugue::load_npy(dir / "out" / "R_csr_row_ptr.npy", std::nullopt, std::nullopt);
  const auto want_col = fugue::load_npy(dir / "out" / "R_csr_col.npy", std::nullopt, std::nullopt);
  const auto want_data = fugue::load_npy(dir / "out" / "R_csr_data.npy", std::nullopt, std::nullopt);
  ASSERT_EQ(ptr.elements(), 7);
  ASSERT_EQ(col.elements(), csr_nnz);
  int64_t e = 0;
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ptr.get(i), static_cast<double>(e)) << "row " << i;
    for (int64_t k = static_cast<int64_t>(want_ptr.get(i)); k < static_cast<int64_t>(want_ptr.get(i + 1)); ++k)
      if (want_data.get(k) != 0) {
        ASSERT_LT(e, csr_nnz);
        EXPECT_EQ(col.get(e), want_col.get(k)) << "entry " << e;
        EXPECT_EQ(data.get(e), want_data.get(k)) << "entry " << e;
        ++e;
      }
  }
  EXPECT_EQ(e, csr_nnz);
  EXPECT_EQ(ptr.get(6), static_cast<double>(csr_nnz));

  // Counts the matrix does not have: the host's conversion names them, and nothing is written.
  struct Wrong {
    std::string name;
    int64_t ell_width, coo_nnz, dia_diagonals, csr_nnz;
    std::string statement, message;
  };
  const std::vector<Wrong> wrong = {
      {"wide", 601, nnz, diagonals, csr_nnz, "/body/1", "need \"width\": 600 in the ell B, which is declared with \"width\": 601: declare \"width\": 600"},
      {"fewer", 600, nnz - 1, diagonals, csr_nnz, "/body/0",
       "need \"nnz\": " + std::to_string(nnz) + " in the coo B, which is declared with \"nnz\": " + std::to_string(nnz - 1)},
      {"diagonals", 600, nnz, diagonals - 1, csr_nnz, "/body/2",
       "need \"diagonals\": " + std::to_string(diagonals) + " in the dia B, which is declared with \"diagonals\": " + std::to_string(diagonals - 1)},
      {"zeros", 600, nnz, diagonals, nnz, "/body/3",
       "(its nonzero values: zeros are padding in a dia) need \"nnz\": " + std::to_string(csr_nnz) + " in the csr B, which is declared with \"nnz\": " +
           std::to_string(nnz)},
      {"hyb", 600, nnz, diagonals, csr_nnz, "/body/4", "need \"nnz\": 598 in the hyb B, which is declared with \"nnz\": 597: declare \"nnz\": 598"}};
  for (const Wrong& w : wrong) {
    test::write_text(dir / (w.name + ".json"), program(w.ell_width, w.coo_nnz, w.dia_diagonals, w.csr_nnz, w.name == "hyb" ? 597 : 598));
    r = test::run_fugue("run " + (dir / (w.name + ".json")).string() + " --out " + (dir / w.name).string());
    EXPECT_EQ(r.code, 2) << w.name << ": " << r.out;
    EXPECT_NE(r.out.find(w.name + ".json:" + w.statement + "/out/0: sparse.convert: operand B: A's "), std::string::npos) << w.name << ": " << r.out;
    EXPECT_NE(r.out.find(w.message), std::string::npos) << w.name << ": " << r.out;
  }
  test::write_text(dir / "fewer.json", program(600, nnz - 1, diagonals, csr_nnz));
  r = test::run_fugue("explain " + (dir / "fewer.json").string());
  EXPECT_NE(r.out.find("on the host: csr -> coo"), std::string::npos) << r.out;

  // A csr, an ell and a coo whose first row lists its columns out of order (parts given inline may):
  // the device's check sees it and stores nothing, and the host's conversion stores the entries by
  // column, as it reads every matrix.
  test::write_text(dir / "unordered.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "csr", "dtype": "f32", "shape": [2, 4], "nnz": 3,
            "parts": {"row_ptr": {"value": [0, 2, 3]}, "col": {"value": [3, 1, 0]}, "data": {"value": [1, 2, 3]}}},
      "E": {"kind": "ell", "dtype": "f32", "shape": [2, 4], "width": 2, "parts": {"col": {"value": [3, 0, 1, 0]}, "data": {"value": [1, 3, 2, 0]}}},
      "O": {"kind": "coo", "dtype": "f64", "shape": [2, 4], "nnz": 3,
            "parts": {"row": {"value": [0, 0, 1]}, "col": {"value": [3, 1, 0]}, "data": {"value": [1, 2, 3]}}},
      "C": {"kind": "coo", "dtype": "f32", "shape": [2, 4], "nnz": 3},
      "F": {"kind": "csr", "dtype": "f32", "shape": [2, 4], "nnz": 3},
      "D": {"kind": "dia", "dtype": "f64", "shape": [2, 4], "diagonals": 3}},
     "body": [{"op": "sparse.convert", "out": ["C"], "in": ["A"]}, {"op": "sparse.convert", "out": ["F"], "in": ["E"]},
              {"op": "sparse.convert", "out": ["D"], "in": ["O"]}],
     "outputs": {"C.row": "row.npy", "C.col": "col.npy", "C.data": "data.npy", "F.row_ptr": "f_row_ptr.npy", "F.col": "f_col.npy",
                 "F.data": "f_data.npy", "D.offsets": "d_offsets.npy", "D.data": "d_data.npy"}})");
  r = test::run_fugue("run --profile " + (dir / "unordered_trace.json").string() + " " + (dir / "unordered.json").string() + " --out " +
                      (dir / "unordered").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string trace = test::read_text(dir / "unordered_trace.json");
  for (const char* check : {"C = (A) / convert: csr check", "F = (E) / convert: ell check", "D = (O) / convert: coo check"})
    EXPECT_NE(trace.find(check), std::string::npos) << check;
  for (const char* fill : {"convert: csr -> coo", "convert: ell -> csr", "convert: coo -> csr", "convert: csr -> dia"})
    EXPECT_EQ(trace.find(fill), std::string::npos) << fill;
  const std::vector<std::pair<std::string, std::vector<double>>> want = {
      {"row", {0, 0, 1}},        {"col", {1, 3, 0}},     {"data", {2, 1, 3}},        {"f_row_ptr", {0, 2, 3}},
      {"f_col", {1, 3, 0}},      {"f_data", {2, 1, 3}},  {"d_offsets", {-1, 1, 3}},  {"d_data", {0, 3, 2, 0, 1, 0}}};
  for (const auto& [part, values] : want) {
    const auto got = fugue::load_npy(dir / "unordered" / (part + ".npy"), std::nullopt, std::nullopt);
    ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << part;
    for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ(got.get(static_cast<int64_t>(k)), values[k]) << part << "[" << k << "]";
  }
}

// The block layouts' cuts in converts_every_way_on_the_device: blocks of 8 x 4 (a bcsr), 2 x 8 (a bell),
// and 4 x 4 in slices of 3 super-rows (a sbell).
struct BlockCut {
  std::string layout;
  int64_t h, w, slice;
  std::string declaration() const {
    return R"(, "block": [)" + std::to_string(h) + ", " + std::to_string(w) + "]" + (slice ? R"(, "slice": )" + std::to_string(slice) : "");
  }
};
const std::vector<BlockCut> kBlockCuts = {{"bcsr", 8, 4, 0}, {"bell", 2, 8, 0}, {"sbell", 4, 4, 3}};
// A cocktail's split, fixed (its sell's slice and sigma are added): diagonals holding 30% of their
// places, blocks of 2 x 4 holding 40% of theirs, each row's first 2 entries left to the sell.
const std::string kCocktailCut = R"(, "diagonal_fill": 0.3, "block_fill": 0.4, "block": [2, 4], "block_slice": 2, "width": 2)";

// A matrix given by its entries (row, column, value; no position twice, no value 0), written as a
// Matrix Market file, with the counts each of csr, coo, ell, sell (slices of `slice` rows sorted in windows
// of `sigma`), dia, bdia, hyb and the block layouts (cut as kBlockCuts) holds it with; each layout's
// count first, its cut after it.
struct Entries {
  int64_t rows = 0, cols = 0;
  std::map<std::pair<int64_t, int64_t>, double> at;
  void add(int64_t r, int64_t c, double v) { at[{r, c}] = v; }
  std::string mtx() const {
    std::string text = "%%MatrixMarket matrix coordinate real general\n" + std::to_string(rows) + " " + std::to_string(cols) + " " +
                       std::to_string(at.size()) + "\n";
    for (const auto& [position, v] : at) text += std::to_string(position.first + 1) + " " + std::to_string(position.second + 1) + " " + std::to_string(v) + "\n";
    return text;
  }
  std::map<std::string, std::string> counts(int64_t slice, int64_t sigma) const {
    std::map<int64_t, int64_t> per_row;
    std::set<int64_t> offsets;
    int64_t width = 0, past_two = 0;  // hyb of width 2: the entries past each row's first two
    for (const auto& [position, v] : at) {
      width = std::max(width, ++per_row[position.first]);
      offsets.insert(position.second - position.first);
      if (per_row[position.first] > 2) ++past_two;
    }
    int64_t bands = 0;  // runs of consecutive offsets
    for (int64_t o : offsets) bands += offsets.count(o - 1) ? 0 : 1;
    // sell: the rows sorted by length (longest first, stably) in each window; each slice as wide as its longest
    std::vector<int64_t> lengths(static_cast<size_t>(rows), 0), order;
    for (const auto& [row, n] : per_row) lengths[static_cast<size_t>(row)] = n;
    for (int64_t w = 0; w < rows; w += sigma) {
      std::vector<int64_t> window;
      for (int64_t i = w; i < std::min(rows, w + sigma); ++i) window.push_back(i);
      std::stable_sort(window.begin(), window.end(), [&](int64_t a, int64_t b) { return lengths[static_cast<size_t>(a)] > lengths[static_cast<size_t>(b)]; });
      order.insert(order.end(), window.begin(), window.end());
    }
    int64_t stored = 0;
    for (size_t first = 0; first < order.size(); first += static_cast<size_t>(slice)) {
      int64_t longest = 0;
      for (size_t p = first; p < std::min(order.size(), first + static_cast<size_t>(slice)); ++p) longest = std::max(longest, lengths[static_cast<size_t>(order[p])]);
      stored += longest * slice;
    }
    std::map<std::string, std::string> counted = {{"csr", R"("nnz": )" + std::to_string(at.size())},
            {"coo", R"("nnz": )" + std::to_string(at.size())},
            {"ell", R"("width": )" + std::to_string(width)},
            {"sell", R"("stored": )" + std::to_string(stored) + R"(, "slice": )" + std::to_string(slice) + R"(, "sigma": )" + std::to_string(sigma)},
            {"dia", R"("diagonals": )" + std::to_string(offsets.size())},
            {"bdia", R"("diagonals": )" + std::to_string(offsets.size()) + R"(, "bands": )" + std::to_string(bands)},
            {"hyb", R"("nnz": )" + std::to_string(past_two) + R"(, "width": 2)"}};
    // The block layouts: each super-row's blocks (distinct columns / w among its rows' entries)
    for (const BlockCut& cut : kBlockCuts) {
      std::vector<std::set<int64_t>> blocks(static_cast<size_t>((rows + cut.h - 1) / cut.h));
      for (const auto& [position, v] : at) blocks[static_cast<size_t>(position.first / cut.h)].insert(position.second / cut.w);
      int64_t all = 0, widest = 0, sliced = 0, slice_widest = 0;
      for (size_t s = 0; s < blocks.size(); ++s) {
        const int64_t n = static_cast<int64_t>(blocks[s].size());
        all += n, widest = std::max(widest, n), slice_widest = std::max(slice_widest, n);
        if (cut.slice && ((static_cast<int64_t>(s) + 1) % cut.slice == 0 || s + 1 == blocks.size())) sliced += slice_widest * cut.slice, slice_widest = 0;
      }
      const int64_t count = cut.layout == "bcsr" ? all : cut.layout == "bell" ? widest : sliced;
      counted[cut.layout] = std::string(cut.layout == "bell" ? R"("width": )" : R"("blocks": )") + std::to_string(count) + cut.declaration();
    }
    return counted;
  }
};

// `m` read into csr, coo, ell, sell (cut as `slice` and `sigma` say), dia, bdia, hyb (of width 2), bcsr,
// bell, sbell (cut as kBlockCuts) and a cocktail (split as kCocktailCut says), and converted from each
// into each layout but a csr into a csr: explain says the device converts all 120 pairs, the trace shows
// its kernels storing each, and each result holds, byte for byte, what reading the matrix into its layout
// gives, with the index dtype it declares. The cocktail's counts are those its parts hold when read; each
// layout is converted into itself too (through a csr of the device's own).
void converts_every_way_on_the_device(const Entries& m, const std::string& dtype, int64_t slice, int64_t sigma) {
  test::TempDir dir;
  test::write_text(dir / "M.mtx", m.mtx());
  const std::string file = (dir / "M.mtx").string(), shape = "[" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + "]";
  const std::vector<std::string> sources = {"csr", "coo", "ell", "sell", "dia", "bdia", "hyb", "bcsr", "bell", "sbell", "cocktail"};
  const std::vector<std::string>& layouts = sources;
  auto counts = m.counts(slice, sigma);
  const std::string cocktail_cut = kCocktailCut + R"(, "slice": )" + std::to_string(slice) + R"(, "sigma": )" + std::to_string(sigma);
  test::write_text(dir / "read.json", R"({"fugue": 1, "symbols": {"C": {"kind": "cocktail", "dtype": ")" + dtype + R"(", "from": ")" + file + "\"" +
                                          cocktail_cut + R"(}}, "body": [], "outputs": {)" + outputs_of("C", "cocktail").substr(2) + "}}");
  auto r = test::run_fugue("run " + (dir / "read.json").string() + " --out " + (dir / "read").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const int64_t cocktail_counts[5] = {length(dir / "read", "C", "dia_offsets"), length(dir / "read", "C", "sbell_col"),
                                      length(dir / "read", "C", "sell_data"), length(dir / "read", "C", "csr_rows"),
                                      length(dir / "read", "C", "csr_data")};
  const char* const cocktail_keys[5] = {"diagonals", "blocks", "stored", "csr_rows", "nnz"};
  std::string cocktail_shown;
  for (int k = 0; k < 5; ++k) {
    counts["cocktail"] += std::string(k ? ", " : "") + "\"" + cocktail_keys[k] + "\": " + std::to_string(cocktail_counts[k]);
    cocktail_shown += std::string(k ? ", " : "") + cocktail_keys[k] + " " + std::to_string(cocktail_counts[k]);
  }
  counts["cocktail"] += cocktail_cut;
  // A source's cut: its count's declaration less the count
  auto cut_of = [&](const std::string& l) {
    const std::string& count = counts.at(l);
    return l == "bdia" || count.find(',') == std::string::npos ? std::string() : count.substr(count.find(','));
  };
  std::string symbols, body, outputs;
  for (size_t k = 0; k + 1 < layouts.size(); ++k) {
    const std::string& l = layouts[k];
    // Sources with i32 and i64 indices in turn, so that every pair meets both.
    symbols += std::string(symbols.empty() ? "" : ",\n") + R"("R_)" + l + R"(": {"kind": ")" + l + R"(", "dtype": ")" + dtype + R"(", "index": ")" +
               (k % 2 ? "i64" : "i32") + R"(", "from": ")" + file + "\"" + cut_of(l) + "}";
    outputs += outputs_of("R_" + l, l);
  }
  // The cocktail split as the caller says, its sell cut as the sell's.
  symbols += R"(,
"R_cocktail": {"kind": "cocktail", "dtype": ")" + dtype + R"(", "index": "i32", "from": ")" + file + "\"" + cocktail_cut + "}";
  outputs += outputs_of("R_cocktail", "cocktail");
  std::vector<std::string> variants;
  for (size_t k = 0; k < layouts.size(); ++k)
    for (const auto& from : sources) {
      const std::string& to = layouts[k];
      if (from == "csr" && to == "csr") continue;
      const std::string result = "C_" + from + "_" + to, count = counts.at(to);
      symbols += ",\n\"" + result + R"(": {"kind": ")" + to + R"(", "dtype": ")" + dtype + R"(", "index": ")" + (k % 2 ? "i64" : "i32") +
                 R"(", "shape": )" + shape + ", " + count + "}";
      body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.convert", "out": [")" + result + R"("], "in": ["R_)" + from + R"("]})";
      outputs += outputs_of(result, to);
      // explain's counts: `"diagonals": 5, "bands": 2` as "diagonals 5, bands 2"; hyb's width, sell's slice
      // and sigma and the block layouts' block and slice are their cut, not counts
      std::string shown = to == "bdia" ? count : count.substr(0, count.find(','));
      for (size_t q; (q = shown.find('"')) != std::string::npos;) shown.erase(q, 1);
      for (size_t q; (q = shown.find(':')) != std::string::npos;) shown.erase(q, 1);
      if (to == "cocktail") shown = cocktail_shown;
      variants.push_back("on the device: " + from + " -> " + to + " (" + shown + ", as declared)");
    }
  ASSERT_EQ(variants.size(), 120u);
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [)" + body + R"(], "outputs": {)" + outputs.substr(2) + "}}");
  r = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const auto& v : variants) EXPECT_NE(r.out.find(v), std::string::npos) << shape << ": " << v << "\n" << r.out;
  r = test::run_fugue("run --profile " + (dir / "trace.json").string() + " " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string trace = test::read_text(dir / "trace.json");
  int statement = 0;
  for (const auto& to : layouts)
    for (const auto& from : sources) {
      if (from == "csr" && to == "csr") continue;
      // The device's kernels stored the result (a fault found by the check would leave it to the host).
      const std::string kernels = "/body/" + std::to_string(statement++) + " sparse.convert C_" + from + "_" + to + " = (R_" + from + ") / convert: ";
      if (from != "csr") {
        EXPECT_NE(trace.find(kernels + from + " -> csr"), std::string::npos) << shape << ": " << kernels;
      }
      if (to != "csr") {
        EXPECT_NE(trace.find(kernels + "csr -> " + to), std::string::npos) << shape << ": " << kernels;
      }
      for (const auto& part : kParts.at(to)) {
        const auto want = fugue::load_npy(dir / "out" / ("R_" + to + "_" + part + ".npy"), std::nullopt, std::nullopt);
        const auto got = fugue::load_npy(dir / "out" / ("C_" + from + "_" + to + "_" + part + ".npy"), std::nullopt, std::nullopt);
        EXPECT_TRUE(got.dtype == want.dtype && got.shape == want.shape && got.bytes == want.bytes)
            << shape << ": " << from << " -> " << to << ", part " << part << ": " << got.type_text() << " vs " << want.type_text();
      }
    }
}

// Rows left empty, a row longer than any work-group and columns past its rows' (rows that fill no whole
// super-row of blocks).
TEST(SparseConvert, BetweenEveryTwoLayoutsTheDeviceConvertsEveryWay) {
  Entries m;
  m.rows = 7, m.cols = 700;
  for (int64_t c = 0; c < 500; ++c) m.add(2, c + 100, 0.25 * static_cast<double>(c % 13) - 1.125);
  m.add(0, 0, 2.5), m.add(0, 699, -3.0), m.add(4, 350, 1.0), m.add(4, 351, 0.5), m.add(6, 3, 4.0);
  converts_every_way_on_the_device(m, "f64", 4, 8);
}

// A cocktail whose four parts all hold entries (two dense diagonals, a dense block, rows with more
// entries than the sell's width of 2 and a long row whose rest goes to the csr part) converts on the
// device into every layout; a csr part whose row lists its columns out of order goes to the host.
TEST(SparseConvert, ACocktailOfFourPartsConvertsOnTheDeviceEveryWay) {
  Entries m;
  m.rows = 41, m.cols = 60;
  for (int64_t i = 0; i < 41; ++i) m.add(i, i, 1.0 + static_cast<double>(i % 5)), m.add(i, i + 1, -0.5 - static_cast<double>(i % 3));
  for (int64_t r = 10; r < 12; ++r)
    for (int64_t c = 40; c < 44; ++c) m.add(r, c, 0.25 * static_cast<double>(r + c));
  for (int64_t r = 20; r < 30; ++r)
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t c = (r * 7 + 3 + 20 * k) % 60;
      if (c != r && c != r + 1) m.add(r, c, 1.5 + static_cast<double>(k));
    }
  for (int64_t c = 40; c < 60; c += 2) m.add(35, c, -2.0 - static_cast<double>(c % 7));
  // The split holds something in each part.
  test::TempDir dir;
  test::write_text(dir / "M.mtx", m.mtx());
  test::write_text(dir / "read.json", R"({"fugue": 1, "symbols": {"C": {"kind": "cocktail", "dtype": "f32", "from": ")" + (dir / "M.mtx").string() +
                                          "\"" + kCocktailCut + R"(, "slice": 4, "sigma": 8}}, "body": [], "outputs": {)" +
                                          outputs_of("C", "cocktail").substr(2) + "}}");
  auto r = test::run_fugue("run " + (dir / "read.json").string() + " --out " + (dir / "read").string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(length(dir / "read", "C", "dia_offsets"), 2);
  EXPECT_EQ(length(dir / "read", "C", "sbell_col"), 2);  // the block, in slices of 2 super-rows
  EXPECT_GT(length(dir / "read", "C", "sell_data"), 0);
  EXPECT_GT(length(dir / "read", "C", "csr_rows"), 1);
  converts_every_way_on_the_device(m, "f32", 4, 8);

  // 2 x 3: the dia's diagonal 2 holds (0, 2) = 5; the csr part's row 0 lists (0, 1) = 3 before (0, 0) = 4
  // (parts given inline may), its row 1 (1, 0) = 6. The device's check of the csr part sees it and stores
  // nothing; the host's conversion sorts the row.
  test::write_text(dir / "unordered.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "cocktail", "dtype": "f64", "shape": [2, 3], "nnz": 3, "csr_rows": 2, "diagonals": 1, "blocks": 0, "stored": 0,
            "slice": 2, "block_slice": 2, "parts": {"dia_offsets": {"value": [2]}, "dia_data": {"value": [5, 0]},
            "sbell_slice_ptr": {"value": [0, 0]}, "sbell_col": {"value": []}, "sbell_data": {"value": []},
            "sell_slice_ptr": {"value": [0, 0]}, "sell_row": {"value": [0, 1]}, "sell_col": {"value": []}, "sell_data": {"value": []},
            "csr_rows": {"value": [0, 1]}, "csr_row_ptr": {"value": [0, 2, 3]}, "csr_col": {"value": [1, 0, 0]}, "csr_data": {"value": [3, 4, 6]}}},
      "C": {"kind": "csr", "dtype": "f64", "shape": [2, 3], "nnz": 4}},
     "body": [{"op": "sparse.convert", "out": ["C"], "in": ["A"]}],
     "outputs": {"C.row_ptr": "row_ptr.npy", "C.col": "col.npy", "C.data": "data.npy"}})");
  r = test::run_fugue("explain " + (dir / "unordered.json").string());
  EXPECT_NE(r.out.find("on the device: cocktail -> csr (nnz 4, as declared)"), std::string::npos) << r.out;
  r = test::run_fugue("run --profile " + (dir / "trace.json").string() + " " + (dir / "unordered.json").string() + " --out " +
                      (dir / "unordered").string());
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string trace = test::read_text(dir / "trace.json");
  EXPECT_NE(trace.find("convert: cocktail check"), std::string::npos);
  EXPECT_EQ(trace.find("convert: cocktail -> csr"), std::string::npos);
  const std::vector<std::pair<std::string, std::vector<double>>> want = {{"row_ptr", {0, 3, 4}}, {"col", {0, 1, 2, 0}}, {"data", {4, 3, 5, 6}}};
  for (const auto& [part, values] : want) {
    const auto got = fugue::load_npy(dir / "unordered" / (part + ".npy"), std::nullopt, std::nullopt);
    ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << part;
    for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ(got.get(static_cast<int64_t>(k)), values[k]) << part << "[" << k << "]";
  }
}

// 70,000 rows and columns, entries on 20 diagonals far apart (the sums over 139,999 diagonals' flags and
// over the rows take three and two levels of work-groups; sell's windows of 1,500 rows, the last one
// short, cross its slices of 32, the last one padded), and a matrix with no entry at all.
TEST(SparseConvert, WideAndEmptyMatricesConvertOnTheDeviceEveryWay) {
  Entries wide;
  wide.rows = wide.cols = 70000;
  uint64_t state = 12345;
  auto next = [&] { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  std::vector<int64_t> offsets;
  for (int k = 0; k < 20; ++k) offsets.push_back(static_cast<int64_t>(next() % 139999) - 69999);
  for (int k = 0; k < 600; ++k) {
    const int64_t r = static_cast<int64_t>(next() % 70000), c = r + offsets[static_cast<size_t>(k % 20)];
    if (c >= 0 && c < 70000) wide.add(r, c, 0.5 + static_cast<double>(k % 7));
  }
  ASSERT_GT(wide.at.size(), 100u);
  converts_every_way_on_the_device(wide, "f32", 32, 1500);
  Entries empty;
  empty.rows = 5, empty.cols = 3;
  converts_every_way_on_the_device(empty, "f32", 2, 1);
}

// A hyb whose row lists a coo part's column before its ell part's, a sell whose row lists its columns out
// of order, sells whose row part repeats a row or whose slice is not whole columns, and bdias whose bands
// overlap or hold part of a diagonal (parts given inline may): the device's checks see them and store
// nothing; the host's conversion sorts the rows given out of order and names the other faults. A bands
// count one off is named too.
TEST(SparseConvert, SellBdiaAndHybSourcesTheDeviceCannotReadGoToTheHost) {
  test::TempDir dir;
  // 2 x 4; each source's row 0 holds (0, 1) = 2 and (0, 3) = 1 out of order, row 1 (1, 0) = 3.
  struct Unordered {
    std::string name, declaration;
  };
  const std::vector<Unordered> unordered = {
      {"hyb", R"({"kind": "hyb", "dtype": "f32", "shape": [2, 4], "width": 1, "nnz": 1,
            "parts": {"ell_col": {"value": [3, 0]}, "ell_data": {"value": [1, 3]}, "coo_row": {"value": [0]}, "coo_col": {"value": [1]},
                      "coo_data": {"value": [2]}}})"},
      {"sell", R"({"kind": "sell", "dtype": "f32", "shape": [2, 4], "slice": 2, "stored": 4,
             "parts": {"slice_ptr": {"value": [0, 4]}, "row": {"value": [0, 1]}, "col": {"value": [3, 0, 1, 0]}, "data": {"value": [1, 3, 2, 0]}}})"}};
  for (const Unordered& u : unordered) {
    const fs::path folder = dir / u.name;
    test::write_text(dir / (u.name + ".json"), R"({"fugue": 1, "symbols": {"H": )" + u.declaration + R"(,
        "C": {"kind": "csr", "dtype": "f32", "shape": [2, 4], "nnz": 3}},
       "body": [{"op": "sparse.convert", "out": ["C"], "in": ["H"]}],
       "outputs": {"C.row_ptr": "row_ptr.npy", "C.col": "col.npy", "C.data": "data.npy"}})");
    auto r = test::run_fugue("explain " + (dir / (u.name + ".json")).string());
    EXPECT_NE(r.out.find("on the device: " + u.name + " -> csr (nnz 3, as declared)"), std::string::npos) << r.out;
    r = test::run_fugue("run --profile " + (dir / "trace.json").string() + " " + (dir / (u.name + ".json")).string() + " --out " + folder.string());
    ASSERT_EQ(r.code, 0) << u.name << ": " << r.out;
    const std::string trace = test::read_text(dir / "trace.json");
    EXPECT_NE(trace.find("convert: " + u.name + " check"), std::string::npos) << u.name;
    EXPECT_EQ(trace.find("convert: " + u.name + " -> csr"), std::string::npos) << u.name;
    const std::vector<std::pair<std::string, std::vector<double>>> want = {{"row_ptr", {0, 2, 3}}, {"col", {1, 3, 0}}, {"data", {2, 1, 3}}};
    for (const auto& [part, values] : want) {
      const auto got = fugue::load_npy(folder / (part + ".npy"), std::nullopt, std::nullopt);
      ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << u.name << " " << part;
      for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ(got.get(static_cast<int64_t>(k)), values[k]) << u.name << " " << part << "[" << k << "]";
    }
  }

  // 3 x 3 in slices of 2: row 0 at two places (row 1 at none), or a slice of 3 places.
  struct BadSell {
    std::string name, slice_ptr, row, message;
  };
  const std::vector<BadSell> bad_sells = {{"repeated", "[0, 2, 4]", "[0, 0, 2, -1]", "a sell whose row[1] = 0 is outside -1..2 or repeats a row"},
                                          {"ragged", "[0, 3, 4]", "[0, 1, 2, -1]", "a sell whose slice 0 holds 3 places, not a multiple of its slice height 2"}};
  for (const BadSell& b : bad_sells) {
    test::write_text(dir / (b.name + ".json"), R"({"fugue": 1, "symbols": {
        "S": {"kind": "sell", "dtype": "f64", "shape": [3, 3], "slice": 2, "stored": 4,
              "parts": {"slice_ptr": {"value": )" + b.slice_ptr + R"(}, "row": {"value": )" + b.row + R"(}, "col": {"value": [0, 1, 2, 0]},
                        "data": {"value": [1, 2, 3, 0]}}},
        "C": {"kind": "csr", "dtype": "f64", "shape": [3, 3], "nnz": 3}},
       "body": [{"op": "sparse.convert", "out": ["C"], "in": ["S"]}], "outputs": {"C.data": "data.npy"}})");
    auto r = test::run_fugue("run " + (dir / (b.name + ".json")).string() + " --out " + (dir / b.name).string());
    EXPECT_EQ(r.code, 2) << b.name << ": " << r.out;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << b.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(dir / b.name / "data.npy")) << b.name;
  }
  test::CliResult r;

  // 3 x 3, two bands of three diagonals; the second band starts inside the first, or band_ptr splits a diagonal.
  struct Bad {
    std::string name, offsets, band_ptr, message;
  };
  const std::vector<Bad> bad = {{"overlap", "[-1, 0]", "[0, 6, 9]", "a bdia whose bands are not ascending or overlap (band 1)"},
                                {"split", "[-1, 1]", "[0, 4, 9]", "a bdia whose band 0 holds 4 places, not whole diagonals of 3 rows"}};
  for (const Bad& b : bad) {
    test::write_text(dir / (b.name + ".json"), R"({"fugue": 1, "symbols": {
        "B": {"kind": "bdia", "dtype": "f64", "shape": [3, 3], "diagonals": 3, "bands": 2,
              "parts": {"offsets": {"value": )" + b.offsets + R"(}, "band_ptr": {"value": )" + b.band_ptr + R"(},
                        "data": {"value": [0, 1, 2, 3, 4, 5, 6, 7, 0]}}},
        "C": {"kind": "csr", "dtype": "f64", "shape": [3, 3], "nnz": 7}},
       "body": [{"op": "sparse.convert", "out": ["C"], "in": ["B"]}], "outputs": {"C.data": "data.npy"}})");
    r = test::run_fugue("run " + (dir / (b.name + ".json")).string() + " --out " + (dir / b.name).string());
    EXPECT_EQ(r.code, 2) << b.name << ": " << r.out;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << b.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(dir / b.name / "data.npy")) << b.name;
  }

  // csr -> bdia with one band too many declared: the device counts two, and the host names them.
  test::write_text(dir / "bands.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "csr", "dtype": "f32", "shape": [3, 5], "nnz": 4,
            "parts": {"row_ptr": {"value": [0, 2, 3, 4]}, "col": {"value": [0, 1, 4, 2]}, "data": {"value": [1, 2, 3, 4]}}},
      "B": {"kind": "bdia", "dtype": "f32", "shape": [3, 5], "diagonals": 3, "bands": 3}},
     "body": [{"op": "sparse.convert", "out": ["B"], "in": ["A"]}], "outputs": {"B.data": "data.npy"}})");
  r = test::run_fugue("explain " + (dir / "bands.json").string());
  EXPECT_NE(r.out.find("on the device: csr -> bdia (diagonals 3, bands 3, as declared)"), std::string::npos) << r.out;
  r = test::run_fugue("run " + (dir / "bands.json").string() + " --out " + (dir / "bands").string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("need \"bands\": 2 in the bdia B, which is declared with \"bands\": 3: declare \"bands\": 2"), std::string::npos) << r.out;
}

// A bcsr, a bell and a sbell whose super-row lists its blocks out of order, and block sources the host
// names (a bcsr's row_ptr short of its blocks, a sbell's slice not whole columns of super-rows, a bell's
// block column outside the matrix or blocks that overlap, a bcsr's value past its last column; parts
// given inline may): the device's checks see them and store nothing; the host's conversion sorts the
// rows given out of order and names the other faults.
TEST(SparseConvert, BlockSourcesTheDeviceCannotReadGoToTheHost) {
  test::TempDir dir;
  // 2 x 8 in blocks of 2 x 4, a super-row of two blocks: the one at column 4 first, holding (0, 5) = 1,
  // then the one at column 0, holding (0, 0) = 2 and (1, 1) = 3. Each layout keeps a block's row r at
  // data[(r * 2 + block) * 4 ..] here.
  const std::string blocks = R"("col": {"value": [4, 0]}, "data": {"value": [0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0]})";
  const std::vector<std::pair<std::string, std::string>> unordered = {
      {"bcsr", R"("blocks": 2, "parts": {"row_ptr": {"value": [0, 2]}, )" + blocks + "}"},
      {"bell", R"("width": 2, "parts": {)" + blocks + "}"},
      {"sbell", R"("blocks": 2, "slice": 1, "parts": {"slice_ptr": {"value": [0, 2]}, )" + blocks + "}"}};
  for (const auto& [layout, declaration] : unordered) {
    const fs::path folder = dir / layout;
    test::write_text(dir / (layout + ".json"), R"({"fugue": 1, "symbols": {
        "K": {"kind": ")" + layout + R"(", "dtype": "f32", "shape": [2, 8], "block": [2, 4], )" + declaration + R"(},
        "C": {"kind": "csr", "dtype": "f32", "shape": [2, 8], "nnz": 3}},
       "body": [{"op": "sparse.convert", "out": ["C"], "in": ["K"]}],
       "outputs": {"C.row_ptr": "row_ptr.npy", "C.col": "col.npy", "C.data": "data.npy"}})");
    auto r = test::run_fugue("explain " + (dir / (layout + ".json")).string());
    EXPECT_NE(r.out.find("on the device: " + layout + " -> csr (nnz 3, as declared)"), std::string::npos) << r.out;
    r = test::run_fugue("run --profile " + (dir / "trace.json").string() + " " + (dir / (layout + ".json")).string() + " --out " + folder.string());
    ASSERT_EQ(r.code, 0) << layout << ": " << r.out;
    const std::string trace = test::read_text(dir / "trace.json");
    EXPECT_NE(trace.find("convert: " + layout + " check"), std::string::npos) << layout;
    EXPECT_EQ(trace.find("convert: " + layout + " -> csr"), std::string::npos) << layout;
    const std::vector<std::pair<std::string, std::vector<double>>> want = {{"row_ptr", {0, 2, 3}}, {"col", {0, 5, 1}}, {"data", {2, 1, 3}}};
    for (const auto& [part, values] : want) {
      const auto got = fugue::load_npy(folder / (part + ".npy"), std::nullopt, std::nullopt);
      ASSERT_EQ(got.elements(), static_cast<int64_t>(values.size())) << layout << " " << part;
      for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ(got.get(static_cast<int64_t>(k)), values[k]) << layout << " " << part << "[" << k << "]";
    }
  }

  struct Bad {
    std::string name, shape, declaration, message;
  };
  const std::vector<Bad> bad = {
      {"short", "[2, 8]", R"("kind": "bcsr", "block": [2, 4], "blocks": 2, "parts": {"row_ptr": {"value": [0, 1]}, )" + blocks + "}",
       "a bcsr whose row_ptr does not run from 0 to its 2 blocks"},
      {"ragged", "[4, 4]", R"("kind": "sbell", "block": [1, 4], "slice": 2, "blocks": 4,
         "parts": {"slice_ptr": {"value": [0, 3, 4]}, "col": {"value": [0, 0, 0, 0]}, "data": {"value": [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]}})",
       "a sbell whose slice 0 holds 3 blocks, not a multiple of its slice height 2"},
      {"outside", "[1, 8]", R"("kind": "bell", "block": [1, 4], "width": 2, "parts": {"col": {"value": [0, 9]}, "data": {"value": [1, 0, 0, 0, 2, 0, 0, 0]}})",
       "a bell whose col[1] = 9 is outside 0..7"},
      {"overlap", "[1, 8]", R"("kind": "bell", "block": [1, 4], "width": 2, "parts": {"col": {"value": [0, 2]}, "data": {"value": [1, 0, 5, 0, 5, 0, 0, 0]}})",
       "entry (0, 2) is given twice"},
      {"past", "[3, 6]", R"("kind": "bcsr", "block": [2, 4], "blocks": 2,
         "parts": {"row_ptr": {"value": [0, 1, 2]}, "col": {"value": [4, 0]}, "data": {"value": [0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}})",
       "a bcsr with a value outside the matrix (block 0)"}};
  for (const Bad& b : bad) {
    test::write_text(dir / (b.name + ".json"), R"({"fugue": 1, "symbols": {"K": {"dtype": "f64", "shape": )" + b.shape + ", " + b.declaration + R"(},
        "C": {"kind": "csr", "dtype": "f64", "shape": )" + b.shape + R"(, "nnz": 2}},
       "body": [{"op": "sparse.convert", "out": ["C"], "in": ["K"]}], "outputs": {"C.data": "data.npy"}})");
    auto r = test::run_fugue("run " + (dir / (b.name + ".json")).string() + " --out " + (dir / b.name).string());
    EXPECT_EQ(r.code, 2) << b.name << ": " << r.out;
    EXPECT_NE(r.out.find(b.message), std::string::npos) << b.name << ": " << r.out;
    EXPECT_FALSE(fs::exists(dir / b.name / "data.npy")) << b.name;
  }
}

// Counts left to the run ("nnz": {"capacity": n}): a csr and a coo made from a dia that an operation made,
// each from the one before (csr, coo, csr again, then an ell whose width is declared), hold the matrix's
// entries, however much room their declarations leave; their products give the dia's on the device (csr's
// rows and its chunks, coo's chunks) and in the reference; their parts and files hold the entries alone.
// A capacity the entries overflow stops the run before anything is written, naming the capacity to declare.
TEST(SparseConvert, CountsLeftToTheRunHoldTheEntriesCounted) {
  test::TempDir dir;
  const int64_t h = 6, w = 7, pixels = h * w, nnz = pixels + 2 * (h * (w - 1) + (h - 1) * w);
  auto program = [&](int64_t csr_capacity) {
    return R"({"fugue": 1, "symbols": {
      "image": {"kind": "array", "dtype": "f64", "shape": [6, 7], "from": {"random": {"seed": 3}}},
      "W": {"kind": "dia", "dtype": "f64", "shape": [42, 42], "diagonals": 5},
      "C": {"kind": "csr", "dtype": "f64", "shape": [42, 42], "nnz": {"capacity": )" + std::to_string(csr_capacity) + R"(}},
      "K": {"kind": "coo", "dtype": "f64", "shape": [42, 42], "nnz": {"capacity": 1764}},
      "D": {"kind": "csr", "dtype": "f64", "shape": [42, 42], "index": "i64", "nnz": {"capacity": )" + std::to_string(nnz) + R"(}},
      "E": {"kind": "ell", "dtype": "f64", "shape": [42, 42], "width": 5},
      "x": {"kind": "array", "dtype": "f64", "shape": [42], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
     "body": [{"op": "sparse.affinity", "out": ["W"], "in": ["image"], "attrs": {"radius": 1, "sigma_intensity": 0.5}},
              {"op": "sparse.convert", "out": ["C"], "in": ["W"]},
              {"op": "sparse.convert", "out": ["K"], "in": ["C"]},
              {"op": "sparse.convert", "out": ["D"], "in": ["K"]},
              {"op": "sparse.convert", "out": ["E"], "in": ["D"]},
              {"op": "sparse.spmv", "out": ["y_dia"], "in": ["W", "x"]},
              {"op": "sparse.spmv", "out": ["y_csr"], "in": ["C", "x"], "attrs": {"alpha": 2}},
              {"op": "sparse.spmv", "out": ["y_coo"], "in": ["K", "x"]},
              {"op": "sparse.spmv", "out": ["y_csr2"], "in": ["D", "x"]},
              {"op": "sparse.spmv", "out": ["y_ell"], "in": ["E", "x"]}],
     "outputs": {"y_dia": "y_dia.npy", "y_csr": "y_csr.npy", "y_coo": "y_coo.npy", "y_csr2": "y_csr2.npy", "y_ell": "y_ell.npy",
                 "C.col": "C_col.npy", "K.row": "K_row.npy", "D.data": "D_data.npy", "C": "C.mtx", "K": "K.mtx"}})";
  };
  test::write_text(dir / "p.json", program(1000));
  for (const std::string& how : {"device"s, "chunks"s, "reference"s}) {
    const fs::path out = dir / how;
    auto r = run_as(how, dir / "p.json", out);
    ASSERT_EQ(r.code, 0) << how << "\n" << r.out;
    const auto y = fugue::load_npy(out / "y_dia.npy", std::nullopt, std::nullopt);
    const double largest = largest_in(y);
    EXPECT_GT(largest, 0.0);
    for (const char* other : {"y_csr.npy", "y_coo.npy", "y_csr2.npy", "y_ell.npy"}) {
      const auto z = fugue::load_npy(out / other, std::nullopt, std::nullopt);
      ASSERT_EQ(z.elements(), pixels) << how << " " << other;
      const double alpha = std::string(other) == "y_csr.npy" ? 2 : 1;
      for (int64_t i = 0; i < pixels; ++i) EXPECT_NEAR(z.get(i), alpha * y.get(i), 1e-13 * largest) << how << " " << other << " row " << i;
    }
    for (const char* part : {"C_col.npy", "K_row.npy", "D_data.npy"})
      EXPECT_EQ(fugue::load_npy(out / part, std::nullopt, std::nullopt).elements(), nnz) << how << " " << part;
    for (const char* file : {"C.mtx", "K.mtx"}) {
      const std::string text = test::read_text(out / file);
      EXPECT_NE(text.find("\n42 42 " + std::to_string(nnz) + "\n"), std::string::npos) << how << " " << file << "\n" << text.substr(0, 200);
    }
  }

  test::write_text(dir / "small.json", program(nnz - 1));
  for (const std::string& how : {""s, "--reference "s}) {
    auto r = test::run_fugue("run " + how + (dir / "small.json").string() + " --out " + (dir / ("small" + how)).string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("small.json:/body/1/out/0: sparse.convert: operand B: A's " + std::to_string(nnz) +
                         " entries (its nonzero values: zeros are padding in a dia) do not fit the csr B, which is declared with "
                         "\"nnz\": {\"capacity\": " + std::to_string(nnz - 1) + "}: declare a capacity of at least " + std::to_string(nnz)),
              std::string::npos)
        << how << "\n" << r.out;
    EXPECT_FALSE(fs::exists(dir / ("small" + how) / "y_dia.npy"));
  }
}

// Every layout's count left to the run (ell's and bell's width, sell's stored places, dia's diagonals, hyb's
// coo entries, bcsr's and sbell's blocks): the affinity's dia converted into a counted csr, from it into each,
// and each back into a counted csr; every product gives the dia's, the parts and files hold what the count
// says, and a capacity too small stops the run (device and reference) naming the capacity to declare.
TEST(SparseConvert, EveryLayoutsCountLeftToTheRun) {
  test::TempDir dir;
  const int64_t h = 6, w = 7, pixels = h * w, nnz = pixels + 2 * (h * (w - 1) + (h - 1) * w);
  struct Target {
    std::string name, declaration, part;  // the symbol, its declaration's keys, a part whose places the count sets
    int64_t places;                       // that part's places as counted
  };
  // The 5-point affinity of a 6 x 7 image: rows of up to 5 entries on 5 diagonals (offsets -7, -1, 0, 1, 7).
  const std::vector<Target> targets = {
      {"E", R"("kind": "ell", "width": {"capacity": 8})", "col", 5 * pixels},
      {"F", R"("kind": "dia", "diagonals": {"capacity": 9})", "data", 5 * pixels},
      {"S", R"("kind": "sell", "slice": 4, "sigma": 8, "stored": {"capacity": 400})", "", 0},
      {"H", R"("kind": "hyb", "width": 2, "nnz": {"capacity": 1000})", "coo_data", nnz - 2 * pixels},
      {"B", R"("kind": "bcsr", "block": [2, 4], "blocks": {"capacity": 200})", "", 0},
      {"L", R"("kind": "bell", "block": [1, 4], "width": {"capacity": 6})", "", 0},
      {"Q", R"("kind": "sbell", "block": [2, 4], "slice": 2, "blocks": {"capacity": 200})", "", 0}};
  auto program = [&](const std::string& ell_capacity) {
    std::string symbols = R"("image": {"kind": "array", "dtype": "f64", "shape": [6, 7], "from": {"random": {"seed": 3}}},
      "W": {"kind": "dia", "dtype": "f64", "shape": [42, 42], "diagonals": 5},
      "C": {"kind": "csr", "dtype": "f64", "shape": [42, 42], "nnz": {"capacity": 1000}},
      "x": {"kind": "array", "dtype": "f64", "shape": [42], "from": {"random": {"seed": 4, "low": -1, "high": 1}}})";
    std::string body = R"({"op": "sparse.affinity", "out": ["W"], "in": ["image"], "attrs": {"radius": 1, "sigma_intensity": 0.5}},
              {"op": "sparse.convert", "out": ["C"], "in": ["W"]},
              {"op": "sparse.spmv", "out": ["y_dia"], "in": ["W", "x"]})";
    std::string outputs = R"("y_dia": "y_dia.npy", "E": "E.mtx", "F": "F.mtx")";
    for (const Target& t : targets) {
      std::string declaration = t.declaration;
      if (t.name == "E") declaration = R"("kind": "ell", "width": {"capacity": )" + ell_capacity + "}";
      symbols += ",\n      \"" + t.name + R"(": {)" + declaration + R"(, "dtype": "f64", "shape": [42, 42]},
      ")" + t.name + R"(_back": {"kind": "csr", "dtype": "f64", "shape": [42, 42], "nnz": {"capacity": 500}})";
      body += ",\n              {\"op\": \"sparse.convert\", \"out\": [\"" + t.name + "\"], \"in\": [\"C\"]}" +
              ",\n              {\"op\": \"sparse.convert\", \"out\": [\"" + t.name + "_back\"], \"in\": [\"" + t.name + "\"]}" +
              ",\n              {\"op\": \"sparse.spmv\", \"out\": [\"y_" + t.name + "\"], \"in\": [\"" + t.name + "\", \"x\"]}" +
              ",\n              {\"op\": \"sparse.spmv\", \"out\": [\"y_" + t.name + "_back\"], \"in\": [\"" + t.name + "_back\", \"x\"]}";
      outputs += ", \"y_" + t.name + "\": \"y_" + t.name + ".npy\", \"y_" + t.name + "_back\": \"y_" + t.name + "_back.npy\"";
      if (!t.part.empty()) outputs += ", \"" + t.name + "." + t.part + "\": \"" + t.name + "_" + t.part + ".npy\"";
    }
    return R"({"fugue": 1, "symbols": {)" + symbols + "},\n     \"body\": [" + body + "],\n     \"outputs\": {" + outputs + "}}";
  };
  test::write_text(dir / "p.json", program("8"));
  for (const std::string& how : {"device"s, "chunks"s, "reference"s}) {
    const fs::path out = dir / how;
    auto r = run_as(how, dir / "p.json", out);
    ASSERT_EQ(r.code, 0) << how << "\n" << r.out;
    const auto y = fugue::load_npy(out / "y_dia.npy", std::nullopt, std::nullopt);
    const double largest = largest_in(y);
    EXPECT_GT(largest, 0.0);
    for (const Target& t : targets) {
      for (const std::string& which : {"y_" + t.name, "y_" + t.name + "_back"}) {
        const auto z = fugue::load_npy(out / (which + ".npy"), std::nullopt, std::nullopt);
        ASSERT_EQ(z.elements(), pixels) << how << " " << which;
        for (int64_t i = 0; i < pixels; ++i) EXPECT_NEAR(z.get(i), y.get(i), 1e-13 * largest) << how << " " << which << " row " << i;
      }
      if (!t.part.empty()) {
        EXPECT_EQ(fugue::load_npy(out / (t.name + "_" + t.part + ".npy"), std::nullopt, std::nullopt).elements(), t.places)
            << how << " " << t.name << "." << t.part;
      }
    }
    for (const char* file : {"E.mtx", "F.mtx"}) {
      const std::string text = test::read_text(out / file);
      EXPECT_NE(text.find("\n42 42 " + std::to_string(nnz) + "\n"), std::string::npos) << how << " " << file << "\n" << text.substr(0, 200);
    }
  }
  // The plan says which products read the count back first.
  auto explained = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(explained.code, 0) << explained.out;
  EXPECT_NE(explained.out.find("at most 8 places a row; its width left to the run, read on the device"), std::string::npos) << explained.out;

  test::write_text(dir / "small.json", program("4"));
  for (const std::string& how : {""s, "--reference "s}) {
    auto r = test::run_fugue("run " + how + (dir / "small.json").string() + " --out " + (dir / ("small" + how)).string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("small.json:/body/3/out/0: sparse.convert: operand B: A's " + std::to_string(nnz) +
                         " entries do not fit the ell B, which is declared with \"width\": {\"capacity\": 4}: declare a capacity of at least 5"),
              std::string::npos)
        << how << "\n" << r.out;
    EXPECT_FALSE(fs::exists(dir / ("small" + how) / "y_dia.npy"));
  }

  // No entries at all: counts of 0 (coo's chunks, ell's width, csr's chunks), each product beta * y0.
  test::write_text(dir / "zero.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "csr", "dtype": "f64", "shape": [3, 4], "nnz": 0, "parts": {"row_ptr": {"value": [0, 0, 0, 0]}, "col": {"value": []}, "data": {"value": []}}},
      "K": {"kind": "coo", "dtype": "f64", "shape": [3, 4], "nnz": {"capacity": 5}},
      "E": {"kind": "ell", "dtype": "f64", "shape": [3, 4], "width": {"capacity": 2}},
      "C": {"kind": "csr", "dtype": "f64", "shape": [3, 4], "nnz": {"capacity": 5}},
      "x": {"kind": "array", "dtype": "f64", "shape": [4], "from": {"random": {"seed": 4}}},
      "y0": {"kind": "array", "dtype": "f64", "shape": [3], "value": [1, 2, 3]}},
     "body": [{"op": "sparse.convert", "out": ["K"], "in": ["A"]}, {"op": "sparse.convert", "out": ["E"], "in": ["K"]},
              {"op": "sparse.convert", "out": ["C"], "in": ["E"]},
              {"op": "sparse.spmv", "out": ["y_k"], "in": ["K", "x", "y0"], "attrs": {"beta": 2}},
              {"op": "sparse.spmv", "out": ["y_e"], "in": ["E", "x", "y0"], "attrs": {"beta": 2}},
              {"op": "sparse.spmv", "out": ["y_c"], "in": ["C", "x", "y0"], "attrs": {"beta": 2}}],
     "outputs": {"y_k": "y_k.npy", "y_e": "y_e.npy", "y_c": "y_c.npy", "K": "K.mtx"}})");
  for (const std::string& how : {"device"s, "chunks"s, "reference"s}) {
    const fs::path out = dir / ("zero_" + how);
    auto r = run_as(how, dir / "zero.json", out);
    ASSERT_EQ(r.code, 0) << how << "\n" << r.out;
    for (const char* y : {"y_k.npy", "y_e.npy", "y_c.npy"}) {
      const auto z = fugue::load_npy(out / y, std::nullopt, std::nullopt);
      ASSERT_EQ(z.elements(), 3) << how << " " << y;
      for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(z.get(i), 2.0 * static_cast<double>(i + 1)) << how << " " << y << " row " << i;
    }
    EXPECT_NE(test::read_text(out / "K.mtx").find("\n3 4 0\n"), std::string::npos) << how;
  }
}

// A count left to the run is for an operation's result: a file's or given parts' values have their own,
// and a bdia's and a hyb's width are not counted so.
TEST(SparseConvert, ACountLeftToTheRunOnlyForAnOperationsResult) {
  test::TempDir dir;
  test::write_text(dir / "A.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 -2\n");
  auto check = [&](const std::string& symbols, const std::string& message) {
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(,
        "x": {"kind": "array", "dtype": "f64", "shape": [3], "from": {"random": {"seed": 1}}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  };
  check(R"("A": {"kind": "csr", "dtype": "f64", "from": "A.mtx", "nnz": {"capacity": 5}})",
        "holds a matrix whose nnz is 2; \"nnz\": {\"capacity\": ...} is for a value an operation counts: declare \"nnz\": 2 or leave it out");
  check(R"("A": {"kind": "ell", "dtype": "f64", "from": "A.mtx", "width": {"capacity": 2}})",
        "holds a matrix whose width is 1; \"width\": {\"capacity\": ...} is for a value an operation counts: declare \"width\": 1 or leave it out");
  check(R"("A": {"kind": "bdia", "dtype": "f64", "shape": [3, 3], "diagonals": {"capacity": 2}, "bands": 1})",
        "/symbols/A/diagonals: a count left to the run ({\"capacity\": n}) is taken for every layout's count but a bdia's and a cocktail's, "
        "which have several: declare the bdia's diagonals as a number");
  check(R"("A": {"kind": "hyb", "dtype": "f64", "shape": [3, 3], "width": {"capacity": 2}, "nnz": 1})",
        "/symbols/A/width: a count left to the run ({\"capacity\": n}) is taken for a hyb's nnz (its coo part's entries; its width is its "
        "cut): declare the hyb's width as a number");
  check(R"("A": {"kind": "coo", "dtype": "f64", "shape": [3, 3], "nnz": {"most": 2}})",
        "/symbols/A/nnz: expected {\"capacity\": n} (the most the operation may count), found {\"most\":2}");
  check(R"("A": {"kind": "dia", "dtype": "f64", "shape": [3, 3], "diagonals": {"capacity": 2},
             "parts": {"offsets": {"value": [0]}, "data": {"value": [1, 2, 3]}}})",
        "/symbols/A/parts: 'A' is declared with a count left to the run (its offsets, data hold at most 2), which only an operation "
        "that writes it gives; a file or parts given here have a count of their own: declare it exactly");
  check(R"("A": {"kind": "coo", "dtype": "f64", "shape": [3, 3], "nnz": {"capacity": 2},
             "parts": {"row": {"value": [0, 2]}, "col": {"value": [0, 1]}, "data": {"value": [1.5, -2]}}})",
        "/symbols/A/parts: 'A' is declared with a count left to the run (its row, col, data hold at most 2), which only an operation "
        "that writes it gives; a file or parts given here have a count of their own: declare it exactly");
}

// Where the core passes a value's count (ABI 2.22's count), a counted dia's, ell's or bcsr's product stays
// the generated kernel a row an element, which the element-wise operations reading y join: r = x - 2 A x,
// r * r and dot(r, r) are one kernel that reads the count on the device. Capacities well above the counts, so a
// kernel walking the capacity instead would read places no entry was stored in (and bcsr's data, laid out
// by the count, at the wrong stride). The result is the declared layout's, and the reference's.
TEST(SparseConvert, CountedProductsJoinTheirConsumers) {
  test::TempDir dir;
  struct Case {
    std::string layout, key, capacity, cut, environment;
  };
  // On CPUs dia's and ell's own kernels take vectors of rows; FUGUE_SPARSE_VECTOR_ROWS=0 gives them the
  // generated kernel a row per work-item.
  const std::vector<Case> cases = {{"dia", "diagonals", "300", "", "FUGUE_SPARSE_VECTOR_ROWS=0"},
                                   {"ell", "width", "150", "", "FUGUE_SPARSE_VECTOR_ROWS=0"},
                                   {"bcsr", "blocks", "4000", R"(, "block": [2, 4])", ""}};
  const std::string source = R"({"fem": {"nodes": 67, "block": 3, "neighbours": 3, "seed": 2}})";
  for (const Case& c : cases) {
    auto program = [&](bool counted) {
      const std::string a = counted ? R"("S": {"kind": "csr", "dtype": "f64", "from": )" + source + R"(},
      "A": {"kind": ")" + c.layout + R"(", "dtype": "f64", "shape": [201, 201], ")" + c.key + R"(": {"capacity": )" + c.capacity + "}" + c.cut + "}"
                                    : R"("A": {"kind": ")" + c.layout + R"(", "dtype": "f64", "from": )" + source + c.cut + "}";
      return R"({"fugue": 1, "symbols": {)" + a + R"(,
      "x": {"kind": "array", "dtype": "f64", "shape": [201], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
      "body": [)" + (counted ? R"({"op": "sparse.convert", "out": ["A"], "in": ["S"]}, )" : "") +
             R"({"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"], "attrs": {"alpha": 2}},
               {"op": "array.sub", "out": ["r"], "in": ["x", "y"]}, {"op": "array.mul", "out": ["z"], "in": ["r", "r"]},
               {"op": "array.dot", "out": ["s"], "in": ["r", "r"]}],
      "outputs": {"z": "z.npy", "s": "s.npy"}})";
    };
    test::write_text(dir / "counted.json", program(true));
    test::write_text(dir / "declared.json", program(false));
    auto explained = test::run_fugue("explain " + (dir / "counted.json").string(), c.environment);
    ASSERT_EQ(explained.code, 0) << c.layout << ": " << explained.out;
    EXPECT_NE(explained.out.find("kernel 0: 4 operations at ITEM level"), std::string::npos) << c.layout << ": " << explained.out;
    EXPECT_NE(explained.out.find(c.layout + ": a row per work-item in a generated kernel"), std::string::npos) << c.layout << ": " << explained.out;
    EXPECT_NE(explained.out.find("; its " + c.key + " left to the run, read on the device"), std::string::npos) << c.layout << ": " << explained.out;
    EXPECT_EQ(explained.out.find("(its own kernels)"), std::string::npos) << c.layout << ": " << explained.out;

    std::vector<fugue::HostArray> z, sums;
    for (const auto& [file, how] : std::vector<std::pair<std::string, std::string>>{
             {"declared.json", "device"}, {"counted.json", "device"}, {"counted.json", "reference"}}) {
      const fs::path out = dir / (c.layout + "_" + file + "_" + how);
      auto r = test::run_fugue(std::string("run ") + (how == "reference" ? "--reference " : "") + (dir / file).string() + " --out " +
                                   out.string(),
                               c.environment);
      ASSERT_EQ(r.code, 0) << c.layout << " " << file << " " << how << ": " << r.out;
      z.push_back(fugue::load_npy(out / "z.npy", std::nullopt, std::nullopt));
      sums.push_back(fugue::load_npy(out / "s.npy", std::nullopt, std::nullopt));
    }
    const double largest = largest_in(z[0]);
    EXPECT_GT(largest, 0.0) << c.layout;
    for (size_t k = 1; k < z.size(); ++k) {
      ASSERT_EQ(z[k].elements(), z[0].elements()) << c.layout;
      for (int64_t i = 0; i < z[0].elements(); ++i) EXPECT_NEAR(z[k].get(i), z[0].get(i), 1e-13 * largest) << c.layout << " " << k << " row " << i;
      EXPECT_NEAR(sums[k].get(0), sums[0].get(0), 1e-12 * sums[0].get(0)) << c.layout << " " << k << ": dot(r, r)";
    }
    double total = 0;  // dot(r, r) is the sum of z
    for (int64_t i = 0; i < z[0].elements(); ++i) total += z[0].get(i);
    EXPECT_NEAR(sums[0].get(0), total, 1e-12 * total) << c.layout;
  }
}

// A core before ABI 2.22 passes a generated kernel no count (fugue_emit_api.count), so the plugin, told so
// by its entry point's argument, gives a counted product its own kernels, which read the count from its
// buffer: the product no longer joins its consumers, and gives what the generated kernel gives. The
// sparse plugin is told 21 here as an older core would tell it, and its core's minor again after.
TEST(SparseConvert, ACoreBeforeAbi22GivesACountedProductItsOwnKernels) {
  std::shared_ptr<const fugue::LoadedPlugin> sparse;
  for (const auto& plugin : test::bundled_plugins().plugins())
    if (plugin->name == "sparse") sparse = plugin;
  ASSERT_TRUE(sparse) << "the bundled sparse plugin";
  auto entry = sparse->library.get<const fugue_plugin*(uint32_t, uint32_t)>(FUGUE_PLUGIN_ENTRY_NAME);
  struct ToldMinor {  // the core's own minor again whatever the test does
    decltype(entry) told;
    ~ToldMinor() { told(FUGUE_ABI_VERSION_MAJOR, FUGUE_ABI_VERSION_MINOR); }
  } restore{entry};

  test::TempDir dir;
  const fugue::Program program = test::load_text(dir, R"({"fugue": 1, "symbols": {
    "S": {"kind": "csr", "dtype": "f64", "from": {"fem": {"nodes": 67, "block": 3, "neighbours": 3, "seed": 2}}},
    "A": {"kind": "bcsr", "dtype": "f64", "shape": [201, 201], "blocks": {"capacity": 4000}, "block": [2, 4]},
    "x": {"kind": "array", "dtype": "f64", "shape": [201], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
    "body": [{"op": "sparse.convert", "out": ["A"], "in": ["S"]},
             {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"], "attrs": {"alpha": 2}},
             {"op": "array.sub", "out": ["r"], "in": ["x", "y"]}, {"op": "array.dot", "out": ["s"], "in": ["r", "r"]}],
    "outputs": {"r": "r.npy", "s": "s.npy"}})");
  const fugue::Statement* product = nullptr;
  for (const auto& st : program.body)
    if (st.op && st.op->name() == "sparse.spmv") product = &st;
  ASSERT_TRUE(product);

  std::map<std::string, std::map<std::string, fugue::HostArray>> results;
  for (const uint32_t minor : {uint32_t{21}, uint32_t{FUGUE_ABI_VERSION_MINOR}}) {
    ASSERT_EQ(entry(FUGUE_ABI_VERSION_MAJOR, minor), sparse->table) << "the same table, told minor " << minor;
    const fugue::ExecutionPlan plan = fugue::lower(program, test::test_device().info, fugue::PlanOptions{});
    const bool generated = plan.steps.at(product).kind == fugue::Step::Kind::Kernel;
    EXPECT_EQ(generated, minor >= 22) << "told minor " << minor;
    size_t joined = 0;  // the operations of the product's kernel (0: it runs its own kernels)
    for (const auto& group : plan.groups)
      for (const auto* op : group.ops)
        if (op->statement == product) joined = group.ops.size();
    EXPECT_EQ(joined, minor >= 22 ? 3u : 0u) << "told minor " << minor;
    const std::string text = fugue::explain_plan(program, plan, test::test_device().info);
    EXPECT_EQ(text.find("(its own kernels)") != std::string::npos, minor < 22) << text;
    results[std::to_string(minor)] = test::run_on_device(program, std::string());
  }
  results["reference"] = test::run_reference(program);
  for (const std::string name : {"r", "s"}) {
    const fugue::HostArray& expected = results.at("reference").at(name);
    EXPECT_GT(largest_in(expected), 0.0) << name;
    for (const std::string& how : {std::string("21"), std::to_string(FUGUE_ABI_VERSION_MINOR)})
      EXPECT_EQ(test::compare_arrays(results.at(how).at(name), expected, 1e-12), "") << name << ", told minor " << how;
  }
}
