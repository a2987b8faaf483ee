// chooser_plugin.cpp: chooser kinds for the tests of what a chooser's declaration carries (ABI 2.16's
// "reads", core/load/declarations.cpp). `tally` is a kind with storage (one part, "counts": f32 of
// "length"); `tally_auto` chooses it and lists "reads" among its keys, `tally_plain` chooses it and does
// not; the generator `tally_gen` makes one and puts the declaration it was given in the choice's note
// (fugue explain shows it, Program keeps it); `tally.copy` reads one (out = counts).
// Built twice (tests/plugins/CMakeLists.txt): as itself, and with CHOOSER_OLD as a plugin of ABI 2.15
// whose names start with "old_", which must get no "reads" though its chooser lists the key.
#include <CL/cl.h>

#include <fugue/sdk.hpp>
#include <fugue/sdk_device.hpp>

#include <nlohmann/json.hpp>

#ifdef CHOOSER_OLD
#define NAMED(text) "old_" text
#else
#define NAMED(text) text
#endif

namespace {

using namespace fugue::sdk;

Declared tally_type(int64_t length) {
  Declared d;
  d.dtype = FUGUE_DTYPE_F32;
  d.shape = {length};
  d.parts = {{FUGUE_DTYPE_F32, {length}}};
  return d;
}

// "length" of a JSON object: 1 to 2^20.
int64_t length_in(const nlohmann::json& object) {
  const auto& length = object.value("length", nlohmann::json());
  if (!length.is_number_integer() || length.get<int64_t>() < 1 || length.get<int64_t>() > (int64_t{1} << 20))
    throw InvalidArgument("/length: expected an integer from 1 to 2^20, found " + length.dump());
  return length.get<int64_t>();
}

class Tally : public Kind {
 public:
  Tally() {
    name = NAMED("tally");
    doc = "counts: f32 of \"length\" (a test kind with storage, chosen by the chooser kinds)";
    keys = {"length"};
    parts = {"counts"};
  }
  Declared declare(const std::string& text) const override { return tally_type(length_in(nlohmann::json::parse(text))); }
  std::string example(uint32_t, fugue_dtype) const override {
    return std::string(R"({"kind": ")") + NAMED("tally") + R"(", "length": 4, "parts": {"counts": {"value": 1}}})";
  }
};

class TallyChooser : public Kind {
 public:
  TallyChooser(const char* kind_name, bool takes_reads) {
    name = kind_name;
    doc = std::string("a tally chosen by its source") + (takes_reads ? ", told the program's reads" : "");
    if (takes_reads) keys = {"reads"};
    chooser = true;
  }
  Declared declare(const std::string&) const override {
    throw InvalidArgument("/from: a " + name + " takes its kind from its source (\"from\": {\"" + NAMED("tally_gen") + "\": ...})");
  }
  std::string example(uint32_t, fugue_dtype) const override { throw InvalidArgument("a " + name + " takes its kind from its source"); }
};

// {"length": n}: counts 0, 1, ..., n - 1.
class TallyGenerator : public Generator {
 public:
  TallyGenerator() {
    name = NAMED("tally_gen");
    doc = "tallies 0, 1, ..., length - 1 ({\"length\"}); a chooser's note says the declaration it was given";
  }
  bool makes_arrays() const override { return false; }
  bool makes_values() const override { return true; }
  Declared probe_as(const std::string& parameters, const std::string& declaration, const fugue_device_desc*) const override {
    Declared d = tally_type(length_in(nlohmann::json::parse(parameters)));
    d.kind_name = NAMED("tally");
    d.note = "declaration " + declaration;
    return d;
  }
  void generate_as(const std::string& parameters, const std::string&, const fugue_device_desc*, fugue_host_array& value) const override {
    HostView whole(value);
    HostView counts = whole.part(0);
    const int64_t n = length_in(nlohmann::json::parse(parameters));
    for (int64_t i = 0; i < n; ++i) counts.set(i, static_cast<double>(i));
  }
};

// out = the tally's counts.
class TallyCopy : public Operation {
 public:
  TallyCopy() {
    name = NAMED("tally.copy");
    doc = "out = the tally's counts";
    operands = {in_kind("t", NAMED("tally"), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "the tally"),
                out("out", FUGUE_KIND_BIT(FUGUE_KIND_ARRAY), FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32), "its counts")};
  }
  void infer(const Call& call, std::vector<Type>& types) const override {
    types[1] = Type(FUGUE_KIND_ARRAY, FUGUE_DTYPE_F32, Type(call.operand(0)).shape);
  }
  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
    return p;
  }
  void execute(const Call& call, const fugue_device_services& s) const override {
    const size_t bytes = static_cast<size_t>(elements(call.operand(0))) * sizeof(float);
    cl_event event = nullptr;
    check_cl(clEnqueueCopyBuffer(s.queue, part(s, call, "t", 0), buffer(s, call, "out"), 0, 0, bytes, 0, nullptr, &event), "copying the counts");
    s.track(s.context, event, "tally copy");
  }
  fugue_cost cost(const Call& call) const override {
    const double n = static_cast<double>(elements(call.operand(0)));
    return {sizeof(fugue_cost), 8 * n, 0};
  }
  void reference(const Call&, fugue_host_array* a) const override {
    HostView t(a[0]), out(a[1]);
    HostView counts = t.part(0);
    for (int64_t i = 0; i < out.size(); ++i) out.set(i, counts.get(i));
  }
};

}  // namespace

#ifdef CHOOSER_OLD
// The same plugin as one built for ABI 2.15, before choosers were told the reads.
FUGUE_DEFINE_PLUGIN_ENTRY {
  (void)core_abi_major;
  (void)core_abi_minor;
  try {
    static Plugin plugin("chooser_old", "1.0", "chooser kinds of ABI 2.15 (tests)");
    static fugue_plugin table = [] {
      plugin.add_kind(std::make_unique<Tally>());
      plugin.add_kind(std::make_unique<TallyChooser>("old_tally_auto", true));
      plugin.add_generator(std::make_unique<TallyGenerator>());
      plugin.add(std::make_unique<TallyCopy>());
      fugue_plugin t = *plugin.table();
      t.abi_minor = 15;
      return t;
    }();
    return &table;
  } catch (...) {
    return nullptr;
  }
}
#else
FUGUE_SDK_PLUGIN("chooser", "1.0", "chooser kinds told the program's reads, or not (tests)", [](Plugin& p) {
  p.add_kind(std::make_unique<Tally>());
  p.add_kind(std::make_unique<TallyChooser>("tally_auto", true));
  p.add_kind(std::make_unique<TallyChooser>("tally_plain", false));
  p.add_generator(std::make_unique<TallyGenerator>());
  p.add(std::make_unique<TallyCopy>());
})
#endif
