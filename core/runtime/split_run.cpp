#include "runtime/split_run.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <complex>
#include <condition_variable>
#include <cstring>
#include <type_traits>
#include <mutex>
#include <set>
#include <thread>

#include "errors.h"
#include "io/initial_values.h"
#include "runtime/gather_rows.h"

namespace fugue {

double measured_weight(Device& device) {
  static std::mutex mutex;
  // Devices of one model (platform, name, driver, compute units) share one measurement: the same
  // throughput, not two samples of a noisy clock.
  static std::map<std::string, double> measured;
  const std::string key = device.info.platform_name + "|" + device.info.name + "|" + device.info.driver_version + "|" +
                          std::to_string(device.info.compute_units);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = measured.find(key); it != measured.end()) return it->second;
  }
  const size_t bytes = static_cast<size_t>(std::min<uint64_t>(64ull << 20, device.info.max_allocation / 2));
  double best = std::numeric_limits<double>::infinity();
  try {
    cl::Buffer from(device.context, CL_MEM_READ_WRITE, bytes), to(device.context, CL_MEM_READ_WRITE, bytes);
    const cl_uchar zero = 0;
    device.queue.enqueueFillBuffer(from, zero, 0, bytes);
    device.queue.enqueueFillBuffer(to, zero, 0, bytes);
    for (int trial = 0; trial < 4; ++trial) {  // the first one touches the pages: not counted
      cl::Event done;
      device.queue.enqueueCopyBuffer(from, to, 0, 0, bytes, nullptr, &done);
      done.wait();
      const double seconds = static_cast<double>(done.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                                 done.getProfilingInfo<CL_PROFILING_COMMAND_START>()) * 1e-9;
      if (trial > 0 && seconds > 0) best = std::min(best, seconds);
    }
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("measuring the copy bandwidth of " + device.info.name + " (" + e.what() + ")",
                                       e.err()));
  }
  const double weight = std::isfinite(best) ? 2.0 * static_cast<double>(bytes) / best * 1e-9 : 0.0;  // GB/s
  std::lock_guard<std::mutex> lock(mutex);
  measured[key] = weight;
  return weight;
}

HostArray rows_of(const HostArray& array, int64_t first, int64_t count) {
  HostArray out;  // not zero-filled first: the rows are copied in
  out.dtype = array.dtype;
  out.shape = array.shape;
  out.shape[0] = count;
  const int64_t rows = array.shape[0];
  const size_t row = rows > 0 ? array.bytes.size() / static_cast<size_t>(rows) : 0;
  if (first >= 0 && first + count <= rows) {
    out.bytes.assign(array.bytes.begin() + static_cast<std::ptrdiff_t>(row * first),
                     array.bytes.begin() + static_cast<std::ptrdiff_t>(row * (first + count)));
    return out;
  }
  out.bytes.reserve(row * static_cast<size_t>(count));
  for (int64_t r = first; r < first + count; ++r) {
    const int64_t at = ((r % rows) + rows) % rows;
    out.bytes.insert(out.bytes.end(), array.bytes.begin() + static_cast<std::ptrdiff_t>(row * at),
                     array.bytes.begin() + static_cast<std::ptrdiff_t>(row * (at + 1)));
  }
  return out;
}

bool plans_as_placed(const RowSplit& here, const Placement& placement) {
  std::vector<std::string> whole = placement.whole_symbols;  // as split_by_rows lists them: by name
  for (const std::string& name : placement.gathered) whole.push_back(whole_copy_name(name));
  std::sort(whole.begin(), whole.end());
  return here.reason.empty() && here.split_symbols == placement.split_symbols && here.whole_symbols == whole &&
         here.gathered.empty() && here.reach <= placement.ghost_rows;
}

HostArray whole_value(const Program& program, const Symbol& s) {
  if (s.source.kind != SymbolSource::Kind::None) return initial_value(s);
  HostArray whole;
  whole.dtype = s.dtype;
  whole.shape = s.shape;
  whole.kind_name = s.kind_name;
  for (const std::string& part : s.parts) {
    const Symbol& p = program.symbol(part);
    if (p.source.kind == SymbolSource::Kind::None)
      throw DeviceError("internal: '" + s.name + "' is split by rows, but its part '" + part + "' has no initial value");
    whole.parts.push_back(initial_value(p));
  }
  check_given_parts(s, [&](const std::string& part) -> const HostArray* {
    const auto at = std::find(s.parts.begin(), s.parts.end(), part);
    return at == s.parts.end() ? nullptr : &whole.parts[static_cast<size_t>(at - s.parts.begin())];
  });
  return whole;
}

HostArray kind_rows(const Symbol& s, const HostArray& whole, int64_t first, int64_t count, DeclaredType& type) {
  if (!s.compound() || !s.kind_object || !s.kind_object->cuts_rows())
    throw DeviceError("internal: '" + s.name + "' is split by rows, but its kind gives no rows of its values");
  return s.kind_object->rows(whole, s.metadata, first, count, type);  // as many parts as the kind names (read_declared)
}

void take_rows_type(Program& program, const std::string& symbol, const DeclaredType& type) {
  Symbol& s = program.symbols.at(symbol);
  if (type.parts.size() != s.parts.size())
    throw DeviceError("internal: the rows of '" + symbol + "' have " + std::to_string(type.parts.size()) + " parts, the symbol " +
                      std::to_string(s.parts.size()));
  s.shape = type.shape;
  s.metadata = type.metadata;
  s.part_types = type.parts;
  for (size_t k = 0; k < s.parts.size(); ++k) {
    Symbol& part = program.symbols.at(s.parts[k]);
    part.dtype = type.parts[k].dtype;
    part.shape = type.parts[k].shape;
  }
}

void give_rows(Executor& executor, const Symbol& s, HostArray value) {
  if (s.source.kind != SymbolSource::Kind::None) {
    executor.give_initial(s.name, std::move(value));
    return;
  }
  for (size_t k = 0; k < s.parts.size(); ++k) executor.give_initial(s.parts[k], std::move(value.parts[k]));
}

HostArray combine_parts(const std::vector<HostArray>& parts, uint32_t how) {
  HostArray out = parts.front();
  for (const HostArray& part : parts)
    if (part.dtype != out.dtype || part.bytes.size() != out.bytes.size())
      throw DeviceError("internal: the devices' parts of a reduction differ in type");
  visit_dtype(out.dtype, [&](auto zero) {
    using T = decltype(zero);
    const size_t n = out.bytes.size() / sizeof(T);
    auto at = [](const HostArray& a, size_t i) {
      T v;
      std::memcpy(&v, a.bytes.data() + i * sizeof(T), sizeof(T));
      return v;
    };
    for (size_t i = 0; i < n; ++i) {
      T whole{};
      if constexpr (is_complex_v<T>) {
        if (how != FUGUE_COMBINE_SUM) throw DeviceError("internal: complex parts combine by sums only");
        std::complex<double> sum = 0;
        for (const HostArray& part : parts) sum += std::complex<double>(at(part, i));
        whole = T(sum);
      } else if constexpr (std::is_floating_point_v<T>) {
        double acc = how == FUGUE_COMBINE_MIN || how == FUGUE_COMBINE_MAX ? static_cast<double>(at(parts.front(), i)) : 0.0;
        for (const HostArray& part : parts) {
          const double v = static_cast<double>(at(part, i));
          if (how == FUGUE_COMBINE_SUM) acc += v;
          else if (how == FUGUE_COMBINE_ROOT_SUM_SQUARES) acc += v * v;
          else acc = how == FUGUE_COMBINE_MIN ? std::fmin(acc, v) : std::fmax(acc, v);  // NaN ignored, as the devices' fmin
        }
        whole = static_cast<T>(how == FUGUE_COMBINE_ROOT_SUM_SQUARES ? std::sqrt(acc) : acc);
      } else {
        using U = std::make_unsigned_t<T>;
        U sum = 0;  // wraps around as the dtype's own arithmetic on the device
        T extreme = at(parts.front(), i);
        for (const HostArray& part : parts) {
          const T v = at(part, i);
          sum = static_cast<U>(sum + static_cast<U>(v));
          extreme = how == FUGUE_COMBINE_MIN ? std::min(extreme, v) : std::max(extreme, v);
        }
        if (how == FUGUE_COMBINE_ROOT_SUM_SQUARES) throw DeviceError("internal: integer parts have no norm");
        whole = how == FUGUE_COMBINE_SUM ? static_cast<T>(sum) : extreme;
      }
      std::memcpy(out.bytes.data() + i * sizeof(T), &whole, sizeof(T));
    }
    return 0;
  });
  return out;
}

// The devices' meeting point for trades: each publishes its first and last own rows, then waits until
// every device has. Two sets of slots serve trades in turn, so one wait per trade is enough: a device
// publishes into a set again only after every device has reached the next trade, by which time all
// have copied from it. A device that fails abandons the trade, and every device waiting is released.
class SplitRun::RowTrade {
 public:
  struct Slot {
    std::string symbol;
    std::vector<uint8_t> first, last;  // the device's first and last own rows
    std::vector<std::vector<uint8_t>> pieces;  // a gather: its rows each device wants, by device
  };

  explicit RowTrade(size_t devices)
      : sets_{std::vector<Slot>(devices), std::vector<Slot>(devices)}, turns_(devices, 0), left_(devices, false) {}

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fill(turns_.begin(), turns_.end(), 0);
    std::fill(left_.begin(), left_.end(), false);
    arrived_ = 0;
    abandoned_ = false;
    trades_ = 0;
  }
  // Device d has finished its run: a device still waiting for it at a meeting it never came to waits
  // no more (their plans must have differed).
  void leave(size_t d) {
    std::lock_guard<std::mutex> lock(mutex_);
    left_[d] = true;
    changed_.notify_all();
  }
  void abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
    changed_.notify_all();
  }
  // Device d publishes its rows of `symbol`, waits for the others, and gets every device's slot (the
  // set stays as it is until d trades again).
  const std::vector<Slot>& publish(size_t d, const std::string& symbol, std::vector<uint8_t> first,
                                   std::vector<uint8_t> last) {
    return publish(d, Slot{symbol, std::move(first), std::move(last), {}});
  }
  const std::vector<Slot>& publish(size_t d, Slot slot) {
    const std::string symbol = slot.symbol;
    std::unique_lock<std::mutex> lock(mutex_);
    const uint64_t turn = turns_[d]++;
    std::vector<Slot>& set = sets_[turn % 2];
    set[d] = std::move(slot);
    if (++arrived_ == set.size()) {
      arrived_ = 0;
      ++trades_;
      changed_.notify_all();
    } else {
      auto deserted = [&] {
        for (size_t e = 0; e < left_.size(); ++e)
          if (left_[e] && turns_[e] <= turn) return true;
        return false;
      };
      changed_.wait(lock, [&] { return trades_ > static_cast<int64_t>(turn) || abandoned_ || deserted(); });
      if (trades_ <= static_cast<int64_t>(turn) && !abandoned_)
        throw DeviceError("a device finished its run while the others waited to exchange '" + symbol +
                          "' with it: their plans ran differently; run the program on one device");
    }
    if (abandoned_) throw DeviceError("another device failed while the devices exchanged values of '" + symbol + "'");
    for (const Slot& other : set)
      if (other.symbol != symbol)
        throw DeviceError("internal: devices traded rows of '" + other.symbol + "' and '" + symbol +
                          "' at once (their plans differ)");
    return set;
  }
  int64_t trades() {
    std::lock_guard<std::mutex> lock(mutex_);
    return trades_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> sets_[2];
  std::vector<uint64_t> turns_;
  std::vector<bool> left_;  // devices whose run has finished
  size_t arrived_ = 0;
  bool abandoned_ = false;
  int64_t trades_ = 0;
};

SplitRun::SplitRun(const Program& whole, const Placement& placement, std::vector<DeviceSlot> devices,
                   const std::function<Program()>& parse, PlanOptions options)
    : whole_(whole), placement_(placement), slots_(std::move(devices)) {
  if (!placement_.split || placement_.shares.size() != slots_.size())
    throw DeviceError("internal: a split run needs a split placement for its " + std::to_string(slots_.size()) +
                      " devices");
  // Kinds with storage (sparse matrices) split by rows: read whole once, each device given its rows as a
  // value of its own, of a type of its own.
  std::map<std::string, HostArray> whole_kinds;
  for (const auto& name : placement_.split_symbols)
    if (whole_.symbol(name).compound()) whole_kinds.emplace(name, whole_value(whole_, whole_.symbol(name)));
  // Each device's window of the gathered arrays, from the columns its rows of the matrices reach.
  windows_ = gather_windows(placement_, [&](const std::string& matrix, size_t d) {
    const Symbol& m = whole_.symbol(matrix);
    const DeviceShare& share = placement_.shares[d];
    const auto [begin, end] = m.kind_object->columns(whole_kinds.at(matrix), m.metadata, share.first, share.count);
    return RowWindow{begin, end};
  });
  if (!placement_.gather_always)
    if (std::string why = gathers_too_wide(whole_, placement_, windows_); !why.empty()) throw SplitDeclined(why);
  for (size_t d = 0; d < slots_.size(); ++d) {
    auto program = std::make_unique<Program>(parse());
    const DeviceShare& share = placement_.shares[d];
    std::vector<std::pair<std::string, HostArray>> kind_rows;
    for (const auto& name : placement_.split_symbols) {
      if (auto whole = whole_kinds.find(name); whole != whole_kinds.end()) {
        if (share.before > 0 || share.after > 0)
          throw DeviceError("internal: '" + name + "' is split by rows with its neighbours' rows");
        DeclaredType type;
        kind_rows.emplace_back(name, fugue::kind_rows(whole_.symbol(name), whole->second, share.first, share.count, type));
        take_rows_type(*program, name, type);
      } else {
        program->symbols.at(name).shape[0] = share.held();
      }
    }
    if (!placement_.gathered.empty())
      add_gathers(*program, placement_.gathered, placement_.rows, placement_.whole_reads,
                  gather_rows_operation([this, d](const std::string& symbol, const fugue_device_services& services, cl_mem rows,
                                                  cl_mem whole) { gather(d, symbol, services, rows, whole); }));
    executors_.push_back(std::make_unique<Executor>(*program, *slots_[d].device, *slots_[d].cache, *slots_[d].profiler, options));
    for (auto& [name, rows] : kind_rows) give_rows(*executors_.back(), program->symbol(name), std::move(rows));
    programs_.push_back(std::move(program));
  }
  if (placement_.ghost_rows > 0 || !placement_.combined.empty() || !placement_.gathered.empty())
    meeting_ = std::make_unique<RowTrade>(slots_.size());
  if (placement_.ghost_rows > 0) {
    const std::set<std::string> split(placement_.split_symbols.begin(), placement_.split_symbols.end());
    for (size_t d = 0; d < executors_.size(); ++d)
      executors_[d]->hold_neighbour_rows({split, placement_.ghost_rows, [this, d](const std::string& symbol) { trade(d, symbol); }});
  }
  if (!placement_.combined.empty()) {
    std::set<std::string> combined;
    for (const auto& entry : placement_.combined) combined.insert(entry.first);
    for (size_t d = 0; d < executors_.size(); ++d)
      executors_[d]->combine_scalars({combined, [this, d](const std::string& symbol) { combine(d, symbol); }});
  }
}

void SplitRun::combine(size_t d, const std::string& symbol) {
  Executor& executor = *executors_[d];
  HostArray part = executor.read(symbol);
  const auto& set = meeting_->publish(d, symbol, std::move(part.bytes), {});
  std::vector<HostArray> parts;
  for (const auto& slot : set) {
    HostArray p;
    p.dtype = part.dtype;
    p.shape = part.shape;
    p.bytes = slot.first;
    parts.push_back(std::move(p));
  }
  executor.write_value(symbol, combine_parts(parts, placement_.combined.at(symbol)));
  if (d == 0) ++combinations_;
}

void SplitRun::gather(size_t d, const std::string& symbol, const fugue_device_services& services, cl_mem rows, cl_mem whole) {
  const size_t row = whole_.symbol(symbol).row_bytes();
  const DeviceShare& share = placement_.shares[d];
  const std::vector<RowWindow>& windows = windows_.at(symbol);
  auto ok = [&](cl_int status, const char* what) {
    if (status != CL_SUCCESS)
      throw DeviceError(cl_error_message(std::string(what) + " the rows of '" + symbol + "' on " + slots_[d].device->info.name, status));
  };
  // Its own rows each other device's window holds, read together; then the meeting.
  RowTrade::Slot slot{symbol, {}, {}, std::vector<std::vector<uint8_t>>(windows.size())};
  for (size_t e = 0; e < windows.size(); ++e) {
    const RowWindow sent = rows_sent(placement_, windows, d, e);
    if (sent.rows() == 0) continue;
    slot.pieces[e].resize(row * static_cast<size_t>(sent.rows()));
    ok(clEnqueueReadBuffer(services.queue, rows, CL_FALSE, row * static_cast<size_t>(sent.begin - share.first), slot.pieces[e].size(),
                           slot.pieces[e].data(), 0, nullptr, nullptr),
       "reading");
  }
  ok(clFinish(services.queue), "reading");
  const auto& set = meeting_->publish(d, std::move(slot));
  // Its own rows stay on the device; the others' it wants are written where they stand in the whole (the
  // set is left as it is until this device meets again, after the writes have finished).
  ok(clEnqueueCopyBuffer(services.queue, rows, whole, 0, row * static_cast<size_t>(share.first), row * static_cast<size_t>(share.count), 0,
                         nullptr, nullptr),
     "copying");
  for (size_t e = 0; e < set.size(); ++e) {
    const RowWindow got = rows_sent(placement_, windows, e, d);
    if (got.rows() > 0 && (set[e].pieces.size() != set.size() || set[e].pieces[d].size() != row * static_cast<size_t>(got.rows())))
      throw DeviceError("internal: device " + std::to_string(e) + " sent other rows of '" + symbol + "' than device " + std::to_string(d) +
                        " wants");
  }
  for (size_t e = 0; e < set.size(); ++e) {
    const RowWindow got = rows_sent(placement_, windows, e, d);
    if (got.rows() == 0) continue;
    ok(clEnqueueWriteBuffer(services.queue, whole, CL_FALSE, row * static_cast<size_t>(got.begin), set[e].pieces[d].size(),
                            set[e].pieces[d].data(), 0, nullptr, nullptr),
       "writing");
  }
  // No wait here: the queue runs in order, so the writes finish before anything after them reads the copy,
  // and before this device's next meeting, which waits for its queue first (a gather's reads, a
  // combination's blocking read; trades, which may read nothing, never share a split with gathers), so
  // before any device can publish into this set again. A run ends with its queue finished, a failing
  // device finishes it too.
  ok(clFlush(services.queue), "gathering");
  if (d == 0) ++gathers_;
}

void SplitRun::trade(size_t d, const std::string& symbol) {
  const DeviceShare& share = placement_.shares[d];
  const int64_t ghost = placement_.ghost_rows;
  const size_t n = executors_.size();
  Executor& executor = *executors_[d];
  // Only what a neighbour holds: the first rows if the previous device (around the ends: the last)
  // holds rows after its own, the last rows if the next one holds rows before its own.
  const size_t previous = (d + n - 1) % n, next = (d + 1) % n;
  const bool first_wanted = placement_.shares[previous].after > 0 && (d > 0 || placement_.wrap);
  const bool last_wanted = placement_.shares[next].before > 0 && (d + 1 < n || placement_.wrap);
  const auto& set = meeting_->publish(d, symbol, first_wanted ? executor.read_rows(symbol, share.before, ghost) : std::vector<uint8_t>{},
                                   last_wanted ? executor.read_rows(symbol, share.before + share.count - ghost, ghost)
                                               : std::vector<uint8_t>{});
  if (share.before > 0) executor.write_rows(symbol, 0, set[previous].last);
  if (share.after > 0) executor.write_rows(symbol, share.before + share.count, set[next].first);
}

int64_t SplitRun::trades() const { return meeting_ ? meeting_->trades() - combinations_ - gathers_ : 0; }

int64_t SplitRun::combinations() const { return combinations_; }

SplitRun::~SplitRun() = default;

void SplitRun::prepare() {
  for (size_t d = 0; d < executors_.size(); ++d) {
    executors_[d]->prepare();
    // Each device planned its own rows, for its own kind of device: the split must still hold there.
    const RowSplit here = split_by_rows(*programs_[d], executors_[d]->plan());
    // With neighbours' rows, the devices trade them together, kernel by kernel: their kernels must
    // be the same ones, reaching as far.
    const RowSplit first = split_by_rows(*programs_.front(), executors_.front()->plan());
    const bool meets = placement_.ghost_rows > 0 || !placement_.combined.empty() || !placement_.gathered.empty();
    if (!plans_as_placed(here, placement_) ||
        split_signature(here, executors_[d]->plan(), meets) != split_signature(first, executors_.front()->plan(), meets))
      throw SplitDeclined("device " + slots_[d].device->info.id() + " (" + slots_[d].device->info.name +
                          ") plans its rows of the program differently from the first device" +
                          (here.reason.empty() ? std::string() : " (" + here.reason + ")") +
                          ", so the split would not compute the same");
  }
}

void SplitRun::initialize() {
  if (!given_) {
    for (const auto& name : placement_.split_symbols) {
      const Symbol& s = whole_.symbol(name);
      // Computed on the device, or a kind with storage (given its rows when the devices' programs were made).
      if (s.source.kind == SymbolSource::Kind::None || s.compound()) continue;
      const HostArray all = initial_value(s);  // read or generated once, as on one device
      if (all.shape != s.shape)
        throw DeviceError(s.where + ": the initial value is " + all.type_text() + ", the symbol " + shape_string(s.shape));
      const bool gathered = std::count(placement_.gathered.begin(), placement_.gathered.end(), name) > 0;
      for (size_t d = 0; d < executors_.size(); ++d) {
        const DeviceShare& share = placement_.shares[d];
        executors_[d]->give_initial(name, rows_of(all, share.first - share.before, share.held()));
        if (gathered) executors_[d]->give_initial(whole_copy_name(name), all);  // its whole copy starts whole
      }
    }
    given_ = true;
  }
  for (auto& e : executors_) e->initialize();
}

namespace {
// A device's failure, saying which device failed (a bad program's error stays one: it still exits 2).
std::exception_ptr on_device(const DeviceInfo& device, std::exception_ptr failure) {
  const std::string where = "device " + device.id() + " (" + device.name + "): ";
  try {
    std::rethrow_exception(failure);
  } catch (const UserError& e) {
    return std::make_exception_ptr(UserError(where + e.what()));
  } catch (const DeviceError& e) {
    return std::make_exception_ptr(DeviceError(where + e.what()));
  } catch (const cl::Error& e) {
    return std::make_exception_ptr(DeviceError(where + cl_error_message(e.what(), e.err())));
  } catch (...) {
    return failure;
  }
}
}  // namespace

void SplitRun::run() {
  std::vector<std::exception_ptr> failures(executors_.size());
  std::exception_ptr first_failure;  // in time: the others may only have been waiting for its rows
  std::mutex failing;
  std::vector<std::thread> threads;
  if (meeting_) meeting_->reset();
  combinations_ = 0;
  gathers_ = 0;
  try {
    for (size_t d = 0; d < executors_.size(); ++d)
      threads.emplace_back([&, d] {
        try {
          executors_[d]->run();
          if (meeting_) meeting_->leave(d);
        } catch (...) {
          failures[d] = on_device(slots_[d].device->info, std::current_exception());
          {
            std::lock_guard<std::mutex> lock(failing);
            if (!first_failure) first_failure = failures[d];
          }
          if (meeting_) meeting_->abandon();  // the others may be waiting for this device's rows
          // A gather's writes may still read the meeting's rows: let them finish before anything frees them.
          try {
            slots_[d].device->queue.finish();
          } catch (...) {
          }
        }
      });
  } catch (...) {  // a thread that could not start: wait for those that did, then say so
    if (meeting_) meeting_->abandon();
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  if (meeting_ && first_failure) std::rethrow_exception(first_failure);
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
}

HostArray SplitRun::read(const std::string& symbol) {
  if (!placement_.is_split(symbol)) return executors_.front()->read(symbol);
  const Symbol& s = whole_.symbol(symbol);
  HostArray out;  // not zero-filled first: every device's rows are appended
  out.dtype = s.dtype;
  out.shape = s.shape;
  const size_t whole = static_cast<size_t>(shape_elements(s.shape)) * dtype_size(s.dtype);
  out.bytes.reserve(whole);
  for (size_t d = 0; d < executors_.size(); ++d) {
    const DeviceShare& share = placement_.shares[d];
    HostArray part = executors_[d]->read(symbol);
    if (share.before > 0 || share.after > 0) part = rows_of(part, share.before, share.count);  // its own rows
    out.bytes.insert(out.bytes.end(), part.bytes.begin(), part.bytes.end());
  }
  if (out.bytes.size() != whole)
    throw DeviceError("internal: the devices' rows of '" + symbol + "' hold " + std::to_string(out.bytes.size()) +
                      " bytes where the whole " + shape_string(s.shape) + " holds " + std::to_string(whole));
  return out;
}

}  // namespace fugue
