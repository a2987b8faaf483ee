// failing_device.h: programs split by rows in which one device (or rank) fails mid-run while the others
// go on to meet it, for the several-device and MPI tests. faulty.negative (tests/plugins/
// faulty_op_plugin.cpp, fault 8) refuses x's negative numbers with an error status when it runs; x's
// only negative number lies in row 50 of 64, which the second of two equal shares holds alone.
#pragma once
#include <filesystem>
#include <random>
#include <string>

#include "io/npy_io.h"
#include "test_support.h"

namespace fugue::test {

// `--plugin` with faulty.negative, before the command.
inline std::string failing_plugin() {
  return "--plugin " + (faulty_plugin_folder() / "libfugue_faulty_negative.so").string();
}

// Writes into `dir`: ok.npy (x in [0.5, 1), multiples of 1/256 from `seed`, so that sums and the stencil's
// quarters are exact in any order: a split gives one device's bits), bad.npy (the same with -1 at row
// 50), and two programs of x:
// trade.json (faulty.negative, then a stencil reading the neighbours' rows it produced, in a loop: the
// devices trade rows of v at each iteration under halo_depth=1) and combine.json (faulty.negative, then
// a sum combined from every device's part).
inline void write_failing_programs(const std::filesystem::path& dir, uint64_t seed) {
  HostArray x(DType::F32, {64, 64});
  float* values = reinterpret_cast<float*>(x.bytes.data());
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> k(128, 255);
  for (int64_t i = 0; i < x.elements(); ++i) values[i] = static_cast<float>(k(random)) / 256.0f;
  save_npy(dir / "ok.npy", x);
  values[50 * 64 + 7] = -1.0f;
  save_npy(dir / "bad.npy", x);
  write_text(dir / "trade.json", R"({"fugue": 1, "symbols": {
    "R": {"kind": "stencil", "dtype": "f32", "border": "clamp",
          "points": [{"offset": [-1, 0], "weight": 0.25}, {"offset": [0, -1], "weight": 0.25},
                     {"offset": [0, 1], "weight": 0.25}, {"offset": [1, 0], "weight": 0.25}]},
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": "ok.npy"}},
    "body": [{"for": "i", "count": 3, "body": [
      {"op": "faulty.negative", "out": ["v"], "in": ["x"]},
      {"op": "stencil.apply", "out": ["f"], "in": ["R", "v"]},
      {"op": "array.mul", "out": ["x"], "in": ["f", 0.5]}]}],
    "outputs": {"x": "x.npy"}})");
  write_text(dir / "combine.json", R"({"fugue": 1, "symbols": {
    "x": {"kind": "array", "dtype": "f32", "shape": [64, 64], "from": "ok.npy"}},
    "body": [{"op": "faulty.negative", "out": ["v"], "in": ["x"]},
             {"op": "array.sum", "out": ["s"], "in": ["v"]}],
    "outputs": {"s": "s.npy", "v": "v.npy"}})");
}

}  // namespace fugue::test
