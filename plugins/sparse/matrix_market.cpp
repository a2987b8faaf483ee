#include "matrix_market.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fugue/sdk.hpp>

#include "host_memory.h"

namespace fugue::sparse {

namespace {

using sdk::InvalidArgument;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

std::string at(int64_t line) { return "line " + std::to_string(line); }

int64_t integer(const std::string& word, int64_t line, const char* what) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(word.c_str(), &end, 10);
  if (errno || end == word.c_str() || *end) throw InvalidArgument(at(line) + ": expected " + what + ", found '" + word + "'");
  return v;
}

double number(const std::string& word, int64_t line, bool integral) {
  // Decimal only (strtod would also take hexadecimal and "inf").
  if (word.find_first_not_of("0123456789+-.eE") != std::string::npos)
    throw InvalidArgument(at(line) + ": expected " + (integral ? "an integer" : "a decimal number") + " (the entry's value), found '" + word + "'");
  errno = 0;
  char* end = nullptr;
  const double v = integral ? static_cast<double>(std::strtoll(word.c_str(), &end, 10)) : std::strtod(word.c_str(), &end);
  if (end == word.c_str() || *end || (integral && errno))
    throw InvalidArgument(at(line) + ": expected " + (integral ? "an integer" : "a number") + " (the entry's value), found '" + word + "'");
  if (!std::isfinite(v)) throw InvalidArgument(at(line) + ": the value '" + word + "' is not finite");
  return v;
}

}  // namespace

Coordinates read_matrix_market(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot be opened");
  std::string line;
  int64_t number_of_line = 1;
  if (!std::getline(in, line)) throw InvalidArgument("is empty (expected a %%MatrixMarket banner)");
  const std::vector<std::string> banner = words(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket")
    throw InvalidArgument(at(1) + ": expected the banner '%%MatrixMarket matrix coordinate real general', found '" + line + "'");
  if (banner.size() != 5)
    throw InvalidArgument(at(1) + ": the banner has " + std::to_string(banner.size()) +
                          " words; expected 5 (%%MatrixMarket matrix coordinate <field> <symmetry>)");
  if (lower(banner[1]) != "matrix") throw InvalidArgument(at(1) + ": expected the object 'matrix', found '" + banner[1] + "'");
  if (lower(banner[2]) != "coordinate")
    throw InvalidArgument(at(1) + ": '" + banner[2] + "': sparse kinds read coordinate files (a dense 'array' file is not one)");
  const std::string field = lower(banner[3]), symmetry = lower(banner[4]);
  if (field != "real" && field != "integer" && field != "pattern")
    throw InvalidArgument(at(1) + ": the field '" + banner[3] + "': expected real, integer or pattern (" +
                          (field == "complex" ? "complex sparse values are not supported" : "unknown field") + ")");
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric")
    throw InvalidArgument(at(1) + ": the symmetry '" + banner[4] + "': expected general, symmetric or skew-symmetric");
  const bool pattern = field == "pattern", mirrored = symmetry != "general", skew = symmetry == "skew-symmetric";
  if (pattern && skew) throw InvalidArgument(at(1) + ": a pattern file cannot be skew-symmetric (its entries have no sign)");

  // The size line: the first that is neither a comment nor blank.
  std::vector<std::string> size;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (blank(line) || line[0] == '%') continue;
    size = words(line);
    break;
  }
  if (size.empty()) throw InvalidArgument("ends before its size line (rows cols entries)");
  if (size.size() != 3)
    throw InvalidArgument(at(number_of_line) + ": expected the size line 'rows cols entries', found '" + line + "'");
  Coordinates m;
  m.rows = integer(size[0], number_of_line, "the number of rows");
  m.cols = integer(size[1], number_of_line, "the number of columns");
  const int64_t count = integer(size[2], number_of_line, "the number of entries");
  if (m.rows < 0 || m.cols < 0 || m.rows > kMaxExtent || m.cols > kMaxExtent)
    throw InvalidArgument(at(number_of_line) + ": the matrix is " + size[0] + " by " + size[1] + "; expected 0 to 2^31 - 1 rows and columns");
  if (mirrored && m.rows != m.cols)
    throw InvalidArgument(at(number_of_line) + ": a " + symmetry + " matrix must be square; the size line says " + size[0] + " by " + size[1]);
  const long double positions = static_cast<long double>(m.rows) * static_cast<long double>(m.cols);
  if (count < 0 || static_cast<long double>(count) > positions)
    throw InvalidArgument(at(number_of_line) + ": " + size[2] + " entries do not fit a " + size[0] + " by " + size[1] + " matrix");

  const int64_t size_line = number_of_line;
  // Every entry takes at least 4 bytes ("1 1\n"): a count the file cannot hold is refused before anything
  // is reserved for it.
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  if (!ec && static_cast<uintmax_t>(count) > bytes / 4 + 1)
    throw InvalidArgument(at(size_line) + ": says " + size[2] + " entries; a file of " + std::to_string(bytes) + " bytes holds at most " +
                          std::to_string(bytes / 4 + 1));
  // Nor may the entries and the per-row tables outgrow the host (a 2^31-row matrix of one entry would).
  check_host_room(matrix_host_bytes(m.rows, m.cols, mirrored ? 2 * count : count),
                  at(size_line) + ": a " + size[0] + " by " + size[1] + " matrix of " + size[2] + " entries");
  const size_t expected = static_cast<size_t>(count) * (mirrored ? 2 : 1);
  m.row.reserve(expected);
  m.col.reserve(expected);
  m.value.reserve(expected);
  m.place.reserve(expected);  // per entry read (mirrored ones too), its line
  m.place_name = at;
  int64_t read = 0;
  while (std::getline(in, line)) {
    ++number_of_line;
    if (blank(line) || line[0] == '%') continue;
    if (read == count)
      throw InvalidArgument(at(number_of_line) + ": more entries than the " + std::to_string(count) + " the size line (" + at(size_line) +
                            ") says");
    const std::vector<std::string> w = words(line);
    const size_t expected = pattern ? 2 : 3;
    if (w.size() != expected)
      throw InvalidArgument(at(number_of_line) + ": expected " + (pattern ? "'i j' (a pattern file has no values)" : "'i j value'") +
                            ", found " + std::to_string(w.size()) + " words");
    const int64_t i = integer(w[0], number_of_line, "a row index"), j = integer(w[1], number_of_line, "a column index");
    if (i < 1 || i > m.rows || j < 1 || j > m.cols)
      throw InvalidArgument(at(number_of_line) + ": entry (" + w[0] + ", " + w[1] + ") is outside the " + std::to_string(m.rows) + " by " +
                            std::to_string(m.cols) + " matrix (indices are 1-based)");
    const double v = pattern ? 1.0 : number(w[2], number_of_line, field == "integer");
    if (skew && i == j)
      throw InvalidArgument(at(number_of_line) + ": entry (" + w[0] + ", " + w[1] + ") is on the diagonal of a skew-symmetric matrix, which is zero");
    m.add(i - 1, j - 1, v);
    m.place.push_back(number_of_line);
    if (mirrored && i != j) {
      m.add(j - 1, i - 1, skew ? -v : v);
      m.place.push_back(number_of_line);
    }
    ++read;
  }
  if (in.bad()) throw InvalidArgument("could not be read to its end");
  if (read != count)
    throw InvalidArgument("ends after " + std::to_string(read) + " entries; the size line (" + at(size_line) + ") says " + std::to_string(count));
  m.sort_unique([&](int64_t k) { return at(m.place[static_cast<size_t>(k)]); });
  return m;
}

void write_matrix_market(const std::string& path, const Coordinates& m, int digits) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw sdk::DeviceFailure("cannot open " + path + " to write");
  std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% written by Fugue\n%lld %lld %lld\n",
               static_cast<long long>(m.rows), static_cast<long long>(m.cols), static_cast<long long>(m.entries()));
  for (int64_t k = 0; k < m.entries(); ++k)
    std::fprintf(f, "%lld %lld %.*g\n", static_cast<long long>(m.row[k] + 1), static_cast<long long>(m.col[k] + 1), digits, m.value[k]);
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed) throw sdk::DeviceFailure("writing " + path + " failed (disk full?)");
}

}  // namespace fugue::sparse
