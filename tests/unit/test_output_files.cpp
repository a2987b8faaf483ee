// Tests for write_output_files' promises to readers of an output folder: a manifest (fugue-run.json)
// that matches its files, staging names unique to a run, the folder's lock, checks before any output
// is replaced, and the leftovers of killed runs cleaned by the next run.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "errors.h"
#include "io/npy_io.h"
#include "io/output_files.h"
#include "io/output_lock.h"
#include "io/sha256.h"
#include "load/program_loader.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace fugue;
using fugue::test::TempDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two f32 outputs, one in a subfolder.
Program two_outputs() {
  static const nlohmann::json doc = nlohmann::json::parse(R"({
    "fugue": 1,
    "symbols": {"a": {"kind": "array", "dtype": "f32", "shape": [4], "value": [0, 0, 0, 0]},
                "b": {"kind": "array", "dtype": "f32", "shape": [3], "value": [0, 0, 0]}},
    "body": [], "outputs": {"a": "a.npy", "b": "sub/b.npy"}})");
  return parse_program(doc, test::source_root() / "prog.json", test::bundled_plugins());
}

// The values of `two_outputs`, every element `v`.
std::function<HostArray(const std::string&)> values(double v) {
  return [v](const std::string& symbol) {
    HostArray a(DType::F32, Shape{symbol == "a" ? 4 : 3});
    for (int64_t i = 0; i < a.elements(); ++i) a.set(i, v);
    return a;
  };
}

nlohmann::json manifest_of(const fs::path& folder) { return nlohmann::json::parse(slurp(folder / kOutputManifest)); }

// Every file the manifest lists has the size and SHA-256 it records; "" when so.
std::string manifest_mismatch(const fs::path& folder) {
  const nlohmann::json m = manifest_of(folder);
  if (m.value("complete", false) != true) return "not complete";
  for (const auto& o : m.at("outputs")) {
    const std::string bytes = slurp(folder / o.at("file").get<std::string>());
    if (bytes.size() != o.at("bytes").get<uint64_t>()) return o.at("file").get<std::string>() + ": size";
    if (sha256_hex(bytes.data(), bytes.size()) != o.at("sha256")) return o.at("file").get<std::string>() + ": sha256";
  }
  return "";
}

double value_in(const fs::path& file) { return load_npy(file, std::nullopt, std::nullopt).get(0); }

// Names in `folder` and its subfolders, relative to it.
std::set<std::string> listing(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(folder)) names.insert(fs::relative(e.path(), folder).string());
  return names;
}

const std::set<std::string> kCompleteSet{"a.npy", "sub", "sub/b.npy", "fugue-run.json"};

}  // namespace

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(sha256_hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a', fed in uneven pieces.
  Sha256 s;
  const std::string piece(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    const size_t n = std::min(left, piece.size());
    s.update(piece.data(), n);
    left -= n;
  }
  EXPECT_EQ(s.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(OutputFiles, StagingNames) {
  long pid = -1;
  EXPECT_TRUE(is_output_staging_name(".a.npy.fugue-123-00ff.new", &pid));
  EXPECT_EQ(pid, 123);
  EXPECT_TRUE(is_output_staging_name("..a.npy.fugue-123-00ff.new.tmp.77.0", &pid));
  EXPECT_EQ(pid, 123);
  EXPECT_TRUE(is_output_staging_name(".a.npy.fugue-new", &pid));  // an older Fugue's
  EXPECT_EQ(pid, 0);
  EXPECT_TRUE(is_output_staging_name(".fugue-run.json.fugue-9-ab.new"));
  EXPECT_FALSE(is_output_staging_name("a.npy.fugue-123-00ff.new"));
  EXPECT_FALSE(is_output_staging_name(".a.npy"));
  EXPECT_FALSE(is_output_staging_name(".a.npy.fugue-x-00ff.new"));
  EXPECT_FALSE(is_output_staging_name("fugue-run.json"));
}

TEST(OutputFiles, ManifestMatchesTheFiles) {
  TempDir dir;
  const fs::path out = dir / "out";
  OutputRun run;
  run.command = "test";
  run.options = {{"set", {"n=3"}}};
  write_output_files(two_outputs(), out, values(7), run);
  EXPECT_EQ(listing(out), kCompleteSet);  // no lock file, no temporaries
  EXPECT_EQ(manifest_mismatch(out), "");
  const nlohmann::json m = manifest_of(out);
  EXPECT_EQ(m.at("command"), "test");
  EXPECT_EQ(m.at("options").at("set").at(0), "n=3");
  EXPECT_EQ(m.at("program"), (test::source_root() / "prog.json").lexically_normal().string());
  EXPECT_EQ(m.at("checksum"), "sha256");
  ASSERT_EQ(m.at("outputs").size(), 2u);
  EXPECT_EQ(m.at("outputs").at(0).at("file"), "a.npy");
  EXPECT_EQ(m.at("outputs").at(0).at("symbol"), "a");
  EXPECT_EQ(m.at("outputs").at(0).at("format"), "npy");
  EXPECT_EQ(m.at("outputs").at(1).at("file"), "sub/b.npy");
  EXPECT_EQ(value_in(out / "sub" / "b.npy"), 7.0);
  // A second run replaces the set and the manifest (with another run id).
  write_output_files(two_outputs(), out, values(8), run);
  EXPECT_EQ(manifest_mismatch(out), "");
  EXPECT_NE(manifest_of(out).at("run"), m.at("run"));
  EXPECT_EQ(value_in(out / "a.npy"), 8.0);
  EXPECT_EQ(listing(out), kCompleteSet);
}

TEST(OutputFiles, StagingNamesDifferBetweenRuns) {
  TempDir dir;
  std::vector<std::string> staged;
  OutputRun run;
  run.before_commit = [&] {
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.path().filename().string().rfind(".a.npy.fugue-", 0) == 0) staged.push_back(e.path().filename().string());
  };
  write_output_files(two_outputs(), dir.path(), values(1), run);
  write_output_files(two_outputs(), dir.path(), values(2), run);
  ASSERT_EQ(staged.size(), 2u);
  EXPECT_NE(staged[0], staged[1]);
  long pid = 0;
  EXPECT_TRUE(is_output_staging_name(staged[0], &pid)) << staged[0];
  EXPECT_EQ(pid, ::getpid());
}

// What --profile relies on: work that fails after staging leaves the folder exactly as it was.
TEST(OutputFiles, FailureBeforeCommitLeavesTheOldSet) {
  TempDir dir;
  write_output_files(two_outputs(), dir.path(), values(1));
  const std::string manifest = slurp(dir / kOutputManifest), a = slurp(dir / "a.npy");
  OutputRun run;
  run.before_commit = [] { throw UserError("cannot write trace.json: no"); };
  EXPECT_THROW(write_output_files(two_outputs(), dir.path(), values(2), run), UserError);
  EXPECT_EQ(slurp(dir / kOutputManifest), manifest);
  EXPECT_EQ(slurp(dir / "a.npy"), a);
  EXPECT_EQ(listing(dir.path()), kCompleteSet);
}

// A failure between two renames (as a kill there would leave it): the first output is new, the
// second old, and no manifest claims the mix.
TEST(OutputFiles, FailureBetweenRenamesLeavesNoManifest) {
  TempDir dir;
  write_output_files(two_outputs(), dir.path(), values(1));
  OutputRun run;
  run.before_commit = [&] {  // the second rename will find a non-empty folder in its way
    fs::remove(dir / "sub" / "b.npy");
    fs::create_directories(dir / "sub" / "b.npy" / "x");
  };
  EXPECT_THROW(write_output_files(two_outputs(), dir.path(), values(2), run), UserError);
  EXPECT_FALSE(fs::exists(dir / kOutputManifest));
  EXPECT_EQ(value_in(dir / "a.npy"), 2.0);
  EXPECT_EQ(listing(dir.path()), (std::set<std::string>{"a.npy", "sub", "sub/b.npy", "sub/b.npy/x"}));
  // The next run makes a complete set again.
  fs::remove_all(dir / "sub" / "b.npy");
  write_output_files(two_outputs(), dir.path(), values(3));
  EXPECT_EQ(manifest_mismatch(dir.path()), "");
  EXPECT_EQ(value_in(dir / "sub" / "b.npy"), 3.0);
}

TEST(OutputFiles, LeftoversOfKilledRunsAreCleaned) {
  TempDir dir;
  write_output_files(two_outputs(), dir.path(), values(1));
  // What a run killed while staging or renaming leaves: staging files (its own, those a format's
  // atomic write made, an older Fugue's), its lock file, and an older manifest.
  const long dead = 2147483646;  // above any pid_max
  for (const std::string& name : {".a.npy.fugue-" + std::to_string(dead) + "-0123abcd.new",
                                 "..a.npy.fugue-" + std::to_string(dead) + "-0123abcd.new.tmp.5.0",
                                 ".fugue-run.json.fugue-" + std::to_string(dead) + "-0123abcd.new",
                                 std::string(".a.npy.fugue-new"), std::string(OutputFolderLock::kFileName)})
    test::write_text(dir / name, "junk");
  test::write_text(dir / "sub" / (".b.npy.fugue-" + std::to_string(getppid()) + "-ff.new"), "junk");
  write_output_files(two_outputs(), dir.path(), values(2));
  EXPECT_EQ(listing(dir.path()), kCompleteSet);
  EXPECT_EQ(manifest_mismatch(dir.path()), "");
  EXPECT_EQ(value_in(dir / "a.npy"), 2.0);
}

TEST(OutputFiles, ChecksComeFirst) {
  TempDir dir;
  write_output_files(two_outputs(), dir.path(), values(1));
  const std::string manifest = slurp(dir / kOutputManifest);
  // An output that is a folder: refused before anything is staged.
  fs::remove(dir / "sub" / "b.npy");
  fs::create_directories(dir / "sub" / "b.npy");
  try {
    write_output_files(two_outputs(), dir.path(), values(2));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a folder"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(dir / kOutputManifest), manifest);
  EXPECT_EQ(value_in(dir / "a.npy"), 1.0);
  EXPECT_EQ(listing(dir.path()), (std::set<std::string>{"a.npy", "sub", "sub/b.npy", "fugue-run.json"}));
}

// A second writer waits for the lock's holder, and gives up with a clear message after its timeout.
TEST(OutputFiles, SecondWriterWaitsForTheLock) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    {
      OutputFolderLock lock(dir.path(), std::chrono::seconds(5));
      (void)!write(ready[1], "x", 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    }
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  OutputRun impatient;
  impatient.lock_timeout = std::chrono::milliseconds(200);
  try {
    write_output_files(two_outputs(), dir.path(), values(1), impatient);
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("waiting for another fugue run writing " + dir.path().string()), std::string::npos) << what;
    EXPECT_NE(what.find("(pid " + std::to_string(holder) + ")"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir / "a.npy"));
  const auto start = std::chrono::steady_clock::now();
  write_output_files(two_outputs(), dir.path(), values(2));  // waits for the holder
  EXPECT_GT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
  int status = 0;
  ASSERT_EQ(waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(manifest_mismatch(dir.path()), "");
  EXPECT_EQ(listing(dir.path()), kCompleteSet);
}

// Writers in several processes at once: every write succeeds, and the folder ends as one writer's
// complete set, as its manifest says.
TEST(OutputFiles, ConcurrentWritersNeverMix) {
  TempDir dir;
  std::vector<pid_t> children;
  for (int w = 1; w <= 4; ++w) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int code = 0;
      for (int i = 0; i < 15; ++i) {
        try {
          OutputRun run;
          run.options = {{"writer", w}};
          write_output_files(two_outputs(), dir.path(), values(w), run);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "writer %d: %s\n", w, e.what());
          code = 1;
        }
      }
      _exit(code);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(manifest_mismatch(dir.path()), "");
  const double writer = manifest_of(dir.path()).at("options").at("writer").get<double>();
  EXPECT_EQ(value_in(dir / "a.npy"), writer);
  EXPECT_EQ(value_in(dir / "sub" / "b.npy"), writer);
  EXPECT_EQ(listing(dir.path()), kCompleteSet);
}
