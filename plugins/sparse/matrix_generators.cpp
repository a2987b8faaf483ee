#include "matrix_generators.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <random>

#include <nlohmann/json.hpp>

#include "coordinates.h"
#include "host_memory.h"
#include "sparse_kind.h"

namespace fugue::sparse {

namespace {

using json = nlohmann::json;
using sdk::InvalidArgument;

// The most entries a generator makes (each costs about 40 bytes on the host while it is stored).
constexpr int64_t kMostEntries = int64_t{1} << 31;

json parse(const std::string& text) {
  try {
    json j = json::parse(text);
    if (!j.is_object()) throw InvalidArgument("expected an object of parameters, found " + j.dump());
    return j;
  } catch (const json::parse_error& e) {
    throw InvalidArgument(std::string("the parameters are not JSON: ") + e.what());
  }
}

void only_keys(const json& p, std::initializer_list<const char*> keys) {
  for (const auto& item : p.items()) {
    const std::string key = item.key();
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
      std::string list;
      for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
      throw InvalidArgument("/" + key + ": unknown parameter (expected " + list + ")");
    }
  }
}

int64_t integer(const json& p, const char* key, int64_t low, int64_t high, std::optional<int64_t> fallback = std::nullopt) {
  if (!p.contains(key)) {
    if (fallback) return *fallback;
    throw InvalidArgument(std::string("/") + key + ": required (an integer from " + std::to_string(low) + " to " + std::to_string(high) + ")");
  }
  const json& v = p[key];
  if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high)
    throw InvalidArgument(std::string("/") + key + ": expected an integer from " + std::to_string(low) + " to " + std::to_string(high) +
                          ", found " + v.dump());
  return v.get<int64_t>();
}

double probability(const json& p, const char* key, double fallback) {
  if (!p.contains(key)) return fallback;
  if (!p[key].is_number() || p[key].get<double>() < 0 || p[key].get<double>() > 1)
    throw InvalidArgument(std::string("/") + key + ": expected a probability from 0 to 1, found " + p[key].dump());
  return p[key].get<double>();
}

// Refuses before anything is made: more entries than the layouts count, or more than the host holds.
void check_entries(double entries, int64_t rows) {
  if (entries > static_cast<double>(kMostEntries))
    throw InvalidArgument("would make about " + std::to_string(static_cast<int64_t>(entries)) + " entries; at most 2^31");
  check_host_room(matrix_host_bytes(rows, rows, static_cast<int64_t>(entries)),
                  "the " + std::to_string(rows) + " by " + std::to_string(rows) + " matrix of about " + std::to_string(static_cast<int64_t>(entries)) +
                      " entries");
}

// A value in [-1, 1) that is not zero.
double nonzero(std::mt19937_64& random) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (;;)
    if (const double v = u(random); v != 0) return v;
}

Coordinates poisson(const json& p) {
  only_keys(p, {"grid"});
  if (!p.contains("grid") || !p["grid"].is_array() || (p["grid"].size() != 2 && p["grid"].size() != 3))
    throw InvalidArgument("/grid: expected [n1, n2] (5 points) or [n1, n2, n3] (7 points)");
  std::vector<int64_t> n;
  for (size_t d = 0; d < p["grid"].size(); ++d) {
    const json& v = p["grid"][d];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (int64_t{1} << 24))
      throw InvalidArgument("/grid/" + std::to_string(d) + ": expected an integer from 1 to 2^24, found " + v.dump());
    n.push_back(v.get<int64_t>());
  }
  if (n.size() == 2) n.insert(n.begin(), 1);  // a 2-D grid is one layer of a 3-D one
  const double points = static_cast<double>(n[0]) * static_cast<double>(n[1]) * static_cast<double>(n[2]);
  check_entries(points * (p["grid"].size() == 2 ? 5 : 7), static_cast<int64_t>(points));
  Coordinates m;
  m.rows = m.cols = static_cast<int64_t>(points);
  const double centre = p["grid"].size() == 2 ? 4 : 6;
  m.row.reserve(static_cast<size_t>(points * 7));
  m.col.reserve(static_cast<size_t>(points * 7));
  m.value.reserve(static_cast<size_t>(points * 7));
  const int64_t plane = n[1] * n[2];
  for (int64_t a = 0; a < n[0]; ++a)
    for (int64_t b = 0; b < n[1]; ++b)
      for (int64_t c = 0; c < n[2]; ++c) {
        const int64_t i = a * plane + b * n[2] + c;
        // Columns ascending: -plane, -row, -1, 0, +1, +row, +plane.
        if (a > 0) m.add(i, i - plane, -1);
        if (b > 0) m.add(i, i - n[2], -1);
        if (c > 0) m.add(i, i - 1, -1);
        m.add(i, i, centre);
        if (c + 1 < n[2]) m.add(i, i + 1, -1);
        if (b + 1 < n[1]) m.add(i, i + n[2], -1);
        if (a + 1 < n[0]) m.add(i, i + plane, -1);
      }
  return m;
}

// Sorts by (row, col) and keeps the first of repeated positions.
void sort_dropping_repeats(Coordinates& m) {
  if (m.ordered()) return;
  const std::vector<int64_t> order = m.row_major_order();
  Coordinates kept;
  kept.rows = m.rows;
  kept.cols = m.cols;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t e = order[k];
    if (k > 0 && m.row[e] == m.row[order[k - 1]] && m.col[e] == m.col[order[k - 1]]) continue;
    kept.add(m.row[e], m.col[e], m.value[e]);
  }
  m = std::move(kept);
}

// A band of `width` entries a row; optionally `scattered` more a row at random columns and `long_rows` rows
// (spread evenly) of `long_row_entries` more: a band with irregular parts, what the cocktail splits.
Coordinates banded(const json& p) {
  only_keys(p, {"rows", "width", "seed", "scattered", "long_rows", "long_row_entries"});
  const int64_t rows = integer(p, "rows", 1, int64_t{1} << 31), width = integer(p, "width", 1, 4096);
  const int64_t scattered = integer(p, "scattered", 0, 4096, 0), long_rows = integer(p, "long_rows", 0, rows, 0);
  const int64_t long_entries = integer(p, "long_row_entries", 1, rows, std::min<int64_t>(4096, rows));
  check_entries(static_cast<double>(rows) * static_cast<double>(width + scattered) + static_cast<double>(long_rows) * static_cast<double>(long_entries),
                rows);
  std::mt19937_64 random(static_cast<uint64_t>(integer(p, "seed", 0, int64_t{1} << 53, 0)));
  Coordinates m;
  m.rows = m.cols = rows;
  const int64_t every = long_rows ? rows / long_rows : 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t first = std::clamp<int64_t>(i - width / 2, 0, std::max<int64_t>(rows - width, 0));
    for (int64_t j = first; j < std::min(rows, first + width); ++j) m.add(i, j, nonzero(random));
    const int64_t more = scattered + (every && i % every == every / 2 && i / every < long_rows ? long_entries : 0);
    for (int64_t k = 0; k < more; ++k) m.add(i, static_cast<int64_t>(random() % static_cast<uint64_t>(rows)), nonzero(random));
  }
  if (scattered || long_rows) sort_dropping_repeats(m);  // a random column may fall in the band or repeat
  return m;
}

Coordinates rmat(const json& p) {
  only_keys(p, {"scale", "edges", "seed", "a", "b", "c"});
  const int64_t scale = integer(p, "scale", 1, 30), edges = integer(p, "edges", 1, 1024);
  const double a = probability(p, "a", 0.57), b = probability(p, "b", 0.19), c = probability(p, "c", 0.19);
  if (a + b + c > 1) throw InvalidArgument("/c: a + b + c must be at most 1 (d = 1 - a - b - c), found " + std::to_string(a + b + c));
  const int64_t n = int64_t{1} << scale;
  check_entries(static_cast<double>(n) * static_cast<double>(edges), n);
  std::mt19937_64 random(static_cast<uint64_t>(integer(p, "seed", 0, int64_t{1} << 53, 0)));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Coordinates m;
  m.rows = m.cols = n;
  for (int64_t e = 0; e < n * edges; ++e) {
    int64_t i = 0, j = 0;
    for (int64_t bit = n / 2; bit > 0; bit /= 2) {
      const double r = u(random);
      if (r < a) continue;
      if (r < a + b) j += bit;
      else if (r < a + b + c) i += bit;
      else i += bit, j += bit;
    }
    m.add(i, j, 1.0);
  }
  sort_dropping_repeats(m);
  return m;
}

Coordinates fem(const json& p) {
  only_keys(p, {"nodes", "block", "neighbours", "seed"});
  const int64_t nodes = integer(p, "nodes", 1, int64_t{1} << 28), block = integer(p, "block", 1, 8),
                neighbours = integer(p, "neighbours", 0, 64);
  check_entries(static_cast<double>(nodes) * static_cast<double>(2 * neighbours + 1) * static_cast<double>(block * block), nodes * block);
  std::mt19937_64 random(static_cast<uint64_t>(integer(p, "seed", 0, int64_t{1} << 53, 0)));
  // Node couplings: each node to neighbours others within a window of 4 * neighbours, both ways.
  Coordinates nodes_graph;
  nodes_graph.rows = nodes_graph.cols = nodes;
  std::uniform_int_distribution<int64_t> offset(1, std::max<int64_t>(4 * neighbours, 1));
  for (int64_t i = 0; i < nodes; ++i) {
    nodes_graph.add(i, i, 1);
    for (int64_t k = 0; k < neighbours; ++k) {
      const int64_t j = i + offset(random);
      if (j < nodes) nodes_graph.add(i, j, 1), nodes_graph.add(j, i, 1);
    }
  }
  sort_dropping_repeats(nodes_graph);
  Coordinates m;
  m.rows = m.cols = nodes * block;
  for (int64_t i = 0; i < nodes; ++i) {
    // The node's row range of coupled nodes (sorted by column already).
    const auto first = std::lower_bound(nodes_graph.row.begin(), nodes_graph.row.end(), i) - nodes_graph.row.begin();
    const auto last = std::upper_bound(nodes_graph.row.begin(), nodes_graph.row.end(), i) - nodes_graph.row.begin();
    for (int64_t r = 0; r < block; ++r)
      for (auto e = first; e < last; ++e)
        for (int64_t s = 0; s < block; ++s) m.add(i * block + r, nodes_graph.col[static_cast<size_t>(e)] * block + s, nonzero(random));
  }
  return m;
}

class MatrixGenerator final : public sdk::Generator {
 public:
  MatrixGenerator(std::string generator_name, std::string generator_doc, std::function<Coordinates(const json&)> make)
      : make_(std::move(make)) {
    name = std::move(generator_name);
    doc = std::move(generator_doc);
  }
  bool makes_arrays() const override { return false; }
  bool makes_values() const override { return true; }

  sdk::Declared probe_as(const std::string& parameters, const std::string& declaration, const fugue_device_desc* device) const override {
    return declared_as(*matrix(parameters), declaration, device);
  }
  void generate_as(const std::string& parameters, const std::string& declaration, const fugue_device_desc* device,
                   fugue_host_array& value) const override {
    store_as_declared(*matrix(parameters), declaration, device, value, "the " + name + " matrix");
    std::lock_guard<std::mutex> lock(mutex_);  // the value is stored: the entries need not stay on the host
    cached_.reset();
  }

 private:
  // The last parameters' matrix is kept from probe_as to generate_as.
  std::shared_ptr<const Coordinates> matrix(const std::string& parameters) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!cached_ || cached_parameters_ != parameters) {
      cached_ = std::make_shared<const Coordinates>(make_(parse(parameters)));
      cached_parameters_ = parameters;
    }
    return cached_;
  }

  std::function<Coordinates(const json&)> make_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const Coordinates> cached_;
  mutable std::string cached_parameters_;
};

}  // namespace

std::vector<std::unique_ptr<sdk::Generator>> matrix_generators() {
  std::vector<std::unique_ptr<sdk::Generator>> all;
  all.push_back(std::make_unique<MatrixGenerator>(
      "poisson", "sparse matrices: the 5-point ({\"grid\": [n1, n2]}) or 7-point ([n1, n2, n3]) Laplacian", poisson));
  all.push_back(std::make_unique<MatrixGenerator>(
      "banded", "sparse matrices: a dense band of \"width\" entries a row around the diagonal, with \"scattered\" more a row at random "
      "columns and \"long_rows\" rows of \"long_row_entries\" more ({\"rows\", \"width\", \"seed\", \"scattered\", \"long_rows\", "
      "\"long_row_entries\"})", banded));
  all.push_back(std::make_unique<MatrixGenerator>(
      "rmat", "sparse matrices: an R-MAT power-law graph on 2^scale vertices, about edges * 2^scale entries ({\"scale\", \"edges\", "
              "\"seed\", \"a\", \"b\", \"c\"})", rmat));
  all.push_back(std::make_unique<MatrixGenerator>(
      "fem", "sparse matrices: finite-element-like, dense block x block couplings of each node to itself and \"neighbours\" "
             "nearby nodes ({\"nodes\", \"block\", \"neighbours\", \"seed\"})", fem));
  return all;
}

}  // namespace fugue::sparse
