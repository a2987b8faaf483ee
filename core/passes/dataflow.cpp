#include "passes/dataflow.h"

#include <algorithm>

namespace fugue {

namespace {

std::string pointer_of(const Statement& st) {
  auto colon = st.where.rfind(':');
  return colon == std::string::npos ? st.where : st.where.substr(colon + 1);
}

// Builds the block graph of a body. Each construct gets its own blocks so that control flow only
// ever enters a block at its top and leaves at its bottom.
class GraphBuilder {
 public:
  GraphBuilder(const Program& program, Dataflow& flow) : program_(program), flow_(flow) {}

  int add(std::string label) {
    BasicBlock b;
    b.id = static_cast<int>(flow_.blocks.size());
    b.label = std::move(label);
    flow_.blocks.push_back(std::move(b));
    return flow_.blocks.back().id;
  }
  void edge(int from, int to) {
    if (from < 0) return;
    auto& s = flow_.blocks[from].successors;
    if (std::find(s.begin(), s.end(), to) == s.end()) s.push_back(to);
  }
  void use_symbol(int block, const std::string& symbol) {
    if (symbol.empty()) return;
    auto it = program_.symbols.find(symbol);
    if (it != program_.symbols.end() && !it->second.inline_number) flow_.blocks[block].tail_uses.insert(symbol);
  }

  // Appends `body` starting in block `current`; returns the block control reaches at the end of the
  // body (-1 when every path ends in `break`). `loop_exit`: where `break` goes.
  int sequence(const std::vector<Statement>& body, int current, int loop_exit) {
    for (const auto& st : body) {
      switch (st.kind) {
        case Statement::Kind::Op:
          if (current < 0) current = add("unreachable after break at " + pointer_of(st));
          // An op after a block's condition reads starts a new block: tail uses come last.
          if (!flow_.blocks[current].tail_uses.empty()) {
            int next = add("after " + pointer_of(st));
            edge(current, next);
            current = next;
          }
          flow_.blocks[current].ops.push_back(&st);
          break;
        case Statement::Kind::Break:
          if (current >= 0) edge(current, loop_exit);
          current = -1;
          break;
        case Statement::Kind::If: {
          if (current < 0) current = add("unreachable after break");
          use_symbol(current, st.lhs_symbol);
          use_symbol(current, st.rhs_symbol);
          int then_block = add("then " + pointer_of(st));
          int else_block = add("else " + pointer_of(st));
          edge(current, then_block);
          edge(current, else_block);
          int then_end = sequence(st.body, then_block, loop_exit);
          int else_end = sequence(st.else_body, else_block, loop_exit);
          int join = add("after if " + pointer_of(st));
          edge(then_end, join);
          edge(else_end, join);
          current = join;
          break;
        }
        case Statement::Kind::For: {
          if (current < 0) current = add("unreachable after break");
          use_symbol(current, st.count_symbol);  // read once, when the loop starts
          int header = add("loop header " + pointer_of(st));
          int body_block = add("loop body " + pointer_of(st));
          // The loop variable is set on entry to the body, not on the way out: after the loop it keeps
          // the last iteration's value.
          flow_.blocks[body_block].header_defs.insert(st.variable);
          int exit = add("loop exit " + pointer_of(st));
          edge(current, header);
          edge(header, body_block);
          edge(header, exit);
          int body_end = sequence(st.body, body_block, exit);
          edge(body_end, header);  // the back edge
          current = exit;
          break;
        }
      }
    }
    return current;
  }

 private:
  const Program& program_;
  Dataflow& flow_;
};

SymbolSet minus(SymbolSet a, const SymbolSet& b) {
  for (const auto& s : b) a.erase(s);
  return a;
}

}  // namespace

SymbolSet op_sources(const Program& program, const Statement& op) {
  SymbolSet out;
  for (uint32_t i : op.op->inputs()) {
    const Symbol& s = program.symbol(op.operands[i]);
    if (s.inline_number) continue;
    for (const auto& held : program.storage_of(s.name)) out.insert(held);  // a compound value: its parts
  }
  return out;
}

SymbolSet op_sinks(const Program& program, const Statement& op) {
  SymbolSet out;
  for (uint32_t o : op.op->outputs())
    for (const auto& held : program.storage_of(op.operands[o])) out.insert(held);
  return out;
}

Dataflow analyze_dataflow(const Program& program) {
  Dataflow flow;
  GraphBuilder builder(program, flow);
  int entry = builder.add("entry");
  int last = builder.sequence(program.body, entry, -1);
  int end = builder.add("end");
  builder.edge(last, end);
  for (const auto& out : program.outputs)
    for (const auto& held : program.storage_of(out.symbol)) flow.blocks[end].tail_uses.insert(held);

  // Per block: uses before any definition (gen) and definitions (kill), from the bottom up.
  const size_t n = flow.blocks.size();
  std::vector<SymbolSet> gen(n), kill(n);
  for (size_t b = 0; b < n; ++b) {
    const auto& block = flow.blocks[b];
    SymbolSet live = block.tail_uses, defs;
    for (auto it = block.ops.rbegin(); it != block.ops.rend(); ++it) {
      SymbolSet sinks = op_sinks(program, **it);
      for (const auto& s : sinks) live.erase(s);
      for (const auto& s : op_sources(program, **it)) live.insert(s);
      defs.insert(sinks.begin(), sinks.end());
    }
    live = minus(live, block.header_defs);
    defs.insert(block.header_defs.begin(), block.header_defs.end());
    gen[b] = live;
    kill[b] = defs;
  }
  // live_out(b) = U live_in(successor); live_in(b) = gen(b) U (live_out(b) - kill(b)); to a fixpoint.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = n; k-- > 0;) {
      auto& block = flow.blocks[k];
      SymbolSet out;
      for (int s : block.successors) out.insert(flow.blocks[s].live_in.begin(), flow.blocks[s].live_in.end());
      SymbolSet in = gen[k];
      for (const auto& s : minus(out, kill[k])) in.insert(s);
      if (in != block.live_in || out != block.live_out) {
        block.live_in = std::move(in);
        block.live_out = std::move(out);
        changed = true;
      }
    }
  }
  // Per operation, walking each block backwards from its live-out.
  for (const auto& block : flow.blocks) {
    SymbolSet live = block.live_out;
    live.insert(block.tail_uses.begin(), block.tail_uses.end());
    for (auto it = block.ops.rbegin(); it != block.ops.rend(); ++it) {
      OpLiveness& l = flow.ops[*it];
      l.block = block.id;
      l.live_out = live;
      for (const auto& s : op_sinks(program, **it)) live.erase(s);
      for (const auto& s : op_sources(program, **it)) live.insert(s);
      l.live_in = live;
    }
  }
  return flow;
}

std::string set_string(const SymbolSet& set) {
  // Case-insensitive order reads naturally ("b, D, R, x" as in the literature).
  std::vector<std::string> v(set.begin(), set.end());
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
    std::string la = a, lb = b;
    for (auto& c : la) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (auto& c : lb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return la != lb ? la < lb : a < b;
  });
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + "}";
}

}  // namespace fugue
