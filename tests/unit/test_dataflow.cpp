// Basic blocks and live sets: the Jacobi solver's match Table 5.2 of Anderson's thesis (Hindemith);
// loops, back edges, branches and break.
#include <gtest/gtest.h>

#include "passes/dataflow.h"
#include "load/program_loader.h"
#include "test_support.h"

using namespace fugue;

namespace {

Program load(const std::string& text) {
  test::TempDir dir;
  test::write_text(dir / "p.json", text);
  return load_program(dir / "p.json", test::bundled_plugins());
}

const Statement* op_at(const Program& p, std::initializer_list<size_t> path) {
  const std::vector<Statement>* body = &p.body;
  const Statement* st = nullptr;
  for (size_t i : path) {
    st = &(*body)[i];
    body = &st->body;
  }
  return st;
}

}  // namespace

TEST(Dataflow, JacobiLiveSetsMatchTheThesis) {
  Program p = load_program(test::source_root() / "examples" / "jacobi.json", test::bundled_plugins());
  Dataflow flow = analyze_dataflow(p);
  // Table 5.2: the five operations of the loop body.
  const std::vector<std::pair<SymbolSet, SymbolSet>> expected = {
      {{"b", "D", "R", "x"}, {"b", "D", "f5", "R"}},
      {{"b", "D", "f5", "R"}, {"b", "f6", "D", "R"}},
      {{"b", "f6", "D", "R"}, {"b", "D", "R", "r"}},
      {{"b", "D", "R", "r"}, {"b", "D", "R", "f7"}},
      {{"b", "D", "R", "f7"}, {"b", "D", "R", "x"}},
  };
  for (size_t k = 0; k < expected.size(); ++k) {
    const OpLiveness& l = flow.at(op_at(p, {0, k}));
    EXPECT_EQ(l.live_in, expected[k].first) << "op " << k << " live-in " << set_string(l.live_in);
    EXPECT_EQ(l.live_out, expected[k].second) << "op " << k << " live-out " << set_string(l.live_out);
  }
  // Blocks: entry, loop header, body (with the back edge to the header), exit, end.
  ASSERT_EQ(flow.blocks.size(), 5u);
  const BasicBlock& body = flow.blocks[flow.at(op_at(p, {0, 0})).block];
  EXPECT_EQ(body.ops.size(), 5u);
  ASSERT_EQ(body.successors.size(), 1u);
  EXPECT_NE(flow.blocks[body.successors[0]].label.find("loop header"), std::string::npos);
  EXPECT_EQ(flow.blocks.back().live_in, (SymbolSet{"x"}));
}

TEST(Dataflow, ValuesCarriedAroundALoopStayLive) {
  // y is written late in the body and read early in the next iteration: live around the back edge.
  Program p = load(R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"zeros": {}}},
    "y": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"zeros": {}}}},
    "body": [{"for": "i", "count": 3, "body": [
      {"op": "array.add", "out": ["t"], "in": ["x", "y"]},
      {"op": "array.mul", "out": ["y"], "in": ["t", 2]}]}],
    "outputs": {"t": "t.npy"}})");
  Dataflow flow = analyze_dataflow(p);
  EXPECT_TRUE(flow.at(op_at(p, {0, 1})).live_out.count("y"));
  EXPECT_TRUE(flow.at(op_at(p, {0, 1})).live_out.count("t")) << "t is an output, live after the loop";
  EXPECT_FALSE(flow.at(op_at(p, {0, 0})).live_in.count("t"));
}

TEST(Dataflow, BreakAndBranchesReachTheLoopExit) {
  // s is read after the loop; the `if` reads m; the branch that breaks skips the rest of the body.
  Program p = load(R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [8], "from": {"random": {"seed": 1}}}},
    "body": [
      {"for": "i", "count": 5, "body": [
        {"op": "array.mul", "out": ["x"], "in": ["x", 0.5]},
        {"op": "array.max", "out": ["m"], "in": ["x"]},
        {"if": {"lt": ["m", 0.1]}, "then": [{"break": true}]},
        {"op": "array.sum", "out": ["s"], "in": ["x"]}]},
      {"op": "array.mul", "out": ["t"], "in": ["x", 2]}],
    "outputs": {"t": "t.npy"}})");
  Dataflow flow = analyze_dataflow(p);
  // m is read by the if: live after max.
  EXPECT_TRUE(flow.at(op_at(p, {0, 1})).live_out.count("m"));
  // x is live after the loop body's first op: read by max, sum and after the loop.
  EXPECT_TRUE(flow.at(op_at(p, {0, 0})).live_out.count("x"));
  // s is never read: dead right after the sum.
  EXPECT_FALSE(flow.at(op_at(p, {0, 3})).live_out.count("s"));
  // The loop exit is reached both from the header and from the break.
  int exits = 0;
  for (const auto& b : flow.blocks)
    if (b.label.find("loop exit") != std::string::npos)
      for (const auto& other : flow.blocks)
        for (int s : other.successors) exits += s == b.id;
  EXPECT_EQ(exits, 2);
}

TEST(Dataflow, TheLoopVariableIsSetInTheBodyAndLiveAfterTheLoop) {
  Program p = load(R"({"fugue": 1, "symbols": {},
    "body": [{"for": "i", "count": 3, "body": [{"op": "array.copy", "out": ["x"], "in": ["i"]}]},
             {"op": "array.add", "out": ["last"], "in": ["i", 100]}],
    "outputs": {"last": "last.npy"}})");
  Dataflow flow = analyze_dataflow(p);
  // i is read after the loop: live after the copy, and around the back edge.
  EXPECT_TRUE(flow.at(op_at(p, {0, 0})).live_out.count("i"));
  const BasicBlock& body = flow.blocks[flow.at(op_at(p, {0, 0})).block];
  EXPECT_TRUE(body.header_defs.count("i"));
}
