#include "runtime/gather_rows.h"

#include <fugue/sdk.hpp>

#include "errors.h"

namespace fugue {

namespace {

// core.gather_rows: rows (IN, the device's rows of the array) -> whole (OUT, the whole array). Device
// level: the split run's own exchange enqueues the transfers on the device's queue.
class GatherOperation final : public sdk::Operation {
 public:
  explicit GatherOperation(GatherRows gather) : gather_(std::move(gather)) {
    name = kGatherRowsOp;
    doc = "every device's rows of an array split across devices, into each device's whole copy of it";
    const uint32_t array = FUGUE_KIND_BIT(FUGUE_KIND_ARRAY);
    operands = {sdk::in("rows", array, FUGUE_DTYPES_ALL, "this device's rows"),
                sdk::out("whole", array, FUGUE_DTYPES_ALL, "the whole array")};
    attrs = {{"symbol", FUGUE_ATTR_STRING, true, 0, "", "the array gathered"},
             {"rows", FUGUE_ATTR_INT, true, 0, "", "the whole's rows"}};
  }
  void infer(const sdk::Call& call, std::vector<sdk::Type>& types) const override {
    const fugue_type& rows = call.operand(0u);
    std::vector<int64_t> shape(rows.shape, rows.shape + rows.rank);
    if (shape.empty()) throw sdk::InvalidArgument("operand rows: an array of rows, found a scalar");
    shape[0] = call.integer("rows");
    types[1] = sdk::Type(FUGUE_KIND_ARRAY, rows.dtype, shape);
  }
  sdk::Plan plan(const sdk::Call& call) const override {
    sdk::Plan p = sdk::elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = sdk::partition(FUGUE_PARTITION_NONE);
    return p;
  }
  void execute(const sdk::Call& call, const fugue_device_services& services) const override {
    gather_(call.attr("symbol").string, services, services.buffer(services.context, 0), services.buffer(services.context, 1));
  }
  fugue_cost cost(const sdk::Call& call) const override {
    fugue_cost c{};
    c.struct_size = sizeof c;
    c.bytes = 2.0 * static_cast<double>(sdk::elements(call.operand(1u))) * static_cast<double>(sdk::dtype_size(call.operand(1u).dtype));
    return c;
  }
  void reference(const sdk::Call&, fugue_host_array*) const override {
    throw sdk::Unsupported(std::string(kGatherRowsOp) + " runs only in a split across devices");
  }

 private:
  GatherRows gather_;
};

// The operation and the descriptor behind it, kept alive together.
struct GatherHolder {
  std::unique_ptr<GatherOperation> sdk_op;
  std::shared_ptr<const Operation> op;
};

void rewrite(std::vector<Statement>& body, const std::set<std::string>& gathered, int64_t whole_rows,
             const std::set<std::pair<std::string, size_t>>& whole_reads, const std::shared_ptr<const Operation>& gather) {
  for (size_t i = 0; i < body.size(); ++i) {
    Statement& st = body[i];
    if (st.kind == Statement::Kind::For || st.kind == Statement::Kind::If) {
      rewrite(st.body, gathered, whole_rows, whole_reads, gather);
      rewrite(st.else_body, gathered, whole_rows, whole_reads, gather);
      continue;
    }
    if (st.kind != Statement::Kind::Op) continue;
    std::vector<std::string> written;
    for (size_t k = 0; k < st.operands.size(); ++k) {
      if (!gathered.count(st.operands[k])) continue;
      if (st.op->writes(k)) written.push_back(st.operands[k]);
      else if (whole_reads.count({st.where, k})) st.operands[k] = whole_copy_name(st.operands[k]);
    }
    const std::string where = st.where;  // `st` moves when the gathers are inserted after it
    for (const std::string& name : written) {
      Statement g;
      g.kind = Statement::Kind::Op;
      g.where = where + " (rows of '" + name + "' gathered)";
      g.op = gather;
      g.operands = {name, whole_copy_name(name)};
      fugue_attr_value symbol{};
      symbol.struct_size = sizeof symbol;
      symbol.name = g.keep("symbol");
      symbol.type = FUGUE_ATTR_STRING;
      symbol.string = g.keep(name);
      fugue_attr_value rows{};
      rows.struct_size = sizeof rows;
      rows.name = g.keep("rows");
      rows.type = FUGUE_ATTR_INT;
      rows.integer = whole_rows;
      g.attrs = {symbol, rows};
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(++i), std::move(g));
    }
  }
}

}  // namespace

std::string whole_copy_name(const std::string& array) { return array + ".whole"; }

GatherWindows gather_windows(const Placement& placement, const std::function<RowWindow(const std::string& matrix, size_t device)>& columns) {
  GatherWindows all;
  for (const std::string& name : placement.gathered) {
    std::vector<RowWindow>& windows = all[name];
    auto matrices = placement.windows.find(name);
    for (size_t d = 0; d < placement.shares.size(); ++d) {
      const DeviceShare& share = placement.shares[d];
      if (matrices == placement.windows.end()) {
        windows.push_back({0, placement.rows});
        continue;
      }
      RowWindow w{share.first, share.first + share.count};  // its own rows, written there, always current
      for (const std::string& matrix : matrices->second) {
        const RowWindow c = columns(matrix, d);
        if (c.begin < 0 || c.end > placement.rows)
          throw DeviceError("internal: the rows of '" + matrix + "' reach columns " + std::to_string(c.begin) + ".." +
                            std::to_string(c.end - 1) + ", past the " + std::to_string(placement.rows) + " rows of '" + name + "'");
        if (c.rows() == 0) continue;
        w.begin = std::min(w.begin, c.begin);
        w.end = std::max(w.end, c.end);
      }
      windows.push_back(w);
    }
  }
  return all;
}

RowWindow rows_sent(const Placement& placement, const std::vector<RowWindow>& windows, size_t from, size_t to) {
  if (from == to) return {};
  const DeviceShare& own = placement.shares[from];
  const RowWindow sent{std::max(windows[to].begin, own.first), std::min(windows[to].end, own.first + own.count)};
  return sent.rows() > 0 ? sent : RowWindow{};
}

int64_t crossing_rows(const Placement& placement, const std::vector<RowWindow>& windows) {
  int64_t rows = 0;
  for (size_t from = 0; from < windows.size(); ++from)
    for (size_t to = 0; to < windows.size(); ++to) rows += rows_sent(placement, windows, from, to).rows();
  return rows;
}

std::string gathers_too_wide(const Program& program, const Placement& placement, const GatherWindows& windows) {
  double crossing = 0;
  std::string widest;
  int64_t widest_rows = -1;
  for (const auto& [name, w] : windows) {
    const Symbol& s = program.symbol(name);
    const int64_t rows = crossing_rows(placement, w);
    crossing += static_cast<double>(rows) * static_cast<double>(s.row_bytes());
    if (rows > widest_rows) widest = name, widest_rows = rows;
  }
  if (crossing * 64 <= placement.split_bytes) return {};
  return "the devices would exchange " + std::to_string(widest_rows) + " rows of '" + widest + "' at each gather (its readers' rows reach "
         "that far), more than 1/64 of the " + std::to_string(static_cast<int64_t>(placement.split_bytes)) +
         " bytes split: the split would cost more than it saves (FUGUE_TUNING=gather_rows=1 lifts this limit)";
}

std::shared_ptr<const Operation> gather_rows_operation(GatherRows gather) {
  auto holder = std::make_shared<GatherHolder>();
  holder->sdk_op = std::make_unique<GatherOperation>(std::move(gather));
  auto core = std::make_shared<LoadedPlugin>();
  core->name = kCorePlugin;
  core->file = "(the core)";
  holder->op = std::make_shared<Operation>(core, holder->sdk_op->descriptor());
  // The Operation refers to the descriptor, owned by the holder: keep the holder alive with it.
  return std::shared_ptr<const Operation>(holder, holder->op.get());
}

void add_gathers(Program& program, const std::vector<std::string>& gathered, int64_t whole_rows,
                 const std::set<std::pair<std::string, size_t>>& whole_reads, const std::shared_ptr<const Operation>& gather) {
  for (const std::string& name : gathered) {
    const Symbol& rows = program.symbol(name);
    Symbol copy = rows;
    copy.name = whole_copy_name(name);
    copy.shape[0] = whole_rows;
    copy.where = rows.where + " (its whole copy on each device)";
    if (!program.symbols.emplace(copy.name, std::move(copy)).second)
      throw DeviceError("internal: the program already has a symbol '" + whole_copy_name(name) + "'");
  }
  rewrite(program.body, std::set<std::string>(gathered.begin(), gathered.end()), whole_rows, whole_reads, gather);
}

}  // namespace fugue
