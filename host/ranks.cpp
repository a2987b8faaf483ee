#include "ranks.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>

#include "errors.h"
#include "io/initial_values.h"
#include "program/dtype.h"
#include "runtime/gather_rows.h"

namespace fugue {

namespace {

// MPI calls fail by returning a code (the communicator's handler is set to return, not abort).
void check(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw DeviceError("MPI failed " + what + ": " + std::string(text, static_cast<size_t>(length)));
}

int as_count(size_t n, const std::string& what) {
  if (n > static_cast<size_t>(INT_MAX))
    throw DeviceError(what + ": " + std::to_string(n) + " is more than one MPI message holds (" + std::to_string(INT_MAX) +
                      "); split over more ranks");
  return static_cast<int>(n);
}

// An MPI datatype of one row of `s` (counts in rows stay within int where bytes would not).
struct RowType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  explicit RowType(const Symbol& s) {
    check(MPI_Type_contiguous(as_count(s.row_bytes(), "a row of '" + s.name + "'"), MPI_BYTE, &type), "making a row type");
    check(MPI_Type_commit(&type), "making a row type");
  }
  ~RowType() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
  RowType(const RowType&) = delete;
  RowType& operator=(const RowType&) = delete;
};

// Broadcasts rank 0's bytes, a gibibyte at a time.
void broadcast(std::vector<uint8_t>& bytes, const std::string& what) {
  const size_t chunk = size_t{1} << 30;
  for (size_t at = 0; at < bytes.size(); at += chunk) {
    const size_t n = std::min(chunk, bytes.size() - at);
    check(MPI_Bcast(bytes.data() + at, static_cast<int>(n), MPI_BYTE, 0, MPI_COMM_WORLD), "broadcasting " + what);
  }
}

// Sends `bytes` to rank `to` (or receives them from `from`), a gibibyte at a time.
void send_bytes(const void* data, size_t bytes, int to, const std::string& what) {
  const size_t chunk = size_t{1} << 30;
  for (size_t at = 0; at < bytes; at += chunk)
    check(MPI_Send(static_cast<const uint8_t*>(data) + at, static_cast<int>(std::min(chunk, bytes - at)), MPI_BYTE, to, 3, MPI_COMM_WORLD),
          "sending " + what);
}
void receive_bytes(void* data, size_t bytes, int from, const std::string& what) {
  const size_t chunk = size_t{1} << 30;
  for (size_t at = 0; at < bytes; at += chunk)
    check(MPI_Recv(static_cast<uint8_t*>(data) + at, static_cast<int>(std::min(chunk, bytes - at)), MPI_BYTE, from, 3, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE),
          "receiving " + what);
}

// A kind's rows as numbers: dtype, rank, shape, metadata's bytes, parts, then each part's dtype, rank
// and shape; the metadata and the parts' bytes follow as messages of their own.
std::vector<int64_t> type_header(const DeclaredType& type) {
  std::vector<int64_t> h = {static_cast<int64_t>(type.dtype), static_cast<int64_t>(type.shape.size())};
  h.insert(h.end(), type.shape.begin(), type.shape.end());
  h.push_back(static_cast<int64_t>(type.metadata.size()));
  h.push_back(static_cast<int64_t>(type.parts.size()));
  for (const ArrayType& p : type.parts) {
    h.push_back(static_cast<int64_t>(p.dtype));
    h.push_back(static_cast<int64_t>(p.shape.size()));
    h.insert(h.end(), p.shape.begin(), p.shape.end());
  }
  return h;
}

DeclaredType type_from_header(const std::vector<int64_t>& h) {
  size_t at = 0;
  auto next = [&] {
    if (at >= h.size()) throw DeviceError("internal: a kind's rows came with a short header");
    return h[at++];
  };
  DeclaredType type;
  type.dtype = static_cast<DType>(next());
  for (int64_t axes = next(); axes > 0; --axes) type.shape.push_back(next());
  type.metadata.resize(static_cast<size_t>(next()));
  for (int64_t parts = next(); parts > 0; --parts) {
    ArrayType p;
    p.dtype = static_cast<DType>(next());
    for (int64_t axes = next(); axes > 0; --axes) p.shape.push_back(next());
    type.parts.push_back(std::move(p));
  }
  return type;
}

}  // namespace

Ranks::Ranks() {
  int started = 0;
  MPI_Initialized(&started);
  if (!started && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) throw DeviceError("MPI could not start (MPI_Init failed)");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm host;  // the ranks sharing this host's memory, hence its devices
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host), "finding the host's ranks");
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_free(&host);
}

Ranks::~Ranks() {
  int finished = 0;
  MPI_Finalized(&finished);
  if (!finished) MPI_Finalize();
}

std::vector<double> Ranks::gather_all(double value) const {
  std::vector<double> all(static_cast<size_t>(size_));
  check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD), "gathering the devices' weights");
  return all;
}

bool Ranks::all_same(const std::string& text) const {
  const unsigned long long mine = std::hash<std::string>{}(text);
  std::vector<unsigned long long> all(static_cast<size_t>(size_));
  check(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD),
        "comparing the ranks' plans");
  for (unsigned long long h : all)
    if (h != mine) return false;
  return true;
}

std::vector<std::string> Ranks::gather_texts(const std::string& text) const {
  const size_t n = static_cast<size_t>(size_);
  const int mine = as_count(text.size(), "a rank's text");
  std::vector<int> lengths(n), starts(n);
  check(MPI_Allgather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD), "gathering the ranks' devices");
  size_t total = 0;
  for (size_t d = 0; d < n; ++d) {
    starts[d] = as_count(total, "the ranks' texts");
    total += static_cast<size_t>(lengths[d]);
  }
  std::string all(total, '\0');
  check(MPI_Allgatherv(text.data(), mine, MPI_CHAR, all.data(), lengths.data(), starts.data(), MPI_CHAR, MPI_COMM_WORLD),
        "gathering the ranks' devices");
  std::vector<std::string> out;
  for (size_t d = 0; d < n; ++d) out.push_back(all.substr(static_cast<size_t>(starts[d]), static_cast<size_t>(lengths[d])));
  return out;
}

void Ranks::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "waiting for every rank"); }

void Ranks::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; should it, nothing more runs here
}

RankRun::RankRun(const Ranks& ranks, const Program& whole, const Placement& placement, DeviceSlot device,
                 const std::function<Program()>& parse, PlanOptions options)
    : ranks_(ranks), whole_(whole), placement_(placement), slot_(device) {
  if (!placement_.split || placement_.shares.size() != static_cast<size_t>(ranks_.size()))
    throw DeviceError("internal: a run over " + std::to_string(ranks_.size()) + " ranks needs a placement split over them");
  const DeviceShare& share = placement_.shares[static_cast<size_t>(ranks_.rank())];
  program_ = std::make_unique<Program>(parse());
  std::vector<std::pair<std::string, HostArray>> kind_rows;
  for (const auto& name : placement_.split_symbols) {
    if (whole_.symbol(name).compound()) kind_rows.emplace_back(name, hand_out_kind_rows(name));
    else program_->symbols.at(name).shape[0] = share.held();
  }
  windows_ = gather_windows(placement_, [&](const std::string& matrix, size_t d) { return columns_.at(matrix).at(d); });
  if (!placement_.gather_always)
    if (std::string why = gathers_too_wide(whole_, placement_, windows_); !why.empty()) throw SplitDeclined(why);
  if (!placement_.gathered.empty())
    add_gathers(*program_, placement_.gathered, placement_.rows, placement_.whole_reads,
                gather_rows_operation([this](const std::string& symbol, const fugue_device_services& services, cl_mem rows,
                                             cl_mem whole) { gather(symbol, services, rows, whole); }));
  executor_ = std::make_unique<Executor>(*program_, *slot_.device, *slot_.cache, *slot_.profiler, options);
  for (auto& [name, rows] : kind_rows) give_rows(*executor_, program_->symbol(name), std::move(rows));
  if (placement_.ghost_rows > 0)
    executor_->hold_neighbour_rows({std::set<std::string>(placement_.split_symbols.begin(), placement_.split_symbols.end()),
                                    placement_.ghost_rows, [this](const std::string& symbol) { trade(symbol); }});
  if (!placement_.combined.empty()) {
    std::set<std::string> combined;
    for (const auto& entry : placement_.combined) combined.insert(entry.first);
    executor_->combine_scalars({combined, [this](const std::string& symbol) { combine(symbol); }});
  }
}

HostArray RankRun::hand_out_kind_rows(const std::string& name) {
  const Symbol& s = whole_.symbol(name);
  const std::string what = "the rows of '" + name + "'";
  DeclaredType type;
  HostArray mine;
  const size_t n = static_cast<size_t>(ranks_.size());
  bool columns_read = false;  // some gathered array is read at its columns: every rank needs every rank's
  for (const auto& [array, matrices] : placement_.windows)
    columns_read = columns_read || std::count(matrices.begin(), matrices.end(), name) > 0;
  std::vector<int64_t> columns(2 * n);
  if (ranks_.rank() == 0) {
    const HostArray whole = whole_value(whole_, s);  // read or generated once, as on one device
    for (size_t r = 0; columns_read && r < n; ++r) {
      const DeviceShare& share = placement_.shares[r];
      std::tie(columns[2 * r], columns[2 * r + 1]) = s.kind_object->columns(whole, s.metadata, share.first, share.count);
    }
    for (int r = ranks_.size() - 1; r >= 0; --r) {  // rank 0's own last: it keeps them
      const DeviceShare& share = placement_.shares[static_cast<size_t>(r)];
      HostArray rows = kind_rows(s, whole, share.first, share.count, type);
      if (r == 0) {
        mine = std::move(rows);
        break;
      }
      const std::vector<int64_t> header = type_header(type);
      const int64_t length = static_cast<int64_t>(header.size());
      send_bytes(&length, sizeof length, r, what);
      send_bytes(header.data(), header.size() * sizeof(int64_t), r, what);
      send_bytes(type.metadata.data(), type.metadata.size(), r, what);
      for (const HostArray& part : rows.parts) send_bytes(part.bytes.data(), part.bytes.size(), r, what);
    }
  } else {
    int64_t length = 0;
    receive_bytes(&length, sizeof length, 0, what);
    if (length < 0 || length > 4096) throw DeviceError("internal: " + what + " came with a header of " + std::to_string(length));
    std::vector<int64_t> header(static_cast<size_t>(length));
    receive_bytes(header.data(), header.size() * sizeof(int64_t), 0, what);
    type = type_from_header(header);
    receive_bytes(type.metadata.data(), type.metadata.size(), 0, what);
    mine.dtype = type.dtype;
    mine.shape = type.shape;
    mine.kind_name = s.kind_name;
    for (const ArrayType& p : type.parts) {
      mine.parts.emplace_back(p.dtype, p.shape);
      receive_bytes(mine.parts.back().bytes.data(), mine.parts.back().bytes.size(), 0, what);
    }
  }
  if (columns_read) {
    check(MPI_Bcast(columns.data(), static_cast<int>(columns.size()), MPI_INT64_T, 0, MPI_COMM_WORLD), "sending the columns of the rows of '" + name + "'");
    for (size_t r = 0; r < n; ++r) columns_[name].push_back({columns[2 * r], columns[2 * r + 1]});
  }
  take_rows_type(*program_, name, type);
  return mine;
}

void RankRun::gather(const std::string& symbol, const fugue_device_services& services, cl_mem rows, cl_mem whole) {
  const Symbol& s = whole_.symbol(symbol);
  const size_t n = static_cast<size_t>(ranks_.size());
  const DeviceShare& me = placement_.shares[static_cast<size_t>(ranks_.rank())];
  const size_t row = s.row_bytes();
  auto ok = [&](cl_int status, const char* what) {
    if (status != CL_SUCCESS) throw DeviceError(cl_error_message(std::string(what) + " the rows of '" + symbol + "'", status));
  };
  const size_t rank = static_cast<size_t>(ranks_.rank());
  const std::vector<RowWindow>& windows = windows_.at(symbol);
  // What this rank sends each rank (its own rows in their windows) and gets from each, packed rank by rank.
  std::vector<int> send_counts(n), send_starts(n), get_counts(n), get_starts(n);
  int sending = 0, getting = 0;
  const std::string what = "rows of '" + symbol + "'";
  for (size_t d = 0; d < n; ++d) {
    send_counts[d] = as_count(static_cast<size_t>(rows_sent(placement_, windows, rank, d).rows()), what);
    get_counts[d] = as_count(static_cast<size_t>(rows_sent(placement_, windows, d, rank).rows()), what);
    send_starts[d] = sending;
    get_starts[d] = getting;
    sending = as_count(static_cast<size_t>(sending) + static_cast<size_t>(send_counts[d]), what);
    getting = as_count(static_cast<size_t>(getting) + static_cast<size_t>(get_counts[d]), what);
  }
  std::vector<uint8_t> sent(row * static_cast<size_t>(sending)), got(row * static_cast<size_t>(getting));
  for (size_t d = 0; d < n; ++d)
    if (send_counts[d] > 0)
      ok(clEnqueueReadBuffer(services.queue, rows, CL_FALSE, row * static_cast<size_t>(rows_sent(placement_, windows, rank, d).begin - me.first),
                             row * static_cast<size_t>(send_counts[d]), sent.data() + row * static_cast<size_t>(send_starts[d]), 0, nullptr,
                             nullptr),
         "reading");
  ok(clFinish(services.queue), "reading");
  RowType type(s);
  check(MPI_Alltoallv(sent.data(), send_counts.data(), send_starts.data(), type.type, got.data(), get_counts.data(), get_starts.data(),
                      type.type, MPI_COMM_WORLD),
        "exchanging the rows of '" + symbol + "'");
  // Its own rows stay on the device; the others' go where they stand in the whole.
  ok(clEnqueueCopyBuffer(services.queue, rows, whole, 0, row * static_cast<size_t>(me.first), row * static_cast<size_t>(me.count), 0, nullptr,
                         nullptr),
     "copying");
  for (size_t d = 0; d < n; ++d)
    if (get_counts[d] > 0)
      ok(clEnqueueWriteBuffer(services.queue, whole, CL_FALSE, row * static_cast<size_t>(rows_sent(placement_, windows, d, rank).begin),
                              row * static_cast<size_t>(get_counts[d]), got.data() + row * static_cast<size_t>(get_starts[d]), 0, nullptr,
                              nullptr),
         "writing");
  ok(clFinish(services.queue), "gathering");
  ++gathers_;
}

void RankRun::combine(const std::string& symbol) {
  const HostArray part = executor_->read(symbol);
  const size_t n = static_cast<size_t>(ranks_.size());
  const int count = as_count(part.bytes.size(), "a part of '" + symbol + "'");
  std::vector<uint8_t> all(part.bytes.size() * n);
  check(MPI_Allgather(part.bytes.data(), count, MPI_BYTE, all.data(), count, MPI_BYTE, MPI_COMM_WORLD),
        "gathering the parts of '" + symbol + "'");
  std::vector<HostArray> parts(n, part);
  for (size_t d = 0; d < n; ++d)
    std::copy(all.begin() + static_cast<std::ptrdiff_t>(d * part.bytes.size()),
              all.begin() + static_cast<std::ptrdiff_t>((d + 1) * part.bytes.size()), parts[d].bytes.begin());
  executor_->write_value(symbol, combine_parts(parts, placement_.combined.at(symbol)));
  ++combinations_;
}

void RankRun::prepare() {
  executor_->prepare();
  // Every rank must split alike and, trading rows, run the same kernels of the same reach in turn.
  const RowSplit here = split_by_rows(*program_, executor_->plan());
  std::string otherwise;  // this rank's rows planned so that the split does not hold
  if (!plans_as_placed(here, placement_))
    otherwise = "rank " + std::to_string(ranks_.rank()) + " plans its rows of the program differently" +
                (here.reason.empty() ? std::string() : " (" + here.reason + ")");
  // Collective, so that every rank declines alike.
  const bool same = ranks_.all_same(split_signature(
      here, executor_->plan(), placement_.ghost_rows > 0 || !placement_.combined.empty() || !placement_.gathered.empty()));
  for (const std::string& why : ranks_.gather_texts(otherwise))
    if (!why.empty()) throw SplitDeclined(why + ", so the split would not compute the same");
  if (!same)
    throw SplitDeclined("the ranks plan their rows of the program differently (their devices or their rows differ), so "
                        "the split would not compute the same");
}

void RankRun::initialize() {
  if (!given_) {
    const int rank = ranks_.rank();
    const size_t n = static_cast<size_t>(ranks_.size());
    for (const auto& [name, s] : whole_.symbols) {
      if (s.compile_time() || s.source.kind == SymbolSource::Kind::None) continue;
      // A kind with storage split by rows (its parts too): handed out when the ranks' programs were made.
      if ((s.compound() && placement_.is_split(name)) || (!s.part_of.empty() && placement_.is_split(s.part_of))) continue;
      HostArray all;
      if (rank == 0) {
        all = initial_value(s);  // read or generated once, as on one device
        if (all.shape != s.shape)
          throw DeviceError(s.where + ": the initial value is " + all.type_text() + ", the symbol " + shape_string(s.shape));
      }
      const Symbol& mine = program_->symbol(name);
      HostArray part;
      part.dtype = mine.dtype;
      part.shape = mine.shape;
      if (!placement_.is_split(name)) {  // whole on every rank
        if (rank == 0) part = std::move(all);
        else part.bytes.resize(static_cast<size_t>(shape_elements(mine.shape)) * dtype_size(mine.dtype));
        broadcast(part.bytes, "'" + name + "'");
        executor_->give_initial(name, std::move(part));
        continue;
      }
      if (std::count(placement_.gathered.begin(), placement_.gathered.end(), name) > 0) {  // its whole copy starts whole
        HostArray copy = rank == 0 ? all : HostArray(s.dtype, s.shape);
        broadcast(copy.bytes, "'" + name + "'");
        executor_->give_initial(whole_copy_name(name), std::move(copy));
      }
      // Each rank's rows and the neighbours' rows it holds, laid end to end on rank 0.
      RowType row(s);
      std::vector<int> counts(n), starts(n);
      std::vector<uint8_t> laid;
      int64_t at = 0;
      for (size_t d = 0; d < n; ++d) {
        const DeviceShare& share = placement_.shares[d];
        counts[d] = as_count(static_cast<size_t>(share.held()), "rows of '" + name + "'");
        starts[d] = as_count(static_cast<size_t>(at), "rows of '" + name + "'");
        at += share.held();
        if (rank == 0) {
          const HostArray rows = rows_of(all, share.first - share.before, share.held());
          laid.insert(laid.end(), rows.bytes.begin(), rows.bytes.end());
        }
      }
      all = HostArray();
      part.bytes.resize(static_cast<size_t>(shape_elements(mine.shape)) * dtype_size(mine.dtype));
      check(MPI_Scatterv(laid.data(), counts.data(), starts.data(), row.type, part.bytes.data(),
                         counts[static_cast<size_t>(rank)], row.type, 0, MPI_COMM_WORLD),
            "handing out the rows of '" + name + "'");
      executor_->give_initial(name, std::move(part));
    }
    given_ = true;
  }
  executor_->initialize();
}

void RankRun::run() {
  trades_ = 0;
  combinations_ = 0;
  gathers_ = 0;
  executor_->run();
}

void RankRun::trade(const std::string& symbol) {
  const int r = ranks_.rank(), n = ranks_.size();
  const auto& shares = placement_.shares;
  const DeviceShare& me = shares[static_cast<size_t>(r)];
  const int64_t ghost = placement_.ghost_rows;
  const int previous = (r + n - 1) % n, next = (r + 1) % n;
  // This rank's first rows go to the previous rank if it holds rows after its own; its last rows to
  // the next one if it holds rows before its own (at the ends of the whole only where reads wrap).
  const bool first_wanted = shares[static_cast<size_t>(previous)].after > 0 && (r > 0 || placement_.wrap);
  const bool last_wanted = shares[static_cast<size_t>(next)].before > 0 && (r + 1 < n || placement_.wrap);
  const std::vector<uint8_t> first = first_wanted ? executor_->read_rows(symbol, me.before, ghost) : std::vector<uint8_t>{};
  const std::vector<uint8_t> last =
      last_wanted ? executor_->read_rows(symbol, me.before + me.count - ghost, ghost) : std::vector<uint8_t>{};
  const size_t bytes = program_->symbol(symbol).row_bytes() * static_cast<size_t>(ghost);
  const int count = as_count(bytes, "the neighbours' rows of '" + symbol + "'");
  std::vector<uint8_t> after(me.after > 0 ? bytes : 0), before(me.before > 0 ? bytes : 0);
  check(MPI_Sendrecv(first.data(), first_wanted ? count : 0, MPI_BYTE, first_wanted ? previous : MPI_PROC_NULL, 1,
                     after.data(), me.after > 0 ? count : 0, MPI_BYTE, me.after > 0 ? next : MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
        "trading the neighbours' rows of '" + symbol + "'");
  check(MPI_Sendrecv(last.data(), last_wanted ? count : 0, MPI_BYTE, last_wanted ? next : MPI_PROC_NULL, 2,
                     before.data(), me.before > 0 ? count : 0, MPI_BYTE, me.before > 0 ? previous : MPI_PROC_NULL, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "trading the neighbours' rows of '" + symbol + "'");
  if (me.before > 0) executor_->write_rows(symbol, 0, before);
  if (me.after > 0) executor_->write_rows(symbol, me.before + me.count, after);
  ++trades_;
}

HostArray RankRun::gather(const std::string& symbol) {
  const int rank = ranks_.rank();
  if (!placement_.is_split(symbol)) return rank == 0 ? executor_->read(symbol) : HostArray();
  const Symbol& s = whole_.symbol(symbol);
  const DeviceShare& me = placement_.shares[static_cast<size_t>(rank)];
  HostArray mine = executor_->read(symbol);
  if (me.before > 0 || me.after > 0) mine = rows_of(mine, me.before, me.count);  // its own rows
  const size_t n = static_cast<size_t>(ranks_.size());
  std::vector<int> counts(n), starts(n);
  for (size_t d = 0; d < n; ++d) {
    counts[d] = as_count(static_cast<size_t>(placement_.shares[d].count), "rows of '" + symbol + "'");
    starts[d] = as_count(static_cast<size_t>(placement_.shares[d].first), "rows of '" + symbol + "'");
  }
  HostArray out;
  if (rank == 0) {
    out.dtype = s.dtype;
    out.shape = s.shape;
    out.bytes.resize(static_cast<size_t>(shape_elements(s.shape)) * dtype_size(s.dtype));
  }
  RowType row(s);
  check(MPI_Gatherv(mine.bytes.data(), counts[static_cast<size_t>(rank)], row.type, out.bytes.data(), counts.data(),
                    starts.data(), row.type, 0, MPI_COMM_WORLD),
        "gathering the rows of '" + symbol + "'");
  return out;
}

}  // namespace fugue
