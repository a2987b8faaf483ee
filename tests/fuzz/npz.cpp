// npz.cpp: libFuzzer target for the sparse plugin's reader of SciPy's .npz files (plugins/sparse/
// scipy_npz, over zip_archive): a file read into its entries, written back as a csr .npz and read again,
// which must give the same entries. A clean refusal is sdk::InvalidArgument; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz_support.h"
#include "scipy_npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fugue::sparse;
  const std::string path = fugue::fuzz::write_input("input.npz", data, size).string();
  try {
    const Coordinates m = read_scipy_npz(path);
    const std::string again = path + ".again.npz";
    write_scipy_npz(again, m, FUGUE_DTYPE_F64);
    const Coordinates back = read_scipy_npz(again);
    if (back.rows != m.rows || back.cols != m.cols || back.row != m.row || back.col != m.col || back.value.size() != m.value.size())
      fugue::fuzz::unexpected("npz", "the csr written back did not give the file's entries");
    for (size_t k = 0; k < m.value.size(); ++k)
      if (!(back.value[k] == m.value[k] || (back.value[k] != back.value[k] && m.value[k] != m.value[k])))
        fugue::fuzz::unexpected("npz", "the csr written back changed a value");
  } catch (const fugue::sdk::InvalidArgument&) {
  } catch (const std::exception& e) {
    fugue::fuzz::unexpected("npz", e.what());
  }
  return 0;
}
