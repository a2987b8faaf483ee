// `fugue tune`: the sparse tuner's programs timed on this machine's device, the table kept in the
// device's tuning folder (under FUGUE_CACHE_DIR), and the format choice reading it back; a malformed
// table and an unknown tuner refused with what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.h"

namespace fs = std::filesystem;
namespace test = fugue::test;

namespace {

// The table `fugue tune TUNER --quick` says it wrote, if it is TUNER.quick.json; "" otherwise.
fs::path quick_table(const std::string& out, const std::string& tuner) {
  const size_t at = out.find("wrote ");
  if (at == std::string::npos) return {};
  const fs::path file = out.substr(at + 6, out.find('\n', at) - at - 6);
  return file.filename() == tuner + ".quick.json" ? file : fs::path();
}

}  // namespace

TEST(Tune, TheSparseTableIsMeasuredKeptAndChosenFrom) {
  test::TempDir dir;
  const std::string env = "FUGUE_CACHE_DIR=" + (dir / "cache").string();
  auto listed = test::run_fugue("tune", env);
  EXPECT_EQ(listed.code, 0) << listed.out;
  EXPECT_NE(listed.out.find("sparse "), std::string::npos) << listed.out;
  auto tuned = test::run_fugue("tune sparse --quick --repeat 1", env);
  ASSERT_EQ(tuned.code, 0) << tuned.out;
  // A quick run's table is kept beside the device's real one, which the choice reads: it stands in for
  // one here.
  const fs::path quick_file = quick_table(tuned.out, "sparse");
  ASSERT_FALSE(quick_file.empty()) << tuned.out;
  EXPECT_EQ(quick_file.parent_path().parent_path(), dir / "cache" / "tuning");
  const fs::path table_file = quick_file.parent_path() / "sparse.json";
  fs::copy_file(quick_file, table_file);
  nlohmann::json table = nlohmann::json::parse(std::ifstream(table_file));
  for (const char* layout : {"csr", "coo", "ell", "sell", "dia"}) {
    ASSERT_EQ(table["gbps"][layout].size(), 4u) << layout;
    for (const auto& g : table["gbps"][layout]) EXPECT_GT(g.get<double>(), 0) << layout;
  }
  // The choice reads the table (for the product alone: "reads": -1): one that makes a layout a million
  // times faster than the rest makes it choose that layout.
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"A": {"kind": "sparse", "dtype": "f32", "reads": -1, "from": {"rmat": {"scale": 10, "edges": 8, "seed": 1}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [1024], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
  auto explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  ASSERT_EQ(explained.code, 0) << explained.out;
  EXPECT_NE(explained.out.find("estimated ms (tuned table (" + table_file.string() + "))"), std::string::npos) << explained.out;
  for (const char* layout : {"csr", "coo", "ell", "sell"}) table["gbps"][layout] = {1, 1, 1, 1};
  std::ofstream(table_file) << table.dump();
  table["gbps"]["csr"] = {1e6, 1e6, 1e6, 1e6};
  std::ofstream(table_file) << table.dump();
  explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(explained.out.find("A: sparse chose csr"), std::string::npos) << explained.out;
  table["gbps"]["csr"] = {1, 1, 1, 1};
  table["gbps"]["coo"] = {1e6, 1e6, 1e6, 1e6};
  std::ofstream(table_file) << table.dump();
  explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(explained.out.find("A: sparse chose coo"), std::string::npos) << explained.out;
  // A malformed table: the declaration is refused, naming the file and what to do.
  table["gbps"]["ell"][2] = -1;
  std::ofstream(table_file) << table.dump();
  auto refused = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("the tuning table " + table_file.string() + ": gbps.ell[2] is not a positive number; run `fugue tune sparse` again"),
            std::string::npos)
      << refused.out;
  std::ofstream(table_file) << "{not json";
  refused = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(refused.out.find("not a JSON object"), std::string::npos) << refused.out;
  // Another device's table, a folder where the table should be: refused with the file's name.
  table = nlohmann::json::parse(std::ifstream(quick_file));
  table["device"] = "another device";
  std::ofstream(table_file) << table.dump();
  refused = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(refused.out.find("not the sparse table of "), std::string::npos) << refused.out;
  fs::remove(table_file);
  fs::create_directory(table_file);
  refused = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("the tuning table " + table_file.string() + " cannot be read"), std::string::npos) << refused.out;
  test::write_text(dir / "a_file", "");
  auto no_folder = test::run_fugue("tune sparse --quick", "FUGUE_CACHE_DIR=" + (dir / "a_file").string());
  EXPECT_EQ(no_folder.code, 2) << no_folder.out;
  EXPECT_NE(no_folder.out.find("cannot make the tuning folder"), std::string::npos) << no_folder.out;
  auto unknown = test::run_fugue("tune pairs", env);
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("tune pairs: no loaded plugin has a tuner of that name (the tuners: pairwise, sparse)"), std::string::npos) << unknown.out;
}

// `fugue tune pairwise`: the fastest blocking of each class kept, and the tiled plans taking it.
TEST(Tune, ThePairwiseBlockingsAreMeasuredAndTaken) {
  test::TempDir dir;
  const std::string env = "FUGUE_CACHE_DIR=" + (dir / "cache").string();
  auto tuned = test::run_fugue("tune pairwise --quick --repeat 1", env);
  ASSERT_EQ(tuned.code, 0) << tuned.out;
  const fs::path quick_file = quick_table(tuned.out, "pairwise");
  ASSERT_FALSE(quick_file.empty()) << tuned.out;
  const fs::path table_file = quick_file.parent_path() / "pairwise.json";
  fs::copy_file(quick_file, table_file);
  nlohmann::json table = nlohmann::json::parse(std::ifstream(table_file));
  for (const char* cls : {"cheap", "dear", "normed", "per_row"}) {
    if (table[cls] == "vectors") continue;  // CPUs time blocks in vectors too
    ASSERT_EQ(table[cls].size(), 2u) << cls << ": " << table.dump();
    EXPECT_TRUE(table[cls][0] == 32 || table[cls][0] == 64) << cls;  // the quick run's sides
  }
  const bool cpu = test::test_device().info.is_cpu;  // CPUs time blocks in vectors too
  for (const char* label : {"cheap vectors", "dear vectors", "normed vectors", "per_row vectors"}) EXPECT_EQ(table["ms"].contains(label), cpu) << label << ": " << table.dump();
  table["cheap"] = {80, 48};
  std::ofstream(table_file) << table.dump();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [500, 128], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "X"]}], "outputs": {"D": "D.npy"}})");
  auto explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(explained.out.find("tiles of 80 x 48 per 16 x 16 work-group"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("(tuned table (" + table_file.string() + "))"), std::string::npos) << explained.out;
  table["cheap"] = "vectors";
  std::ofstream(table_file) << table.dump();
  explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(explained.out.find(" coordinates a vector, no local memory (tuned table (" + table_file.string() + "))"), std::string::npos) << explained.out;
  table["cheap"] = {80, 40};
  std::ofstream(table_file) << table.dump();
  auto refused = test::run_fugue("explain " + (dir / "p.json").string(), env);
  EXPECT_NE(refused.out.find("the tuning table " + table_file.string() + ": \"cheap\" is not [rows, cols] with each 16, 32, 48, 64, 80, 96, 112 or 128, nor \"vectors\""),
            std::string::npos)
      << refused.out;
  // Cosine's class is normed (f32 data; f64 takes dear's), and a table tuned before it had a class of
  // its own (no "normed") leaves cosine to the table built in.
  table["cheap"] = {80, 48};
  table["normed"] = {48, 112};
  table["dear"] = {16, 128};
  std::ofstream(table_file) << table.dump();
  test::write_text(dir / "cos.json", R"({"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [500, 128], "from": {"random": {"seed": 1}}},
    "W": {"kind": "array", "dtype": "f64", "shape": [500, 128], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "X"], "attrs": {"metric": "cosine"}},
             {"op": "pairwise.distance", "out": ["E"], "in": ["W", "W"], "attrs": {"metric": "cosine"}}], "outputs": {"D": "D.npy", "E": "E.npy"}})");
  explained = test::run_fugue("explain " + (dir / "cos.json").string(), env);
  EXPECT_NE(explained.out.find("tiles of 48 x 112 per 16 x 16 work-group"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("tiles of 16 x 128 per 16 x 16 work-group"), std::string::npos) << explained.out;
  table.erase("normed");
  std::ofstream(table_file) << table.dump();
  explained = test::run_fugue("explain " + (dir / "cos.json").string(), env);
  EXPECT_EQ(explained.code, 0) << explained.out;
  EXPECT_EQ(explained.out.find("tiles of 48 x 112"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("tiles of 16 x 128 per 16 x 16 work-group"), std::string::npos) << explained.out;  // f64: dear's
  EXPECT_NE(explained.out.find(" row)"), std::string::npos) << explained.out;  // f32: the row's
}
