// abi_values.hpp: C++ values of the ABI's types and plans, and the C views of them that cross the
// boundary. The core and the SDK both use these: the C structs refer to arrays by pointer (so they can
// grow), and these values own those arrays. Header-only; depends on the C headers alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "fugue_plugin.h"

namespace fugue::abi {

// ---------------------------------------------------------------------------------------------
// Dtypes: the facts come from fugue_dtypes.h's table; these only spell them for C++.

inline const fugue_dtype_info& dtype_info(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  if (!info) throw std::logic_error("no dtype with id " + std::to_string(d));
  return *info;
}
inline const char* dtype_name(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  return info ? info->name : "none";
}
inline bool is_float(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  return info && (info->flags & FUGUE_DTYPE_FLAG_FLOAT);
}
inline bool is_integer(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  return info && (info->flags & FUGUE_DTYPE_FLAG_INTEGER);
}
inline bool is_complex(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  return info && (info->flags & FUGUE_DTYPE_FLAG_COMPLEX);
}
inline bool is_signed(fugue_dtype d) {
  const fugue_dtype_info* info = fugue_dtype_info_of(d);
  return info && (info->flags & FUGUE_DTYPE_FLAG_SIGNED);
}
// Bytes per element.
inline std::size_t dtype_size(fugue_dtype d) { return dtype_info(d).size; }
// The OpenCL C type: "float", "uchar", "float2" (c64).
inline const char* dtype_ctype(fugue_dtype d) { return dtype_info(d).ctype; }
// The real dtype of a complex dtype's parts (f32 for c64); any other dtype itself.
inline fugue_dtype component_dtype(fugue_dtype d) { return dtype_info(d).component; }
// "f32, f64, c64" for the supported dtypes in `mask`.
inline std::string dtype_names(uint32_t mask = FUGUE_DTYPES_ALL) {
  std::string out;
  for (fugue_dtype d = FUGUE_DTYPE_NONE + 1; d < FUGUE_DTYPE_COUNT; ++d)
    if ((mask & FUGUE_DTYPE_BIT(d)) && fugue_dtype_supported(d))
      out += std::string(out.empty() ? "" : ", ") + dtype_name(d);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Errors

// "BLOCK", "ELEMENT": a level as messages and `fugue explain` name it.
inline std::string level_name(fugue_level level) {
  switch (level) {
    case FUGUE_LEVEL_DEVICE: return "DEVICE";
    case FUGUE_LEVEL_BLOCK: return "BLOCK";
    case FUGUE_LEVEL_ITEM: return "ITEM";
    case FUGUE_LEVEL_ELEMENT: return "ELEMENT";
  }
  return "?";
}

// Writes `message` into a fugue_error the other side of the boundary owns, within the room it gives.
inline void write_error(fugue_error* error, const std::string& message) {
  if (!error || error->struct_size < FUGUE_SIZE_UP_TO(fugue_error, message) || !error->message || error->capacity == 0)
    return;
  const std::size_t n = std::min<std::size_t>(message.size(), error->capacity - 1);
  std::memcpy(error->message, message.data(), n);
  error->message[n] = '\0';
}

// A fugue_error with its own message buffer, ready to be handed across the boundary.
class ErrorBuffer {
 public:
  ErrorBuffer() {
    error_.struct_size = sizeof(fugue_error);
    error_.capacity = sizeof message_;
    error_.message = message_;
  }
  ErrorBuffer(const ErrorBuffer&) = delete;
  ErrorBuffer& operator=(const ErrorBuffer&) = delete;
  fugue_error* get() { return &error_; }
  std::string text() const { return std::string(message_, strnlen(message_, sizeof message_)); }

 private:
  char message_[2048] = {};
  fugue_error error_{};
};

// ---------------------------------------------------------------------------------------------
// Types

// The value of a fugue_type: what the core keeps per symbol and what infer returns.
struct Type {
  fugue_kind kind = FUGUE_KIND_NONE;
  fugue_dtype dtype = FUGUE_DTYPE_NONE;
  std::vector<int64_t> shape;
  double const_value = 0;
  std::vector<unsigned char> metadata;  // the kind's compile-time data (a stencil's points)
  std::string kind_name;                // FUGUE_KIND_PLUGIN: which kind ("stencil")
  uint32_t runtime_axes = 0;            // bit d: axis d's length is known at run time (shape[d]: capacity)
  std::vector<Type> parts;              // a kind with storage: each part's array type, in the kind's order

  Type() = default;
  Type(fugue_kind k, fugue_dtype d, std::vector<int64_t> s = {})
      : kind(k), dtype(d), shape(std::move(s)) {}
  // A copy of what a C type describes (every array it points at included).
  Type(const fugue_type& t)  // NOLINT: implicit, so `types[k] = call.operand(i)` reads naturally
      : kind(t.kind), dtype(t.dtype), const_value(t.const_value) {
    if (t.rank > 0 && t.shape) shape.assign(t.shape, t.shape + t.rank);
    if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, metadata_bytes) && t.metadata && t.metadata_bytes)
      metadata.assign(static_cast<const unsigned char*>(t.metadata),
                      static_cast<const unsigned char*>(t.metadata) + t.metadata_bytes);
    if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, kind_name) && t.kind_name) kind_name = t.kind_name;
    if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, runtime_axes)) runtime_axes = t.runtime_axes;
    if (t.struct_size >= FUGUE_SIZE_UP_TO(fugue_type, parts) && t.parts)
      for (uint32_t k = 0; k < t.num_parts; ++k) parts.emplace_back(*FUGUE_NTH(fugue_type, t.parts, k));
  }
  uint32_t rank() const { return static_cast<uint32_t>(shape.size()); }
  // A C view of this value, valid while it lives unchanged.
  fugue_type view() const {
    fugue_type t{};
    t.struct_size = sizeof(fugue_type);
    t.kind = kind;
    t.dtype = dtype;
    t.rank = rank();
    t.shape = const_cast<int64_t*>(shape.data());
    t.shape_capacity = rank();
    t.const_value = const_value;
    t.metadata = metadata.empty() ? nullptr : metadata.data();
    t.metadata_bytes = metadata.size();
    t.kind_name = kind_name.empty() ? nullptr : kind_name.c_str();
    t.runtime_axes = runtime_axes;
    part_views_.clear();
    for (const Type& part : parts) part_views_.push_back(part.view());
    t.num_parts = static_cast<uint32_t>(parts.size());
    t.parts = part_views_.empty() ? nullptr : part_views_.data();
    return t;
  }
  bool operator==(const Type& o) const {
    return kind == o.kind && dtype == o.dtype && shape == o.shape && const_value == o.const_value &&
           metadata == o.metadata && kind_name == o.kind_name && runtime_axes == o.runtime_axes && parts == o.parts;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }

 private:
  mutable std::vector<fugue_type> part_views_;  // what the last view()'s `parts` points at
};

// ---------------------------------------------------------------------------------------------
// Plans

struct Partition {
  fugue_partition_kind kind = FUGUE_PARTITION_NONE;
  std::vector<int64_t> halo, group_tile, item_tile, item_stride;  // [rank] each, or empty (all 0)
  int32_t batch_axis = 0;
  int32_t cyclic = 0;

  // Entry d of an axis array; an empty array reads as zeros.
  static int64_t at(const std::vector<int64_t>& axis, size_t d) { return d < axis.size() ? axis[d] : 0; }
  bool has_halo() const {
    return std::any_of(halo.begin(), halo.end(), [](int64_t h) { return h != 0; });
  }
  bool operator==(const Partition& o) const {
    auto same = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
      for (size_t d = 0; d < std::max(a.size(), b.size()); ++d)
        if (at(a, d) != at(b, d)) return false;
      return true;
    };
    return kind == o.kind && same(halo, o.halo) && same(group_tile, o.group_tile) &&
           same(item_tile, o.item_tile) && same(item_stride, o.item_stride) &&
           batch_axis == o.batch_axis && cyclic == o.cyclic;
  }
};

struct Launch {
  uint32_t work_dim = 1;
  int64_t iteration[3] = {0, 1, 1};
  int64_t local_min = 1;
  int64_t local_max = 1024;
  int64_t local_multiple = 1;
  int64_t local_preferred = 256;
};

struct Workspace {
  fugue_dtype dtype = FUGUE_DTYPE_NONE;
  int64_t elements_per_group = 0;
};

struct Plan {
  fugue_level level = FUGUE_LEVEL_ELEMENT;
  uint32_t phases = 0;
  Launch launch;
  std::vector<Partition> partitions;  // one per operand
  std::vector<Workspace> workspaces;
  uint64_t local_mem_bytes = 0;
  uint32_t registers = 0;
  // 2.3, BLOCK level: the BODY is written for a team of work-items per entry (fugue_plan.entry_teams).
  bool entry_teams = false;
  // 2.5: which plan variant this is and why (fugue_plan.variant), for explain; empty for a single plan.
  std::string variant;
  // 2.11, with entry_teams: the team's work-items each walk rows of their own (fugue_plan.walks_rows).
  bool walks_rows = false;
  // 2.12, read with a halo: how reads past the arrays' ends behave (fugue_plan.ends, FUGUE_ENDS_*).
  uint32_t ends = FUGUE_ENDS_UNSAID;
  // 2.12, reductions to scalars: how results over parts combine (fugue_plan.combine, FUGUE_COMBINE_*).
  uint32_t combine = FUGUE_COMBINE_UNSAID;
  // 2.13: the operands cut by the rows of axis 0 when a program is split across devices (fugue_plan.split_rows,
  // bit k: operand k).
  uint64_t split_rows = 0;
  // 2.14, with split_rows: the operands read only at the columns of operand `columns_of`'s entries
  // (fugue_plan.read_at_columns, bit k: operand k; x of y = A x, columns_of naming A).
  uint64_t read_at_columns = 0;
  uint32_t columns_of = 0;
  // 2.17, BLOCK level: the operands read once per entry, each element at most once (fugue_plan.reads_once,
  // bit k: operand k): the core then leaves them where they are rather than copying them into local memory.
  uint64_t reads_once = 0;
  // 2.19, ELEMENT, ITEM or BLOCK level: run as the operation's own kernels (execute) where no other
  // operation joins its kernel (fugue_plan.own_kernels_alone); the plan is what it offers to fuse with.
  bool own_kernels_alone = false;
};

// Fills a C plan whose room (partitions with their ranks, workspaces) another party provided. Checks
// everything before writing anything: throws std::length_error, leaving `c` untouched, when the plan
// does not fit the room.
inline void write_plan(const Plan& plan, fugue_plan& c) {
  if (plan.partitions.size() != c.num_partitions)
    throw std::length_error("the plan gives " + std::to_string(plan.partitions.size()) + " partitions for " +
                            std::to_string(c.num_partitions) + " operands");
  if (plan.workspaces.size() > c.workspace_capacity)
    throw std::length_error("the plan needs " + std::to_string(plan.workspaces.size()) +
                            " workspaces; the core offers " + std::to_string(c.workspace_capacity));
  for (uint32_t k = 0; k < c.num_partitions; ++k) {
    const uint32_t rank = FUGUE_NTH(fugue_partition, c.partitions, k)->rank;
    const Partition& p = plan.partitions[k];
    for (const auto* axis : {&p.halo, &p.group_tile, &p.item_tile, &p.item_stride})
      if (axis->size() > rank)
        throw std::length_error("the partition of operand " + std::to_string(k) + " gives " +
                                std::to_string(axis->size()) + " axes; the operand has " + std::to_string(rank));
  }
  c.level = plan.level;
  c.phases = plan.phases;
  fugue_launch& launch = *c.launch;
  launch.work_dim = plan.launch.work_dim;
  for (int d = 0; d < 3; ++d) launch.iteration[d] = plan.launch.iteration[d];
  launch.local_min = plan.launch.local_min;
  launch.local_max = plan.launch.local_max;
  launch.local_multiple = plan.launch.local_multiple;
  launch.local_preferred = plan.launch.local_preferred;
  for (uint32_t k = 0; k < c.num_partitions; ++k) {
    fugue_partition& room = *FUGUE_NTH_MUTABLE(fugue_partition, c.partitions, k);
    const Partition& p = plan.partitions[k];
    room.kind = p.kind;
    for (uint32_t d = 0; d < room.rank; ++d) {
      room.halo[d] = Partition::at(p.halo, d);
      room.group_tile[d] = Partition::at(p.group_tile, d);
      room.item_tile[d] = Partition::at(p.item_tile, d);
      room.item_stride[d] = Partition::at(p.item_stride, d);
    }
    room.batch_axis = p.batch_axis;
    room.cyclic = p.cyclic;
  }
  c.num_workspaces = static_cast<uint32_t>(plan.workspaces.size());
  for (size_t w = 0; w < plan.workspaces.size(); ++w) {
    fugue_workspace& ws = *FUGUE_NTH_MUTABLE(fugue_workspace, c.workspaces, w);
    ws.dtype = plan.workspaces[w].dtype;
    ws.elements_per_group = plan.workspaces[w].elements_per_group;
  }
  c.local_mem_bytes = plan.local_mem_bytes;
  c.registers = plan.registers;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, entry_teams)) c.entry_teams = plan.entry_teams ? 1u : 0u;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, walks_rows)) c.walks_rows = plan.walks_rows ? 1u : 0u;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, ends)) c.ends = plan.ends;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, combine)) c.combine = plan.combine;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, split_rows)) c.split_rows = plan.split_rows;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, columns_of)) {
    c.read_at_columns = plan.read_at_columns;
    c.columns_of = plan.columns_of;
  }
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, reads_once)) c.reads_once = plan.reads_once;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, own_kernels_alone)) c.own_kernels_alone = plan.own_kernels_alone ? 1u : 0u;
  if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, variant_capacity) && c.variant && c.variant_capacity > 0) {
    const size_t length = std::min(plan.variant.size(), static_cast<size_t>(c.variant_capacity - 1));  // cut to the room
    std::memcpy(c.variant, plan.variant.data(), length);
    c.variant[length] = '\0';
  }
}

// The C form of a plan, with every struct and array it points at. Built empty, with room shaped by
// the operands' ranks, for a plugin's plan() to fill; or from a Plan, for emit to read.
class PlanBuffer {
 public:
  static constexpr uint32_t kWorkspaceCapacity = 8;
  static constexpr uint32_t kVariantCapacity = 256;

  explicit PlanBuffer(const std::vector<uint32_t>& ranks) { build(ranks, kWorkspaceCapacity); }
  explicit PlanBuffer(const Plan& plan) {
    std::vector<uint32_t> ranks;
    for (const Partition& p : plan.partitions) {
      size_t r = std::max({p.halo.size(), p.group_tile.size(), p.item_tile.size(), p.item_stride.size()});
      ranks.push_back(static_cast<uint32_t>(r));
    }
    build(ranks, std::max<uint32_t>(kWorkspaceCapacity, static_cast<uint32_t>(plan.workspaces.size())));
    write(plan);
  }
  PlanBuffer(const PlanBuffer&) = delete;
  PlanBuffer& operator=(const PlanBuffer&) = delete;

  fugue_plan* get() { return &plan_; }
  const fugue_plan* get() const { return &plan_; }

  // Fills the C plan from `plan` (see write_plan).
  void write(const Plan& plan) { write_plan(plan, plan_); }

  // The value of a C plan, read within its own counts.
  static Plan read(const fugue_plan& c) {
    Plan plan;
    plan.level = c.level;
    plan.phases = c.phases;
    if (c.launch) {
      plan.launch.work_dim = c.launch->work_dim;
      for (int d = 0; d < 3; ++d) plan.launch.iteration[d] = c.launch->iteration[d];
      plan.launch.local_min = c.launch->local_min;
      plan.launch.local_max = c.launch->local_max;
      plan.launch.local_multiple = c.launch->local_multiple;
      plan.launch.local_preferred = c.launch->local_preferred;
    }
    for (uint32_t k = 0; k < c.num_partitions && c.partitions; ++k) {
      const fugue_partition& p = *FUGUE_NTH(fugue_partition, c.partitions, k);
      Partition v;
      v.kind = p.kind;
      auto axis = [&](const int64_t* a) {
        return a ? std::vector<int64_t>(a, a + p.rank) : std::vector<int64_t>(p.rank, 0);
      };
      v.halo = axis(p.halo);
      v.group_tile = axis(p.group_tile);
      v.item_tile = axis(p.item_tile);
      v.item_stride = axis(p.item_stride);
      v.batch_axis = p.batch_axis;
      v.cyclic = p.cyclic;
      plan.partitions.push_back(std::move(v));
    }
    const uint32_t workspaces = std::min(c.num_workspaces, c.workspace_capacity);
    for (uint32_t w = 0; w < workspaces && c.workspaces; ++w) {
      const fugue_workspace& ws = *FUGUE_NTH(fugue_workspace, c.workspaces, w);
      plan.workspaces.push_back({ws.dtype, ws.elements_per_group});
    }
    plan.local_mem_bytes = c.local_mem_bytes;
    plan.registers = c.registers;
    plan.entry_teams = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, entry_teams) && c.entry_teams != 0;
    plan.walks_rows = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, walks_rows) && c.walks_rows != 0;
    plan.ends = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, ends) ? c.ends : FUGUE_ENDS_UNSAID;
    plan.combine = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, combine) ? c.combine : FUGUE_COMBINE_UNSAID;
    plan.split_rows = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, split_rows) ? c.split_rows : 0;
    if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, columns_of)) {
      plan.read_at_columns = c.read_at_columns;
      plan.columns_of = c.columns_of;
    }
    plan.reads_once = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, reads_once) ? c.reads_once : 0;
    plan.own_kernels_alone = c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, own_kernels_alone) && c.own_kernels_alone != 0;
    if (c.struct_size >= FUGUE_SIZE_UP_TO(fugue_plan, variant_capacity) && c.variant && c.variant_capacity > 0)
      plan.variant.assign(c.variant, std::find(c.variant, c.variant + c.variant_capacity, '\0'));
    return plan;
  }
  Plan read() const { return read(plan_); }

 private:
  void build(const std::vector<uint32_t>& ranks, uint32_t workspace_capacity) {
    size_t axes = 0;
    for (uint32_t r : ranks) axes += r;
    axes_.assign(4 * axes + 1, 0);  // + 1: never a null data() for rank 0
    partitions_.assign(ranks.size(), fugue_partition{});
    size_t next = 0;
    for (size_t k = 0; k < ranks.size(); ++k) {
      fugue_partition& p = partitions_[k];
      p.struct_size = sizeof(fugue_partition);
      p.rank = ranks[k];
      p.halo = &axes_[next];
      p.group_tile = &axes_[next + ranks[k]];
      p.item_tile = &axes_[next + 2 * ranks[k]];
      p.item_stride = &axes_[next + 3 * ranks[k]];
      next += 4 * ranks[k];
    }
    workspaces_.assign(workspace_capacity, fugue_workspace{});
    for (auto& w : workspaces_) w.struct_size = sizeof(fugue_workspace);
    launch_ = fugue_launch{};
    launch_.struct_size = sizeof(fugue_launch);
    plan_ = fugue_plan{};
    plan_.struct_size = sizeof(fugue_plan);
    plan_.launch = &launch_;
    plan_.num_partitions = static_cast<uint32_t>(partitions_.size());
    plan_.partitions = partitions_.empty() ? nullptr : partitions_.data();
    plan_.workspace_capacity = workspace_capacity;
    plan_.workspaces = workspaces_.data();
    variant_.assign(kVariantCapacity, '\0');
    plan_.variant = variant_.data();
    plan_.variant_capacity = kVariantCapacity;
  }

  fugue_plan plan_{};
  fugue_launch launch_{};
  std::vector<fugue_partition> partitions_;
  std::vector<int64_t> axes_;
  std::vector<fugue_workspace> workspaces_;
  std::vector<char> variant_;
};

}  // namespace fugue::abi
