#include "runtime/split_run.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "errors.h"
#include "io/initial_values.h"

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
  const size_t row = array.bytes.size() / static_cast<size_t>(array.shape[0]);
  out.bytes.assign(array.bytes.begin() + static_cast<std::ptrdiff_t>(row * first),
                   array.bytes.begin() + static_cast<std::ptrdiff_t>(row * (first + count)));
  return out;
}

SplitRun::SplitRun(const Program& whole, const Placement& placement, std::vector<DeviceSlot> devices,
                   const std::function<Program()>& parse, PlanOptions options)
    : whole_(whole), placement_(placement), slots_(std::move(devices)) {
  if (!placement_.split || placement_.shares.size() != slots_.size())
    throw DeviceError("internal: a split run needs a split placement for its " + std::to_string(slots_.size()) +
                      " devices");
  for (size_t d = 0; d < slots_.size(); ++d) {
    auto program = std::make_unique<Program>(parse());
    for (const auto& name : placement_.split_symbols) program->symbols.at(name).shape[0] = placement_.shares[d].count;
    executors_.push_back(std::make_unique<Executor>(*program, *slots_[d].device, *slots_[d].cache, *slots_[d].profiler, options));
    programs_.push_back(std::move(program));
  }
}

SplitRun::~SplitRun() = default;

void SplitRun::prepare() {
  for (size_t d = 0; d < executors_.size(); ++d) {
    executors_[d]->prepare();
    // Each device planned its own rows, for its own kind of device: the split must still hold there.
    const RowSplit here = split_by_rows(*programs_[d], executors_[d]->plan());
    if (!here.reason.empty() || here.split_symbols != placement_.split_symbols ||
        here.whole_symbols != placement_.whole_symbols)
      throw DeviceError("device " + slots_[d].device->info.id() + " (" + slots_[d].device->info.name +
                        ") plans its rows of the program differently from the first device" +
                        (here.reason.empty() ? std::string() : " (" + here.reason + ")") +
                        ", so the split would not compute the same; run it on one device");
  }
}

void SplitRun::initialize() {
  if (!given_) {
    for (const auto& name : placement_.split_symbols) {
      const Symbol& s = whole_.symbol(name);
      if (s.source.kind == SymbolSource::Kind::None) continue;  // computed on the device
      const HostArray all = initial_value(s);  // read or generated once, as on one device
      if (all.shape != s.shape)
        throw DeviceError(s.where + ": the initial value is " + all.type_text() + ", the symbol " + shape_string(s.shape));
      for (size_t d = 0; d < executors_.size(); ++d)
        executors_[d]->give_initial(name, rows_of(all, placement_.shares[d].first, placement_.shares[d].count));
    }
    given_ = true;
  }
  for (auto& e : executors_) e->initialize();
}

void SplitRun::run() {
  std::vector<std::exception_ptr> failures(executors_.size());
  std::vector<std::thread> threads;
  try {
    for (size_t d = 0; d < executors_.size(); ++d)
      threads.emplace_back([&, d] {
        try {
          executors_[d]->run();
        } catch (...) {
          failures[d] = std::current_exception();
        }
      });
  } catch (...) {  // a thread that could not start: wait for those that did, then say so
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
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
  for (auto& e : executors_) {
    const HostArray part = e->read(symbol);
    out.bytes.insert(out.bytes.end(), part.bytes.begin(), part.bytes.end());
  }
  if (out.bytes.size() != whole)
    throw DeviceError("internal: the devices' rows of '" + symbol + "' hold " + std::to_string(out.bytes.size()) +
                      " bytes where the whole " + shape_string(s.shape) + " holds " + std::to_string(whole));
  return out;
}

}  // namespace fugue
