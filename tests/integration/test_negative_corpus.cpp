// The negative corpus (tests/negative/): malformed programs, malformed input files and misused command
// lines, listed in tests/negative/cases.json, each run through the `fugue` executable. Every case must
// end with its exit status (2: bad program, input file or option) and a message that contains the
// expected text, which names the place (file and JSON pointer, or the option); no case may crash, hang or
// report an internal error. One test per case, named after it.
//
// A case of the manifest:
//   "name"    the test's name (letters, digits, _)
//   "file"    a program in tests/negative/ (optional); its path is appended to "args" unless an argument
//             holds {file}
//   "args"    the command line after `fugue`; {tmp} is a fresh folder per case, {corpus} the corpus
//             folder, {file} the program
//   "inputs"  files written into {tmp} first (binary inputs are built here, not kept in the tree); with
//             inputs, the program is copied into {tmp} too, so that its relative paths find them. A name
//             ending in / is a folder. Each file is a list of parts, concatenated:
//               "text"                   a string, one byte per character (U+0000..U+00FF)
//               {"zeros": n}             n zero bytes
//               {"i32": [..]}            little-endian int32s     {"f32": [..]}  little-endian float32s
//               {"be32": [..]}           big-endian uint32s (PNG)
//               {"npy": "header"}        a .npy 1.0 preamble: magic, version, length, the header padded
//                                        with spaces and a newline to a multiple of 64 bytes
//               {"chunk": "TYPE", "data": [parts], "crc": false}   a PNG chunk (length, type, data,
//                                        CRC; "crc": false writes a wrong one)
//               {"zlib": [parts]}        a zlib stream holding the parts in one stored block
//   "exit"    the expected exit status
//   "expect"  text the output must contain ({tmp} and {corpus} substituted)
//   "known"   a known defect, not fixed yet: the reason; the case is skipped
//   "area"    the part of the syntax or of the tool the case exercises
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Seconds one case may take before it counts as a hang (validate takes milliseconds).
constexpr int kLimitSeconds = 60;

fs::path corpus() { return fugue::test::source_root() / "tests" / "negative"; }

struct Case {
  std::string test_name;  // unique, letters, digits and _
  json spec;
  std::string error;  // why the manifest could not be read (then the only "case")
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.test_name; }

std::string identifier(const std::string& text) {
  std::string out;
  for (char ch : text) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out.empty() ? "unnamed" : out;
}

// Read at registration time: any failure becomes one case that reports it.
std::vector<Case> load_cases() {
  std::vector<Case> cases;
  try {
    std::ifstream in(corpus() / "cases.json");
    if (!in) throw std::runtime_error("cannot open " + (corpus() / "cases.json").string());
    const json list = json::parse(in);
    if (!list.is_array()) throw std::runtime_error("cases.json is not a list");
    std::set<std::string> names;
    for (size_t i = 0; i < list.size(); ++i) {
      const json& spec = list[i];
      std::string name = identifier(spec.is_object() ? spec.value("name", "case_" + std::to_string(i)) : "");
      if (!names.insert(name).second) name += "_" + std::to_string(i);
      names.insert(name);
      cases.push_back({name, spec, ""});
    }
  } catch (const std::exception& e) {
    cases = {{"manifest", json(), e.what()}};
  }
  return cases;
}

// --- input files ------------------------------------------------------------------------

// A JSON string's characters as bytes: each must be U+0000..U+00FF (UTF-8 in the manifest).
std::string latin1(const std::string& utf8) {
  std::string out;
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c & 0xE0) == 0xC0 && i + 1 < utf8.size() && c <= 0xC3) {
      out += static_cast<char>(((c & 0x1F) << 6) | (static_cast<unsigned char>(utf8[++i]) & 0x3F));
    } else {
      throw std::runtime_error("a character above U+00FF in an input part");
    }
  }
  return out;
}

void put_le32(std::string& out, uint32_t v) {
  for (int b = 0; b < 4; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

void put_be32(std::string& out, uint32_t v) {
  for (int b = 3; b >= 0; --b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

uint32_t crc32(const std::string& bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t adler32(const std::string& bytes) {
  uint32_t a = 1, b = 0;
  for (unsigned char c : bytes) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  return (b << 16) | a;
}

std::string build(const json& parts) {
  if (parts.is_string()) return latin1(parts.get<std::string>());
  if (!parts.is_array()) throw std::runtime_error("an input is a list of parts, found " + parts.dump());
  std::string out;
  for (const json& p : parts) {
    if (p.is_string()) {
      out += latin1(p.get<std::string>());
    } else if (p.contains("zeros")) {
      out.append(p["zeros"].get<size_t>(), '\0');
    } else if (p.contains("i32")) {
      for (const json& v : p["i32"]) put_le32(out, static_cast<uint32_t>(v.get<int32_t>()));
    } else if (p.contains("f32")) {
      for (const json& v : p["f32"]) {
        const float f = v.get<float>();
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        put_le32(out, bits);
      }
    } else if (p.contains("be32")) {
      for (const json& v : p["be32"]) put_be32(out, v.get<uint32_t>());
    } else if (p.contains("npy")) {
      std::string header = latin1(p["npy"].get<std::string>());
      const size_t total = 10 + header.size() + 1;
      header.append((64 - total % 64) % 64, ' ');
      header += '\n';
      out += std::string("\x93NUMPY\x01\x00", 8);
      out += static_cast<char>(header.size() & 0xFF);
      out += static_cast<char>((header.size() >> 8) & 0xFF);
      out += header;
    } else if (p.contains("chunk")) {
      const std::string type = latin1(p["chunk"].get<std::string>());
      const std::string data = build(p.value("data", json::array()));
      uint32_t crc = crc32(type + data);
      if (p.contains("crc") && p["crc"] == false) crc ^= 0xFFFFFFFFu;
      put_be32(out, static_cast<uint32_t>(data.size()));
      out += type + data;
      put_be32(out, crc);
    } else if (p.contains("zlib")) {
      const std::string data = build(p["zlib"]);
      if (data.size() > 0xFFFF) throw std::runtime_error("a zlib part holds at most 65535 bytes");
      const auto n = static_cast<uint16_t>(data.size());
      out += std::string("\x78\x01\x01", 3);  // zlib header, then the final block, stored
      out += static_cast<char>(n & 0xFF);
      out += static_cast<char>(n >> 8);
      out += static_cast<char>(~n & 0xFF);
      out += static_cast<char>((~n >> 8) & 0xFF);
      out += data;
      put_be32(out, adler32(data));
    } else {
      throw std::runtime_error("unknown input part " + p.dump());
    }
  }
  return out;
}

// --- running ----------------------------------------------------------------------------

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

// test::run_fugue with a time limit: a case that hangs ends with status 124 (timeout's) instead of
// holding up the suite.
fugue::test::CliResult run_limited(const std::string& args) {
  const std::string command = "timeout -k 5 " + std::to_string(kLimitSeconds) + " " +
                              shell_quote(fugue::test::fugue_executable().string()) + " " + args + " 2>&1";
  fugue::test::CliResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class NegativeCorpus : public testing::TestWithParam<Case> {};

TEST_P(NegativeCorpus, FailsCleanlyNamingThePlace) {
  const Case& c = GetParam();
  ASSERT_TRUE(c.error.empty()) << "tests/negative/cases.json: " << c.error;
  const json& spec = c.spec;
  ASSERT_TRUE(spec.is_object()) << spec.dump();
  if (spec.contains("known")) GTEST_SKIP() << "known defect: " << spec["known"].get<std::string>();
  ASSERT_TRUE(spec.contains("args") && spec.contains("exit") && spec.contains("expect")) << spec.dump();

  fugue::test::TempDir tmp;
  fs::path program;
  if (spec.contains("file")) {
    program = corpus() / spec["file"].get<std::string>();
    ASSERT_TRUE(fs::is_regular_file(program)) << program;
    if (spec.contains("inputs")) {
      fs::copy_file(program, tmp / program.filename().string());
      program = tmp / program.filename().string();
    }
  }
  const json inputs = spec.value("inputs", json::object());
  for (const auto& [name, parts] : inputs.items()) {
    const fs::path path = tmp.path() / name;
    if (!name.empty() && name.back() == '/') {
      fs::create_directories(path);
      continue;
    }
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    const std::string bytes = build(parts);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << path;
  }

  const std::map<std::string, std::string> values = {
      {"{tmp}", tmp.path().string()}, {"{corpus}", corpus().string()}, {"{file}", program.string()}};
  std::string args;
  bool file_placed = false;
  for (const json& a : spec["args"]) {
    const std::string arg = a.get<std::string>();
    file_placed |= arg.find("{file}") != std::string::npos;
    args += (args.empty() ? "" : " ") + shell_quote(substitute(arg, values));
  }
  if (!program.empty() && !file_placed) args += (args.empty() ? "" : " ") + shell_quote(program.string());

  const auto r = run_limited(args);
  const std::string expect = substitute(spec["expect"].get<std::string>(), values);
  const std::string context = "fugue " + args + "\n" + r.out;
  EXPECT_NE(r.code, 124) << "hung (no end within " << kLimitSeconds << " s): " << context;
  EXPECT_NE(r.code, -1) << "did not exit normally (a signal): " << context;
  EXPECT_EQ(r.code, spec["exit"].get<int>()) << context;
  EXPECT_TRUE(r.out.find(expect) != std::string::npos) << "expected the output to contain: " << expect << "\n"
                                                       << context;
  for (const char* bad : {"Segmentation", "terminate called", "Aborted", "internal error"})
    EXPECT_EQ(r.out.find(bad), std::string::npos) << "'" << bad << "' in the output: " << context;
}

INSTANTIATE_TEST_SUITE_P(Cases, NegativeCorpus, testing::ValuesIn(load_cases()),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.test_name; });

// The manifest itself: enough cases, every one complete, every program of the folder used.
TEST(NegativeCorpusManifest, IsCompleteAndUsesEveryProgram) {
  std::ifstream in(corpus() / "cases.json");
  ASSERT_TRUE(in) << corpus() / "cases.json";
  const json list = json::parse(in);
  ASSERT_TRUE(list.is_array());
  EXPECT_GE(list.size(), 150u);
  std::set<std::string> names, used;
  size_t known = 0;
  for (const json& spec : list) {
    ASSERT_TRUE(spec.is_object()) << spec.dump();
    const std::string name = spec.value("name", "");
    EXPECT_EQ(identifier(name), name) << "a case's name must be letters, digits and _: " << spec.dump();
    EXPECT_TRUE(names.insert(name).second) << "two cases named " << name;
    EXPECT_TRUE(spec.contains("args") && spec["args"].is_array()) << spec.dump();
    EXPECT_TRUE(spec.contains("exit") && spec["exit"].is_number_integer()) << spec.dump();
    EXPECT_TRUE(spec.contains("expect") && spec["expect"].is_string() && !spec["expect"].get<std::string>().empty())
        << spec.dump();
    known += spec.contains("known");
    if (spec.contains("file")) used.insert(spec["file"].get<std::string>());
    for (const json& a : spec.value("args", json::array())) {
      const std::string arg = a.get<std::string>();
      if (arg.rfind("{corpus}/", 0) == 0) used.insert(arg.substr(9));
    }
    if (spec.contains("inputs")) {
      for (const auto& [file, parts] : spec["inputs"].items()) {
        EXPECT_NO_THROW(build(parts)) << name << ": " << file;
      }
    }
  }
  EXPECT_LE(known * 10, list.size()) << "more than a tenth of the corpus is marked known";
  for (const auto& entry : fs::directory_iterator(corpus())) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() == ".json" && file != "cases.json") {
      EXPECT_TRUE(used.count(file)) << file << " is in tests/negative/ but no case uses it";
    }
  }
  for (const auto& file : used) {
    if (file != "cases.json") {
      EXPECT_TRUE(fs::is_regular_file(corpus() / file)) << file;
    }
  }
}

}  // namespace
