#include "runtime/executor.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "errors.h"
#include "io/initial_values.h"
#include "passes/launch.h"
#include "passes/placement.h"
#include "io/output_files.h"

// What device-level operations reach through fugue_device_services.
struct fugue_services_context {
  fugue::ProgramCache* cache = nullptr;
  fugue::Profiler* profiler = nullptr;
  const fugue::Device* device = nullptr;
  std::vector<cl_mem> operands;      // per operand (NULL for consts)
  std::vector<cl_mem> extents;       // per operand: its run-time length's buffer (NULL: none)
  std::vector<std::vector<cl_mem>> parts;  // per operand: a kind with storage's part buffers
  size_t guard_bytes = 0;                  // instrumented: scratch sits between guard regions ...
  std::vector<std::pair<cl::Buffer, size_t>> guarded_scratch;  // ... (the allocation, the bytes asked)
  std::vector<cl::Buffer> scratch;   // released after the operation's work finished
  // Scratch taken from the executor's pool (power-of-two sizes), given back after the operation: the
  // queue is in order, so a later operation's work on it runs after this one's. A buffer made fresh
  // for every call costs NVIDIA's driver its allocation when a kernel first touches it (tens of us).
  std::multimap<size_t, cl::Buffer>* scratch_pool = nullptr;
  size_t* scratch_pooled_bytes = nullptr;  // the pool's bytes
  std::vector<std::pair<size_t, cl::Buffer>> pooled;
  std::vector<cl::Program> programs; // kept alive while the operation runs
  std::string label;
  std::string plugin;                                  // the operation's plugin: its workspaces' name space
  std::map<std::string, cl::Buffer>* workspaces = nullptr;  // the executor's, by plugin and key
  double bytes = 0, flops = 0;
  bool tracked_cost = false;
};

namespace fugue {
namespace fs = std::filesystem;

namespace {

// Saturates at SIZE_MAX instead of overflowing, so "too large" stays too large.
size_t bytes_of(const Symbol& s) {
  size_t n = s.kind == SymbolKind::Array ? static_cast<size_t>(shape_elements(s.shape)) : 1;
  size_t size = dtype_size(s.dtype);
  return n > SIZE_MAX / size ? SIZE_MAX : n * size;
}

// Services for device-level operations.
void report(fugue_error* error, const std::string& message) { abi::write_error(error, message); }

cl_mem services_buffer(fugue_services_context* c, uint32_t operand) {
  return operand < c->operands.size() ? c->operands[operand] : nullptr;
}
fugue_status services_workspace(fugue_services_context* c, const char* key, size_t bytes, cl_mem* buffer,
                                int32_t* fresh, fugue_error* error) {
  try {
    cl::Buffer& b = (*c->workspaces)[c->plugin + "/" + (key ? key : "")];
    const size_t size = std::max<size_t>(bytes, 1);
    const bool make = !b() || b.getInfo<CL_MEM_SIZE>() != size;
    if (make) b = cl::Buffer(c->device->context, CL_MEM_READ_WRITE, size);
    *buffer = b();
    if (fresh) *fresh = make ? 1 : 0;
    return FUGUE_OK;
  } catch (const cl::Error& e) {
    report(error, cl_error_message("allocating workspace '" + std::string(key ? key : "") + "' of " +
                                       std::to_string(bytes) + " bytes", e.err()));
  } catch (const std::exception& e) {
    report(error, std::string("workspace: ") + e.what());
  }
  return FUGUE_ERROR_DEVICE;
}
cl_mem services_part(fugue_services_context* c, uint32_t operand, uint32_t part) {
  return operand < c->parts.size() && part < c->parts[operand].size() ? c->parts[operand][part] : nullptr;
}
cl_mem services_extent(fugue_services_context* c, uint32_t operand) {
  return operand < c->extents.size() ? c->extents[operand] : nullptr;
}
fugue_status services_program(fugue_services_context* c, const char* source, const char* options,
                              cl_program* program, fugue_error* error) {
  try {
    cl::Program p = c->cache->get(source ? source : "", options ? options : "", c->label);
    c->programs.push_back(p);
    *program = p();
    return FUGUE_OK;
  } catch (const std::exception& e) {
    report(error, e.what());
    return FUGUE_ERROR_DEVICE;
  }
}
fugue_status services_scratch(fugue_services_context* c, size_t bytes, cl_mem* buffer, fugue_error* error) {
  // No exception may unwind into the plugin: OpenCL errors become a status here.
  try {
    if (c->guard_bytes > 0) {  // instrumented: poisoned guards on both sides, checked after the op
      const size_t guard = c->guard_bytes, size = std::max<size_t>(bytes, 1);
      cl::Buffer whole(c->device->context, CL_MEM_READ_WRITE, guard + (size + 3) / 4 * 4 + guard);
      c->device->queue.enqueueFillBuffer(whole, Instrumentation::kPoison, 0, guard + (size + 3) / 4 * 4 + guard);
      cl_buffer_region region{guard, size};
      cl::Buffer b = whole.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
      c->scratch.push_back(whole);
      c->scratch.push_back(b);
      c->guarded_scratch.emplace_back(whole, bytes);
      *buffer = b();
      return FUGUE_OK;
    }
    if (c->scratch_pool) {
      size_t size = 256;
      while (size < bytes) size = size <= SIZE_MAX / 2 ? size * 2 : bytes;  // never less than asked
      cl::Buffer b;
      if (auto free = c->scratch_pool->find(size); free != c->scratch_pool->end()) {
        b = free->second;
        c->scratch_pool->erase(free);
        *c->scratch_pooled_bytes -= size;
      } else {
        b = cl::Buffer(c->device->context, CL_MEM_READ_WRITE, size);
      }
      c->pooled.emplace_back(size, b);
      *buffer = b();
      return FUGUE_OK;
    }
    cl::Buffer b(c->device->context, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1));
    c->scratch.push_back(b);
    *buffer = b();
    return FUGUE_OK;
  } catch (const cl::Error& e) {
    report(error, cl_error_message("allocating " + std::to_string(bytes) + " bytes of scratch", e.err()));
  } catch (const std::exception& e) {
    report(error, std::string("allocating scratch: ") + e.what());
  }
  return FUGUE_ERROR_DEVICE;
}
void services_track(fugue_services_context* c, cl_event event, const char* name) noexcept {
  if (!event) return;
  cl::Event e(event, false);  // takes ownership: the core releases it
  std::string label = c->label + (name && *name ? std::string(" / ") + name : "");
  // The op's cost is attributed to its first tracked event.
  c->profiler->track(e, label, "kernel", c->tracked_cost ? 0 : c->bytes, c->tracked_cost ? 0 : c->flops);
  c->tracked_cost = true;
}

}  // namespace

Executor::Executor(const Program& program, Device& device, ProgramCache& cache, Profiler& profiler,
                   PlanOptions options)
    : program_(program), device_(device), cache_(cache), profiler_(profiler), options_(options) {}

Executor::~Executor() = default;

void Executor::prepare(const std::function<void(size_t, size_t)>& progress) {
  // Every value must fit the device before anything is generated, read or allocated.
  for (const auto& [name, s] : program_.symbols) {
    if (s.compile_time() || s.compound() || !s.typed) continue;  // a compound value: its parts are checked
    size_t bytes = bytes_of(s);
    if (bytes > device_.info.max_allocation || bytes > device_.info.global_memory)
      throw DeviceError(s.where + ": '" + name + "' needs " + std::to_string(bytes) + " bytes, more than " +
                        device_.info.name + " can allocate at once (" +
                        std::to_string(device_.info.max_allocation) +
                        " bytes); use smaller arrays or a device with more memory");
  }
  kernels_.clear();
  symbols_read_.clear();
  PlanOptions options = options_;
  options.sample_modulus = instrumentation_.sample_modulus;
  options.sample_residue = instrumentation_.sample_residue;
  plan_ = lower(program_, device_.info, options);
  for (const auto& op : plan_.ops)
    for (uint32_t i : op->statement->op->inputs()) symbols_read_.insert(op->statement->operands[i]);
  for (size_t k = 0; k < plan_.groups.size(); ++k) {
    prepare_kernel(k, options);
    if (progress) progress(kernels_.size(), plan_.groups.size());
  }
}

void Executor::prepare_kernel(size_t index, const PlanOptions& options) {
  const FusedGroup& group = plan_.groups[index];
  auto site = std::make_unique<KernelSite>();
  site->group = &group;
  site->label = group.ops.front()->label;
  if (group.ops.size() > 1) site->label += " + " + std::to_string(group.ops.size() - 1) + " fused";
  // Build once; if the driver's limit for this kernel is below the chosen size, rebuild smaller.
  for (int attempt = 0; attempt < 2; ++attempt) {
    site->kernel = plan_.kernels[index];
    const Launch& launch = site->kernel.launch;
    cl::Program program = cache_.get(site->kernel.source, "", site->label);
    try {
      site->main = cl::Kernel(program, site->kernel.main_name.c_str());
      site->finalize = cl::Kernel();  // a rebuilt kernel may have none
      if (!site->kernel.finalize_name.empty())
        site->finalize = cl::Kernel(program, site->kernel.finalize_name.c_str());
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("creating kernel for " + site->label, e.err()));
    }
    int64_t limit = static_cast<int64_t>(site->main.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_.info.device));
    if (limit >= launch.local_size || attempt == 1) break;
    relaunch_kernel(program_, device_.info, options, plan_, index, limit);
  }
  for (size_t o = 0; o < group.ops.size(); ++o) {
    const abi::Plan& plan = group.ops[o]->plan;
    for (uint32_t w = 0; w < plan.workspaces.size(); ++w) {
      // BLOCK level with teams: a part per entry slot of every work-group (see fugue_workspace).
      const Launch& l = site->kernel.launch;
      const int64_t slots = plan.level == FUGUE_LEVEL_BLOCK && l.team > 0 ? std::max<int64_t>(l.entries_per_group, 1) : 1;
      int64_t groups = std::max<int64_t>(l.num_groups, 1) * slots;
      size_t bytes = static_cast<size_t>(groups * std::max<int64_t>(plan.workspaces[w].elements_per_group, 1)) *
                     dtype_size(static_cast<DType>(plan.workspaces[w].dtype));
      site->workspaces[{o, w}] = allocate(bytes, "workspace of " + group.ops[o]->label);
    }
  }
  if (site->kernel.launch.last_group_finalizes) {
    site->groups_done = allocate(sizeof(cl_int), "the finished work-groups' count of " + site->label);
    try {
      device_.queue.enqueueFillBuffer(site->groups_done, cl_int{0}, 0, sizeof(cl_int));
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("zeroing the finished work-groups' count of " + site->label, e.err()));
    }
  }
  kernels_.push_back(std::move(site));
}

cl::Buffer Executor::allocate(size_t bytes, const std::string& what) {
  if (bytes > device_.info.max_allocation)
    throw DeviceError("allocating " + std::to_string(bytes) + " bytes for " + what + " exceeds " +
                      device_.info.name + "'s largest allocation (" + std::to_string(device_.info.max_allocation) +
                      " bytes); use smaller arrays or a device with more memory");
  try {
    return cl::Buffer(device_.context, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1));
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("allocating " + std::to_string(bytes) + " bytes for " + what, e.err()));
  }
}

void Executor::upload(const std::string& symbol, const HostArray& array) {
  Value& v = value_for_write(symbol);
  const Symbol& s = program_.symbol(symbol);
  // A run-time length: as many rows as the value has, up to the capacity the buffer holds.
  const bool runtime = s.runtime_axes != 0;
  if (runtime ? array.bytes.size() > v.bytes || array.shape.empty() : array.bytes.size() != v.bytes)
    throw UserError(s.where + ": initial value has " + std::to_string(array.bytes.size()) + " bytes, the declaration " +
                    (runtime ? "holds at most " : "needs ") + std::to_string(v.bytes));
  try {
    if (runtime) {
      if (!v.extent()) v.extent = allocate(sizeof(cl_long), "the run-time length of '" + symbol + "'");
      const cl_long rows = array.shape[0];
      device_.queue.enqueueWriteBuffer(v.extent, CL_TRUE, 0, sizeof rows, &rows);
      v.extent_origin = ++extent_origins_;
    }
    if (array.bytes.empty()) return;
    cl::Event event;
    device_.queue.enqueueWriteBuffer(v.buffer, CL_TRUE, 0, array.bytes.size(), array.bytes.data(), nullptr, &event);
    profiler_.track(event, "upload " + symbol, "transfer", static_cast<double>(array.bytes.size()));
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("uploading '" + symbol + "'", e.err()));
  }
}

int64_t Executor::actual_rows(const std::string& symbol) {
  const Symbol& s = program_.symbol(symbol);
  const Value& v = values_.at(symbol);
  cl_long rows = 0;
  try {
    device_.queue.enqueueReadBuffer(v.extent, CL_TRUE, 0, sizeof rows, &rows);
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("reading the run-time length of '" + symbol + "'", e.err()));
  }
  if (rows < 0 || rows > s.shape[0])
    throw DeviceError(s.where + ": '" + symbol + "' got a run-time length of " + std::to_string(rows) +
                      ", outside its capacity " + s.shape_text() + " (a bug in the operation that produced it)");
  return rows;
}

void Executor::give_initial(const std::string& symbol, HostArray value) {
  const Symbol& s = program_.symbol(symbol);
  bool fits = value.dtype == s.dtype && value.shape == s.shape && value.compound() == s.compound();
  if (fits && s.compound()) {
    fits = value.kind_name == s.kind_name && value.parts.size() == s.part_types.size();
    for (size_t k = 0; fits && k < value.parts.size(); ++k)
      fits = value.parts[k].dtype == s.part_types[k].dtype && value.parts[k].shape == s.part_types[k].shape;
  }
  if (!fits)
    throw DeviceError("the initial value given for '" + symbol + "' is " + value.type_text() + ", the symbol is " +
                      s.kind_text() + " " + std::string(dtype_name(s.dtype)) + " " + shape_string(s.shape));
  initial_[symbol] = std::move(value);
}

void Executor::initialize() {
  // Buffers are kept (a repetition must not pay for allocation and first touch again); values are not.
  for (auto& [name, value] : values_) value.defined = false;
  loop_values_.clear();
  good_rows_.clear();
  for (const auto& [name, s] : program_.symbols) {
    if (s.compile_time() || s.source.kind == SymbolSource::Kind::None) continue;
    // Files are read and generators run once; later repetitions upload the same values again.
    auto it = initial_.find(name);
    if (it == initial_.end()) it = initial_.emplace(name, initial_value(s)).first;
    if (s.compound()) {  // a file holding the whole value: each part into its own symbol
      const HostArray& whole = it->second;
      if (whole.parts.size() != s.parts.size())
        throw DeviceError(s.where + ": the file gave " + std::to_string(whole.parts.size()) + " parts, '" + name +
                          "' has " + std::to_string(s.parts.size()));
      for (size_t k = 0; k < s.parts.size(); ++k) {
        upload(s.parts[k], whole.parts[k]);
        values_[s.parts[k]].defined = true;
      }
      continue;
    }
    upload(name, it->second);
    values_[name].defined = true;
    if (neighbours_.symbols.count(name)) good_rows_[name] = neighbours_.ghost;  // given with the neighbours' rows
  }
  if (!given_parts_checked_) {  // once: repetitions upload the same values
    for (const auto& [name, s] : program_.symbols)
      check_given_parts(s, [&](const std::string& part) -> const HostArray* {
        auto it = initial_.find(part);
        return it == initial_.end() ? nullptr : &it->second;
      });
    given_parts_checked_ = true;
  }
}

Executor::Value& Executor::value_for_write(const std::string& symbol) {
  Value& v = values_[symbol];
  if (!v.buffer()) {
    const Symbol& s = program_.symbol(symbol);
    v.bytes = bytes_of(s);
    if (instrumentation_.guard_bytes > 0) allocate_guarded(v, symbol);
    else v.buffer = allocate(v.bytes, "'" + symbol + "'");
  }
  return v;
}

void Executor::allocate_guarded(Value& v, const std::string& symbol) {
  // A sub-buffer's origin must be aligned to the device's base address alignment.
  const size_t align = std::max<size_t>(device_.info.device.getInfo<CL_DEVICE_MEM_BASE_ADDR_ALIGN>() / 8, 4);
  const size_t guard = (instrumentation_.guard_bytes + align - 1) / align * align;
  const size_t total = guard + (v.bytes + 3) / 4 * 4 + guard;
  v.guard = guard;
  v.guarded = allocate(total, "'" + symbol + "' with guard regions");
  try {
    const cl_uint poison = Instrumentation::kPoison;
    device_.queue.enqueueFillBuffer(v.guarded, poison, 0, total);
    cl_buffer_region region{guard, std::max<size_t>(v.bytes, 1)};
    v.buffer = v.guarded.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region);
    device_.queue.finish();
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("preparing the guarded buffer of '" + symbol + "'", e.err()));
  }
}

std::string Executor::guard_damage(const std::string& symbol) {
  if (const Symbol& s = program_.symbol(symbol); s.compound()) {  // its parts' buffers
    for (const auto& part : s.parts)
      if (std::string damage = guard_damage(part); !damage.empty()) return "part " + part + ": " + damage;
    return {};
  }
  auto it = values_.find(symbol);
  if (it == values_.end() || !it->second.guarded()) return {};
  if (std::string damage = region_damage(it->second, symbol); !damage.empty()) return damage;
  auto shadow = shadows_.find(symbol);
  if (shadow == shadows_.end() || !shadow->second.guarded()) return {};
  const std::string damage = region_damage(shadow->second, symbol);
  return damage.empty() ? damage : "in its second buffer, " + damage;
}

Executor::Value& Executor::shadow_of(const std::string& symbol) {
  Value& shadow = shadows_[symbol];
  const Value& v = values_.at(symbol);
  if (!shadow.buffer() || shadow.bytes < v.bytes) {
    shadow.bytes = v.bytes;
    if (instrumentation_.guard_bytes > 0) allocate_guarded(shadow, symbol);
    else shadow.buffer = allocate(v.bytes, "the second buffer of '" + symbol + "'");
  }
  return shadow;
}

void Executor::swap_with_shadow(const std::string& symbol) {
  Value& v = values_.at(symbol);
  Value& shadow = shadows_.at(symbol);
  std::swap(v.buffer, shadow.buffer);
  std::swap(v.guarded, shadow.guarded);
  std::swap(v.guard, shadow.guard);
}

std::string Executor::region_damage(const Value& v, const std::string& symbol) {
  const size_t total = v.guarded.getInfo<CL_MEM_SIZE>();
  std::vector<uint8_t> bytes(total);
  try {
    device_.queue.enqueueReadBuffer(v.guarded, CL_TRUE, 0, total, bytes.data());
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("reading the guard regions of '" + symbol + "'", e.err()));
  }
  const uint8_t* poison = reinterpret_cast<const uint8_t*>(&Instrumentation::kPoison);
  for (size_t b = v.guard; b-- > 0;)  // nearest the data first
    if (bytes[b] != poison[b % 4])
      return "byte " + std::to_string(v.guard - b) + " before the start was written";
  for (size_t b = v.guard + v.bytes; b < total; ++b)
    if (bytes[b] != poison[b % 4])
      return "byte " + std::to_string(b - v.guard - v.bytes) + " past the end (element " +
             std::to_string((b - v.guard) / std::max<size_t>(dtype_size(program_.symbol(symbol).dtype), 1)) +
             " of " + std::to_string(v.bytes / std::max<size_t>(dtype_size(program_.symbol(symbol).dtype), 1)) +
             ") was written";
  return {};
}

const Executor::Value& Executor::value_for_read(const std::string& symbol, const Statement& where) {
  auto it = values_.find(symbol);
  if (it == values_.end() || !it->second.defined)
    throw UserError(where.where + ": '" + symbol + "' is read before anything wrote it at run time " +
                    "(a loop that ran zero times, or a branch that was not taken?)");
  return it->second;
}

void Executor::enqueue(const cl::Kernel& kernel, int64_t groups, int64_t local, const std::string& name,
                       double bytes, double flops, const Launch* shape) {
  cl::Event event;
  auto z = [](int64_t v) { return static_cast<size_t>(v); };
  cl::NDRange global(z(groups * local)), items(z(local));
  if (shape && shape->work_dim == 2) {
    global = cl::NDRange(z(shape->group_dims[0] * shape->local_dims[0]), z(shape->group_dims[1] * shape->local_dims[1]));
    items = cl::NDRange(z(shape->local_dims[0]), z(shape->local_dims[1]));
  } else if (shape && shape->work_dim == 3) {
    global = cl::NDRange(z(shape->group_dims[0] * shape->local_dims[0]), z(shape->group_dims[1] * shape->local_dims[1]),
                         z(shape->group_dims[2] * shape->local_dims[2]));
    items = cl::NDRange(z(shape->local_dims[0]), z(shape->local_dims[1]), z(shape->local_dims[2]));
  }
  try {
    device_.queue.enqueueNDRangeKernel(kernel, cl::NullRange, global, items, nullptr,
                                       profiler_.enabled() ? &event : nullptr);
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("running " + name, e.err()));
  }
  ++launches_;
  if (profiler_.enabled()) profiler_.track(event, name, "kernel", bytes, flops);
}

void Executor::run_op(const Statement& st) {
  const Step& step = plan_.steps.at(&st);
  switch (step.kind) {
    case Step::Kind::Kernel:
      // The group's first operation launches the kernel that does the work of all of them.
      if (step.starts_group) run_kernel(*kernels_.at(step.group), st);
      return;
    case Step::Kind::Swap:
      run_swap(step, st);
      return;
    case Step::Kind::Device: {
      // An OUT operand whose symbol another operand reads is written to the symbol's second buffer,
      // swapped in afterwards, so the op never reads what it has already overwritten; the old buffer
      // becomes the second one for the next call. An INOUT operand is updated where it is.
      // A kind with storage is its parts: each is read, written and swapped on its own.
      const auto& op = *st.op;
      std::set<std::string> read_storage;
      for (uint32_t i : op.inputs()) {
        if (program_.symbol(st.operands[i]).compile_time()) continue;
        for (const auto& held : program_.storage_of(st.operands[i])) {
          value_for_read(held, st);
          read_storage.insert(held);
        }
      }
      // Split with neighbours' rows: its rows come from the same rows of its inputs (the operation says
      // so, ABI 2.13), so its outputs are good as deep as its inputs are (traded, were they not, before
      // any output takes a fresh buffer).
      const int64_t good = trade_stale(read_storage, 0);
      std::map<std::string, cl::Buffer> replaced;
      for (uint32_t o : op.outputs())
        for (const auto& out : program_.storage_of(st.operands[o])) {
          const bool hazard = !op.reads(o) && read_storage.count(out);
          Value& v = value_for_write(out);
          if (hazard) {
            shadow_of(out);
            replaced[out] = v.buffer;
            swap_with_shadow(out);
          }
        }
      run_device_level(*step.op, replaced);
      std::vector<std::string> written;
      for (uint32_t o : op.outputs())
        for (const auto& out : program_.storage_of(st.operands[o])) {
          values_[out].defined = true;
          written.push_back(out);
        }
      mark_good(written, good);
      return;
    }
  }
}

void Executor::run_kernel(KernelSite& site, const Statement& where) {
  const FusedGroup& group = *site.group;
  for (const auto& s : group.global_reads) {
    // Name the operation that reads it, not just the kernel's first.
    const Statement* reader = &where;
    for (const auto* op : group.ops) {
      const auto& ins = op->statement->op->inputs();
      if (std::any_of(ins.begin(), ins.end(), [&](uint32_t i) { return op->statement->operands[i] == s; })) {
        reader = op->statement;
        break;
      }
    }
    for (const auto& held : program_.storage_of(s)) value_for_read(held, *reader);  // a kind with storage: its parts
  }
  // Split with neighbours' rows: inputs read deeper into them than they are still good are traded first.
  const int64_t reach = neighbours_.trade ? kernel_reach(group) : 0;
  const int64_t good = trade_stale(group.global_reads, reach);
  for (const auto& s : group.stored) value_for_write(s);
  for (const auto& s : group.zeroed) {  // outputs updated by atomics start from zero
    const Value& v = values_.at(s);
    try {
      if (v.bytes > 0) device_.queue.enqueueFillBuffer(v.buffer, static_cast<cl_uchar>(0), 0, v.bytes);
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("zeroing '" + s + "' before " + site.label, e.err()));
    }
  }
  run_time_lengths(group, where);
  for (const auto& s : group.shadowed) shadow_of(s);
  auto bind = [&](cl::Kernel& kernel, const std::vector<KernelArg>& args) {
    for (size_t a = 0; a < args.size(); ++a) {
      const auto& arg = args[a];
      if (arg.kind == KernelArg::Kind::Dimension) {
        kernel.setArg(static_cast<cl_uint>(a), static_cast<cl_long>(program_.symbol(arg.symbol).shape.at(arg.axis)));
        continue;
      }
      // A run-time length or a count read in the kernel (ABI 2.22) is held once an operation that makes it
      // has run (one that counts, FUGUE_OP_RUNTIME_COUNTS, for a count).
      if (arg.kind == KernelArg::Kind::Extent && !(values_.count(arg.symbol) && values_.at(arg.symbol).extent()))
        throw DeviceError(site.label + " reads the run-time length or count of '" + arg.symbol +
                          "', which no operation has written: the operation that made it must be one that makes its length or counts it");
      const cl::Buffer& buffer = arg.kind == KernelArg::Kind::Workspace    ? site.workspaces.at({arg.op, arg.workspace})
                                 : arg.kind == KernelArg::Kind::GroupsDone ? site.groups_done
                                 : arg.kind == KernelArg::Kind::Shadow     ? shadows_.at(arg.symbol).buffer
                                 : arg.kind == KernelArg::Kind::Extent     ? values_.at(arg.symbol).extent
                                                                           : values_.at(arg.symbol).buffer;
      kernel.setArg(static_cast<cl_uint>(a), buffer);
    }
  };
  const auto& k = site.kernel;
  try {
    bind(site.main, k.main_args);
    if (k.wide_index) site.main.setArg(static_cast<cl_uint>(k.main_args.size()), static_cast<cl_long>(k.elements));
    else site.main.setArg(static_cast<cl_uint>(k.main_args.size()), static_cast<cl_int>(k.elements));
    if (k.launch.num_groups > 0)
      enqueue(site.main, k.launch.num_groups, k.launch.local_size, site.label, group.bytes_fused, group.flops, &k.launch);
    if (site.finalize()) {
      bind(site.finalize, k.finalize_args);
      site.finalize.setArg(static_cast<cl_uint>(k.finalize_args.size()), static_cast<cl_int>(k.launch.num_groups));
      enqueue(site.finalize, 1, k.launch.local_size, site.label + " [finalize]", 0, 0);
    }
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("setting arguments of " + site.label, e.err()));
  }
  // The new values of shadowed symbols are in their second buffers: swap them in. Arguments were
  // captured at enqueue, so the kernel still writes the buffers it was given.
  for (const auto& s : group.shadowed) swap_with_shadow(s);
  for (const auto& s : group.stored) values_.at(s).defined = true;
  mark_good(group.stored, good - reach);
  if (combined_.combine)
    for (const auto& s : group.stored)
      if (combined_.symbols.count(s)) combined_.combine(s);
}

template <class Names>
int64_t Executor::trade_stale(const Names& reads, int64_t reach) {
  int64_t good = neighbours_.ghost;
  if (!neighbours_.trade) return good;
  for (const auto& s : reads) {
    if (!neighbours_.symbols.count(s)) continue;
    int64_t& depth = good_rows_[s];
    if (depth < reach) {
      neighbours_.trade(s);
      depth = neighbours_.ghost;
    }
    good = std::min(good, depth);
  }
  return good;
}

template <class Names>
void Executor::mark_good(const Names& written, int64_t depth) {
  if (!neighbours_.trade) return;
  for (const auto& s : written)
    if (neighbours_.symbols.count(s)) good_rows_[s] = depth;
}

void Executor::write_value(const std::string& symbol, const HostArray& value) {
  Value& v = values_.at(symbol);
  if (value.bytes.size() != v.bytes)
    throw DeviceError("internal: " + std::to_string(value.bytes.size()) + " bytes for '" + symbol + "', which holds " +
                      std::to_string(v.bytes));
  try {
    if (v.bytes > 0) device_.queue.enqueueWriteBuffer(v.buffer, CL_TRUE, 0, v.bytes, value.bytes.data());
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("writing '" + symbol + "'", e.err()));
  }
}

std::vector<uint8_t> Executor::read_rows(const std::string& symbol, int64_t first, int64_t count) {
  const Symbol& s = program_.symbol(symbol);
  const size_t row = bytes_of(s) / static_cast<size_t>(std::max<int64_t>(s.shape.at(0), 1));
  std::vector<uint8_t> rows(row * static_cast<size_t>(count));
  if (rows.empty()) return rows;
  try {
    device_.queue.enqueueReadBuffer(values_.at(symbol).buffer, CL_TRUE, row * static_cast<size_t>(first), rows.size(),
                                    rows.data());
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("reading rows " + std::to_string(first) + ".." +
                                           std::to_string(first + count - 1) + " of '" + symbol + "'",
                                       e.err()));
  }
  return rows;
}

void Executor::write_rows(const std::string& symbol, int64_t first, const std::vector<uint8_t>& rows) {
  const Symbol& s = program_.symbol(symbol);
  const size_t row = bytes_of(s) / static_cast<size_t>(std::max<int64_t>(s.shape.at(0), 1));
  if (rows.empty()) return;
  try {
    device_.queue.enqueueWriteBuffer(values_.at(symbol).buffer, CL_TRUE, row * static_cast<size_t>(first), rows.size(),
                                     rows.data());
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("writing rows from " + std::to_string(first) + " of '" + symbol + "'", e.err()));
  }
}

// A kernel walks the elements present of the arrays with run-time lengths it reads: they must have
// the same length, known without asking the device because it came from the same place; its results
// with run-time lengths take that length (a device-side copy of one long).
void Executor::run_time_lengths(const FusedGroup& group, const Statement& where) {
  if (group.runtime_reads.empty() && group.runtime_writes.empty()) return;
  const Value* source = group.extent_symbol.empty() ? nullptr : &values_.at(group.extent_symbol);
  for (const auto& s : group.runtime_reads) {
    const Value& v = values_.at(s);
    if (!source || v.extent_origin != source->extent_origin)
      throw UserError(where.where + ": '" + s + "' and '" + (source ? group.extent_symbol : std::string("the kernel")) +
                      "' have run-time lengths from different operations, so they may differ; combine values "
                      "of one length (from one array.compact, one file)");
  }
  if (!source) throw UserError(where.where + ": a result has a run-time length that no input of its kernel gives");
  for (const auto& s : group.runtime_writes) {
    if (s == group.extent_symbol) continue;
    Value& v = values_.at(s);
    try {
      if (!v.extent()) v.extent = allocate(sizeof(cl_long), "the run-time length of '" + s + "'");
      device_.queue.enqueueCopyBuffer(source->extent, v.extent, 0, 0, sizeof(cl_long));
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("copying the run-time length of '" + s + "'", e.err()));
    }
    v.extent_origin = source->extent_origin;
  }
}

void Executor::run_swap(const Step& step, const Statement& where) {
  value_for_read(step.source, where);
  Value& target = value_for_write(step.target);
  Value& source = values_.at(step.source);
  std::swap(target.buffer, source.buffer);
  std::swap(target.extent, source.extent);
  std::swap(target.extent_origin, source.extent_origin);
  source.defined = target.defined;
  target.defined = true;
  if (neighbours_.trade) std::swap(good_rows_[step.target], good_rows_[step.source]);
}

void Executor::run_device_level(const PlannedOp& op, const std::map<std::string, cl::Buffer>& replaced) {
  const Statement& st = *op.statement;
  fugue_services_context context;
  context.cache = &cache_;
  context.profiler = &profiler_;
  context.device = &device_;
  context.label = op.label;
  context.plugin = st.op->plugin().name;
  context.workspaces = &persistent_;
  if (instrumentation_.guard_bytes == 0) {
    context.scratch_pool = &scratch_pool_;
    context.scratch_pooled_bytes = &scratch_pooled_bytes_;
  }
  context.bytes = op.cost.bytes;
  context.flops = op.cost.flops;
  std::set<std::string> input_names;
  for (uint32_t i : st.op->inputs()) input_names.insert(st.operands[i]);
  for (size_t i = 0; i < st.operands.size(); ++i) {
    const std::string& name = st.operands[i];
    bool input = st.op->operands()[i]->role == FUGUE_ROLE_IN;
    // An input reads the buffer an output of the same symbol (or part) did not replace.
    auto buffer_of = [&](const std::string& held) -> cl_mem {
      auto old = replaced.find(held);
      auto it = values_.find(held);
      return (input && old != replaced.end()) ? old->second()
             : it == values_.end()             ? nullptr
                                               : it->second.buffer();
    };
    const Symbol& symbol = program_.symbol(name);
    context.operands.push_back(symbol.compound() ? nullptr : buffer_of(name));
    context.parts.emplace_back();
    if (symbol.compound())
      for (const auto& part : symbol.parts) context.parts.back().push_back(buffer_of(part));
    // Run-time lengths, inputs' first: the buffers that hold them before the op runs. A value whose
    // count is left to the run (ABI 2.21): its count, which its counted parts share.
    const bool runtime = symbol.runtime_axes != 0;
    const std::vector<std::string> counted = symbol.counted_parts();
    const std::string& holder = counted.empty() ? name : counted.front();
    context.extents.push_back((runtime || !counted.empty()) && st.op->reads(i) ? values_[holder].extent() : nullptr);
  }
  // An OUT operand's length the op writes anew (a fresh origin); into a buffer of its own when another
  // operand reads the old one.
  for (uint32_t o : st.op->outputs()) {
    const std::string& name = st.operands[o];
    if (!program_.symbol(name).runtime_axes || st.op->reads(o)) continue;
    Value& v = values_[name];
    if (!v.extent() || input_names.count(name)) v.extent = allocate(sizeof(cl_long), "the run-time length of '" + name + "'");
    v.extent_origin = ++extent_origins_;
    context.extents[o] = v.extent();
  }
  // A value whose count the op makes: one buffer its counted parts share.
  for (uint32_t o : st.op->outputs()) {
    const std::string& name = st.operands[o];
    const std::vector<std::string> counted = program_.symbol(name).counted_parts();
    if (counted.empty() || st.op->reads(o)) continue;
    cl::Buffer count = values_[counted.front()].extent;
    for (const auto& part : counted)
      if (!count() || values_[part].extent() != count() || input_names.count(name)) {
        count = allocate(sizeof(cl_long), "the count of '" + name + "'");
        break;
      }
    const uint64_t origin = ++extent_origins_;
    for (const auto& part : counted) {
      values_[part].extent = count;
      values_[part].extent_origin = origin;
    }
    context.extents[o] = count();
  }
  fugue_device_services services{};
  services.struct_size = sizeof(fugue_device_services);
  services.context = &context;
  services.cl_context = device_.context();
  services.device = device_.info.device();
  services.queue = device_.queue();
  services.buffer = &services_buffer;
  services.program = &services_program;
  services.scratch = &services_scratch;
  services.track = &services_track;
  services.extent = &services_extent;
  services.workspace = &services_workspace;
  services.part = &services_part;
  services.wants_events = profiler_.enabled() ? 1 : 0;
  context.guard_bytes = instrumentation_.guard_bytes;
  try {
    st.op->execute(op.call, services);
  } catch (const UserError& e) {
    throw UserError(st.where + st.pointer_of(e.what()) + ": " + e.what());
  } catch (const DeviceError& e) {  // the device or the plugin failed: at which statement
    throw DeviceError(st.where + ": " + e.what());
  }
  check_scratch_guards(context.guarded_scratch, st);
  // The pool keeps at most 1/16 of the device's memory (256 MiB at most); the rest is released.
  const size_t most = static_cast<size_t>(std::min<uint64_t>(device_.info.global_memory / 16, uint64_t{256} << 20));
  for (auto& [size, buffer] : context.pooled) {
    if (scratch_pooled_bytes_ + size <= most) {
      scratch_pool_.emplace(size, std::move(buffer));
      scratch_pooled_bytes_ += size;
    } else {
      context.scratch.push_back(std::move(buffer));
    }
  }
  if (!context.scratch.empty()) release_after_work(std::move(context.scratch), op.label);
}

void Executor::check_scratch_guards(const std::vector<std::pair<cl::Buffer, size_t>>& scratch, const Statement& st) {
  const size_t guard = instrumentation_.guard_bytes;
  const uint8_t* poison = reinterpret_cast<const uint8_t*>(&Instrumentation::kPoison);
  for (size_t k = 0; k < scratch.size(); ++k) {
    const auto& [whole, asked] = scratch[k];
    std::vector<uint8_t> bytes(whole.getInfo<CL_MEM_SIZE>());
    try {
      device_.queue.enqueueReadBuffer(whole, CL_TRUE, 0, bytes.size(), bytes.data());
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("reading the guard regions of a scratch buffer", e.err()));
    }
    const std::string what = st.where + ": " + st.op->name() + ", scratch buffer " + std::to_string(k) + " (" +
                             std::to_string(asked) + " bytes): ";
    for (size_t b = guard; b-- > 0;)
      if (bytes[b] != poison[b % 4]) {
        scratch_damage_.push_back(what + "byte " + std::to_string(guard - b) + " before the start was written");
        break;
      }
    for (size_t b = guard + std::max<size_t>(asked, 1); b < bytes.size(); ++b)
      if (bytes[b] != poison[b % 4]) {
        scratch_damage_.push_back(what + "byte " + std::to_string(b - guard - asked) + " past the end was written");
        break;
      }
  }
}

// Scratch must outlive the work enqueued on it, but waiting for that work would stall the queue:
// a marker after the op's work releases the buffers from its completion callback.
void Executor::release_after_work(std::vector<cl::Buffer> buffers, const std::string& label) {
  auto* held = new std::vector<cl::Buffer>(std::move(buffers));
  try {
    cl::Event marker;
    device_.queue.enqueueMarkerWithWaitList(nullptr, &marker);
    marker.setCallback(CL_COMPLETE, [](cl_event, cl_int, void* data) {
      delete static_cast<std::vector<cl::Buffer>*>(data);
    }, held);
  } catch (const cl::Error& e) {
    // Without a callback, the only safe moment to release them is after the device has finished.
    try {
      device_.queue.finish();
    } catch (const cl::Error&) {
    }
    delete held;
    throw DeviceError(cl_error_message("scheduling the release of the scratch of " + label, e.err()));
  }
}

void Executor::run() {
  interpret(program_, program_.body, *this);
  try {
    device_.queue.finish();
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("waiting for the device", e.err()));
  }
}

HostArray Executor::read(const std::string& symbol) {
  const Symbol& s = program_.symbol(symbol);
  if (s.compound()) {  // its parts, read one by one
    HostArray whole;
    whole.dtype = s.dtype;
    whole.shape = s.shape;
    whole.kind_name = s.kind_name;
    for (const auto& part : s.parts) whole.parts.push_back(read(part));
    return whole;
  }
  if (s.kind == SymbolKind::Plugin)
    throw UserError(s.where + ": '" + symbol + "' is a " + s.kind_text() + ", known when kernels are generated; it "
                    "has no value to read");
  if (s.kind == SymbolKind::Const) {
    HostArray a(DType::F64, {});
    a.set(0, s.const_value);
    return a;
  }
  if (auto lv = loop_values_.find(symbol); lv != loop_values_.end() && values_.count(symbol) == 0) {
    HostArray a(DType::I64, {});
    a.set(0, static_cast<double>(lv->second));
    return a;
  }
  auto it = values_.find(symbol);
  if (it == values_.end() || !it->second.defined)
    throw UserError(s.where + ": '" + symbol + "' was never written at run time, so it has no value to read");
  Shape shape = s.kind == SymbolKind::Array ? s.shape : Shape{};
  if (s.runtime_axes) shape[0] = actual_rows(symbol);  // only the rows present
  HostArray a(s.dtype, shape);
  if (!a.bytes.empty()) {
    cl::Event event;
    try {
      device_.queue.enqueueReadBuffer(it->second.buffer, CL_TRUE, 0, a.bytes.size(), a.bytes.data(), nullptr, &event);
    } catch (const cl::Error& e) {
      throw DeviceError(cl_error_message("reading '" + symbol + "' back from the device", e.err()));
    }
    profiler_.track(event, "download " + symbol, "transfer", static_cast<double>(a.bytes.size()));
  }
  return a;
}

double Executor::scalar_value(const std::string& symbol) {
  if (auto lv = loop_values_.find(symbol); lv != loop_values_.end()) return static_cast<double>(lv->second);
  return read(symbol).get(0);
}

void Executor::set_loop_variable(const std::string& symbol, int64_t value) {
  loop_values_[symbol] = value;
  // Only loop variables that operations read need a device copy.
  if (!symbols_read_.count(symbol)) return;
  Value& v = value_for_write(symbol);
  try {
    device_.queue.enqueueFillBuffer(v.buffer, static_cast<cl_long>(value), 0, sizeof(cl_long));
  } catch (const cl::Error& e) {
    throw DeviceError(cl_error_message("setting loop variable '" + symbol + "'", e.err()));
  }
  v.defined = true;
}

void Executor::write_outputs(const fs::path& folder) {
  write_output_files(program_, folder, [this](const std::string& symbol) { return read(symbol); });
}

}  // namespace fugue
