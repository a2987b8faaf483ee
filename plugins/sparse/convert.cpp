#include "convert.h"

#include <CL/cl.h>

#include <fugue/sdk_device.hpp>

#include <string>
#include <vector>

#include "convert_device.h"
#include "layouts.h"
#include "sparse_kind.h"

namespace fugue::sparse {

namespace {

using namespace fugue::sdk;

constexpr uint32_t kB = 0, kA = 1;
constexpr uint32_t kFloats = FUGUE_DTYPE_BIT(FUGUE_DTYPE_F32) | FUGUE_DTYPE_BIT(FUGUE_DTYPE_F64);
const char* const kEveryKind = "csr coo ell sell dia bdia hyb bcsr bell sbell cocktail";
const char* const kTargets = "csr coo ell sell dia bdia hyb bcsr bell sbell cocktail";

// A copy on the host of a value of a kind with storage: each part's bytes, viewed as the core's host arrays are.
class HostCopy {
 public:
  HostCopy(const HostCopy&) = delete;  // whole_ points into parts_
  HostCopy& operator=(const HostCopy&) = delete;
  explicit HostCopy(const fugue_type& type) : bytes_(type.num_parts), parts_(type.num_parts) {
    for (uint32_t k = 0; k < type.num_parts; ++k) {
      const fugue_type& part = *FUGUE_NTH(fugue_type, type.parts, k);
      bytes_[k].resize(static_cast<size_t>(elements(part)) * dtype_bytes(part.dtype));
      parts_[k] = fugue_host_array{sizeof(fugue_host_array), &part, bytes_[k].data(), bytes_[k].size(), 0, 0, nullptr};
    }
    whole_ = fugue_host_array{sizeof(fugue_host_array), &type, nullptr, 0, 0, type.num_parts, parts_.data()};
  }
  HostView view() { return HostView(whole_); }
  std::vector<unsigned char>& bytes(uint32_t k) { return bytes_[k]; }

 private:
  std::vector<std::vector<unsigned char>> bytes_;
  std::vector<fugue_host_array> parts_;
  fugue_host_array whole_{};
};

// "a dia", "an ell".
std::string a_layout(Layout layout) {
  const std::string name = layout_name(layout);
  return (std::string("aeiou").find(name[0]) != std::string::npos ? "an " : "a ") + name;
}

// The counts a layout's declaration gives, by key, as `f` has them.
std::vector<std::pair<std::string, int64_t>> counts_of(const Facts& f) {
  if (f.layout == Layout::Cocktail) {
    const Facts &dia = f.components[0], &sbell = f.components[1], &sell = f.components[2], &csr = f.components[3];
    return {{"diagonals", dia.diagonals}, {"blocks", sbell.blocks}, {"stored", sell.stored}, {"csr_rows", csr.rows}, {"nnz", csr.nnz}};
  }
  std::vector<std::pair<std::string, int64_t>> counts = {{count_key(f.layout), declared_count(f)}};
  if (f.layout == Layout::Hyb) counts = {{"nnz", f.nnz}};  // its width is B's, the entries past it counted
  if (f.layout == Layout::Bdia) counts.emplace_back("bands", f.bands);
  return counts;
}

// A's entries in B's layout: the facts of B's type when they are what the entries make, else
// InvalidArgument naming the counts to declare.
Facts target_facts(const Coordinates& m, Layout from, const fugue_type& b) {
  const Facts declared = facts_of(b);
  Cut cut = declared.split;  // a cocktail's, as its declaration fixed it
  if (declared.layout != Layout::Cocktail) {
    cut.slice = declared.slice;
    cut.sigma = declared.sigma > 0 ? declared.sigma : 1;
    cut.width = declared.width;
    cut.block_rows = declared.block_rows;
    cut.block_cols = declared.block_cols;
  }
  // Padding is B's declaration's to choose: no limit as for files.
  Facts made = facts_for(m, declared.layout, declared.dtype, declared.index, cut, false);
  if (declared.counted) {  // the run count left to the run: at most its capacity (hyb's width is its cut)
    const int64_t need = run_count(made), room = run_count(declared);
    if (need > room) {
      const std::string key = run_count_key(declared.layout);
      throw InvalidArgument("operand B: A's " + std::to_string(m.entries()) + " entries" +
                            (from == Layout::Csr || from == Layout::Coo ? "" : std::string(" (its nonzero values: zeros are padding in ") + a_layout(from) + ")") +
                            " do not fit the " + layout_name(declared.layout) + " B, which is declared with \"" + key + "\": {\"capacity\": " +
                            std::to_string(room) + "}: declare a capacity of at least " + std::to_string(need));
    }
    made.counted = true;
    return made;
  }
  std::string differ, declare;
  const auto want = counts_of(made), have = counts_of(declared);
  for (size_t k = 0; k < want.size(); ++k)
    if (want[k].second != have[k].second) {
      differ += std::string(differ.empty() ? "" : " and ") + "\"" + want[k].first + "\": " + std::to_string(have[k].second);
      declare += std::string(declare.empty() ? "" : ", ") + "\"" + want[k].first + "\": " + std::to_string(want[k].second);
    }
  if (!differ.empty())
    throw InvalidArgument("operand B: A's " + std::to_string(m.entries()) + " entries" +
                          // where zeros are padding, the count follows A's values (a loop's may change it)
                          (from == Layout::Csr || from == Layout::Coo ? "" : std::string(" (its nonzero values: zeros are padding in ") + a_layout(from) + ")") +
                          " need " + declare + " in the " + layout_name(declared.layout) +
                          " B, which is declared with " + differ + ": declare " + declare);
  const Declared type = declared_type(made);
  bool same = type.parts.size() == b.num_parts;
  for (uint32_t k = 0; same && k < b.num_parts; ++k)
    same = elements(*FUGUE_NTH(fugue_type, b.parts, k)) == places_in(type.parts[k]) && FUGUE_NTH(fugue_type, b.parts, k)->dtype == type.parts[k].dtype;
  if (!same) throw std::logic_error("sparse.convert: the same counts gave other parts");
  return made;
}

class Convert final : public Operation {
 public:
  Convert() {
    name = "sparse.convert";
    doc = "B = A in another sparse layout: A's entries (its padding left out) stored as B's declaration says (its kind; sell's "
          "slice and sigma, hyb's width, the block layouts' block, a cocktail's split and the index dtype). The counts of B "
          "(nnz, width, stored, diagonals, bands, blocks; a cocktail's diagonals, blocks, stored, csr_rows and nnz) come from A's "
          "entries: B's declaration must give them, and a run that counts others stops and names them; {\"capacity\": n} "
          "in place of one (a csr's, a coo's or a hyb's nnz, an ell's or a bell's width, a sell's stored, a dia's diagonals, a "
          "bcsr's or a sbell's blocks) leaves it to the run, at most n. A and B hold the same dtype. "
          "Between any two of csr, coo, ell, sell, dia, bdia, hyb, bcsr, bell, sbell and cocktail, on "
          "the device";
    operands = {out_kind("B", kTargets, kFloats, "the matrix in its new layout, declared with its kind and counts"),
                in_kind("A", kEveryKind, kFloats, "the matrix [m, n], any sparse kind")};
    traits = FUGUE_OP_RUNTIME_COUNTS;  // A's or B's count (layouts.h's run_count) may be counted as it runs
    test_cases = conformance_cases();
  }

  void infer(const Call& call, std::vector<Type>& types) const override {
    const fugue_type& a = call.operand(kA);
    if (a.rank != 2) throw InvalidArgument("operand A: expected a sparse matrix [m, n], found " + type_string(a));
    // B's declaration names the layout (ABI 2.18 shows it to infer).
    const fugue_type& declared = call.operand(kB);
    const std::string kind = declared.kind == FUGUE_KIND_PLUGIN && declared.kind_name ? declared.kind_name : "";
    const auto layout = layout_named(kind);
    if (!layout)
      throw InvalidArgument("operand B: declare it as the kind it is converted into, one of " + std::string(kTargets) + " (" +
                            (kind.empty() ? "with its shape and counts: {\"kind\": \"ell\", \"dtype\": \"f32\", \"shape\": [m, n], \"width\": 5}"
                                          : "found " + kind) +
                            ")");
    // The split a device's choice makes is known only once the matrix is read: a cocktail converted into
    // is split as its declaration says.
    if (*layout == Layout::Cocktail && !facts_of(declared).split_declared)
      throw InvalidArgument("operand B: a cocktail converted into is split as its declaration says: give \"diagonal_fill\", "
                            "\"block_fill\" or \"width\" (a fill above 1 takes nothing; no width: every entry left goes to the sell); "
                            "the split chosen for the device is made where a cocktail is read \"from\" a file");
    Type b(FUGUE_KIND_PLUGIN, a.dtype, {a.shape[0], a.shape[1]});
    b.kind_name = layout_name(*layout);
    types[kB] = b;
  }

  Plan plan(const Call& call) const override {
    Plan p = elementwise_plan(call, FUGUE_LEVEL_DEVICE, 0);
    for (auto& part : p.partitions) part = partition(FUGUE_PARTITION_NONE);
    const Facts b = facts_of(call.operand(kB));
    std::string counts;
    for (const auto& [key, value] : counts_of(b)) counts += std::string(counts.empty() ? "" : ", ") + key + " " + std::to_string(value);
    p.variant = std::string(converts_on_device(facts_of(call.operand(kA)), b) ? "on the device: " : "on the host: ") +
                call.operand(kA).kind_name + " -> " + layout_name(b.layout) + " (" + counts + ", as declared)";
    return p;
  }

  void execute(const Call& call, const fugue_device_services& s) const override {
    if (!(converts_on_device(facts_of(call.operand(kA)), facts_of(call.operand(kB))) && convert_on_device(call, s))) convert_on_host(call, s);
  }

  // A's parts read back, converted by the layouts' own code, and B's parts written.
  void convert_on_host(const Call& call, const fugue_device_services& s) const {
    const fugue_type &a = call.operand(kA), &b = call.operand(kB);
    const Facts source = facts_of(a);
    const int64_t count = source.counted ? read_count(s, call, "A", run_count(source)) : -1;  // A's count, as it ran
    HostCopy from(a), to(b);
    for (uint32_t k = 0; k < a.num_parts; ++k)
      if (!from.bytes(k).empty())
        check_cl(clEnqueueReadBuffer(s.queue, part(s, call, "A", k), CL_TRUE, 0, from.bytes(k).size(), from.bytes(k).data(), 0, nullptr, nullptr),
                 name + ": reading A");
    const Facts made = convert(a, from.view(), b, to.view(), count);
    for (uint32_t k = 0; k < b.num_parts; ++k)
      if (!to.bytes(k).empty())
        check_cl(clEnqueueWriteBuffer(s.queue, part(s, call, "B", k), CL_TRUE, 0, to.bytes(k).size(), to.bytes(k).data(), 0, nullptr, nullptr),
                 name + ": writing B");
    if (made.counted) write_count(s, call, "B", run_count(made));
  }

  fugue_cost cost(const Call& call) const override {
    double bytes = 0;
    for (uint32_t operand : {kA, kB}) {
      const fugue_type& t = call.operand(operand);
      for (uint32_t k = 0; k < t.num_parts; ++k) {
        const fugue_type& part = *FUGUE_NTH(fugue_type, t.parts, k);
        bytes += static_cast<double>(elements(part)) * static_cast<double>(dtype_bytes(part.dtype));
      }
    }
    // On the host: over the bus and back, on top of the host's walk.
    const bool device = converts_on_device(facts_of(call.operand(kA)), facts_of(call.operand(kB)));
    return {sizeof(fugue_cost), (device ? 1 : 2) * bytes, 0};
  }

  void reference(const Call& call, fugue_host_array* arrays) const override {
    // A reference sees a count left to the run as its parts' length (and A's type says it).
    const Facts made = convert(call.operand(kA), HostView(arrays[kA]), call.operand(kB), HostView(arrays[kB]));
    if (made.counted) arrays[kB].length = run_count(made);
  }

 private:
  // B's facts as stored; `count`, where not -1, is A's count left to the run (A's parts hold more places).
  static Facts convert(const fugue_type& a, const HostView& from, const fugue_type& b, const HostView& to, int64_t count = -1) {
    Facts source = facts_of(a);
    if (count >= 0) set_run_count(source, count);
    const Coordinates m = entries_of(source, from);
    const Facts made = target_facts(m, source.layout, b);
    store(made, m, to);
    return made;
  }

  // The seed's B from every layout into every other, and a matrix with empty rows, a long row and
  // columns past its rows' into every layout from csr; the counts as the conversion makes them, a
  // cocktail's split as its declaration fixes it.
  static std::string conformance_cases() {
    Coordinates wide;
    wide.rows = 7, wide.cols = 19;
    for (int64_t c = 0; c < 19; c += 2) wide.add(1, c, 1.0 + static_cast<double>(c));
    for (int64_t r = 3; r < 7; ++r) wide.add(r, r + 5, -0.5 * static_cast<double>(r)), wide.add(r, 18, 0.25);
    Cut cut;
    cut.slice = 2, cut.sigma = 4, cut.block_rows = 1, cut.block_cols = 4;
    std::string cases;
    auto add = [&](const Coordinates& m, Layout from, Layout to, fugue_dtype dtype, const std::string& what) {
      Cut own = cut;
      if (to == Layout::Hyb) own.width = 1;
      // A cocktail of every part: the full diagonals, dense blocks of what is left, a row's first entry, the rest.
      if (to == Layout::Cocktail) own.diagonal_fill = 0.9, own.block_fill = 0.5, own.block_rows = 2, own.block_slice = 2, own.width = 1;
      // The wide one: no dense diagonal, blocks of half their places, every entry left the sell's.
      if (to == Layout::Cocktail && m.cols != m.rows) own.diagonal_fill = 2, own.block_fill = 0.5, own.width = -1;
      const Facts made = facts_for(m, to, dtype, FUGUE_DTYPE_NONE, own, false);
      cases += std::string(cases.empty() ? "" : ",\n") + R"({"name": ")" + what + " from " + layout_name(from) + " to " + layout_name(to) +
               R"(", "dtypes": [")" + (dtype == FUGUE_DTYPE_F64 ? "f64" : "f32") + R"("], "inputs": {"A": )" + inline_declaration(m, from, dtype, cut) + R"(}, "outputs": {"B": )" + counts_declaration(made, own) + "}}";
    };
    for (Layout from : every_layout())
      for (Layout to : every_layout())
        if (to != from) add(seed_matrix_b(), from, to, FUGUE_DTYPE_F64, "the seed's B");
    for (Layout to : every_layout()) add(wide, Layout::Csr, to, FUGUE_DTYPE_F32, "7 by 19");
    // Counts left to the run: B of every layout that takes one declared with room to spare (from a dia,
    // just enough; a sell's a slice more) from every other layout. (A value whose count is left
    // to the run as an input comes only from an operation: the integration tests run such programs.)
    for (Layout from : every_layout())
      for (Layout to : every_layout())
        if (to != from && takes_run_count(to)) {
          Cut own = cut;
          if (to == Layout::Hyb) own.width = 1;
          Facts made = facts_for(seed_matrix_b(), to, FUGUE_DTYPE_F64, FUGUE_DTYPE_NONE, own, false);
          made.counted = true;
          // Room to spare within what a 4 by 4 matrix holds (its 1 x 4 blocks are all there are).
          const int64_t spare = from == Layout::Dia || blocked(to) ? 0 : to == Layout::Ell ? 1 : to == Layout::Dia ? 2 : to == Layout::Sell ? made.slice : 3;
          set_run_count(made, run_count(made) + spare);
          cases += ",\n" + std::string(R"({"name": "the seed's B from )") + layout_name(from) + " to " + layout_name(to) +
                   R"( counted as it runs", "dtypes": ["f64"], "inputs": {"A": )" + inline_declaration(seed_matrix_b(), from, FUGUE_DTYPE_F64, cut) +
                   R"(}, "outputs": {"B": )" + counts_declaration(made, own) + "}}";
        }
    return "[" + cases + "]";
  }
};

}  // namespace

std::unique_ptr<Operation> convert_operation() { return std::make_unique<Convert>(); }

}  // namespace fugue::sparse
