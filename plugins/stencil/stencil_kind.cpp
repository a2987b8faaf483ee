// stencil_kind.cpp: the stencil kind's declaration (read and checked here, every message with the
// JSON pointer of the part at fault) and its metadata's encoding.
#include "stencil_kind.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace fugue::stencil {

using json = nlohmann::json;

std::vector<unsigned char> Stencil::encode() const {
  fugue_stencil_metadata header{};
  header.struct_size = sizeof header;
  header.rank = rank;
  header.num_points = static_cast<uint32_t>(weights.size());
  header.border = border;
  std::vector<unsigned char> bytes(sizeof header + offsets.size() * sizeof(int64_t) + weights.size() * sizeof(double));
  unsigned char* at = bytes.data();
  std::memcpy(at, &header, sizeof header);
  at += sizeof header;
  if (!offsets.empty()) std::memcpy(at, offsets.data(), offsets.size() * sizeof(int64_t));
  at += offsets.size() * sizeof(int64_t);
  if (!weights.empty()) std::memcpy(at, weights.data(), weights.size() * sizeof(double));
  return bytes;
}

Stencil Stencil::decode(const void* data, uint64_t size) {
  fugue_stencil_metadata header{};
  if (!data || size < sizeof(uint32_t)) throw std::invalid_argument("no stencil metadata");
  std::memcpy(&header.struct_size, data, sizeof(uint32_t));
  if (header.struct_size < sizeof header || header.struct_size > size)
    throw std::invalid_argument("malformed stencil metadata");
  std::memcpy(&header, data, sizeof header);
  const uint64_t points = header.num_points, rank = header.rank;
  if (rank == 0 || rank > 64 || points == 0 || points > (1u << 20) ||
      header.struct_size + points * rank * sizeof(int64_t) + points * sizeof(double) != size)
    throw std::invalid_argument("malformed stencil metadata");
  Stencil s;
  s.rank = header.rank;
  s.border = header.border;
  s.offsets.resize(points * rank);
  s.weights.resize(points);
  const unsigned char* at = static_cast<const unsigned char*>(data) + header.struct_size;
  std::memcpy(s.offsets.data(), at, s.offsets.size() * sizeof(int64_t));
  std::memcpy(s.weights.data(), at + s.offsets.size() * sizeof(int64_t), s.weights.size() * sizeof(double));
  return s;
}

std::vector<int64_t> Stencil::footprint() const {
  std::vector<int64_t> shape(rank, 1);
  for (uint32_t d = 0; d < rank; ++d) {
    int64_t radius = 0;
    for (size_t p = 0; p < points(); ++p) {
      const int64_t o = offsets[p * rank + d];  // within [-1024, 1024]: no overflow
      radius = std::max(radius, o < 0 ? -o : o);
    }
    shape[d] = 2 * radius + 1;
  }
  return shape;
}

Stencil stencil_of(const sdk::Call& call, uint32_t i) {
  const fugue_type& t = call.operand(i);
  if (t.kind != FUGUE_KIND_PLUGIN || !t.kind_name || std::string(t.kind_name) != "stencil")
    throw std::logic_error("operand " + call.operand_name(i) + " is not a stencil");
  try {
    return Stencil::decode(t.metadata, t.metadata_bytes);
  } catch (const std::invalid_argument& e) {
    throw std::logic_error("operand " + call.operand_name(i) + ": " + e.what());
  }
}

namespace {

constexpr int64_t kMaxOffset = 1024;
constexpr size_t kMaxPoints = 4096;
constexpr size_t kMaxRank = 8;

std::string describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  const char* type = v.is_string() ? "a string " : v.is_array() ? "a list " : v.is_object() ? "an object " :
                     v.is_boolean() ? "a boolean " : v.is_null() ? "" : "";
  return type + text;
}

[[noreturn]] void fail(const std::string& pointer, const std::string& expected, const json& found) {
  throw sdk::InvalidArgument(pointer + ": expected " + expected + ", found " + describe(found));
}

class StencilKind final : public sdk::Kind {
 public:
  StencilKind() {
    name = "stencil";
    doc = "points with integer offsets and weights and a border rule (clamp, zero, periodic, mirror), baked "
          "into kernels";
    keys = {"dtype", "points", "border"};
  }

  sdk::Declared declare(const std::string& text) const override {
    const json decl = json::parse(text, nullptr, false);
    if (!decl.is_object()) throw sdk::InvalidArgument("expected a JSON object declaring a stencil");
    sdk::Declared out;
    out.dtype = FUGUE_DTYPE_F32;
    if (decl.contains("dtype")) {
      const json& d = decl["dtype"];
      if (d == "f32") out.dtype = FUGUE_DTYPE_F32;
      else if (d == "f64") out.dtype = FUGUE_DTYPE_F64;
      else fail("/dtype", "f32 or f64 (the weights' dtype)", d);
    }
    Stencil st;
    if (!decl.contains("points")) fail("/points", "a list of points {\"offset\": [...], \"weight\": w}", json());
    const json& points = decl["points"];
    if (!points.is_array() || points.empty() || points.size() > kMaxPoints)
      fail("/points", "a list of 1 to " + std::to_string(kMaxPoints) + " points", points);
    std::set<std::vector<int64_t>> seen;
    for (size_t k = 0; k < points.size(); ++k) {
      const std::string pk = "/points/" + std::to_string(k);
      const json& point = points[k];
      if (!point.is_object()) fail(pk, "an object {\"offset\": [...], \"weight\": w}", point);
      for (const auto& [key, value] : point.items())
        if (key != "offset" && key != "weight")
          throw sdk::InvalidArgument(pk + "/" + key + ": unknown key (expected offset, weight)");
      if (!point.contains("offset")) fail(pk + "/offset", "an offset per axis, e.g. [-1, 0]", json());
      if (!point.contains("weight")) fail(pk + "/weight", "a weight (a number)", json());
      const json& offset = point["offset"];
      if (!offset.is_array() || offset.empty() || offset.size() > kMaxRank)
        fail(pk + "/offset", "a list of 1 to " + std::to_string(kMaxRank) + " integer offsets", offset);
      if (k == 0) st.rank = static_cast<uint32_t>(offset.size());
      if (offset.size() != st.rank) fail(pk + "/offset", std::to_string(st.rank) + " offsets, like the first point", offset);
      std::vector<int64_t> o;
      for (size_t d = 0; d < offset.size(); ++d) {
        // Compared without abs(): -2^63 has no absolute value in int64_t.
        const json& v = offset[d];
        const bool integer = v.is_number_integer() && (v.is_number_unsigned() ? v.get<uint64_t>() <= kMaxOffset
                                                                                : v.get<int64_t>() >= -kMaxOffset &&
                                                                                      v.get<int64_t>() <= kMaxOffset);
        if (!integer)
          fail(pk + "/offset/" + std::to_string(d),
               "an integer in [" + std::to_string(-kMaxOffset) + ", " + std::to_string(kMaxOffset) + "]", v);
        o.push_back(v.get<int64_t>());
      }
      if (!seen.insert(o).second) throw sdk::InvalidArgument(pk + "/offset: this offset appears twice in the stencil");
      st.offsets.insert(st.offsets.end(), o.begin(), o.end());
      const json& w = point["weight"];
      if (!w.is_number() || !std::isfinite(w.get<double>())) fail(pk + "/weight", "a finite number", w);
      // Baked into the kernel as a literal of the weights' dtype: it must be one.
      if (out.dtype == FUGUE_DTYPE_F32 && std::fabs(w.get<double>()) > FLT_MAX)
        fail(pk + "/weight", "a number an f32 holds (|w| <= 3.4028235e38; declare \"dtype\": \"f64\" for more)", w);
      st.weights.push_back(w.get<double>());
    }
    st.border = FUGUE_BORDER_CLAMP;
    if (decl.contains("border")) {
      const json& b = decl["border"];
      if (b == "clamp") st.border = FUGUE_BORDER_CLAMP;
      else if (b == "zero") st.border = FUGUE_BORDER_ZERO;
      else if (b == "periodic") st.border = FUGUE_BORDER_PERIODIC;
      else if (b == "mirror") st.border = FUGUE_BORDER_MIRROR;
      else fail("/border", "clamp, zero, periodic or mirror", b);
    }
    out.shape = st.footprint();
    out.metadata = st.encode();
    return out;
  }

  // A star of 2 * rank + 1 points with unequal weights, so that swapped axes or signs show.
  std::string example(uint32_t rank, fugue_dtype dtype) const override {
    rank = std::clamp<uint32_t>(rank, 1, kMaxRank);
    json points = json::array();
    points.push_back({{"offset", std::vector<int64_t>(rank, 0)}, {"weight", -0.75}});
    for (uint32_t axis = 0; axis < rank; ++axis)
      for (int side : {-1, 1}) {
        std::vector<int64_t> offset(rank, 0);
        offset[axis] = side;
        points.push_back({{"offset", offset}, {"weight", 0.1 * (axis + 1) + (side > 0 ? 0.05 : 0.0)}});
      }
    const char* weights = dtype == FUGUE_DTYPE_F64 ? "f64" : "f32";
    return json{{"kind", "stencil"}, {"dtype", weights}, {"border", "clamp"}, {"points", points}}.dump();
  }
};

}  // namespace

std::unique_ptr<sdk::Kind> stencil_kind() { return std::make_unique<StencilKind>(); }

}  // namespace fugue::stencil
