// Tests for write_file_atomically: complete files or nothing, never a leftover temporary file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "io/atomic_file.h"
#include "errors.h"

namespace fs = std::filesystem;
using namespace fugue;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("fugue_atomic_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int count_entries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++n;
  return n;
}

}  // namespace

TEST(AtomicFile, WritesNewFileAndReplacesOld) {
  TempDir dir;
  const fs::path file = dir.path / "out.txt";
  write_file_atomically(file, [](std::ostream& out) { out << "first"; });
  EXPECT_EQ(slurp(file), "first");
  write_file_atomically(file, [](std::ostream& out) { out << "second, longer"; });
  EXPECT_EQ(slurp(file), "second, longer");
  EXPECT_EQ(count_entries(dir.path), 1);
}

TEST(AtomicFile, ThrowingWriterLeavesOldFileAndNoTemp) {
  TempDir dir;
  const fs::path file = dir.path / "out.txt";
  write_file_atomically(file, [](std::ostream& out) { out << "old contents"; });
  EXPECT_THROW(write_file_atomically(file,
                                     [](std::ostream& out) {
                                       out << "partial new contents";
                                       throw std::runtime_error("writer failed");
                                     }),
               std::runtime_error);
  EXPECT_EQ(slurp(file), "old contents");
  EXPECT_EQ(count_entries(dir.path), 1);
}

TEST(AtomicFile, ThrowingWriterCreatesNothing) {
  TempDir dir;
  const fs::path file = dir.path / "new.txt";
  try {
    write_file_atomically(file, [](std::ostream&) { throw UserError("bad value"); });
    FAIL() << "expected an exception";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "bad value");  // the writer's own exception is rethrown
  }
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(count_entries(dir.path), 0);
}

TEST(AtomicFile, FailedStreamIsUserErrorAndLeavesOldFile) {
  TempDir dir;
  const fs::path file = dir.path / "out.bin";
  write_file_atomically(file, [](std::ostream& out) { out << "keep"; });
  try {
    write_file_atomically(file, [](std::ostream& out) {
      out << "junk";
      out.setstate(std::ios::badbit);
    });
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + file.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(file), "keep");
  EXPECT_EQ(count_entries(dir.path), 1);
}

TEST(AtomicFile, MissingFolderIsUserError) {
  TempDir dir;
  const fs::path file = dir.path / "no_such_folder" / "out.txt";
  try {
    write_file_atomically(file, [](std::ostream& out) { out << "x"; });
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write " + file.string(), 0), 0u) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "no_such_folder"));
}

TEST(AtomicFile, RenameOverFolderFailsCleanly) {
  TempDir dir;
  const fs::path target = dir.path / "a_folder";
  fs::create_directories(target / "inside");
  EXPECT_THROW(write_file_atomically(target, [](std::ostream& out) { out << "x"; }), UserError);
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_EQ(count_entries(dir.path), 1);
}
