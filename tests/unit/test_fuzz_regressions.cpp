// Regression tests for what the fuzz targets (tests/fuzz) found in the core's readers. Every input
// kept in tests/fuzz/regressions/<target>/ once crashed its target or was accepted when it should not
// have been; each must now be refused with a UserError that starts with the file's path. The
// specific cases below also pin the message.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "io/image_io.h"
#include "io/npy_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

std::vector<fs::path> regressions(const std::string& target) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(test::source_root() / "tests" / "fuzz" / "regressions" / target, ec))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The message of the UserError that `f` throws, or a failure.
template <class F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected UserError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected UserError, nothing thrown";
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(FuzzRegressions, EveryNpyReproducerIsRefusedNamingTheFile) {
  for (const fs::path& f : regressions("npy")) {
    SCOPED_TRACE(f.string());
    const std::string e = user_error([&] { load_npy(f, std::nullopt, std::nullopt); });
    EXPECT_TRUE(starts_with(e, f.string())) << e;
  }
}

TEST(FuzzRegressions, EveryImageReproducerIsRefusedNamingTheFile) {
  for (const fs::path& f : regressions("png")) {
    SCOPED_TRACE(f.string());
    const std::string e = user_error([&] { load_gray_image(f, std::nullopt); });
    EXPECT_TRUE(starts_with(e, f.string())) << e;
  }
}

// A shape whose byte count is beyond uint64 wrapped to 0 (2^61 c128 elements are 2^65 bytes), so a
// file with no data passed the size check: the header must be refused, before any data is read.
TEST(FuzzRegressions, NpyByteCountBeyondUint64IsRefused) {
  const fs::path root = test::source_root() / "tests" / "fuzz" / "regressions" / "npy";
  for (const char* name : {"c16_bytes_wrap_to_zero.npy", "f8_bytes_wrap_to_zero.npy"}) {
    SCOPED_TRACE(name);
    const std::string e = user_error([&] { read_npy_header(root / name); });
    EXPECT_TRUE(starts_with(e, (root / name).string())) << e;
    EXPECT_TRUE(contains(e, "has too many elements (more than 2^63 bytes)")) << e;
  }
}
