// validate.cpp: libFuzzer target for the program loader on the path `fugue validate` takes
// (host/main.cpp: cmd_validate): the bundled plugins loaded once, then each input written as a
// program file and loaded (parsed, declared, bound, typed) by load_program. A clean refusal is a
// UserError; anything else (a crash, a stack overflow, a leak, another exception) is a finding.
//
// The program's folder holds small input files with the names the examples and tests use (v.npy,
// v.png, v.flo, ...), so that mutated programs reach the formats' readers and the declared-vs-file
// checks too.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "errors.h"
#include "fuzz_support.h"
#include "io/image_io.h"
#include "io/npy_io.h"
#include "load/program_loader.h"
#include "plugins/plugin_registry.h"

namespace {

namespace fs = std::filesystem;
using namespace fugue;

HostArray ramp(DType dtype, Shape shape) {
  HostArray a(dtype, std::move(shape));
  for (int64_t i = 0, n = a.elements(); i < n; ++i) a.set(i, static_cast<double>(i % 200));
  return a;
}

void write_flo(const fs::path& path, int32_t width, int32_t height) {
  std::ofstream out(path, std::ios::binary);
  out.write("PIEH", 4);
  out.write(reinterpret_cast<const char*>(&width), 4);
  out.write(reinterpret_cast<const char*>(&height), 4);
  for (int32_t i = 0; i < 2 * width * height; ++i) {
    const float v = 0.25f * static_cast<float>(i % 7) - 0.5f;
    out.write(reinterpret_cast<const char*>(&v), 4);
  }
}

void write_inputs(const fs::path& folder) {
  for (const char* name : {"v", "w", "a", "b", "c", "x", "y", "z", "t", "m"})
    save_npy(folder / (std::string(name) + ".npy"), ramp(DType::F32, {16}));
  save_npy(folder / "s.npy", ramp(DType::F32, {}));
  save_npy(folder / "g.npy", ramp(DType::F32, {4, 5}));
  save_npy(folder / "i.npy", ramp(DType::I32, {8}));
  save_npy(folder / "d.npy", ramp(DType::F64, {2, 3, 2}));
  save_npy(folder / "u.npy", ramp(DType::U8, {6}));
  save_gray_png(folder / "v.png", ramp(DType::F32, {6, 8}));
  save_gray_png(folder / "x.png", ramp(DType::F32, {6, 8}));
  save_pgm(folder / "v.pgm", ramp(DType::F32, {6, 8}));
  for (const char* name : {"v", "f", "flow", "d", "truth", "in"}) write_flo(folder / (std::string(name) + ".flo"), 8, 6);
}

const PluginRegistry& registry() {
  static const PluginRegistry* r = [] {
    auto* reg = new PluginRegistry;
    reg->load_defaults();
    if (reg->plugins().empty()) {
      std::fprintf(stderr, "fuzz_validate: no plugins found (looked next to the executable, ../plugins)\n");
      std::abort();
    }
    return reg;
  }();
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  write_inputs(fuzz::scratch_folder());
  registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path path = fuzz::write_input("program.json", data, size);
  try {
    const Program program = load_program(path, registry());
    (void)program;
  } catch (const UserError&) {
  } catch (const std::exception& e) {
    fuzz::unexpected("validate", e.what());
  }
  return 0;
}
