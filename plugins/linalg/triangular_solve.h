// triangular_solve.h: the code of a triangular solve op(T) X = B in place, shared by the solvers
// (potrs, getrs): written once for a team of work-items sharing a matrix, once for one work-item with a
// right-hand side in its registers.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fugue/sdk.hpp"
#include "scalars.h"

namespace fugue::linalg {

// An OpenCL C expression of element (i, j) of a matrix, i and j expressions.
using ElementAt = std::function<std::string(const std::string& i, const std::string& j)>;

// A triangular n x n matrix as the solve sees it (T itself or its transpose: `at` says which).
struct Triangle {
  ElementAt at;
  bool lower = true;  // lower triangular: forward substitution; upper: backward
  bool unit = false;  // a unit diagonal, never read
};

// Right-hand sides overwritten by the solution: n rows, `columns` columns in X's storage.
struct RightHandSides {
  ElementAt read, write;  // an rvalue and an lvalue of element (i, j)
  int64_t n = 0, columns = 0;
};

// Code that overwrites X with T^-1 X, for the team em's BODY is written for (every work-item of it
// runs the code; it ends with a barrier). Each step updates the rows still to solve with the newest
// solved row, one barrier a step; the divisions by the diagonal come last (a solved row is read only
// in its own step, so dividing it then or at the end is the same).
std::string team_solve(const sdk::Emitter& em, const Scalars& sc, const Triangle& t, const RightHandSides& x);

// Code that overwrites x[0] .. x[n - 1] (an array of registers named `x`) with T^-1 x, fully unrolled.
std::string register_solve(const Scalars& sc, const Triangle& t, int64_t n, const std::string& x);

// Code that sets X = scale * B (`scale` an OpenCL C expression, or empty for none) and solves with
// each triangle in turn, for em's team: with `registers` (a team of one) one work-item takes a column
// of right-hand sides at a time in registers, every loop unrolled; else the team (of one too, in a
// loop plan: tuning.h's loop_plan) solves (team_solve) in a local array of its own when `in_local` (X
// written out once at the end), else in X's storage.
std::string solve_all(const sdk::Emitter& em, fugue_dtype dtype, const ElementAt& b, const RightHandSides& x,
                      const std::vector<Triangle>& triangles, const std::string& scale, bool in_local, bool registers);

}  // namespace fugue::linalg
