// grid.h: index arithmetic on row-major grids, on the device (OpenCL C the operations emit) and on
// the CPU (the references): coordinates of a flat index, neighbours under a border rule, and back.
//
// A grid made for an operand asks the core for its extents (fugue_emit_api.extent): kernel arguments
// where the core passes them (one compiled kernel then serves every size), else literals, so that every
// division by an extent is by a constant. Offsets a border rule cannot handle for every size (a shift of
// a whole period or more) keep literal code.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fugue/sdk.hpp"
#include "stencil_kind.h"

namespace fugue::stencil {

// The name of a border rule, for docs and messages: "clamp", "zero", "periodic", "mirror".
const char* border_name(fugue_border border);

// ---------------------------------------------------------------------------------------------
// CPU

std::vector<int64_t> unflatten(int64_t index, const std::vector<int64_t>& shape);
int64_t flatten(const std::vector<int64_t>& coordinates, const std::vector<int64_t>& shape);
// The cell reached from c by `offset` along an axis of n cells, or -1 where the zero border reads
// outside the grid.
int64_t border_coordinate(int64_t c, int64_t offset, int64_t n, fugue_border border);

// ---------------------------------------------------------------------------------------------
// Device

// Builds the OpenCL C of one element's coordinates and its neighbours' in a grid of `shape`, in
// integers of `index_type` (see index_ctype). Neighbour coordinates are declared once per axis and
// offset, however many points use them.
class GridCode {
 public:
  // `prefix` starts every identifier it declares, so that two grids of one operation never meet.
  // `operand`: the operand whose extents the grid's are (-1: literals always).
  GridCode(const sdk::Emitter& emitter, std::vector<int64_t> shape, std::string index_type,
           std::string prefix = "", int operand = -1);

  // Declares the coordinates of flat index `flat` (an expression of any integer type).
  std::string coordinates(const std::string& flat);
  // Declares `centre` (one expression per axis) as the coordinates instead, for a grid that is
  // not the iteration's (a resampling reads its input around another point).
  std::string coordinates(const std::vector<std::string>& centre);
  // A condition that every point `below[d]` cells before and `above[d]` cells after the element along
  // each axis d lies in the grid ("1" where it always does, "0" where it never can).
  std::string interior(const std::vector<int64_t>& below, const std::vector<int64_t>& above) const;
  // The coordinate along axis d (after coordinates()).
  const std::string& coordinate(uint32_t d) const { return coordinates_.at(d); }
  // The coordinate `offset` cells along axis d under `border` (a name or the plain coordinate);
  // for the zero border, the unclamped coordinate (read it only where inside() holds). Appends
  // the declaration to `code` the first time.
  std::string neighbour(uint32_t d, int64_t offset, fugue_border border, std::string& code);
  // Zero border: a condition that the neighbour lies inside the grid along axis d; "" where it
  // always does, "0" where it never does.
  std::string inside(uint32_t d, int64_t offset) const;
  // The flat index of `coordinates` (one expression per axis).
  std::string flat(const std::vector<std::string>& coordinates) const;
  // `value` clamped into the axis d: [0, shape[d] - 1].
  std::string clamped(uint32_t d, const std::string& value) const;

  const std::string& index_type() const { return type_; }
  // An integer literal of the index type: "5", "5L", "(-2)".
  std::string lit(int64_t value) const;
  const std::vector<int64_t>& shape() const { return shape_; }
  // The extent along axis d, and the last coordinate along it, as expressions of the index type.
  const std::string& extent(uint32_t d) const { return extents_.at(d); }
  std::string last(uint32_t d) const;
  bool symbolic(uint32_t d) const { return symbolic_.at(d); }  // the extent is a kernel argument

 private:
  std::string declare(const std::string& stem, const std::string& value, std::string& code);

  const sdk::Emitter& emitter_;
  std::vector<int64_t> shape_;
  std::string type_;
  std::string prefix_;
  std::vector<std::string> extents_;  // literals, or the kernel arguments that hold them
  std::vector<bool> symbolic_;        // extents_[d] is an argument
  std::vector<std::string> coordinates_;
  std::map<std::tuple<uint32_t, int64_t, fugue_border>, std::string> neighbours_;
};

}  // namespace fugue::stencil
