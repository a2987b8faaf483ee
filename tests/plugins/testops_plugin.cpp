// testops_plugin.cpp: a plugin for the registry and executor tests: a DEVICE-level operation that
// builds and enqueues its own kernel through the core's services (test.scale: out = factor * x), and
// an ELEMENT-level one that updates an operand in place (test.accumulate: acc += x), and a kind of its
// own: `poly`, a polynomial's coefficients baked into kernels, which test.polyval evaluates; and a
// kind with storage, `pair` (testops_pair.cpp); test.row_max, test.count and test.box3, the BLOCK-level, SCATTER and TILE examples of
// sdk/README.md.
#include <CL/cl.h>

#include <fugue/sdk.hpp>
#include <fugue/sdk_device.hpp>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace {

using namespace fugue::sdk;

const char* kScaleSource = R"(
__kernel void scale(__global const float* x, __global float* out, const float factor, const long n) {
  long i = get_global_id(0);
  if (i < n) out[i] = factor * x[i];
}
)";

class Scale : public Operation {
 public:
  Scale() {
    name = "test.scale";
    doc = "out = factor * x, enqueued by the plugin itself (device level)";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
    attrs = {{"factor", FUGUE_ATTR_NUMBER, false, 2.0, "", "the scale factor"}};
  }
  void infer(const Call& call, std::vector<Type>& types) const override { types[1] = call.operand(0); }
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, elements(call.operand(0)));
    p.partitions[0] = partition(FUGUE_PARTITION_NONE);
    p.partitions[1] = partition(FUGUE_PARTITION_NONE);
    return p;
  }
  void execute(const Call& call, const fugue_device_services& s) const override {
    cl_program program = nullptr;
    fugue::abi::ErrorBuffer error;
    if (s.program(s.context, kScaleSource, "", &program, error.get()) != FUGUE_OK) throw DeviceFailure(error.text());
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    if (err != CL_SUCCESS) throw DeviceFailure("clCreateKernel failed: " + std::to_string(err));
    cl_mem x = s.buffer(s.context, 0), out = s.buffer(s.context, 1);
    float factor = static_cast<float>(call.number("factor"));
    cl_long n = elements(call.operand(0));
    clSetKernelArg(kernel, 0, sizeof(cl_mem), &x);
    clSetKernelArg(kernel, 1, sizeof(cl_mem), &out);
    clSetKernelArg(kernel, 2, sizeof(float), &factor);
    clSetKernelArg(kernel, 3, sizeof(cl_long), &n);
    size_t local = 64, global = (static_cast<size_t>(n) + local - 1) / local * local;
    cl_event event = nullptr;  // only where the core keeps events (ABI 2.20)
    if (global > 0) err = clEnqueueNDRangeKernel(s.queue, kernel, 1, nullptr, &global, &local, 0, nullptr, wants_events(s) ? &event : nullptr);
    clReleaseKernel(kernel);
    if (err != CL_SUCCESS) throw DeviceFailure("clEnqueueNDRangeKernel failed: " + std::to_string(err));
    if (event) s.track(s.context, event, "scale");
  }
  fugue_cost cost(const Call& call) const override {
    double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, n};
  }
  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[0]), out(a[1]);
    for (int64_t i = 0; i < x.size(); ++i) out.set(i, static_cast<float>(call.number("factor")) * x.get(i));
  }
};

// acc += x, element by element: an INOUT operand that fuses with its neighbours.
class Accumulate : public Operation {
 public:
  Accumulate() {
    name = "test.accumulate";
    doc = "acc += x, in place (element level)";
    const uint32_t floats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
    operands = {inout("acc", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), floats, "the running sum"),
                in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), floats, "what is added, of acc's shape and dtype")};
  }
  void infer(const Call& call, std::vector<Type>&) const override {
    if (!(Type(call.operand(0)) == Type(call.operand(1))))
      throw InvalidArgument("operand x: expected " + type_string(call.operand(0)) + ", found " +
                            type_string(call.operand(1)));
  }
  Plan plan(const Call& call) const override { return elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(0))); }
  void emit(const Call&, const Plan&, const Emitter& e) const override { e.emit("${acc=} = ${acc} + ${x};\n"); }
  fugue_cost cost(const Call& call) const override {
    double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 3 * n * static_cast<double>(dtype_size(call.operand(0).dtype)), n};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView acc(a[0]), x(a[1]);
    for (int64_t i = 0; i < acc.size(); ++i) acc.set(i, acc.get(i) + x.get(i));
  }
};

// {"kind": "poly", "coefficients": [c0, c1, ...]}: c0 + c1 x + c2 x^2 + ..., the coefficients as
// doubles in the metadata (lowest power first); dtype f32 unless "dtype" says f64; shape [terms].
class Poly : public Kind {
 public:
  Poly() {
    name = "poly";
    doc = "a polynomial's coefficients, lowest power first (a test kind)";
    keys = {"coefficients", "dtype"};
  }
  Declared declare(const std::string& text) const override {
    auto decl = nlohmann::json::parse(text);
    Declared d;
    if (decl.contains("dtype") && decl["dtype"] != "f32" && decl["dtype"] != "f64")
      throw InvalidArgument("/dtype: expected f32 or f64, found " + decl["dtype"].dump());
    d.dtype = decl.contains("dtype") && decl["dtype"] == "f64" ? FUGUE_DTYPE_F64 : FUGUE_DTYPE_F32;
    const auto& c = decl.value("coefficients", nlohmann::json());
    if (!c.is_array() || c.empty() || c.size() > 16)
      throw InvalidArgument("/coefficients: expected a list of 1 to 16 numbers, found " + c.dump());
    std::vector<double> values;
    for (size_t k = 0; k < c.size(); ++k) {
      if (!c[k].is_number() || !std::isfinite(c[k].get<double>()))
        throw InvalidArgument("/coefficients/" + std::to_string(k) + ": expected a finite number, found " + c[k].dump());
      values.push_back(c[k].get<double>());
    }
    d.shape = {static_cast<int64_t>(values.size())};
    d.metadata.resize(values.size() * sizeof(double));
    std::memcpy(d.metadata.data(), values.data(), d.metadata.size());
    return d;
  }
  std::string example(uint32_t, fugue_dtype dtype) const override {
    return std::string(R"({"kind": "poly", "coefficients": [0.5, -1.25, 0.75], "dtype": ")") +
           (dtype == FUGUE_DTYPE_F64 ? "f64" : "f32") + "\"}";
  }
};

std::vector<double> coefficients(const fugue_type& t) {
  std::vector<double> c(t.metadata_bytes / sizeof(double));
  if (!c.empty()) std::memcpy(c.data(), t.metadata, c.size() * sizeof(double));
  return c;
}

// y = p(x), element by element (Horner's rule), with p's coefficients in the code.
class Polyval : public Operation {
 public:
  Polyval() {
    name = "test.polyval";
    doc = "y = p(x), the polynomial p evaluated at every element of x";
    const uint32_t floats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
    operands = {in_kind("p", "poly", floats, "the polynomial"),
                in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), floats, "where it is evaluated"),
                out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), floats, "p(x), of x's shape and dtype")};
    tolerance_f32 = 1e-5;
  }
  void infer(const Call& call, std::vector<Type>& types) const override { types[2] = call.operand(1); }
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(1)));
    p.partitions[0] = partition(FUGUE_PARTITION_NONE);  // it lives in the code
    return p;
  }
  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    const auto c = coefficients(call.operand(0));
    const std::string t = e.ctype(call.operand(1).dtype);
    char literal[64];
    std::snprintf(literal, sizeof literal, "%.17g", c.back());
    std::string horner = "(" + t + ")" + literal;
    for (size_t k = c.size() - 1; k-- > 0;) {
      std::snprintf(literal, sizeof literal, "%.17g", c[k]);
      horner = "(" + horner + " * ${@x} + (" + t + ")" + literal + ")";
    }
    e.emit("{\n  const " + t + " ${@x} = ${x};\n  ${y=} = " + horner + ";\n}\n");
  }
  fugue_cost cost(const Call& call) const override {
    double n = static_cast<double>(elements(call.operand(1)));
    return {sizeof(fugue_cost), 2 * n * static_cast<double>(dtype_size(call.operand(1).dtype)),
            2 * n * static_cast<double>(call.operand(0).shape[0])};
  }
  void reference(const Call& call, fugue_host_array* a) const override {
    const auto c = coefficients(call.operand(0));
    HostView x(a[1]), y(a[2]);
    for (int64_t i = 0; i < x.size(); ++i) {
      long double v = 0;
      for (size_t k = c.size(); k-- > 0;) v = v * x.get(i) + c[k];
      y.set(i, static_cast<double>(v));
    }
  }
};

// The row-wise maximum of sdk/README.md ("A batched operation"), as written there: a third party's
// BLOCK-level operation over BATCH entries, through the SDK alone.
class RowMax : public Operation {
 public:
  RowMax() {
    name = "test.row_max";
    doc = "out[...] = the largest element of each row of x (its last axis), one work-group per row";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
    test_cases = R"([{"name": "rows", "shape": [9, 70]}, {"name": "batches of rows", "shape": [2, 3, 300]}])";
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& x = call.operand(0);
    if (x.rank < 1 || elements(x) == 0) throw InvalidArgument("operand x: expected an array of rank >= 1 with elements");
    std::vector<int64_t> shape = shape_of(x);
    shape.pop_back();
    types[1] = make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F32, shape);
  }
  Plan plan(const Call& call) const override {
    const fugue_type& x = call.operand("x");
    Plan p;
    p.level = FUGUE_LEVEL_BLOCK;
    p.phases = FUGUE_PHASE_BODY;
    p.launch.iteration[0] = elements(x) / x.shape[x.rank - 1];  // entries: one per row
    p.launch.local_min = 1;
    p.launch.local_max = 256;
    p.launch.local_preferred = 128;
    p.partitions = {batch_partition(x.rank, int32_t(x.rank) - 2),   // x: a row per entry
                    batch_partition(x.rank - 1, int32_t(x.rank) - 2)};  // out: one value per entry
    p.local_mem_bytes = group_combine_scratch(256) * sizeof(float);  // the combination's scratch, at the largest work-group
    return p;
  }
  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    const fugue_type& x = call.operand("x");
    const std::string n = std::to_string(x.shape[x.rank - 1]), j = e.name("j"), m = e.name("m");
    const std::string id = e.builtin(FUGUE_BUILTIN_LOCAL_ID), scratch = e.local_array(FUGUE_DTYPE_F32, group_combine_scratch(e.local_size()), "max");
    std::string code = "float " + m + " = -INFINITY;\n";
    code += "for (int " + j + " = " + id + "; " + j + " < " + n + "; " + j + " += " + std::to_string(e.local_size()) + ") " +
            m + " = fmax(" + m + ", " + e.read_at(0, j) + ");\n";
    code += group_combine(e, "float", m, scratch, e.name("row_max"),
                          [](const std::string& a, const std::string& b) { return "fmax(" + a + ", " + b + ")"; });
    code += "if (" + id + " == 0) " + e.write_at(1, "0") + " = " + e.name("row_max") + ";\n";
    e.append(code);
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 4 * n + 4 * static_cast<double>(elements(call.operand(1))), n};
  }
  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[0]), out(a[1]);
    const fugue_type& t = call.operand(0);
    const int64_t row = t.shape[t.rank - 1];
    for (int64_t r = 0; r < x.size() / row; ++r) {
      float m = -INFINITY;
      for (int64_t j = 0; j < row; ++j) m = std::fmax(m, static_cast<float>(x.get(r * row + j)));
      out.set(r, m);
    }
  }
};

// The counting example of sdk/README.md ("Updates at data-dependent places"), as written there:
// counts[index[i]] += 1 through a SCATTER partition, by a third party's ELEMENT-level operation.
class Count : public Operation {
 public:
  Count() {
    name = "test.count";
    doc = "counts[index[i]] += 1 for every i whose index is in range, in place";
    operands = {inout("counts", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32)),
                in("index", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_I32))};
    test_cases = R"([{"name": "bins", "shape": [5000], "inputs": {"counts": {"shape": [13]},
                      "index": {"from": {"random": {"low": -2, "high": 15}}}}},
                     {"name": "one bin", "shape": [3000], "inputs": {"counts": {"shape": [4]}, "index": {"from": {"fill": 2}}}}])";
    traits = FUGUE_OP_UNORDERED;
  }
  void infer(const Call&, std::vector<Type>&) const override {}  // counts keeps its type
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand("index")));
    p.partitions[0] = partition(FUGUE_PARTITION_SCATTER, call.operand("counts").rank);
    return p;
  }
  void emit(const Call& call, const Plan&, const Emitter& e) const override {
    const std::string k = e.name("k"), size = std::to_string(elements(call.operand("counts")));
    e.append("const int " + k + " = " + e.read(1) + ";\n" +
             "if (" + k + " >= 0 && " + k + " < " + size + ") " + e.atomic_at(FUGUE_ATOMIC_ADD, 0, k, "1") + "\n");
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(1)));
    return {sizeof(fugue_cost), 12 * n, n};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView counts(a[0]), index(a[1]);
    for (int64_t i = 0; i < index.size(); ++i) {
      const int64_t k = index.get_int(i);
      if (k >= 0 && k < counts.size()) counts.set_int(k, counts.get_int(k) + 1);
    }
  }
};

// The 3x3 box filter of sdk/README.md ("Neighbourhoods: TILE"), as written there: a third party's
// ELEMENT-level operation reading its input TILE through read_offset; border cells give 0.
class Box3 : public Operation {
 public:
  Box3() {
    name = "test.box3";
    doc = "y = the mean of x's 3x3 neighbourhood at interior cells, 0 at the border cells";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
    tolerance_f32 = 1e-6;
    test_cases = R"([{"name": "grid", "shape": [37, 41]}, {"name": "one row", "shape": [1, 9]}])";
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    if (call.operand(0).rank != 2) throw InvalidArgument("operand x: expected a 2-D array");
    types[1] = make_type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F32, shape_of(call.operand(0)));
  }
  Plan plan(const Call& call) const override {
    Plan plan = elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(0)));
    plan.partitions[0] = partition(FUGUE_PARTITION_TILE, 2);  // x, read around each element
    plan.partitions[0].halo = {1, 1};
    plan.ends = FUGUE_ENDS_INSIDE;  // the border cells are 0: the position serves to find the ends only
    return plan;
  }
  void emit(const Call&, const Plan&, const Emitter& e) const override {
    const std::string i = e.name("i"), r = e.name("r"), c = e.name("c"), acc = e.name("acc");
    const std::string rows = e.extent(0, 0), cols = e.extent(0, 1);
    std::string code = "const long " + i + " = " + e.builtin(FUGUE_BUILTIN_INDEX) + ";\n" +
                       "const long " + r + " = " + i + " / " + cols + ", " + c + " = " + i + " % " + cols + ";\n" +
                       "float " + acc + " = 0;\n" +
                       "if (" + r + " > 0 && " + r + " < " + rows + " - 1 && " + c + " > 0 && " + c + " < " + cols + " - 1) {\n";
    for (int64_t dr = -1; dr <= 1; ++dr)
      for (int64_t dc = -1; dc <= 1; ++dc) code += "  " + acc + " += " + e.read_offset(0, {dr, dc}) + ";\n";
    code += "}\n" + e.write(1) + " = " + acc + " / 9;\n";  // the border cells: 0 here, a border rule in practice
    e.append(code);
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, 9 * n};
  }
  void reference(const Call& call, fugue_host_array* a) const override {
    HostView x(a[0]), y(a[1]);
    const int64_t rows = call.operand(0).shape[0], cols = call.operand(0).shape[1];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        float acc = 0;
        if (r > 0 && r < rows - 1 && c > 0 && c < cols - 1)
          for (int64_t dr = -1; dr <= 1; ++dr)
            for (int64_t dc = -1; dc <= 1; ++dc) acc += static_cast<float>(x.get((r + dr) * cols + c + dc));
        y.set(r * cols + c, acc / 9);
      }
  }
};

// What ABI 2.9's launch builtins say where the op runs: y = 10000 * LOCAL_SIZE_1 + 100 * SUB_GROUP_SIZE
// + 1 (LOCAL_ID_1 within LOCAL_SIZE_1) + 2 (GROUP_ID_1 within NUM_GROUPS_1) + 4 (LOCAL_ID_2, GROUP_ID_2
// both 0, NUM_GROUPS_2 1). The reference is a 1-D launch on a device without sub-group widths: 10107.
class LaunchShape : public Operation {
 public:
  LaunchShape() {
    name = "test.launch_shape";
    doc = "y = what the launch builtins of dimensions 1 and 2 and the sub-group width say, per element";
    operands = {in("x", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32)),
                out("y", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32))};
  }
  void infer(const Call& call, std::vector<Type>& types) const override { types[1] = call.operand(0); }
  Plan plan(const Call& call) const override { return elementwise_plan(call, FUGUE_LEVEL_ELEMENT, elements(call.operand(0))); }
  void emit(const Call&, const Plan&, const Emitter& e) const override {
    auto b = [&](int32_t which) { return "(" + e.builtin(which) + ")"; };
    e.append(e.write(1) + " = (float)(10000 * " + b(FUGUE_BUILTIN_LOCAL_SIZE_1) + " + 100 * " + b(FUGUE_BUILTIN_SUB_GROUP_SIZE) +
             " + (" + b(FUGUE_BUILTIN_LOCAL_ID_1) + " < " + b(FUGUE_BUILTIN_LOCAL_SIZE_1) + " ? 1 : 0) + (" +
             b(FUGUE_BUILTIN_GROUP_ID_1) + " < " + b(FUGUE_BUILTIN_NUM_GROUPS_1) + " ? 2 : 0) + (" + b(FUGUE_BUILTIN_LOCAL_ID_2) +
             " == 0 && " + b(FUGUE_BUILTIN_GROUP_ID_2) + " == 0 && " + b(FUGUE_BUILTIN_NUM_GROUPS_2) + " == 1 && " +
             b(FUGUE_BUILTIN_LOCAL_SIZE_2) + " == 1 ? 4 : 0)) + 0.0f * " + e.read(0) + ";\n");
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, n};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView y(a[1]);
    for (int64_t i = 0; i < y.size(); ++i) y.set(i, 10107.0);
  }
};

}  // namespace

void add_pair(fugue::sdk::Plugin& p);  // testops_pair.cpp

FUGUE_SDK_PLUGIN("testops", "1.0.0", "Operations for Fugue's own tests", [](fugue::sdk::Plugin& p) {
  p.add(std::make_unique<Scale>());
  p.add(std::make_unique<Accumulate>());
  p.add_kind(std::make_unique<Poly>());
  p.add(std::make_unique<Polyval>());
  p.add(std::make_unique<RowMax>());
  p.add(std::make_unique<Count>());
  p.add(std::make_unique<Box3>());
  p.add(std::make_unique<LaunchShape>());
  add_pair(p);
})
