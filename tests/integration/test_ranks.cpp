// MPI ranks (`mpirun -np N fugue run --mpi`), on this machine: each rank a process with its own PoCL
// device. A program split over the ranks gives what one device gives (batched work with no rows traded,
// stencils trading their neighbours' rows through MPI, with and without fusion); a program that cannot
// be split runs on rank 0 alone; a bad program stops every rank with exit code 2.
#include <gtest/gtest.h>

#include "failing_device.h"
#include "io/npy_io.h"
#include "test_support.h"

using namespace fugue;
namespace fs = std::filesystem;

namespace {

// `fugue COMMAND --mpi ARGS` in `ranks` processes of mpirun (as root where the tests run as root; more
// ranks than cores), each with a PoCL kernel cache of its own, `env` before it all; stopped after five
// minutes, so that a rank left waiting fails the test rather than hanging it.
test::CliResult run_ranks(int ranks, const std::string& args, const std::string& env,
                          const std::string& subcommand = "run") {
  const std::string pocl_cache = (fs::temp_directory_path() / "fugue_ranks_pocl").string();
  const std::string command =
      "env FUGUE_PROGRAM_CACHE=off OMPI_MCA_btl_vader_single_copy_mechanism=none " + env + " timeout 300 mpirun --allow-run-as-root " +
      "--oversubscribe -np " + std::to_string(ranks) + " sh -c 'POCL_CACHE_DIR=" + pocl_cache +
      "/$OMPI_COMM_WORLD_RANK exec \"$0\" \"$@\"' " + test::fugue_executable().string() + " " + subcommand + " --mpi " + args;
  return test::run_command(command);
}

void require_mpirun() {
  ASSERT_EQ(test::run_command("mpirun --version").code, 0) << "mpirun is missing: scripts/setup.sh installs openmpi-bin";
}

}  // namespace

TEST(Ranks, SplitOverRanksGivesWhatOneDeviceGives) {
  require_mpirun();
  test::TempDir dir;
  const fs::path examples = test::source_root() / "examples";
  struct Case {
    fs::path program;
    std::string args;
    std::string tuning;
    int ranks;
    std::string expect;  // in the --stats account
    double tolerance = 0;  // combined norms differ from one device's in the last bits
  };
  // Sparse products: each rank gets its rows of the matrices from rank 0 (one read from a file, one given
  // part by part), x whole; the dot product's parts combined.
  test::write_text(dir / "spmv.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "sparse", "format": "auto", "dtype": "f64", "from": ")" +
                                          (test::source_root() / ".." / "shared" / "data" / "matrices" / "bcsstk13.mtx").string() + R"("},
    "D": {"kind": "csr", "dtype": "f64", "shape": [2003, 2003], "nnz": 2003, "parts": {
      "row_ptr": {"from": {"arange": {}}}, "col": {"from": {"arange": {}}}, "data": {"from": {"random": {"seed": 4}}}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [2003], "from": {"random": {"seed": 1}}}},
    "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}, {"op": "array.dot", "out": ["yy"], "in": ["y", "y"]},
             {"op": "sparse.spmv", "out": ["d"], "in": ["D", "x"]}],
    "outputs": {"y": "y.npy", "yy": "yy.npy", "d": "d.npy"}})");
  // A power iteration: x written by the ranks; each gets the rows its rows of A reach (30 either side)
  // from the other for the next product. Over a power-law matrix, whose rows reach every column, the
  // program runs on rank 0 alone.
  test::write_text(dir / "power.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "sparse", "format": "auto", "dtype": "f64", "from": {"poisson": {"grid": [40, 30]}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [1200], "from": {"random": {"seed": 1}}}},
    "body": [{"for": "i", "count": 20, "body": [
      {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
      {"op": "array.norm2", "out": ["n"], "in": ["y"]},
      {"op": "array.div", "out": ["x"], "in": ["y", "n"]}]}],
    "outputs": {"x": "x.npy", "n": "n.npy"}})");
  test::write_text(dir / "rmat.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": {"rmat": {"scale": 12, "edges": 8, "seed": 3}}},
    "x": {"kind": "array", "dtype": "f64", "shape": [4096], "from": {"random": {"seed": 1}}}},
    "body": [{"for": "i", "count": 10, "body": [
      {"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
      {"op": "array.norm2", "out": ["n"], "in": ["y"]},
      {"op": "array.div", "out": ["x"], "in": ["y", "n"]}]}],
    "outputs": {"x": "x.npy", "n": "n.npy"}})");
  const std::vector<Case> cases = {
      {dir / "spmv.json", "", "", 3, "whole on every device: x"},
      {dir / "power.json", "", "", 2, "rows gathered 20 times; 60 of 'x' cross between devices a gather", 1e-12},
      {dir / "rmat.json", "", "", 2, "not split after all: the devices would exchange ", 0},
      {examples / "linalg" / "kalman_update.json", "", "", 2, "rows 500..999 (500,"},
      {examples / "jacobi.json", "", ",halo_depth=1", 2, "neighbours' rows traded 9 times"},
      {examples / "jacobi.json", "--no-fuse", ",halo_depth=1", 2, "neighbours' rows traded 9 times"},
      {examples / "bench" / "stencil5.json", "--set side=96 --set iterations=7", ",halo_depth=3", 3,
       "through MPI: the neighbours' rows of x"},
      // A maximum over the rows combined from the ranks' parts, an `if` on it taking one branch everywhere.
      {examples / "halving_until_small.json", "", "", 3, "reductions combined 13 times"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.program.filename().string() + " " + c.args + " on " + std::to_string(c.ranks) + " ranks");
    const fs::path one = dir / ("one" + std::to_string(n)), split = dir / ("ranks" + std::to_string(n));
    ++n;
    auto single = test::run_fugue("run " + c.program.string() + " --out " + one.string() + " " + c.args,
                                  "FUGUE_PROGRAM_CACHE=off");
    ASSERT_EQ(single.code, 0) << single.out;
    auto ranks = run_ranks(c.ranks, c.program.string() + " --out " + split.string() + " --stats " + c.args,
                           "FUGUE_TUNING=split_bytes=0" + c.tuning);
    ASSERT_EQ(ranks.code, 0) << ranks.out;
    EXPECT_NE(ranks.out.find("placement on " + std::to_string(c.ranks) + " devices:"), std::string::npos) << ranks.out;
    EXPECT_NE(ranks.out.find("(rank " + std::to_string(c.ranks - 1) + ")"), std::string::npos) << ranks.out;
    EXPECT_NE(ranks.out.find(c.expect), std::string::npos) << ranks.out;
    test::expect_same_npy_files(split, one, c.tolerance);
  }
}

TEST(Ranks, WhatCannotBeSplitRunsOnRankZero) {
  require_mpirun();
  test::TempDir dir;
  test::write_text(dir / "sum.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [4096], "from": {"random": {"seed": 1}}},
    "f": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}],
          "result": "c"}},
    "body": [{"op": "array.mul", "out": ["y"], "in": ["x", 2]}, {"op": "array.reduce", "out": ["s"], "in": ["f", "y"]}],
    "outputs": {"s": "s.npy", "y": "y.npy"}})");
  auto one = test::run_fugue("run " + (dir / "sum.json").string() + " --out " + (dir / "one").string(),
                             "FUGUE_PROGRAM_CACHE=off");
  ASSERT_EQ(one.code, 0) << one.out;
  auto ranks = run_ranks(2, (dir / "sum.json").string() + " --out " + (dir / "two").string() + " --stats",
                         "FUGUE_TUNING=split_bytes=0");
  ASSERT_EQ(ranks.code, 0) << ranks.out;
  EXPECT_NE(ranks.out.find("placement on 2 devices: all on 0:0 (rank 0)"), std::string::npos) << ranks.out;
  EXPECT_NE(ranks.out.find("'s' is a scalar the device writes"), std::string::npos) << ranks.out;
  test::expect_same_npy_files(dir / "two", dir / "one", 0);
}

TEST(Ranks, ABadProgramStopsEveryRank) {
  require_mpirun();
  test::TempDir dir;
  test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {},
    "body": [{"op": "array.nope", "out": ["y"], "in": []}], "outputs": {}})");
  auto bad = run_ranks(2, (dir / "bad.json").string() + " --out " + (dir / "o").string(), "");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("of 2: " + (dir / "bad.json").string() + ":/body/0/op: unknown operation 'array.nope'"),
            std::string::npos)
      << bad.out;
  EXPECT_FALSE(fs::exists(dir / "o"));
  auto reference = test::run_fugue("run " + (dir / "bad.json").string() + " --mpi --reference");
  EXPECT_EQ(reference.code, 2) << reference.out;
  EXPECT_NE(reference.out.find("--mpi runs on the ranks' devices; --reference runs one process"), std::string::npos)
      << reference.out;
}

// A rank failing mid-run (rank 1, whose rows hold the negative number faulty.negative refuses) stops
// every rank, the one waiting for it in a trade's MPI_Sendrecv or a reduction's MPI_Allgather too: the
// error names the rank and the statement, the exit code is 1, and no output is written. With no
// negative number the same programs split and give one device's results.
TEST(Ranks, ARankFailingMidRunStopsEveryRank) {
  require_mpirun();
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  test::write_failing_programs(dir.path(), seed);
  const std::string plugin = test::failing_plugin();
  for (const std::string program : {"trade.json", "combine.json"}) {
    SCOPED_TRACE(program);
    const std::string p = (dir / program).string();
    auto one = test::run_fugue(plugin + " run " + p + " --out " + (dir / ("one" + program)).string() +
                                   " --set x=" + (dir / "ok.npy").string(),
                               "FUGUE_PROGRAM_CACHE=off");
    ASSERT_EQ(one.code, 0) << one.out;
    auto two = run_ranks(2, p + " --stats --out " + (dir / ("two" + program)).string() + " --set x=" + (dir / "ok.npy").string(),
                         "FUGUE_TUNING=split_bytes=0,halo_depth=1", plugin + " run");
    ASSERT_EQ(two.code, 0) << two.out;
    EXPECT_NE(two.out.find("rows 32..63 (32,"), std::string::npos) << two.out;
    test::expect_same_npy_files(dir / ("two" + program), dir / ("one" + program), 0);
    const fs::path out = dir / ("bad" + program);
    auto bad = run_ranks(2, p + " --out " + out.string() + " --set x=" + (dir / "bad.npy").string(),
                         "FUGUE_TUNING=split_bytes=0,halo_depth=1", plugin + " run");
    EXPECT_EQ(bad.code, 1) << bad.out;
    EXPECT_NE(bad.out.find("rank 1 of 2: " + p + ":/body/0"), std::string::npos) << bad.out;
    EXPECT_NE(bad.out.find("faulty.negative refuses negative numbers"), std::string::npos) << bad.out;
    EXPECT_FALSE(fs::exists(out)) << "nothing written";
  }
}

// `fugue bench --mpi`: a split program's repetitions timed on rank 0, with each rank's rows and kernel
// time; a program that cannot be split is timed on rank 0 alone, as on one device.
TEST(Ranks, BenchTimesTheSplitOnRankZero) {
  require_mpirun();
  test::TempDir dir;
  const fs::path jacobi = test::source_root() / "examples" / "jacobi.json";
  auto split = run_ranks(2, jacobi.string() + " --repeat 3 --json -", "FUGUE_TUNING=split_bytes=0", "bench");
  ASSERT_EQ(split.code, 0) << split.out;
  EXPECT_NE(split.out.find("jacobi.json on 2 ranks, 3 repetitions (wall time on rank 0"), std::string::npos) << split.out;
  EXPECT_NE(split.out.find("wall ms: median"), std::string::npos) << split.out;
  EXPECT_NE(split.out.find("(rank 1) pthread"), std::string::npos) << split.out;
  EXPECT_NE(split.out.find("64 rows, kernels"), std::string::npos) << split.out;
  EXPECT_NE(split.out.find("\"ranks\":2"), std::string::npos) << split.out;
  EXPECT_NE(split.out.find("\"trades_per_run\":1"), std::string::npos) << split.out;
  test::write_text(dir / "reduce.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [4096], "from": {"random": {"seed": 1}}},
    "f": {"kind": "function", "params": ["a", "b"], "body": [{"op": "array.add", "out": ["c"], "in": ["a", "b"]}],
          "result": "c"}},
    "body": [{"op": "array.reduce", "out": ["s"], "in": ["f", "x"]}], "outputs": {"s": "s.npy"}})");
  auto whole = run_ranks(2, (dir / "reduce.json").string() + " --repeat 2", "FUGUE_TUNING=split_bytes=0", "bench");
  ASSERT_EQ(whole.code, 0) << whole.out;
  EXPECT_NE(whole.out.find("placement on 2 devices: all on 0:0 (rank 0)"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("2 repetitions (device time from OpenCL events)"), std::string::npos) << whole.out;
  EXPECT_EQ(whole.out.find("on 2 ranks"), std::string::npos) << whole.out;
}
