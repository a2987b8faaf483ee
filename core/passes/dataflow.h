// dataflow.h: basic blocks of a program body and the live sets of every block and operation.
// Blocks split at loops and branches (a loop has a header block, its body, which sets the loop
// variable, and an exit block that `break` also reaches); liveness is the classic backward iterative analysis over that graph, with
// each operation's sources (inputs) and sinks (outputs) as uses and definitions. What is live after
// the program ends: its outputs.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "program/program.h"

namespace fugue {

using SymbolSet = std::set<std::string>;

struct BasicBlock {
  int id = 0;
  std::string label;                      // "loop body /body/2", for explain
  std::vector<const Statement*> ops;      // operations, in program order
  SymbolSet tail_uses;                    // read after the ops (an `if` condition, a loop count)
  SymbolSet header_defs;                  // defined before the ops (the loop variable, in a loop body)
  std::vector<int> successors;
  SymbolSet live_in, live_out;
};

struct OpLiveness {
  int block = 0;
  SymbolSet live_in, live_out;
};

struct Dataflow {
  std::vector<BasicBlock> blocks;
  std::map<const Statement*, OpLiveness> ops;
  const OpLiveness& at(const Statement* op) const { return ops.at(op); }
};

// The symbols an operation reads (sources) and writes (sinks). Inline numbers are left out: they are
// baked into kernels and never stored; a value of a kind with storage stands for its parts.
SymbolSet op_sources(const Program& program, const Statement& op);
SymbolSet op_sinks(const Program& program, const Statement& op);

Dataflow analyze_dataflow(const Program& program);

// "{b, D, R, x}"
std::string set_string(const SymbolSet& set);

}  // namespace fugue
