#include "passes/placement.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "passes/planned_op.h"
#include "plugins/kind.h"
#include "program/dtype.h"

namespace fugue {

namespace {

enum class Role { Split, Whole };

// The shares of `rows` in proportion to `weights` (largest remainders), then every device at least one
// row, taken from the largest share (rows >= devices).
std::vector<DeviceShare> shares_of(int64_t rows, const std::vector<double>& weights) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> counts(weights.size(), 0);
  std::vector<std::pair<double, size_t>> remainders;
  int64_t given = 0;
  for (size_t d = 0; d < weights.size(); ++d) {
    const double exact = static_cast<double>(rows) * weights[d] / total;
    counts[d] = std::min<int64_t>(static_cast<int64_t>(std::floor(exact)), rows - given);
    given += counts[d];
    remainders.push_back({exact - static_cast<double>(counts[d]), d});
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < rows; ++i, ++given) ++counts[remainders[i % remainders.size()].second];
  for (auto& c : counts)
    if (c == 0) {
      --*std::max_element(counts.begin(), counts.end());
      c = 1;
    }
  std::vector<DeviceShare> out;
  int64_t first = 0;
  for (int64_t c : counts) {
    out.push_back({first, c});
    first += c;
  }
  return out;
}

double bytes_of(const Symbol& s) {
  if (s.compound()) {  // a kind with storage: its parts
    double bytes = 0;
    for (const ArrayType& part : s.part_types)
      bytes += static_cast<double>(shape_elements(part.shape)) * static_cast<double>(dtype_size(part.dtype));
    return bytes;
  }
  return static_cast<double>(shape_elements(s.shape)) * static_cast<double>(dtype_size(s.dtype));
}

// Whether the operation says operand k is cut by the rows of axis 0 (fugue_plan.split_rows).
bool marked_by_rows(const PlannedOp& op, size_t k) { return k < 64 && ((op.plan.split_rows >> k) & 1u); }

// An operand read around each element (ELEMENTWISE or TILE with a halo).
bool read_around(const abi::Partition& part) {
  return (part.kind == FUGUE_PARTITION_ELEMENTWISE || part.kind == FUGUE_PARTITION_TILE) && part.has_halo();
}

// The most rows beyond the element an operation reads any operand.
int64_t op_reach(const PlannedOp& op) {
  int64_t reach = 0;
  for (size_t k = 0; k < op.plan.partitions.size(); ++k)
    if (read_around(op.partition(k))) reach = std::max(reach, abi::Partition::at(op.partition(k).halo, 0));
  return reach;
}

// Whether the operation writes one of the scalars combined from the devices' parts.
bool writes_combined(const PlannedOp& op, const std::map<std::string, uint32_t>& combined) {
  for (size_t k = 0; k < op.statement->operands.size(); ++k)
    if (op.writes(k) && combined.count(op.statement->operands[k])) return true;
  return false;
}

// The most times a run goes through the body of `body`'s loops (counts known before the run: numbers
// and consts; a scalar's count is taken as once), capped so that the product stays finite.
double most_runs(const Program& program, const std::vector<Statement>& body) {
  double most = 1;
  for (const Statement& st : body) {
    if (st.kind == Statement::Kind::For) {
      double count = static_cast<double>(st.count_value);
      if (!st.count_symbol.empty()) {
        const Symbol& s = program.symbol(st.count_symbol);
        count = s.kind == SymbolKind::Const ? s.const_value : 1.0;
      }
      most = std::max(most, std::min(count, 1e12) * most_runs(program, st.body));
    } else if (st.kind == Statement::Kind::If) {
      most = std::max({most, most_runs(program, st.body), most_runs(program, st.else_body)});
    }
  }
  return most;
}

// The places in `body` (each once, loops or not) where the devices meet: every combined scalar or
// gathered array an operation writes.
double meeting_places(const std::vector<Statement>& body, const std::map<std::string, uint32_t>& combined,
                      const std::vector<std::string>& gathered) {
  double places = 0;
  for (const Statement& st : body) {
    if (st.kind == Statement::Kind::For || st.kind == Statement::Kind::If) {
      places += meeting_places(st.body, combined, gathered) + meeting_places(st.else_body, combined, gathered);
      continue;
    }
    if (st.kind != Statement::Kind::Op) continue;
    for (size_t k = 0; k < st.operands.size(); ++k)  // one meeting for each value written
      if (st.op->writes(k) && (combined.count(st.operands[k]) ||
                               std::find(gathered.begin(), gathered.end(), st.operands[k]) != gathered.end()))
        ++places;
  }
  return places;
}

// The matrix at whose entries' columns operand k is read alone (fugue_plan.read_at_columns, ABI 2.14): a
// kind with storage the operation's rows cut, whose kind gives its rows' columns; "" where none.
std::string columns_read(const PlannedOp& op, size_t k, const Program& program) {
  const size_t by = op.plan.columns_of;
  if (k >= 64 || !((op.plan.read_at_columns >> k) & 1u) || by >= op.statement->operands.size() || !marked_by_rows(op, by)) return {};
  const Symbol& matrix = program.symbol(op.statement->operands[by]);
  if (!matrix.compound() || !matrix.kind_object || !matrix.kind_object->gives_columns() || matrix.shape.size() < 2) return {};
  return matrix.name;
}

}  // namespace

bool is_gather_rows(const Operation& op) { return op.name() == kGatherRowsOp && op.plugin().name == kCorePlugin; }

int64_t kernel_reach(const FusedGroup& group) {
  int64_t reach = 0;
  for (const PlannedOp* op : group.ops) reach += op_reach(*op);
  return reach;
}

bool Placement::is_split(const std::string& symbol) const {
  return std::find(split_symbols.begin(), split_symbols.end(), symbol) != split_symbols.end();
}

RowSplit split_by_rows(const Program& program, const ExecutionPlan& plan) {
  RowSplit r;
  auto keep = [&](std::string why) {
    r.reason = std::move(why);
    r.split_symbols.clear();
    r.whole_symbols.clear();
    r.traded.clear();
    r.combined.clear();
    r.gathered.clear();
    r.whole_reads.clear();
    r.windows.clear();
    r.reach = 0;
    r.wrap = false;
    return r;
  };
  // Values some operation writes: only inputs may go whole to every device.
  std::set<std::string> written;
  for (const auto& op : plan.ops)
    for (size_t k = 0; k < op->statement->operands.size(); ++k)
      if (op->writes(k)) written.insert(op->statement->operands[k]);

  std::map<std::string, Role> role;
  std::optional<int64_t> rows;
  std::string first_split;  // the symbol that set `rows`, for messages
  std::set<std::string> traded;
  std::string ends_set_by;  // the first operation that read around its element along axis 0
  std::map<std::string, std::string> written_otherwise;  // scalars some non-reducing operation writes: by which
  // `name` (operand text `operand`) split by its rows: why not, or "".
  auto split_here = [&](const std::string& operand, const std::string& name, const Symbol& s) -> std::string {
    auto [it, fresh] = role.emplace(name, Role::Split);
    if (!fresh && it->second != Role::Split) return operand + " is split by rows here but read whole by an earlier operation";
    if (!rows) {
      rows = s.shape[0];
      first_split = name;
    } else if (s.shape[0] != *rows) {
      return operand + " has " + std::to_string(s.shape[0]) + " rows where '" + first_split + "' has " + std::to_string(*rows) +
             ": no one split of axis 0 serves both";
    }
    return {};
  };
  // A device's program split with gathered arrays (gather_rows.h): their whole copies, which the
  // gathers write and the operations reading the arrays whole read.
  std::set<std::string> copies, gathered;
  // Gathered arrays read only at the columns of split matrices' entries: those matrices; and those some
  // operation reads whole otherwise.
  std::map<std::string, std::set<std::string>> at_columns;
  std::set<std::string> read_everywhere;
  for (const auto& op_ptr : plan.ops)
    if (is_gather_rows(*op_ptr->statement->op)) copies.insert(op_ptr->statement->operands[1]);
  for (const auto& op_ptr : plan.ops) {
    const PlannedOp& op = *op_ptr;
    const Statement& st = *op.statement;
    if (is_gather_rows(*st.op)) {  // a device's program: its rows split, the copy whole
      if (std::string why = split_here(op.label + ": '" + st.operands[0] + "'", st.operands[0], program.symbol(st.operands[0]));
          !why.empty())
        return keep(why);
      role.emplace(st.operands[1], Role::Whole);
      continue;
    }
    // An operation that says which operands its rows cut (ABI 2.13 split_rows) reads the others whole,
    // whatever their partitions; a device-level one that does not say enqueues its kernels over whole operands.
    const bool says_rows = op.plan.split_rows != 0;
    if (op.level() == FUGUE_LEVEL_DEVICE && !says_rows)
      return keep(op.label + ": a device-level operation, which enqueues its own kernels over whole operands");
    // An operand every entry reads whole (BATCH with no entry axis) goes whole to every device only
    // where the operation's other arrays are all entries numbered from axis 0.
    bool entries_only = true;
    for (size_t k = 0; k < st.operands.size(); ++k) {
      const Symbol& s = program.symbol(st.operands[k]);
      const abi::Partition& part = op.partition(k);
      if (!s.compile_time() && s.kind == SymbolKind::Array && part.kind != FUGUE_PARTITION_BATCH)
        entries_only = false;
    }
    for (size_t k = 0; k < st.operands.size(); ++k) {
      const std::string& name = st.operands[k];
      const Symbol& s = program.symbol(name);
      if (s.compile_time()) continue;
      const std::string operand = op.label + ": '" + name + "'";
      const bool marked = marked_by_rows(op, k);
      if (says_rows && op.writes(k) && !marked)
        return keep(operand + " is written, but the operation does not say its rows cut it (fugue_plan.split_rows)");
      if (s.kind == SymbolKind::Plugin && marked && s.compound() && s.kind_object && s.kind_object->cuts_rows() &&
          !op.writes(k) && !written.count(name)) {
        // A value of a kind that gives its rows (a sparse matrix): each device holds its rows as a value
        // of its own.
        if (std::any_of(program.outputs.begin(), program.outputs.end(), [&](const OutputFile& o) { return o.symbol == name; }))
          return keep(operand + " is a " + s.kind_text() + " the program writes out whole");
        if (s.shape.empty()) return keep(operand + " has no rows");
        if (std::string why = split_here(operand, name, s); !why.empty()) return keep(why);
        continue;
      }
      if (s.kind == SymbolKind::Plugin || !s.part_of.empty())
        return keep(operand + " is " + (s.part_of.empty() ? "a " + s.kind_text() : "a part of '" + s.part_of + "'") + ", whose storage is not split by rows" +
                    (s.part_of.empty() && marked ? (s.kind_object && s.kind_object->cuts_rows() ? " where the device writes it"
                                                                                               : " (its kind gives no rows of its values: fugue_kind_desc.rows_type)")
                                                 : ""));
      if (s.kind == SymbolKind::Scalar) {
        if (!op.writes(k)) continue;
        if (op.plan.combine != FUGUE_COMBINE_UNSAID) {  // each device's part, combined
          if (op.plan.combine > FUGUE_COMBINE_ROOT_SUM_SQUARES)
            return keep(operand + ": the operation says its parts combine in an unknown way (fugue_plan.combine " +
                        std::to_string(op.plan.combine) + ")");
          const bool integer = !dtype_is_float(s.dtype) && !dtype_is_complex(s.dtype);
          if ((dtype_is_complex(s.dtype) && op.plan.combine != FUGUE_COMBINE_SUM) ||
              (integer && op.plan.combine == FUGUE_COMBINE_ROOT_SUM_SQUARES) || op.reads(k))
            return keep(operand + " is a " + std::string(dtype_name(s.dtype)) + " scalar the operation " +
                        (op.reads(k) ? "also reads" : "cannot combine that way") + ": its parts do not combine");
          auto [it, fresh] = r.combined.emplace(name, op.plan.combine);
          if (!fresh && it->second != op.plan.combine)
            return keep(operand + " is reduced here otherwise than by an earlier operation: one scalar, two ways "
                                  "to combine its parts");
          continue;
        }
        // From scalars alone (all alike on every device: read-only, combined, or computed so) every
        // device computes the same value.
        bool from_scalars = true;
        for (size_t j = 0; j < st.operands.size(); ++j) {
          const Symbol& other = program.symbol(st.operands[j]);
          if (!other.compile_time() && other.kind != SymbolKind::Scalar) from_scalars = false;
        }
        if (from_scalars) {
          written_otherwise.emplace(name, op.label);
          continue;
        }
        return keep(operand + " is a scalar the device writes by an operation that does not say how its results "
                              "over parts of the rows combine (fugue_plan.combine): one value over all rows");
      }
      if (s.runtime_axes) return keep(operand + " has a run-time length");
      if (s.counted_at_run_time()) return keep(operand + " has a count left to the run");
      const abi::Partition& part = op.partition(k);
      const bool around = read_around(part) && !s.shape.empty();
      const bool by_rows = !s.shape.empty() && (says_rows ? marked
                                                          : (part.kind == FUGUE_PARTITION_BATCH && part.batch_axis >= 0) ||
                                                                is_pointwise(part) || around);
      if (around) {
        // A device computes its own rows as the whole would only if the operation treats the ends of
        // its array (the device's rows and its neighbours') as it would the whole's.
        if (op.plan.ends != FUGUE_ENDS_INSIDE && op.plan.ends != FUGUE_ENDS_WRAP)
          return keep(operand + " is " + partition_text(part) +
                      ", read around each element by an operation that does not say how it treats the arrays' "
                      "ends (fugue_plan.ends): not split by rows");
        if (abi::Partition::at(part.halo, 0) > 0) {
          const bool wraps = op.plan.ends == FUGUE_ENDS_WRAP;
          if (ends_set_by.empty()) {
            ends_set_by = op.label;
            r.wrap = wraps;
          } else if (r.wrap != wraps) {
            return keep(operand + " is read around each element with reads past the ends " +
                        (wraps ? "wrapping around" : "staying inside") + ", where " + ends_set_by + " has them " +
                        (r.wrap ? "wrapping around" : "staying inside") +
                        ": a device at an end of the whole cannot hold rows for both");
          }
          traded.insert(name);
        }
      }
      if (by_rows) {
        if (std::string why = split_here(operand, name, s); !why.empty()) return keep(why);
        continue;
      }
      // Read whole by an operation that says its rows cut only the others, or an entry every entry reads.
      const bool shared_entry = says_rows || (part.kind == FUGUE_PARTITION_BATCH && part.batch_axis < 0 && entries_only);
      if (says_rows && copies.count(name)) {  // a gathered array's copy
        role.emplace(name, Role::Whole);
        continue;
      }
      if (says_rows && !op.writes(k) && written.count(name) && s.kind == SymbolKind::Array && !s.shape.empty()) {
        // Written on the device, read whole here: each device holds a copy gathered after every write.
        gathered.insert(name);
        r.whole_reads.insert({st.where, k});
        if (const std::string matrix = columns_read(op, k, program); !matrix.empty()) at_columns[name].insert(matrix);
        else read_everywhere.insert(name);
        continue;
      }
      if (says_rows && (op.writes(k) || written.count(name)))
        return keep(operand + " is read whole, and written on the device: every device would need the others' rows of it");
      if (!shared_entry || op.writes(k) || written.count(name))
        return keep(operand + " is " + partition_text(part) +
                    (shared_entry ? " and written on the device" : ", not entries or elements numbered from axis 0") +
                    ": not split by rows");
      auto [it, fresh] = role.emplace(name, Role::Whole);
      if (!fresh && it->second != Role::Whole)
        return keep(operand + " is read whole here but split by rows by an earlier operation");
    }
  }
  // Code that asks where it stands in the whole launch would find itself elsewhere in a device's rows.
  for (const auto& kernel : plan.kernels)
    for (const Statement* st : kernel.asks_position)
      // Saying how ends or parts behave says the position serves only to find the ends (of what it reads
      // around along axis 0) or to share out the work (of what it reduces to a combined scalar).
      if (!((plan.planned.at(st)->plan.ends != FUGUE_ENDS_UNSAID && op_reach(*plan.planned.at(st)) > 0) ||
            plan.planned.at(st)->plan.split_rows != 0 ||
            (plan.planned.at(st)->plan.combine != FUGUE_COMBINE_UNSAID && writes_combined(*plan.planned.at(st), r.combined))))
        return keep(plan.planned.at(st)->label +
                  ": its code asks where it stands in the whole launch (an element's index, an entry's number or "
                  "a work-group's), which a split by rows would move");
  // A combined scalar is combined after every kernel that stores it: another writer's value, alike on
  // every device already, would be combined again.
  for (const auto& [name, how] : r.combined)
    if (auto other = written_otherwise.find(name); other != written_otherwise.end())
      return keep(other->second + ": '" + name + "' is also a reduction's result, combined from the devices' parts; "
                  "written here too, it would be combined again");
  // A reduction's part must leave its kernel to be combined, and must not count rows twice.
  for (const FusedGroup& group : plan.groups)
    for (const PlannedOp* op : group.ops)
      for (size_t k = 0; k < op->statement->operands.size(); ++k) {
        const std::string& name = op->statement->operands[k];
        if (op->writes(k) && r.combined.count(name) && op->plan.combine != FUGUE_COMBINE_UNSAID &&
            !group.stored.count(name))
          return keep(op->label + ": '" + name + "' stays inside its kernel, where the devices' parts cannot be combined");
      }
  if (!r.combined.empty() && !traded.empty())
    return keep("'" + r.combined.begin()->first + "' is reduced over rows, and every device also holds some of its "
                "neighbours' rows (read around each element): the reduction would count them twice");
  for (const auto& [name, kind] : role)
    if (kind == Role::Split && program.symbol(name).compound() && !traded.empty())
      return keep("'" + name + "' is a " + program.symbol(name).kind_text() + " split by rows, and every device also holds some of "
                  "its neighbours' rows (read around each element): its rows would not match theirs");
  for (const std::string& name : gathered) {
    auto it = role.find(name);
    if (it == role.end() || it->second != Role::Split)
      return keep("'" + name + "' is read whole by an operation that says its rows, and written on the device otherwise "
                  "than by rows: no device has its rows to share");
    if (!traded.empty())
      return keep("'" + name + "' is read whole by an operation that says its rows, and every device also holds some of its "
                  "neighbours' rows (read around each element): its copy would be gathered from rows held twice");
    r.gathered.push_back(name);
    if (!read_everywhere.count(name)) r.windows[name].assign(at_columns[name].begin(), at_columns[name].end());
  }
  if (!rows) return keep("no operation splits an array by rows");
  if (*rows == 0) return keep("'" + first_split + "' has no rows");
  r.rows = *rows;
  r.first_split = first_split;
  r.traded.assign(traded.begin(), traded.end());
  if (!r.traded.empty())
    for (const FusedGroup& group : plan.groups) r.reach = std::max(r.reach, kernel_reach(group));
  for (const auto& [name, kind] : role) {
    if (kind == Role::Split) {
      r.split_symbols.push_back(name);
      r.split_bytes += bytes_of(program.symbol(name));
    } else {
      r.whole_symbols.push_back(name);
    }
  }
  return r;
}

std::string split_signature(const RowSplit& split, const ExecutionPlan& plan, bool trading) {
  std::string text = split.reason + "|";
  for (const auto& [name, how] : split.combined) text += name + ":" + std::to_string(how) + " ";
  text += "|";
  for (const auto& s : split.split_symbols) text += s + " ";
  text += "|";
  for (const auto& s : split.whole_symbols) text += s + " ";
  text += "|";
  for (const auto& s : split.gathered) text += s + " ";
  text += "|";
  // Where the devices meet, in turn: the kernels reading around each element (their operations and
  // reach: rows are traded by how deep each kernel reads), and the operations writing combined scalars
  // or gathering rows. Kernels between them may differ from device to device (a product planned for
  // rows of other lengths).
  if (trading)
    for (const FusedGroup& group : plan.groups) {
      if (const int64_t reach = kernel_reach(group); reach > 0) {
        for (const PlannedOp* op : group.ops) text += op->statement->where + " ";
        text += "reach " + std::to_string(reach) + "; ";
        continue;
      }
      for (const PlannedOp* op : group.ops)
        if (is_gather_rows(*op->statement->op) || writes_combined(*op, split.combined)) text += op->statement->where + "; ";
    }
  return text;
}

Placement place_program(const Program& program, const ExecutionPlan& plan, const std::vector<double>& weights,
                        double min_bytes, int64_t halo_depth, bool gather_rows) {
  Placement p;
  p.weights = weights;
  if (weights.size() < 2) {
    p.reason = "one device selected";
    return p;
  }
  RowSplit r = split_by_rows(program, plan);
  if (!r.reason.empty()) {
    p.reason = r.reason;
    return p;
  }
  for (const std::string& name : r.gathered)
    if (!r.windows.count(name) && !gather_rows) {
      p.reason = "'" + name + "' is written on the devices by rows and read whole by an operation that says its rows (not only "
                 "at the columns of a split matrix's entries): gathering every device's rows after each write costs more than the "
                 "split saves (FUGUE_TUNING=gather_rows=1 lifts this limit; the split bar still applies)";
      return p;
    }
  p.gather_always = gather_rows;
  p.rows = r.rows;
  p.split_bytes = r.split_bytes;
  if (p.rows < static_cast<int64_t>(weights.size())) {
    p.reason = "'" + r.first_split + "' has " + std::to_string(p.rows) + " rows, fewer than the " +
               std::to_string(weights.size()) + " devices";
    return p;
  }
  // Work in a loop is done as many times: a matrix read by a thousand products is worth splitting where
  // one product over it would not be.
  // Only where the devices run apart: trades, combinations and gathers cost as much again each time.
  const bool apart = r.reach == 0 && r.combined.empty() && r.gathered.empty();
  const double runs = apart ? most_runs(program, program.body) : 1.0;
  // Each meeting (a combination or a gather: every device waits for the slowest, through the host) cost
  // about as much as an H200 takes to stream 500 MB, measured on conjugate gradients: the split must save
  // that much again for each place the devices meet.
  const double meetings = std::max(1.0, meeting_places(program.body, r.combined, r.gathered));
  if (p.split_bytes * runs < min_bytes * meetings) {
    p.reason = "small: the arrays split by rows hold " + bytes_text(p.split_bytes) +
               (runs > 1 ? " (gone through at most " + std::to_string(static_cast<int64_t>(runs)) + " times a run)" : std::string()) +
               ", less than " + bytes_text(min_bytes) + " (FUGUE_TUNING=split_bytes=N)" +
               (meetings > 1 ? " for each of the " + std::to_string(static_cast<int64_t>(meetings)) +
                                   " places where the devices meet (a reduction combined, an array's rows gathered)"
                             : std::string()) +
               ", which is not worth a second device";
    return p;
  }
  std::vector<DeviceShare> shares = shares_of(p.rows, weights);
  if (r.reach > 0) {
    // Each device holds a few reaches of its neighbours' rows, so that they are traded once every few
    // kernels; never more than a share, since they come from the next device alone.
    int64_t narrowest = shares.front().count;
    for (const auto& share : shares) narrowest = std::min(narrowest, share.count);
    if (narrowest < r.reach) {
      p.reason = "a device's share would be " + std::to_string(narrowest) + " rows, fewer than the " +
                 std::to_string(r.reach) + " beyond its own a kernel reads ('" + r.traded.front() + "')";
      return p;
    }
    p.reach = r.reach;
    p.wrap = r.wrap;
    p.ghost_rows = std::min(narrowest, r.reach * std::max<int64_t>(halo_depth, 1));
    p.traded = std::move(r.traded);
    for (size_t d = 0; d < shares.size(); ++d) {
      shares[d].before = p.wrap || d > 0 ? p.ghost_rows : 0;
      shares[d].after = p.wrap || d + 1 < shares.size() ? p.ghost_rows : 0;
    }
  }
  p.split_symbols = std::move(r.split_symbols);
  p.whole_symbols = std::move(r.whole_symbols);
  p.combined = std::move(r.combined);
  p.gathered = std::move(r.gathered);
  p.whole_reads = std::move(r.whole_reads);
  p.windows = std::move(r.windows);
  p.shares = std::move(shares);
  p.split = true;
  return p;
}

std::string describe_placement(const Placement& placement, const std::vector<DeviceInfo>& devices,
                               const std::string& link) {
  std::string out = "placement on " + std::to_string(devices.size()) + " devices:";
  if (!placement.split) {
    out += " all on " + devices.front().id() + " " + devices.front().name + " (" + placement.reason + ")\n";
    return out;
  }
  out += " " + std::to_string(placement.rows) + " rows split by the devices' weights\n";
  for (size_t d = 0; d < devices.size(); ++d) {
    char weight[32];
    std::snprintf(weight, sizeof weight, "%.3g", placement.weights[d]);
    const DeviceShare& share = placement.shares[d];
    out += "  " + devices[d].id() + " " + devices[d].name + ": rows " + std::to_string(share.first) + ".." +
           std::to_string(share.first + share.count - 1) + " (" + std::to_string(share.count) + ", weight " + weight +
           ")\n";
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  out += "  split by rows (" + bytes_text(placement.split_bytes) + "): " + list(placement.split_symbols) + "\n";
  out += "  whole on every device: " + list(placement.whole_symbols) + "\n";
  if (!placement.combined.empty()) {
    std::string combined;
    for (const auto& [name, how] : placement.combined)
      combined += (combined.empty() ? "" : ", ") + name + " (" +
                  (how == FUGUE_COMBINE_SUM   ? "sum"
                   : how == FUGUE_COMBINE_MIN ? "least"
                   : how == FUGUE_COMBINE_MAX ? "largest"
                                              : "root of the sum of squares") +
                  ")";
    out += "  combined from every device's part, then handed back to each: " + combined + "\n";
  }
  for (const std::string& name : placement.gathered) {
    auto windows = placement.windows.find(name);
    out += "  gathered: every device holds a whole copy of " + name + ", read whole by the operations that say their rows; " +
           (windows == placement.windows.end()
                ? std::string("filled with every device's rows after each write\n")
                : "read only at the columns of " + list(windows->second) +
                      "'s entries, so after each write each device gets from the others only the rows its rows of them reach" +
                      (placement.gather_always ? "" : " (a run where those would cross more than 1/64 of the split's bytes stays on one device)") + "\n");
  }
  if (placement.ghost_rows == 0) {
    std::string between;
    if (!placement.combined.empty()) between = "the reductions' parts, after each kernel computing them";
    if (!placement.gathered.empty())
      between += std::string(between.empty() ? "" : "; ") + "the rows of " + list(placement.gathered) + ", after each write";
    out += std::string("  transfers: inputs written to each device's rows, outputs read back from them; ") +
           (between.empty() ? "none between devices\n" : "between devices, " + link + ": " + between + "\n");
    return out;
  }
  out += "  halo: kernels read up to " + std::to_string(placement.reach) + " rows beyond their own; each device also holds " +
         std::to_string(placement.ghost_rows) + " rows of each neighbour's" +
         (placement.wrap ? " (the first and last devices each other's: the reads wrap around)" : " (none past the ends of the whole)") +
         "\n";
  out += "  transfers: inputs written to each device's rows and the neighbours' rows it holds, outputs read back from its own; "
         "between devices, " + link + ": the neighbours' rows of " + list(placement.traded) +
         ", once a kernel would read them stale (every " + std::to_string(placement.ghost_rows / placement.reach) +
         " reaches)\n";
  return out;
}

}  // namespace fugue
