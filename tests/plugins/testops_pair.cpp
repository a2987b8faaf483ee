// testops_pair.cpp: a kind with storage for the tests: `pair`, two arrays of one dtype and shape
// ("first" and "second"), with the operations that make, read and update one at DEVICE level
// (test.make_pair, test.pair_norm, test.pair_swap) and a file format of its own (.pair).
//
// The .pair file: the 8 bytes "FGPAIR01", the dtype (u32: 1 f32, 2 f64), the rank (u32, 0..8), the
// extents (i64 each), then first's values and second's, C order, little-endian.
#include <CL/cl.h>

#include <fugue/sdk.hpp>
#include <fugue/sdk_device.hpp>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

namespace {

using namespace fugue::sdk;

constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
constexpr char kMagic[8] = {'F', 'G', 'P', 'A', 'I', 'R', '0', '1'};

// {"kind": "pair", "dtype": "f32", "shape": [n, ...]}: both parts of that dtype and shape.
class Pair : public Kind {
 public:
  Pair() {
    name = "pair";
    doc = "two arrays of one dtype and shape, first and second (a test kind with storage)";
    keys = {"dtype", "shape"};
    parts = {"first", "second"};
  }
  Declared declare(const std::string& text) const override {
    const auto decl = nlohmann::json::parse(text);
    if (!decl.contains("dtype") || (decl["dtype"] != "f32" && decl["dtype"] != "f64"))
      throw InvalidArgument("/dtype: expected \"f32\" or \"f64\", found " +
                            (decl.contains("dtype") ? decl["dtype"].dump() : std::string("none")));
    const auto& shape = decl.value("shape", nlohmann::json());
    if (!shape.is_array() || shape.size() > 8)
      throw InvalidArgument("/shape: expected a list of at most 8 extents, found " + shape.dump());
    Declared d;
    d.dtype = decl["dtype"] == "f64" ? FUGUE_DTYPE_F64 : FUGUE_DTYPE_F32;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (!shape[k].is_number_integer() || shape[k].get<int64_t>() < 0 || shape[k].get<int64_t>() > (int64_t{1} << 40))
        throw InvalidArgument("/shape/" + std::to_string(k) + ": expected an extent from 0 to 2^40, found " +
                              shape[k].dump());
      d.shape.push_back(shape[k].get<int64_t>());
    }
    d.parts = {{d.dtype, d.shape}, {d.dtype, d.shape}};
    return d;
  }
  std::string example(uint32_t rank, fugue_dtype dtype) const override {
    nlohmann::json shape = nlohmann::json::array();
    for (uint32_t d = 0; d < rank; ++d) shape.push_back(5 - static_cast<int>(d % 3));
    const nlohmann::json decl = {
        {"kind", "pair"},
        {"dtype", dtype == FUGUE_DTYPE_F64 ? "f64" : "f32"},
        {"shape", shape},
        {"parts",
         {{"first", {{"from", {{"random", {{"seed", 11}, {"low", -2}, {"high", 2}}}}}}},
          {"second", {{"from", {{"random", {{"seed", 12}, {"low", -2}, {"high", 2}}}}}}}}}};
    return decl.dump();
  }
};

Type pair_type(const fugue_type& like) {
  Type t(FUGUE_KIND_PLUGIN, like.dtype, Type(like).shape);
  t.kind_name = "pair";
  return t;
}

size_t part_bytes(const fugue_type& t) { return static_cast<size_t>(elements(t)) * dtype_size(t.dtype); }

void copy(const fugue_device_services& s, cl_mem from, cl_mem to, size_t bytes, const char* what) {
  if (bytes == 0) return;
  cl_event event = nullptr;  // only where the core keeps events (ABI 2.20)
  const cl_int err = clEnqueueCopyBuffer(s.queue, from, to, 0, 0, bytes, 0, nullptr, wants_events(s) ? &event : nullptr);
  if (err != CL_SUCCESS) throw DeviceFailure(std::string("clEnqueueCopyBuffer (") + what + ") failed: " + cl_error_name(err));
  if (event) s.track(s.context, event, what);
}

Plan device_plan(const Call& call) {
  Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
  for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
  return p;
}

// p = (a, b)
class MakePair : public Operation {
 public:
  MakePair() {
    name = "test.make_pair";
    doc = "p = (a, b): a pair of two arrays of one dtype and shape";
    operands = {out_kind("p", "pair", kFloats, "the pair"), in("a", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloats, "first"),
                in("b", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloats, "second, of a's dtype and shape")};
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    if (Type(call.operand(1)) != Type(call.operand(2)))
      throw InvalidArgument("operand b: expected " + type_string(call.operand(1)) + ", found " +
                            type_string(call.operand(2)));
    types[0] = pair_type(call.operand(1));
  }
  Plan plan(const Call& call) const override { return device_plan(call); }
  void execute(const Call& call, const fugue_device_services& s) const override {
    const size_t bytes = part_bytes(call.operand(1));
    copy(s, buffer(s, call, "a"), part(s, call, "p", 0), bytes, "first");
    copy(s, buffer(s, call, "b"), part(s, call, "p", 1), bytes, "second");
  }
  fugue_cost cost(const Call& call) const override {
    return {sizeof(fugue_cost), 4.0 * static_cast<double>(part_bytes(call.operand(1))), 0};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView p(a[0]), x(a[1]), y(a[2]);
    std::memcpy(p.part(0).data(), x.data(), x.bytes());
    std::memcpy(p.part(1).data(), y.data(), y.bytes());
  }
};

const char* kNormSource = R"(
__kernel void pair_norm(__global const REAL* first, __global const REAL* second, __global REAL* y, const long n) {
  const long i = get_global_id(0);
  if (i < n) y[i] = sqrt(first[i] * first[i] + second[i] * second[i]);
}
)";

// y = sqrt(first^2 + second^2), by a kernel of its own over both parts.
class PairNorm : public Operation {
 public:
  PairNorm() {
    name = "test.pair_norm";
    doc = "y = sqrt(first^2 + second^2), element by element";
    operands = {in_kind("p", "pair", kFloats, "the pair"),
                out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), kFloats, "of the pair's dtype and shape")};
    tolerance_f32 = 1e-6;
    tolerance_f64 = 1e-14;
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    types[1] = Type(FUGUE_KIND_ARRAY, call.operand(0).dtype, Type(call.operand(0)).shape);
  }
  Plan plan(const Call& call) const override { return device_plan(call); }
  void execute(const Call& call, const fugue_device_services& s) const override {
    const fugue_dtype dtype = call.operand(0).dtype;
    require_dtype(s, dtype, name);
    const std::string options = dtype == FUGUE_DTYPE_F64 ? "-DREAL=double" : "-DREAL=float";
    const std::string source =
        std::string(dtype == FUGUE_DTYPE_F64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") + kNormSource;
    Kernel kernel(build_program(s, source, options), "pair_norm");
    const cl_long n = elements(call.operand(0));
    kernel.args(part(s, call, "p", 0), part(s, call, "p", 1), buffer(s, call, "y"), n);
    kernel.enqueue(s, static_cast<size_t>(n));
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 3.0 * static_cast<double>(part_bytes(call.operand(0))), 4 * n};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView p(a[0]), y(a[1]);
    HostView first = p.part(0), second = p.part(1);
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, std::sqrt(first.get(i) * first.get(i) + second.get(i) * second.get(i)));
  }
};

// (first, second) = (second, first), in place.
class PairSwap : public Operation {
 public:
  PairSwap() {
    name = "test.pair_swap";
    doc = "exchanges the pair's parts, in place";
    operands = {inout_kind("p", "pair", kFloats, "the pair")};
  }
  void infer(const Call&, std::vector<Type>&) const override {}
  Plan plan(const Call& call) const override { return device_plan(call); }
  void execute(const Call& call, const fugue_device_services& s) const override {
    const size_t bytes = part_bytes(call.operand(0));
    if (bytes == 0) return;
    cl_mem held = scratch(s, bytes);
    copy(s, part(s, call, "p", 0), held, bytes, "first to scratch");
    copy(s, part(s, call, "p", 1), part(s, call, "p", 0), bytes, "second to first");
    copy(s, held, part(s, call, "p", 1), bytes, "scratch to second");
  }
  fugue_cost cost(const Call& call) const override {
    return {sizeof(fugue_cost), 6.0 * static_cast<double>(part_bytes(call.operand(0))), 0};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView p(a[0]);
    HostView first = p.part(0), second = p.part(1);
    std::vector<unsigned char> held(first.bytes());
    std::memcpy(held.data(), first.data(), held.size());
    std::memcpy(first.data(), second.data(), held.size());
    std::memcpy(second.data(), held.data(), held.size());
  }
};

class PairFile : public Format {
 public:
  PairFile() {
    name = "pair";
    doc = "a pair's two arrays in one file (a test format)";
    extensions = {".pair"};
  }
  bool reads() const override { return true; }
  bool writes() const override { return true; }

  Declared probe(const std::string& path) const override {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidArgument("cannot open the file");
    char magic[8];
    uint32_t code = 0, rank = 0;
    if (!in.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) throw InvalidArgument("not a .pair file (bad magic)");
    if (!in.read(reinterpret_cast<char*>(&code), 4) || !in.read(reinterpret_cast<char*>(&rank), 4))
      throw InvalidArgument("truncated header");
    if (code != 1 && code != 2) throw InvalidArgument("unknown dtype code " + std::to_string(code) + " (1 f32, 2 f64)");
    if (rank > 8) throw InvalidArgument("rank " + std::to_string(rank) + " above 8");
    Declared d;
    d.kind_name = "pair";
    d.dtype = code == 2 ? FUGUE_DTYPE_F64 : FUGUE_DTYPE_F32;
    uint64_t count = 1;
    for (uint32_t k = 0; k < rank; ++k) {
      int64_t extent = 0;
      if (!in.read(reinterpret_cast<char*>(&extent), 8)) throw InvalidArgument("truncated header");
      if (extent < 0 || extent > (int64_t{1} << 40) || __builtin_mul_overflow(count, static_cast<uint64_t>(extent), &count) ||
          count > (uint64_t{1} << 40))
        throw InvalidArgument("extent " + std::to_string(extent) + " of axis " + std::to_string(k) + " is out of range");
      d.shape.push_back(extent);
    }
    const uint64_t header = 16 + 8 * uint64_t{rank};
    const uint64_t expected = header + 2 * count * dtype_size(d.dtype);
    in.seekg(0, std::ios::end);
    const auto size = static_cast<uint64_t>(in.tellg());
    if (size != expected)
      throw InvalidArgument("holds " + std::to_string(size) + " bytes; its header says " + std::to_string(expected));
    d.parts = {{d.dtype, d.shape}, {d.dtype, d.shape}};
    return d;
  }
  void read(const std::string& path, fugue_host_array& array) const override {
    HostView whole(array);
    std::ifstream in(path, std::ios::binary);
    in.seekg(16 + 8 * static_cast<std::streamoff>(whole.type().rank));
    for (uint32_t k = 0; k < 2; ++k) {
      HostView part = whole.part(k);
      if (part.bytes() && !in.read(static_cast<char*>(part.data()), static_cast<std::streamsize>(part.bytes())))
        throw InvalidArgument("truncated data");
    }
  }
  void accepts(const fugue_type& type) const override {
    if (type.kind != FUGUE_KIND_PLUGIN || !type.kind_name || std::string(type.kind_name) != "pair")
      throw InvalidArgument("writes pairs only");
  }
  void write(const std::string& path, const fugue_host_array& array) const override {
    HostView whole(const_cast<fugue_host_array&>(array));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const uint32_t code = whole.dtype() == FUGUE_DTYPE_F64 ? 2 : 1, rank = whole.type().rank;
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&code), 4);
    out.write(reinterpret_cast<const char*>(&rank), 4);
    out.write(reinterpret_cast<const char*>(whole.type().shape), 8 * static_cast<std::streamsize>(rank));
    for (uint32_t k = 0; k < 2; ++k)
      out.write(static_cast<const char*>(whole.part(k).data()), static_cast<std::streamsize>(whole.part(k).bytes()));
    if (!out.flush()) throw InvalidArgument("writing failed");
  }
};

}  // namespace

void add_pair(Plugin& p) {
  p.add_kind(std::make_unique<Pair>());
  p.add(std::make_unique<MakePair>());
  p.add(std::make_unique<PairNorm>());
  p.add(std::make_unique<PairSwap>());
  p.add_format(std::make_unique<PairFile>());
}
