// The sparse plugin: Matrix Market files read into every layout give SciPy's A x and write back the
// same matrix; the layouts hold the seed's arrays exactly; bad files and declarations are refused with
// the file, the line or the key.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/npy_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
namespace test = fugue::test;

namespace {

const std::vector<std::string> kLayouts = {"csr", "coo", "ell", "sell", "dia", "bdia", "hyb", "bcsr", "bell", "sbell", "cocktail"};

fs::path matrices() { return test::source_root() / ".." / "shared" / "data" / "matrices"; }

}  // namespace

// Every real matrix, every layout, both dtypes: y = -2 A x + 0.5 y0 against SciPy's (csr from mmread),
// and A written back as .mtx reads as the same matrix.
TEST(Sparse, EveryLayoutGivesSciPysProductOnTheRealMatrices) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  for (const char* name : {"LFAT5", "bcsstk13", "cryg2500", "jagmesh7", "karate", "lp_afiro", "west0067"}) {
    const fs::path file = matrices() / (std::string(name) + ".mtx");
    ASSERT_TRUE(fs::exists(file)) << file;
    for (const char* dtype : {"f32", "f64"}) {
      const std::string what = std::string(name) + " " + dtype + " (seed " + std::to_string(seed) + ")";
      std::string symbols, body, outputs;
      for (const auto& layout : kLayouts) {
        // cocktail: a split of its own, several parts on most of the matrices (the device's own is tested below).
        const std::string extra = layout == "sell"       ? R"(, "slice": 8, "sigma": 64)"
                                  : layout == "sbell"    ? R"(, "slice": 8, "block": [2, 8])"
                                  : layout == "bell"     ? R"(, "block": [4, 4])"
                                  : layout == "cocktail" ? R"(, "diagonal_fill": 0.3, "block_fill": 0.4, "block": [2, 4], "width": 2, "slice": 8, "sigma": 64)"
                                                         : "";
        symbols += R"("A_)" + layout + R"(": {"kind": ")" + layout + R"(", "dtype": ")" + dtype + R"(", "from": ")" + file.string() + "\"" +
                   extra + "},\n";
        body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.spmv", "out": ["y_)" + layout + R"("], "in": ["A_)" + layout +
                R"(", "x", "y0"], "attrs": {"alpha": -2, "beta": 0.5}})";
        outputs += R"("y_)" + layout + R"(": "y_)" + layout + R"(.npy", "A_)" + layout + R"(": "A_)" + layout + R"(.mtx", )";
      }
      // x and y0 need the matrix's shape: read it with a csr declaration first.
      test::write_text(dir / "shape.py", "import sys, scipy.io as sio\nr, c = sio.mminfo(sys.argv[1])[:2]\nprint(r, c)\n");
      auto shape = test::run_command(test::numpy_python() + " " + (dir / "shape.py").string() + " " + file.string());
      ASSERT_EQ(shape.code, 0) << shape.out;
      std::istringstream extents(shape.out);
      int64_t rows = 0, cols = 0;
      extents >> rows >> cols;
      test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(
        "x": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(cols) + R"(], "from": {"random": {"seed": )" +
                                           std::to_string(seed) + R"(, "low": -1, "high": 1}}},
        "y0": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [)" + std::to_string(rows) + R"(], "from": {"random": {"seed": )" +
                                           std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
        "body": [)" + body + R"(],
        "outputs": {)" + outputs + R"("x": "x.npy", "y0": "y0.npy"}})");
      fs::remove_all(dir / "out");
      auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
      ASSERT_EQ(r.code, 0) << what << ": " << r.out;
      test::write_text(dir / "check.py", std::string(R"(import sys, numpy as np, scipy.io as sio
d, dtype = sys.argv[1] + '/', sys.argv[3]
A = sio.mmread(sys.argv[2]).tocsr().astype(np.float64)
if dtype == 'f32': A = A.astype(np.float32).astype(np.float64)
x, y0 = np.load(d + 'x.npy').astype(np.float64), np.load(d + 'y0.npy').astype(np.float64)
want = -2 * (A @ x) + 0.5 * y0
scale = max(1.0, np.abs(A).sum(axis=1).max())
tol = 1e-5 if dtype == 'f32' else 1e-12
for layout in ['csr', 'coo', 'ell', 'sell', 'dia', 'bdia', 'hyb', 'bcsr', 'bell', 'sbell', 'cocktail']:
    y = np.load(d + 'y_' + layout + '.npy')
    assert y.dtype == (np.float32 if dtype == 'f32' else np.float64), (layout, y.dtype)
    err = np.abs(y - want).max() / scale
    assert err <= tol, (layout, err)
    B = sio.mmread(d + 'A_' + layout + '.mtx').tocsr()
    if dtype == 'f32': B = B.astype(np.float32).astype(np.float64)  # written with 9 digits: the same f32
    assert B.shape == A.shape and abs(B - A).max() == 0, (layout, 'written back differs')
print('as scipy')
)"));
      auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " +
                                 file.string() + " " + dtype);
      EXPECT_NE(c.out.find("as scipy"), std::string::npos) << what << ": " << c.out;
    }
  }
}

// csr's device-level kernel on GPUs, chunks of equal entries, forced here on any device, at 128 and at
// 1024 entries (1 and 8 a work-item) so that rows cross many of them, their first rows found both ways. On the real matrices, an R-MAT
// matrix with hub rows, and rows written for the chunks' edges (empty rows first, between and last, rows
// of thousands, rows ending on a chunk's last entry); both dtypes in one run, against SciPy.
TEST(Sparse, CsrChunksGiveSciPysProduct) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const uint64_t seed = test::fresh_seed();
  {
    // 300 x 5000: row i holds (i % 7 == 0 ? 0 : i % 60 == 1 ? 2000 + 7 i : i % 13) entries at columns
    // (i * 31 + 17 k) % 5000, but row 2 holds 1058, so that rows 0..4 end on entry 3072, the last of a
    // chunk of 128 and of one of 1024; rows 290..299 are empty.
    std::string body;
    int64_t count = 0;
    auto length = [](int i) {
      if (i >= 290 || i % 7 == 0) return 0;  // the last ten rows are empty too
      if (i == 2) return 3072 - 2007 - 3 - 4;
      return i % 60 == 1 ? 2000 + 7 * i : i % 13;
    };
    for (int i = 0; i < 300; ++i)
      for (int k = 0, n = length(i); k < n; ++k) {
        body += std::to_string(i + 1) + " " + std::to_string((i * 31 + 17 * k) % 5000 + 1) + " " + std::to_string(((i * 7 + k * 3) % 19) - 9.5) + "\n";
        ++count;
      }
    test::write_text(dir / "edges.mtx", "%%MatrixMarket matrix coordinate real general\n300 5000 " + std::to_string(count) + "\n" + body);
  }
  for (const char* name : {"bcsstk13", "cryg2500", "karate", "lp_afiro", "rmat", "edges"}) {
    const std::string what = std::string(name) + " (seed " + std::to_string(seed) + ")";
    const bool rmat = std::string(name) == "rmat", edges = std::string(name) == "edges";
    const fs::path file = edges ? dir / "edges.mtx" : matrices() / (std::string(name) + ".mtx");
    test::write_text(dir / "shape.py", "import sys, scipy.io as sio\nr, c = sio.mminfo(sys.argv[1])[:2]\nprint(r, c)\n");
    int64_t rows = 4096, cols = 4096;
    if (!rmat) {
      auto shape = test::run_command(test::numpy_python() + " " + (dir / "shape.py").string() + " " + file.string());
      ASSERT_EQ(shape.code, 0) << shape.out;
      std::istringstream(shape.out) >> rows >> cols;
    }
    const std::string from = rmat ? R"({"rmat": {"scale": 12, "edges": 16, "seed": 3}})" : "\"" + file.string() + "\"";
    std::string symbols, body, outputs;
    for (const char* dtype : {"f32", "f64"}) {
      const std::string d = dtype;
      auto random = [&](int64_t n, uint64_t s) {
        return R"({"kind": "array", "dtype": ")" + d + R"(", "shape": [)" + std::to_string(n) + R"(], "from": {"random": {"seed": )" +
               std::to_string(s) + R"(, "low": -1, "high": 1}}})";
      };
      symbols += std::string(symbols.empty() ? "" : ",\n") + R"("A_)" + d + R"(": {"kind": "csr", "dtype": ")" + d + R"(", "from": )" +
                 from + "},\n" + R"("x_)" + d + R"(": )" + random(cols, seed) + ",\n" + R"("y0_)" + d + R"(": )" + random(rows, seed + 1);
      body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.spmv", "out": ["y_)" + d + R"("], "in": ["A_)" + d + R"(", "x_)" +
              d + R"(", "y0_)" + d + R"("], "attrs": {"alpha": -2, "beta": 0.5}})";
      outputs += R"("y_)" + d + R"(": "y_)" + d + R"(.npy", "A_)" + d + R"(": "A_)" + d + R"(.mtx", "x_)" + d + R"(": "x_)" + d +
                 R"(.npy", "y0_)" + d + R"(": "y0_)" + d + R"(.npy", )";
    }
    outputs.resize(outputs.size() - 2);
    test::write_text(dir / "p.json", "{\"fugue\": 1, \"symbols\": {" + symbols + "},\n\"body\": [" + body + "],\n\"outputs\": {" + outputs + "}}");
    test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
for dtype in ['f32', 'f64']:
    A = sio.mmread(d + 'A_' + dtype + '.mtx').tocsr().astype(np.float64)
    x, y0 = np.load(d + 'x_' + dtype + '.npy').astype(np.float64), np.load(d + 'y0_' + dtype + '.npy').astype(np.float64)
    want = -2 * (A @ x) + 0.5 * y0
    err = np.abs(np.load(d + 'y_' + dtype + '.npy') - want).max() / max(1.0, np.abs(A).sum(axis=1).max())
    assert err <= (1e-5 if dtype == 'f32' else 1e-12), (dtype, err)
    assert np.diff(A.indptr).max() > 1000 or 'edges' not in sys.argv[2], 'no long row'
    assert np.diff(A.indptr).max() > 32 or 'rmat' not in sys.argv[2], 'no hub row'
print('as scipy')
)");
    // The chunks' first rows found by a search per chunk or by a pass over the rows, or given wrong
    // (stale: as kept for a buffer that holds another matrix now), for each chunk to find again.
    for (const auto& [items, starts, plan] :
         std::vector<std::tuple<std::string, std::string, std::string>>{{"1", "search", "chunks of 1 entries a work-item"},
                                                                        {"1", "rows", "chunks of 1 entries a work-item"},
                                                                        {"8", "rows", "chunks of 8 entries a work-item"},
                                                                        {"1", "stale", "chunks of 1 entries a work-item"},
                                                                        {"8", "stale", "chunks of 8 entries a work-item"}}) {
      const std::string env = "FUGUE_SPARSE_CSR=chunks FUGUE_SPARSE_CHUNK_ITEMS=" + items + " FUGUE_SPARSE_CHUNK_STARTS=" + starts,
                        how = what + " " + env;
      auto explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
      EXPECT_NE(explained.out.find(plan), std::string::npos) << how << ": " << explained.out;
      fs::remove_all(dir / "out");
      auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(), env);
      ASSERT_EQ(r.code, 0) << how << ": " << r.out;
      auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + name);
      EXPECT_NE(c.out.find("as scipy"), std::string::npos) << how << ": " << c.out;
    }
  }
}

// Device-level products inside a loop: coo's and csr's chunks take scratch every iteration, which the
// executor's pool hands from one operation to the next (the queue is in order); six power steps
// x <- 0.1 A x through both kinds in turn (jagmesh7: 59 chunks of 128 entries each), against NumPy.
TEST(Sparse, ScratchReusedAcrossIterations) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const std::string file = (matrices() / "jagmesh7.mtx").string();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "C": {"kind": "coo", "dtype": "f64", "from": ")" + file + R"("},
    "R": {"kind": "csr", "dtype": "f64", "from": ")" + file + R"("},
    "s": {"kind": "scalar", "dtype": "f64", "value": 0.1},
    "x": {"kind": "array", "dtype": "f64", "shape": [1138], "from": {"random": {"seed": 5, "low": -1, "high": 1}}}},
    "body": [{"op": "array.copy", "out": ["x0"], "in": ["x"]},
             {"for": "i", "count": 3, "body": [
               {"op": "sparse.spmv", "out": ["u"], "in": ["C", "x"]}, {"op": "array.mul", "out": ["v"], "in": ["s", "u"]},
               {"op": "sparse.spmv", "out": ["w"], "in": ["R", "v"]}, {"op": "array.mul", "out": ["x"], "in": ["s", "w"]}]}],
    "outputs": {"x": "x.npy", "x0": "x0.npy"}})");
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(sys.argv[2]).tocsr().astype(np.float64)
x = np.load(d + 'x0.npy')
for _ in range(6): x = 0.1 * (A @ x)
err = np.abs(np.load(d + 'x.npy') - x).max() / np.abs(x).max()
assert err < 1e-13, err
print('as numpy')
)");
  // csr's chunk starts found on the first product and kept for the next two, or kept wrong from the first
  // (stale: found again and written back by the chunks, then checked by the next products).
  for (const char* starts : {"", "stale"}) {
    const std::string env = std::string("FUGUE_SPARSE_CSR=chunks FUGUE_SPARSE_CHUNK_ITEMS=1 FUGUE_SPARSE_CHUNK_STARTS=") + starts;
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(), env);
    ASSERT_EQ(r.code, 0) << env << ": " << r.out;
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + file);
    EXPECT_NE(c.out.find("as numpy"), std::string::npos) << env << ": " << c.out;
  }
}

// SciPy's .npz files: csr deflated (save_npz's default) with int64 indices, csc stored, coo, f32 and f64
// data, a rectangular matrix with empty rows; read as csr, ell and the chooser, the products against
// SciPy's, and written back as csr .npz files that load_npz reads as the same matrix.
TEST(Sparse, SciPyNpzFilesReadAndWritten) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "make.py", R"(import sys, numpy as np, scipy.io as sio, scipy.sparse as sp
d, matrices = sys.argv[1] + '/', sys.argv[2] + '/'
A = sio.mmread(matrices + 'bcsstk13.mtx').tocsr()
wide = A.copy(); wide.indices = wide.indices.astype(np.int64); wide.indptr = wide.indptr.astype(np.int64)
sp.save_npz(d + 'csr.npz', wide)
sp.save_npz(d + 'csc.npz', A.tocsc().astype(np.float32), compressed=False)
R = sio.mmread(matrices + 'lp_afiro.mtx').tocoo()
sp.save_npz(d + 'coo.npz', R)
print('made')
)");
  auto made = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + dir.path().string() + " " + matrices().string());
  ASSERT_NE(made.out.find("made"), std::string::npos) << made.out;
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "csr", "dtype": "f64", "from": "csr.npz"}, "B": {"kind": "ell", "dtype": "f32", "from": "csc.npz"},
    "C": {"kind": "sparse", "dtype": "f64", "from": "coo.npz"},
    "x": {"kind": "array", "dtype": "f64", "shape": [2003], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
    "xs": {"kind": "array", "dtype": "f32", "shape": [2003], "from": {"random": {"seed": 5, "low": -1, "high": 1}}},
    "xc": {"kind": "array", "dtype": "f64", "shape": [51], "from": {"random": {"seed": 6, "low": -1, "high": 1}}}},
    "body": [{"op": "sparse.spmv", "out": ["ya"], "in": ["A", "x"]}, {"op": "sparse.spmv", "out": ["yb"], "in": ["B", "xs"]},
             {"op": "sparse.spmv", "out": ["yc"], "in": ["C", "xc"]}],
    "outputs": {"ya": "ya.npy", "yb": "yb.npy", "yc": "yc.npy", "x": "x.npy", "xs": "xs.npy", "xc": "xc.npy",
                "A": "A.npz", "B": "B.npz", "C": "C.npz"}})");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio, scipy.sparse as sp
d, matrices = sys.argv[1] + '/', sys.argv[2] + '/'
A = sio.mmread(matrices + 'bcsstk13.mtx').tocsr(); R = sio.mmread(matrices + 'lp_afiro.mtx').tocsr()
S = A.astype(np.float32).astype(np.float64)
for y, M, x, tol in [('ya', A, 'x', 1e-13), ('yb', S, 'xs', 1e-5), ('yc', R, 'xc', 1e-13)]:
    want = M @ np.load(d + 'out/' + x + '.npy').astype(np.float64)
    err = np.abs(np.load(d + 'out/' + y + '.npy') - want).max() / max(1.0, np.abs(want).max())
    assert err <= tol, (y, err)
for f, M, dtype in [('A', A, np.float64), ('B', S, np.float32), ('C', R, np.float64)]:
    W = sp.load_npz(d + 'out/' + f + '.npz')
    assert W.format == 'csr' and W.dtype == dtype and W.shape == M.shape, (f, W.format, W.dtype, W.shape)
    assert W.indices.dtype == np.int32 and W.has_canonical_format, f
    assert abs(W.astype(np.float64) - M).max() == 0, f
print('as scipy')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + dir.path().string() + " " + matrices().string());
  EXPECT_NE(c.out.find("as scipy"), std::string::npos) << c.out;
}

// .npz files SciPy would not have written: exit 2, naming the file, the member and what is wrong, and
// no output written.
TEST(Sparse, BadNpzFilesAreRefused) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "make.py", R"(import sys, io, zipfile, numpy as np, scipy.sparse as sp
d = sys.argv[1] + '/'
def npz(name, members, compress=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(d + name, 'w', compress) as z:
        for key, value in members.items():
            b = io.BytesIO(); np.save(b, value); z.writestr(key + '.npy', b.getvalue())
good = dict(format=np.array(b'csr'), shape=np.array([3, 3]), indptr=np.array([0, 1, 2, 2], dtype=np.int32),
            indices=np.array([0, 2], dtype=np.int32), data=np.array([1.0, 2.0]))
def but(**changes):
    m = dict(good); m.update(changes); return {k: v for k, v in m.items() if v is not None}
npz('no_indices.npz', but(indices=None))
npz('column.npz', but(indices=np.array([0, 3], dtype=np.int32)))
npz('back.npz', but(indptr=np.array([0, 2, 1, 2], dtype=np.int32)))
npz('last.npz', but(indptr=np.array([0, 1, 2, 3], dtype=np.int32)))
npz('bsr.npz', but(format=np.array(b'bsr')))
npz('floats.npz', but(indices=np.array([0.0, 2.0])))
npz('complex.npz', but(data=np.array([1j, 2.0])))
npz('twice.npz', dict(format=np.array(b'coo'), shape=np.array([3, 3]), row=np.array([1, 1]), col=np.array([2, 2]), data=np.array([1.0, 2.0])))
npz('jump.npz', but(indptr=np.array([0, 5, 2, 2], dtype=np.int32)))
npz('huge.npz', dict(format=np.array(b'coo'), shape=np.array([2**40, 2**40]), row=np.array([], dtype=np.int64), col=np.array([], dtype=np.int64), data=np.array([])))
npz('infinite.npz', but(data=np.array([1.0, np.inf])))
npz('beyond_f32.npz', but(data=np.array([1.0, 1e39])))
npz('tall.npz', dict(format=np.array(b'coo'), shape=np.array([2**31 - 1, 2**31 - 1]), row=np.array([5]), col=np.array([7]), data=np.array([1.0])))
def raw(descr, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (), }" % descr
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    return b'\x93NUMPY\x01\x00' + len(header).to_bytes(2, 'little') + header.encode() + data
with zipfile.ZipFile(d + 'string.npz', 'w') as z:
    for key, value in good.items():
        b = io.BytesIO(); np.save(b, value); z.writestr(key + '.npy', raw('|Sx', b'csr') if key == 'format' else b.getvalue())
npz('stored.npz', good, zipfile.ZIP_STORED)
raw = bytearray(open(d + 'stored.npz', 'rb').read()); at = raw.find(b'\x00\x00\x00\x00\x00\x00\x00@'); raw[at + 7] ^= 0xff
open(d + 'crc.npz', 'wb').write(raw)
open(d + 'text.npz', 'w').write('not a zip\n')
print('made')
)");
  auto made = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + dir.path().string());
  ASSERT_NE(made.out.find("made"), std::string::npos) << made.out;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"no_indices.npz", "no member 'indices.npy'"},
      {"column.npz", "member 'indices.npy': element 1 is 3, outside the columns 0..2"},
      {"back.npz", "member 'indptr.npy': pointer 2 goes back"},
      {"last.npz", "member 'indptr.npy': the last pointer is 3, not the 2 entries of 'data.npy'"},
      {"bsr.npz", "holds a SciPy 'bsr' matrix; csr, csc and coo are read"},
      {"floats.npz", "member 'indices.npy' holds '<f8'; expected integers"},
      {"complex.npz", "member 'data.npy' holds '<c16'; expected real numbers"},
      {"twice.npz", "entry 1 of 'data.npy': entry (1, 2) is given twice (also at entry 0 of 'data.npy'); scipy.sparse's sum_duplicates() merges"},
      {"jump.npz", "member 'indptr.npy': pointer 2 goes back (2 after 5)"},
      {"huge.npz", "member 'shape.npy': the matrix is 1099511627776 by 1099511627776; expected 0 to 2^31 - 1 rows and columns"},
      {"infinite.npz", "member 'data.npy': element 1 is not finite"},
      {"beyond_f32.npz", "entry 1 of 'data.npy': entry (1, 2) = 1e+39 does not fit f32"},  // read as f32
      // Its per-row tables alone would take more than the host has: refused before they are made.
      {"tall.npz", "member 'shape.npy': a 2147483647 by 2147483647 matrix of 1 entries needs about "},
      {"string.npz", "member 'format.npy' holds dtype '|Sx'"},
      {"crc.npz", "its CRC-32 does not match its data"},
      {"text.npz", "text.npz: not a ZIP archive (.npz) NumPy could read: no end of central directory record"}};
  for (const auto& [file, message] : files) {
    const std::string dtype = file == "beyond_f32.npz" ? "f32" : "f64";
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"A": {"kind": "csr", "dtype": ")" + dtype + R"(", "from": ")" + file + R"("},
      "x": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [3], "from": {"fill": 1}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    EXPECT_EQ(r.code, 2) << file << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << file << ": " << r.out;
    EXPECT_NE(r.out.find(file), std::string::npos) << file << ": " << r.out;
    EXPECT_NE(r.out.find("/symbols/A/from"), std::string::npos) << file << ": " << r.out;
    EXPECT_FALSE(fs::exists(dir / "out" / "y.npy")) << file;
  }
}

// The layouts of the seed's matrix B hold the arrays of its Figs 6.2-6.7 (sell: its data, and the
// column indices those data imply), and the block layouts of its dense 4 x 8 matrix C those of Figs 6.8-6.10
// (C's 32 values numbered 1..32 row by row: the figure's 0..v are symbols, and 0 would be no entry).
TEST(Sparse, LayoutsHoldTheSeedsArrays) {
  test::TempDir dir;
  test::write_text(dir / "B.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 9\n1 1 3\n1 2 7\n2 2 4\n2 3 8\n3 1 1\n3 3 5\n3 4 9\n4 2 2\n4 4 6\n");
  std::string symbols, outputs;
  const std::vector<std::pair<std::string, std::string>> parts = {
      {"csr", "row_ptr col data"}, {"coo", "row col data"}, {"ell", "col data"}, {"sell", "slice_ptr row col data"}, {"dia", "offsets data"},
      {"hyb", "ell_col ell_data coo_row coo_col coo_data"}, {"bcsr", "row_ptr col data"}, {"bdia", "offsets band_ptr data"},
      {"bell", "col data"}, {"sbell", "slice_ptr col data"},
      {"cocktail", "dia_offsets dia_data sbell_slice_ptr sbell_col sbell_data sell_slice_ptr sell_row sell_col sell_data csr_rows csr_row_ptr csr_col csr_data"}};
  for (const auto& [layout, names] : parts) {
    symbols += std::string(symbols.empty() ? "" : ",\n") + R"("B_)" + layout + R"(": {"kind": ")" + layout +
               R"(", "dtype": "f64", "from": "B.mtx")" +
               (layout == "sell"       ? R"(, "slice": 2)"
                : layout == "sbell"    ? R"(, "slice": 2, "block": [1, 4])"
                : layout == "cocktail" ? R"(, "block": [2, 4], "block_slice": 2, "slice": 2, "block_fill": 0.6, "width": 1)"
                                       : "") +
               "}";
    std::istringstream list(names);
    for (std::string part; list >> part;)
      outputs += std::string(outputs.empty() ? "" : ", ") + R"("B_)" + layout + "." + part + R"(": ")" + layout + "_" + part + R"(.npy")";
  }
  std::string c_file = "%%MatrixMarket matrix coordinate real general\n4 8 32\n";
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) c_file += std::to_string(i + 1) + " " + std::to_string(j + 1) + " " + std::to_string(8 * i + j + 1) + "\n";
  test::write_text(dir / "C.mtx", c_file);
  symbols += R"(, "C_bell": {"kind": "bell", "dtype": "f64", "block": [2, 4], "from": "C.mtx"},
    "C_sbell": {"kind": "sbell", "dtype": "f64", "block": [1, 4], "slice": 2, "from": "C.mtx"},
    "C_bcsr": {"kind": "bcsr", "dtype": "f64", "block": [2, 4], "from": "C.mtx"})";
  for (const char* part : {"C_bell.col", "C_bell.data", "C_sbell.slice_ptr", "C_sbell.col", "C_sbell.data", "C_bcsr.row_ptr", "C_bcsr.col", "C_bcsr.data"}) {
    std::string file = part;
    file[file.find('.')] = '_';
    outputs += std::string(R"(, ")") + part + R"(": ")" + file + R"(.npy")";
  }
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(}, "body": [], "outputs": {)" + outputs + "}}");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  // C's blocks by their values: block (i, j) of h x w, its row r as a 1 x 4 unit from column j + 4 u.
  auto unit = [](int row, int column) { return std::vector<double>{8.0 * row + column + 1, 8.0 * row + column + 2, 8.0 * row + column + 3, 8.0 * row + column + 4}; };
  auto units = [&](std::initializer_list<std::pair<int, int>> at) {
    std::vector<double> all;
    for (const auto& [row, column] : at) {
      const std::vector<double> u = unit(row, column);
      all.insert(all.end(), u.begin(), u.end());
    }
    return all;
  };
  const std::map<std::string, std::vector<double>> expected = {
      // Fig 6.8: places (super-row 0, block 0), (1, 0), (0, 1), (1, 1); their first units, then their second.
      {"C_bell_col", {0, 0, 4, 4}},
      {"C_bell_data", units({{0, 0}, {2, 0}, {0, 4}, {2, 4}, {1, 0}, {3, 0}, {1, 4}, {3, 4}})},
      // Fig 6.9: slices of rows 0-1 and 2-3, each its blocks column-major.
      {"C_sbell_slice_ptr", {0, 4, 8}}, {"C_sbell_col", {0, 0, 4, 4, 0, 0, 4, 4}},
      {"C_sbell_data", units({{0, 0}, {1, 0}, {0, 4}, {1, 4}, {2, 0}, {3, 0}, {2, 4}, {3, 4}})},
      // Fig 6.10: super-rows of two blocks each; the first units of the four blocks, then the second.
      {"C_bcsr_row_ptr", {0, 2, 4}}, {"C_bcsr_col", {0, 4, 0, 4}},
      {"C_bcsr_data", units({{0, 0}, {0, 4}, {2, 0}, {2, 4}, {1, 0}, {1, 4}, {3, 0}, {3, 4}})},
      {"bdia_offsets", {-2, 0}}, {"bdia_band_ptr", {0, 4, 12}}, {"bdia_data", {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0}},
      {"bell_col", {0, 0}}, {"bell_data", {3, 7, 0, 0, 1, 0, 5, 9, 0, 4, 8, 0, 0, 2, 0, 6}},
      {"sbell_slice_ptr", {0, 2, 4}}, {"sbell_col", {0, 0, 0, 0}}, {"sbell_data", {3, 7, 0, 0, 0, 4, 8, 0, 1, 0, 5, 9, 0, 2, 0, 6}},
      {"csr_row_ptr", {0, 2, 4, 7, 9}}, {"csr_col", {0, 1, 1, 2, 0, 2, 3, 1, 3}}, {"csr_data", {3, 7, 4, 8, 1, 5, 9, 2, 6}},
      {"coo_row", {0, 0, 1, 1, 2, 2, 2, 3, 3}}, {"coo_col", {0, 1, 1, 2, 0, 2, 3, 1, 3}}, {"coo_data", {3, 7, 4, 8, 1, 5, 9, 2, 6}},
      {"ell_col", {0, 1, 0, 1, 1, 2, 2, 3, 0, 0, 3, 0}}, {"ell_data", {3, 4, 1, 2, 7, 8, 5, 6, 0, 0, 9, 0}},
      {"sell_slice_ptr", {0, 4, 10}}, {"sell_row", {0, 1, 2, 3}}, {"sell_col", {0, 1, 1, 2, 0, 1, 2, 3, 3, 0}},
      {"sell_data", {3, 4, 7, 8, 1, 2, 5, 6, 9, 0}},
      {"dia_offsets", {-2, 0, 1}}, {"dia_data", {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0}},
      {"hyb_ell_col", {0, 1, 0, 1, 1, 2, 2, 3}}, {"hyb_ell_data", {3, 4, 1, 2, 7, 8, 5, 6}}, {"hyb_coo_row", {2}}, {"hyb_coo_col", {3}},
      {"hyb_coo_data", {9}}, {"bcsr_row_ptr", {0, 1, 2}}, {"bcsr_col", {0, 0}},
      {"bcsr_data", {3, 7, 0, 0, 1, 0, 5, 9, 0, 4, 8, 0, 0, 2, 0, 6}},
      // layouts.h's cocktail of B: its dense 2 x 4 block (rows 2-3), rows 0 and 1's first entries, the rest.
      {"cocktail_dia_offsets", {}}, {"cocktail_dia_data", {}}, {"cocktail_sbell_slice_ptr", {0, 2}}, {"cocktail_sbell_col", {0, 0}},
      {"cocktail_sbell_data", {0, 0, 0, 0, 1, 0, 5, 9, 0, 0, 0, 0, 0, 2, 0, 6}}, {"cocktail_sell_slice_ptr", {0, 2, 2}},
      {"cocktail_sell_row", {0, 1, 2, 3}}, {"cocktail_sell_col", {0, 1}}, {"cocktail_sell_data", {3, 4}},
      {"cocktail_csr_rows", {0, 1}}, {"cocktail_csr_row_ptr", {0, 1, 2}}, {"cocktail_csr_col", {1, 2}}, {"cocktail_csr_data", {7, 8}}};
  for (const auto& [file, values] : expected) {
    const fugue::HostArray a = fugue::load_npy(dir / "out" / (file + ".npy"), std::nullopt, std::nullopt);
    ASSERT_EQ(a.elements(), static_cast<int64_t>(values.size())) << file;
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(a.get(static_cast<int64_t>(i)), values[i]) << file << " element " << i;
  }
}

// The cocktail split (seed 003's greedy policies) read from the device's table: a band of 9 full diagonals
// with a few rows of 1,500 entries goes to a dia and a csr when a tuned table makes dia ten times faster
// than the flat layouts (a dia alone would pad every row to the long rows' diagonals), and the automatic
// choice takes it; the products of the split chosen, of a split declared and of the kind's own choice
// give SciPy's. Bad cocktail declarations name their key.
TEST(Sparse, CocktailIsSplitForTheDeviceAndChosen) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "make.py", R"(import sys, numpy as np, scipy.sparse as sp, scipy.io as sio
n, rng = 1 << 14, np.random.default_rng(int(sys.argv[2]))
offsets = [-128, -64, -2, -1, 0, 1, 2, 64, 128]
A = sp.diags([rng.uniform(-1, 1, n - abs(o)) for o in offsets], offsets, shape=(n, n), format='csr')
rows = np.repeat(rng.choice(n, 4, replace=False), 1500)
A = (A + sp.csr_matrix((rng.uniform(-1, 1, rows.size), (rows, rng.integers(0, n, rows.size))), shape=(n, n))).tocoo()
sio.mmwrite(sys.argv[1], A)
)");
  const uint64_t seed = test::fresh_seed();
  auto made = test::run_command(test::numpy_python() + " " + (dir / "make.py").string() + " " + (dir / "A.mtx").string() + " " + std::to_string(seed));
  ASSERT_EQ(made.code, 0) << made.out;
  const std::string env = "FUGUE_CACHE_DIR=" + (dir / "cache").string();
  auto tuned = test::run_fugue("tune sparse --quick --repeat 1", env);
  ASSERT_EQ(tuned.code, 0) << tuned.out;
  const size_t wrote = tuned.out.find("wrote ");
  ASSERT_NE(wrote, std::string::npos) << tuned.out;
  const fs::path table_file = fs::path(tuned.out.substr(wrote + 6, tuned.out.find('\n', wrote) - wrote - 6)).parent_path() / "sparse.json";
  std::string gbps;
  for (const char* layout : {"csr", "coo", "ell", "sell", "dia", "bdia", "bcsr", "bell", "sbell"})
    gbps += std::string(gbps.empty() ? "" : ", ") + "\"" + layout + "\": " + (std::string(layout) == "dia" ? "[100, 100, 100, 100]" : "[10, 10, 10, 10]");
  test::write_text(table_file, R"({"tuner": "sparse", "device": ")" + nlohmann::json::parse(std::ifstream(dir / "cache" / "tuning" /
                                    table_file.parent_path().filename() / "sparse.quick.json"))["device"].get<std::string>() +
                                    R"(", "widths": [1, 4, 16, 64], "gbps": {)" + gbps + "}}");
  const std::string file = (dir / "A.mtx").string();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "A": {"kind": "sparse", "dtype": "f64", "reads": -1, "from": ")" + file + R"("},
    "C": {"kind": "cocktail", "dtype": "f64", "from": ")" + file + R"("},
    "D": {"kind": "cocktail", "dtype": "f64", "from": ")" + file + R"(", "diagonal_fill": 0.9, "block_fill": 0.25, "block": [1, 4], "width": 3, "slice": 4, "sigma": 32},
    "E": {"kind": "cocktail", "dtype": "f64", "from": ")" + file + R"(", "width": 0},
    "K": {"kind": "cocktail", "dtype": "f64", "from": ")" + file + R"(", "slice": 8, "sigma": 16},
    "x": {"kind": "array", "dtype": "f64", "shape": [16384], "from": {"random": {"seed": )" + std::to_string(seed) + R"(, "low": -1, "high": 1}}},
    "y0": {"kind": "array", "dtype": "f64", "shape": [16384], "from": {"random": {"seed": )" + std::to_string(seed + 1) + R"(, "low": -1, "high": 1}}}},
    "body": [{"op": "sparse.spmv", "out": ["ya"], "in": ["A", "x"]}, {"op": "sparse.spmv", "out": ["yc"], "in": ["C", "x", "y0"], "attrs": {"alpha": 1.5, "beta": -0.5}},
             {"op": "sparse.spmv", "out": ["yd"], "in": ["D", "x", "y0"], "attrs": {"alpha": -2, "beta": 3}},
             {"op": "sparse.spmv", "out": ["ye"], "in": ["E", "x", "y0"], "attrs": {"alpha": 2, "beta": 0.25}},
             {"op": "sparse.spmv", "out": ["yk"], "in": ["K", "x"]}],
    "outputs": {"ya": "ya.npy", "yc": "yc.npy", "yd": "yd.npy", "ye": "ye.npy", "yk": "yk.npy", "x": "x.npy", "y0": "y0.npy", "D": "D.mtx"}})");
  auto explained = test::run_fugue("explain " + (dir / "p.json").string(), env);
  ASSERT_EQ(explained.code, 0) << explained.out;
  EXPECT_NE(explained.out.find("A: sparse chose cocktail: "), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("cocktail (dia of 9 diagonals + "), std::string::npos) << explained.out;
  // On CPUs the dia's rows go in vectors of the device's native width.
  EXPECT_NE(explained.out.find("cocktail, its parts one after another, each adding to y: dia: "), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find(" rows a work-item in vectors of the native width, 9 diagonals; then "), std::string::npos) << explained.out;
  // E: every entry in its csr (no fill given: none; width 0), which lists its rows, so y = beta * y0 first.
  EXPECT_NE(explained.out.find("each adding to y: csr: "), std::string::npos) << explained.out;
  // K: the device chooses the split, its slices and window as declared. The tables built in put the band in
  // the dia and the long rows in the csr (once CPUs ran dia in vectors; before, the CPU table put the band
  // in the sell); the GPU's too.
  auto built_in = test::run_fugue("explain " + (dir / "p.json").string());
  EXPECT_NE(built_in.out.find(" rows a work-item in vectors of the native width, 9 diagonals; then csr: "), std::string::npos) << built_in.out;
  auto gpu = test::run_fugue("explain " + (dir / "p.json").string() + " --device-file " + (test::source_root() / "devices" / "nvidia-h100.json").string());
  EXPECT_NE(gpu.out.find("dia: a row per work-item, 9 diagonals; then csr: chunks of 8 entries a work-item"), std::string::npos) << gpu.out;
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(), env);
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(sys.argv[2]).tocsr()
x, y0 = np.load(d + 'x.npy'), np.load(d + 'y0.npy')
scale = max(1, abs(A).sum(axis=1).max())
for y, want in [('ya', A @ x), ('yc', 1.5 * (A @ x) - 0.5 * y0), ('yd', -2 * (A @ x) + 3 * y0), ('ye', 2 * (A @ x) + 0.25 * y0), ('yk', A @ x)]:
    assert np.abs(np.load(d + y + '.npy') - want).max() <= 1e-12 * scale, y
assert abs(sio.mmread(d + 'D.mtx').tocsr() - A).max() == 0
print('as scipy')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + file);
  EXPECT_NE(c.out.find("as scipy"), std::string::npos) << "seed " << seed << ": " << c.out;
  // The csr's kernels of GPUs (chunks of equal entries) on its listed rows, forced here.
  r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "chunks").string(), env + " FUGUE_SPARSE_CSR=chunks");
  ASSERT_EQ(r.code, 0) << r.out;
  c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "chunks").string() + " " + file);
  EXPECT_NE(c.out.find("as scipy"), std::string::npos) << "chunks, seed " << seed << ": " << c.out;
  const std::string poisson = R"({"poisson": {"grid": [4, 4]}})";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"kind": "cocktail", "dtype": "f64", "shape": [4, 4], "diagonals": 0, "blocks": 0, "stored": 0, "csr_rows": 0})",
       "/symbols/A/nnz: expected the cocktail's csr part's nnz"},
      {R"({"kind": "cocktail", "dtype": "f64", "shape": [4, 4], "diagonals": 0, "blocks": 0, "stored": 0, "nnz": 0})",
       "/symbols/A/csr_rows: expected the rows the cocktail's csr part holds"},
      {R"({"kind": "cocktail", "dtype": "f64", "shape": [4, 4], "nnz": 0, "blocks": 0, "stored": 0})",
       "/symbols/A/diagonals: expected the cocktail's dia part's diagonals"},
      {R"({"kind": "cocktail", "diagonal_fill": 0, "from": )" + poisson + "}", "/symbols/A/diagonal_fill: expected a positive number"},
      {R"({"kind": "cocktail", "block_fill": "half", "from": )" + poisson + "}", "/symbols/A/block_fill: expected a positive number"},
      {R"({"kind": "cocktail", "width": -2, "from": )" + poisson + "}", "/symbols/A/width: expected an integer from 0 to 2^40"},
      {R"({"kind": "hyb", "width": 17, "from": )" + poisson + "}", "/symbols/A/width: a row holds at most 16 entries (the columns), found 17"},
      {R"({"kind": "cocktail", "block_slice": 2000, "from": )" + poisson + "}", "/symbols/A/block_slice: expected at most 1024 super-rows"},
      {R"({"kind": "cocktail", "diagonal_fill": 0.5, "diagonals": 3, "from": )" + poisson + "}",
       "holds a matrix whose dia part's /diagonals is 5; the declaration says 3"},
      {R"({"kind": "cocktail", "diagonal_fill": 0.0001, "from": {"rmat": {"scale": 16, "edges": 2, "seed": 1}}})",
       "the cocktail's dia part: dia would hold"},
      {R"({"kind": "cocktail", "dtype": "f64", "shape": [2, 2], "nnz": 1, "csr_rows": 1, "diagonals": 0, "blocks": 0, "stored": 0, "slice": 2, "block_slice": 2, "parts": {
         "dia_offsets": {"value": []}, "dia_data": {"value": []}, "sbell_slice_ptr": {"value": [0, 0]}, "sbell_col": {"value": []},
         "sbell_data": {"value": []}, "sell_slice_ptr": {"value": [0, 0]}, "sell_row": {"value": [0, 1]}, "sell_col": {"value": []},
         "sell_data": {"value": []}, "csr_rows": {"value": [1]}, "csr_row_ptr": {"value": [0, 1]}, "csr_col": {"value": [5]}, "csr_data": {"value": [1.5]}}})",
       "the cocktail's csr part: a csr whose col[0] = 5 is outside 0..1"},
      {R"({"kind": "cocktail", "dtype": "f64", "shape": [2, 2], "nnz": 2, "csr_rows": 2, "diagonals": 0, "blocks": 0, "stored": 0, "slice": 2, "block_slice": 2, "parts": {
         "dia_offsets": {"value": []}, "dia_data": {"value": []}, "sbell_slice_ptr": {"value": [0, 0]}, "sbell_col": {"value": []},
         "sbell_data": {"value": []}, "sell_slice_ptr": {"value": [0, 0]}, "sell_row": {"value": [0, 1]}, "sell_col": {"value": []},
         "sell_data": {"value": []}, "csr_rows": {"value": [1, 1]}, "csr_row_ptr": {"value": [0, 1, 2]}, "csr_col": {"value": [0, 1]}, "csr_data": {"value": [1.5, 2]}}})",
       "the cocktail's csr part: a csr whose rows[1] = 1 is outside 0..1 or not above the row before it"},
  };
  for (size_t k = 0; k < bad.size(); ++k) {  // run: parts given inline are checked before the run
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {"A": )" + bad[k].first + R"(}, "body": [], "outputs": {"A": "A.mtx"}})");
    auto v = test::run_fugue("run " + (dir / "bad.json").string() + " --out " + (dir / "bad").string());
    EXPECT_EQ(v.code, 2) << k << ": " << v.out;
    EXPECT_NE(v.out.find(bad[k].second), std::string::npos) << k << ": " << v.out;
  }
}

// Bad files exit with 2, naming the file and the line; declarations that contradict the file name the key.
TEST(Sparse, BadFilesAndDeclarationsAreRefusedWithTheLine) {
  test::TempDir dir;
  const std::string good_header = "%%MatrixMarket matrix coordinate real general\n";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "line 1: 'array'"},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "complex sparse values are not supported"},
      {"%%MatrixMarket matrix coordinate real general\n% comment\n3 3 2\n1 1 1.5\n", "ends after 1 entries; the size line (line 3) says 2"},
      {good_header + "3 3 1\n1 1 1.5\n2 2 2\n", "line 4: more entries than the 1 the size line (line 2) says"},
      {good_header + "3 3 2\n1 1 1.5\n4 1 2\n", "line 4: entry (4, 1) is outside the 3 by 3 matrix"},
      {good_header + "3 3 2\n1 1 1.5\n0 1 2\n", "line 4: entry (0, 1) is outside"},
      {good_header + "3 3 2\n2 1 1.5\n2 1 2\n", "line 4: entry (2, 1) is given twice (also at line 3)"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1.5\n1 2 2\n", "is given twice"},
      {"%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.5\n", "line 3: expected 'i j' (a pattern file has no values)"},
      {good_header + "3 3 1\n1 1 abc\n", "line 3: expected a decimal number (the entry's value), found 'abc'"},
      {good_header + "3 3 1\n1 1 inf\n", "line 3: expected a decimal number (the entry's value), found 'inf'"},
      {good_header + "3 3 1\n1 1 0x10\n", "line 3: expected a decimal number (the entry's value), found '0x10'"},
      {good_header + "3 3 1\n1 1 1e400\n", "line 3: the value '1e400' is not finite"},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n", "line 1: a pattern file cannot be skew-symmetric"},
      {good_header + "100000 100000 5000000000\n1 1 1\n", "line 2: says 5000000000 entries; a file of"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", "line 3: entry (2, 2) is on the diagonal of a skew-symmetric"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n2 1 1\n", "must be square"},
      {good_header + "3 3 10\n", "10 entries do not fit a 3 by 3 matrix"},
      {"%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1\n", "line 1: the banner has 4 words"},
      {"hello\n", "line 1: expected the banner"},
      {good_header + "% only comments\n", "ends before its size line"},
  };
  for (size_t k = 0; k < files.size(); ++k) {
    const auto& [text, message] = files[k];
    test::write_text(dir / "bad.mtx", text);
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"A": {"kind": "csr", "dtype": "f64", "from": "bad.mtx"},
      "x": {"kind": "array", "dtype": "f64", "shape": [3], "from": {"fill": 1}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    EXPECT_EQ(r.code, 2) << "file " << k << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << "file " << k << ": " << r.out;
    EXPECT_NE(r.out.find("bad.mtx"), std::string::npos) << "file " << k << ": " << r.out;
    EXPECT_NE(r.out.find("/symbols/A/from"), std::string::npos) << "file " << k << ": " << r.out;
    EXPECT_FALSE(fs::exists(dir / "out" / "y.npy")) << "file " << k;
  }
  // Keys that contradict the file, an array declared from one, a layout that would mostly hold padding.
  test::write_text(dir / "B.mtx", good_header + "3 300 4\n1 1 1\n2 1 1\n2 300 1\n3 150 1\n");
  std::string wide = "%%MatrixMarket matrix coordinate real general\n4194304 4194304 20\n";
  for (int j = 1; j <= 20; ++j) wide += "1 " + std::to_string(j) + " 1\n";
  test::write_text(dir / "wide.mtx", wide);
  test::write_text(dir / "huge.mtx", good_header + "2 2 1\n1 1 1e300\n");
  const std::vector<std::pair<std::string, std::string>> declarations = {
      {R"({"kind": "csr", "dtype": "f64", "nnz": 5, "from": "B.mtx"})", "nnz is 4; the declaration says 5"},
      {R"({"kind": "ell", "dtype": "f64", "shape": [3, 299], "from": "B.mtx"})", "column count (/shape/1) is 300; the declaration says 299"},
      {R"({"kind": "sell", "dtype": "f64", "slice": 0, "from": "B.mtx"})", "/slice: expected an integer from 1"},
      {R"({"kind": "csr", "dtype": "f16", "from": "B.mtx"})", "/dtype: expected \"f32\" or \"f64\""},
      {R"({"kind": "array", "dtype": "f64", "shape": [3, 300], "from": "B.mtx"})", "declare the symbol with a sparse kind"},
      {R"({"kind": "csr", "dtype": "f64", "shape": [3, 300]})", "/nnz: expected the csr's nnz"},
      {R"({"kind": "ell", "dtype": "f64", "from": "wide.mtx"})", "ell would hold 83886080 places for 20 entries"},
      {R"({"kind": "ell", "dtype": "f64", "shape": [16777216, 4], "width": 1099511627776})", "/symbols/A/width: a row holds at most 4 entries"},
      {R"({"kind": "csr", "dtype": "f64", "shape": [3, 4], "nnz": 13})", "/symbols/A/nnz: a 3 by 4 matrix holds at most 12 entries"},
      {R"({"kind": "dia", "dtype": "f64", "shape": [1099511627776, 1099511627776], "diagonals": 1099511627776})", "would hold more than 2^62 places"},
      {R"({"kind": "csr", "dtype": "f32", "from": "huge.mtx"})", "huge.mtx: line 3: entry (1, 1) = 1e+300 does not fit f32"},
      {R"({"kind": "csr", "dtype": "f64", "shape": [3, 3], "nnz": 3, "parts": {"row_ptr": {"value": [0, 1, 2, 3]},
          "col": {"value": [0, 1, 100000000]}, "data": {"value": [1, 2, 3]}}})", "/symbols/A/parts: a csr whose col[2] = 100000000 is outside 0..2"},
      {R"({"kind": "coo", "dtype": "f64", "shape": [3, 3], "nnz": 3, "parts": {"row": {"value": [2, 0, 1]},
          "col": {"value": [0, 1, 2]}, "data": {"value": [1, 2, 3]}}})", "/symbols/A/parts: a coo whose rows are not sorted"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [4, 4], "diagonals": 2})", "/symbols/A/bands: expected the bdia's bands"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [4, 4], "diagonals": 2, "bands": 3})", "/symbols/A/bands: at most one band a diagonal (2)"},
      {R"({"kind": "bdia", "dtype": "f64", "bands": 2, "from": "B.mtx"})", "band count (/bands) is 3; the declaration says 2"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [3, 3], "diagonals": 2, "bands": 2, "parts": {"offsets": {"value": [0, 0]},
          "band_ptr": {"value": [0, 3, 6]}, "data": {"value": [1, 1, 1, 1, 1, 1]}}})", "/symbols/A/parts: a bdia whose bands are not ascending or overlap (band 1)"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [3, 3], "diagonals": 2, "bands": 2, "parts": {"offsets": {"value": [0, 1]},
          "band_ptr": {"value": [0, 2, 6]}, "data": {"value": [1, 1, 1, 1, 1, 1]}}})", "a bdia whose band 0 holds 2 places, not whole diagonals of 3 rows"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [3, 3], "diagonals": 1, "bands": 1, "parts": {"offsets": {"value": [2]},
          "band_ptr": {"value": [0, 3]}, "data": {"value": [1, 1, 0]}}})", "a bdia with a value outside the matrix (diagonal 2, row 1)"},
      {R"({"kind": "sbell", "dtype": "f64", "shape": [8, 8], "slice": 2, "blocks": 3})", "/symbols/A/blocks: expected a multiple of the slice height 2"},
      {R"({"kind": "bell", "dtype": "f64", "shape": [2, 8], "block": [2, 4], "width": 1, "parts": {"col": {"value": [9]},
          "data": {"value": [1, 0, 0, 0, 0, 0, 0, 0]}}})", "/symbols/A/parts: a bell whose col[0] = 9 is outside 0..7"},
      {R"({"kind": "bell", "dtype": "f64", "shape": [2, 6], "block": [2, 4], "width": 1, "parts": {"col": {"value": [4]},
          "data": {"value": [0, 0, 0, 1, 0, 0, 0, 0]}}})", "/symbols/A/parts: a bell with a value outside the matrix (block 0)"},
      {R"({"kind": "sbell", "dtype": "f64", "shape": [2, 4], "block": [1, 4], "slice": 2, "blocks": 2, "parts": {"slice_ptr": {"value": [0, 1]},
          "col": {"value": [0, 0]}, "data": {"value": [1, 0, 0, 0, 1, 0, 0, 0]}}})", "a sbell whose slice_ptr does not run from 0 to its 2 blocks"},
      {R"({"kind": "sbell", "dtype": "f64", "shape": [6, 4], "block": [1, 4], "slice": 2, "blocks": 4, "parts": {"slice_ptr": {"value": [0, 4, 2, 4]},
          "col": {"value": [0, 0, 0, 0]}, "data": {"value": [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]}}})",
       "a sbell whose slice_ptr[2] = 2 is less than slice_ptr[1] = 4 (pointers only go forward)"},
      {R"({"kind": "bdia", "dtype": "f64", "shape": [4, 4], "diagonals": 3, "bands": 3, "parts": {"offsets": {"value": [-2, 0, 1]},
          "band_ptr": {"value": [0, 8, 4, 12]}, "data": {"value": [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0]}}})",
       "a bdia whose band_ptr[2] = 4 is less than band_ptr[1] = 8 (pointers only go forward)"},
  };
  for (size_t k = 0; k < declarations.size(); ++k) {
    const auto& [declaration, message] = declarations[k];
    // An output, so that the run reads the value (parts given one by one are checked then).
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {"A": )" + declaration + R"(}, "body": [], "outputs": {"A": "A.mtx"}})");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    EXPECT_EQ(r.code, 2) << "declaration " << k << ": " << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << "declaration " << k << ": " << r.out;
    EXPECT_NE(r.out.find("/symbols/A"), std::string::npos) << "declaration " << k << ": " << r.out;
  }
}

// The generators' matrices in every layout: y = A x against SciPy's product with the matrix written back;
// poisson against SciPy's Laplacian (a Kronecker sum), rmat's repeats dropped, fem's structure symmetric.
TEST(Sparse, GeneratedMatricesInEveryLayout) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const std::vector<std::pair<std::string, std::string>> sources = {
      {"poisson2", R"({"poisson": {"grid": [23, 31]}})"},
      {"poisson3", R"({"poisson": {"grid": [5, 6, 7]}})"},
      {"rmat", R"({"rmat": {"scale": 11, "edges": 12, "seed": 5}})"},
      {"fem", R"({"fem": {"nodes": 300, "block": 3, "neighbours": 5, "seed": 6}})"},
      {"banded", R"({"banded": {"rows": 500, "width": 9, "seed": 7}})"}};
  for (const auto& [name, source] : sources) {
    std::string symbols, body, outputs;
    for (const auto& layout : kLayouts) {
      symbols += R"("A_)" + layout + R"(": {"kind": ")" + layout + R"(", "dtype": "f64", "from": )" + source +
                 (layout == "sell"    ? R"(, "slice": 4, "sigma": 16)"
                  : layout == "bcsr"  ? R"(, "block": [4, 8])"
                  : layout == "bell"  ? R"(, "block": [8, 4])"
                  : layout == "sbell" ? R"(, "slice": 3, "block": [1, 8])"
                  : layout == "cocktail" ? R"(, "diagonal_fill": 0.5, "block_fill": 0.4, "block": [2, 4], "block_slice": 3, "width": 3, "slice": 4)"
                                      : "") +
                 "},\n";
      body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.spmv", "out": ["y_)" + layout + R"("], "in": ["A_)" + layout +
              R"(", "x"]})";
      outputs += R"("y_)" + layout + R"(": "y_)" + layout + R"(.npy", )";
    }
    // x needs the column count: the explain of a first program says A's type.
    test::write_text(dir / "shape.json", R"({"fugue": 1, "symbols": {"A": {"kind": "csr", "dtype": "f64", "from": )" + source +
                                             R"(}}, "body": [], "outputs": {"A": "A.mtx"}})");
    fs::remove_all(dir / "shape");
    auto shape = test::run_fugue("run " + (dir / "shape.json").string() + " --out " + (dir / "shape").string());
    ASSERT_EQ(shape.code, 0) << name << ": " << shape.out;
    std::ifstream header(dir / "shape" / "A.mtx");
    std::string line;
    std::getline(header, line);
    std::getline(header, line);  // "% written by Fugue"
    int64_t rows = 0, cols = 0;
    header >> rows >> cols;
    ASSERT_GT(cols, 0) << name;
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"("x": {"kind": "array", "dtype": "f64", "shape": [)" +
                                         std::to_string(cols) + R"(], "from": {"random": {"seed": 3, "low": -1, "high": 1}}}},
      "body": [)" + body + R"(], "outputs": {)" + outputs + R"("x": "x.npy"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.out;
    test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio, scipy.sparse as sp
d, name = sys.argv[1] + '/', sys.argv[2]
A = sio.mmread(d + '../shape/A.mtx').tocsr()
x = np.load(d + 'x.npy')
for layout in ['csr', 'coo', 'ell', 'sell', 'dia', 'bdia', 'hyb', 'bcsr', 'bell', 'sbell', 'cocktail']:
    err = np.abs(np.load(d + 'y_' + layout + '.npy') - A @ x).max() / max(1.0, abs(A).sum(axis=1).max())
    assert err < 1e-13, (layout, err)
def laplacian(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
if name == 'poisson2':
    L = sp.kronsum(laplacian(31), laplacian(23))  # grid [23, 31]: the last axis fastest
    assert abs(A - L).max() == 0, 'poisson 2-D'
if name == 'poisson3':
    L = sp.kronsum(sp.kronsum(laplacian(7), laplacian(6)), laplacian(5))
    assert abs(A - L).max() == 0, 'poisson 3-D'
if name == 'rmat':
    assert A.shape == (2048, 2048) and (A.data == 1).all() and A.nnz <= 12 * 2048, A.nnz
if name == 'fem':
    S = (A != 0).astype(int)
    assert abs(S - S.T).max() == 0 and A.shape == (900, 900), 'fem structure'
if name == 'banded':
    assert (np.diff(A.indptr) == 9).all() and (A.data != 0).all(), 'banded'
print('as scipy')
)");
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + name);
    EXPECT_NE(c.out.find("as scipy"), std::string::npos) << name << ": " << c.out;
  }
  // Bad parameters point inside them; a generator of sparse values does not make arrays.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"kind": "csr", "dtype": "f64", "from": {"poisson": {"grid": [0, 4]}}})", "/symbols/A/from/poisson/grid/0: expected an integer from 1"},
      {R"({"kind": "csr", "dtype": "f64", "from": {"rmat": {"scale": 4, "edges": 2, "a": 0.9, "b": 0.2}}})", "/symbols/A/from/rmat/c: a + b + c"},
      {R"({"kind": "csr", "dtype": "f64", "from": {"banded": {"rows": 4, "width": 2, "colour": 1}}})", "/symbols/A/from/banded/colour: unknown parameter"},
      {R"({"kind": "csr", "dtype": "f64", "from": {"random": {"seed": 1}}})", "/symbols/A/from: expected a file holding a csr, or a generator of values"},
      {R"({"kind": "array", "dtype": "f64", "shape": [4, 4], "from": {"poisson": {"grid": [2, 2]}}})", "the poisson generator makes values of kinds with storage"},
  };
  for (size_t k = 0; k < bad.size(); ++k) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {"A": )" + bad[k].first + R"(}, "body": [], "outputs": {}})");
    auto r = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(r.code, 2) << k << ": " << r.out;
    EXPECT_NE(r.out.find(bad[k].second), std::string::npos) << k << ": " << r.out;
  }
}

// Y = alpha A X + beta Y0 for 5 vectors in every layout, against SciPy (an rmat graph: rows of very
// different lengths, and rows longer than a chunk of coo).
TEST(Sparse, SpmmMatchesSciPyInEveryLayout) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  std::string symbols, body, outputs;
  for (const auto& layout : kLayouts) {
    symbols += R"("A_)" + layout + R"(": {"kind": ")" + layout + R"(", "dtype": "f64", "from": {"rmat": {"scale": 10, "edges": 20, "seed": 9}})" +
               (layout == "sell"       ? R"(, "slice": 16, "sigma": 128)"
                : layout == "sbell"    ? R"(, "slice": 5)"
                : layout == "cocktail" ? R"(, "diagonal_fill": 0.05, "block_fill": 0.2, "block": [1, 4], "width": 4)"
                                       : "") +
               "},\n";
    body += std::string(body.empty() ? "" : ",\n") + R"({"op": "sparse.spmm", "out": ["Y_)" + layout + R"("], "in": ["A_)" + layout +
            R"(", "X", "Y0"], "attrs": {"alpha": 1.5, "beta": -1}})";
    outputs += R"("Y_)" + layout + R"(": "Y_)" + layout + R"(.npy", )";
  }
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {)" + symbols + R"(
    "X": {"kind": "array", "dtype": "f64", "shape": [1024, 5], "from": {"random": {"seed": 3, "low": -1, "high": 1}}},
    "Y0": {"kind": "array", "dtype": "f64", "shape": [1024, 5], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
    "body": [)" + body + R"(], "outputs": {)" + outputs + R"("A_csr": "A.mtx", "X": "X.npy", "Y0": "Y0.npy"}})");
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(d + 'A.mtx').tocsr()
want = 1.5 * (A @ np.load(d + 'X.npy')) - np.load(d + 'Y0.npy')
assert max(np.diff(A.indptr)) > 128, 'no row longer than a coo chunk'
for layout in ['csr', 'coo', 'ell', 'sell', 'dia', 'bdia', 'hyb', 'bcsr', 'bell', 'sbell', 'cocktail']:
    Y = np.load(d + 'Y_' + layout + '.npy')
    assert Y.shape == want.shape and np.abs(Y - want).max() < 1e-12 * max(1, abs(A).sum(axis=1).max()), layout
print('as scipy')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
  EXPECT_NE(c.out.find("as scipy"), std::string::npos) << c.out;
}

// {"kind": "sparse"}: the format chosen for the matrix and the device, shown by explain with every
// candidate's estimate, and the product as SciPy's; "format" names one instead; bad declarations. The
// choices are for the products alone ("reads": -1; AutoFormatWeighsTheConversion... counts them).
TEST(Sparse, AutoFormatIsChosenForTheDeviceAndExplained) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const std::string file = (matrices() / "bcsstk13.mtx").string();
  test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
    "P": {"kind": "sparse", "dtype": "f64", "reads": -1, "from": {"poisson": {"grid": [64, 64]}}},
    "R": {"kind": "sparse", "dtype": "f64", "reads": -1, "from": {"rmat": {"scale": 12, "edges": 16, "seed": 2}}},
    "M": {"kind": "sparse", "dtype": "f64", "reads": -1, "from": ")" + file + R"("},
    "S": {"kind": "sparse", "format": "sell", "slice": 4, "dtype": "f64", "from": ")" + file + R"("},
    "F": {"kind": "sparse", "dtype": "f32", "reads": -1, "from": {"fem": {"nodes": 3000, "block": 4, "neighbours": 4, "seed": 3}}},
    "xf": {"kind": "array", "dtype": "f32", "shape": [12000], "from": {"random": {"seed": 3, "low": -1, "high": 1}}},
    "xp": {"kind": "array", "dtype": "f64", "shape": [4096], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
    "xm": {"kind": "array", "dtype": "f64", "shape": [2003], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
    "body": [{"op": "sparse.spmv", "out": ["yp"], "in": ["P", "xp"]}, {"op": "sparse.spmv", "out": ["yr"], "in": ["R", "xp"]},
             {"op": "sparse.spmv", "out": ["ym"], "in": ["M", "xm"]}, {"op": "sparse.spmv", "out": ["ys"], "in": ["S", "xm"]},
             {"op": "sparse.spmv", "out": ["yf"], "in": ["F", "xf"]}],
    "outputs": {"yp": "yp.npy", "yr": "yr.npy", "ym": "ym.npy", "ys": "ys.npy", "yf": "yf.npy", "P": "P.mtx", "R": "R.mtx", "F": "F.mtx",
                "xp": "xp.npy", "xm": "xm.npy", "xf": "xf.npy"}})");
  auto explained = test::run_fugue("explain " + (dir / "p.json").string());
  ASSERT_EQ(explained.code, 0) << explained.out;
  EXPECT_NE(explained.out.find("Kinds chosen for the device"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("S: sparse chose sell: named by \"format\""), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("R: sparse chose csr: "), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("estimated ms (CPU table (PoCL, measured))"), std::string::npos) << explained.out;
  // A described GPU gets the GPU table.
  auto gpu = test::run_fugue("explain " + (dir / "p.json").string() + " --device-file " + (test::source_root() / "devices" / "nvidia-h100.json").string());
  EXPECT_NE(gpu.out.find("estimated ms (GPU table (H100, measured))"), std::string::npos) << gpu.out;
  // Dense 4 x 4 blocks (FEM-like nodes of 4 unknowns, f32): a block layout on either device, every block size
  // weighed (1 x 4 .. 8 x 8, the 4 x 4 blocks filled whole); R-MAT's scattered entries fill 1 x 4 units
  // too thinly for any block to be weighed. On the GPU, 20,000 nodes: at 3,000 the kernels' latency
  // decides.
  test::write_text(dir / "fem.json", R"({"fugue": 1, "symbols": {
    "F": {"kind": "sparse", "dtype": "f32", "reads": -1, "from": {"fem": {"nodes": 20000, "block": 4, "neighbours": 4, "seed": 3}}},
    "R": {"kind": "sparse", "dtype": "f64", "reads": -1, "from": {"rmat": {"scale": 12, "edges": 16, "seed": 2}}}}, "body": [], "outputs": {"F": "F.mtx", "R": "R.mtx"}})");
  auto gpu_fem = test::run_fugue("explain " + (dir / "fem.json").string() + " --device-file " + (test::source_root() / "devices" / "nvidia-h100.json").string());
  for (const std::string& text : {explained.out, gpu_fem.out}) {
    const size_t f = text.find("F: sparse chose ");
    ASSERT_NE(f, std::string::npos) << text;
    const std::string chosen = text.substr(f + 16, text.find(':', f + 16) - f - 16);
    EXPECT_TRUE(chosen == "bcsr" || chosen == "bell" || chosen == "sbell") << chosen << ": " << text;
    EXPECT_NE(text.find("blocks filled: 1x4 100%, 2x4 100%, 4x4 100%, 8x4 ", f), std::string::npos) << text;
    EXPECT_NE(text.find("8x8 ", f), std::string::npos) << text;
    const size_t r = text.find("R: sparse chose ");
    EXPECT_NE(text.find("(no larger block weighed)", r), std::string::npos) << text;
  }
  // On a GPU, the rows' lengths count: R-MAT's power law (the longest row over 1,000 entries) gives csr,
  // whose chunks split a long row, not sell or hyb, whose work-items walk it alone; bcsstk13's 2,003 rows
  // (the longest 95) give neither ell nor sell, whose work-items walk 95 entries alone.
  EXPECT_NE(gpu.out.find("R: sparse chose csr: "), std::string::npos) << gpu.out;
  EXPECT_EQ(gpu.out.find("M: sparse chose ell: "), std::string::npos) << gpu.out;
  EXPECT_EQ(gpu.out.find("M: sparse chose sell: "), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("M: sparse chose "), std::string::npos) << gpu.out;
  auto valid = test::run_fugue("validate " + (dir / "p.json").string());
  EXPECT_EQ(valid.code, 0) << valid.out;
  auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.code, 0) << r.out;
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d, file = sys.argv[1] + '/', sys.argv[2]
M = sio.mmread(file).tocsr()
for y, A, x in [('yp', sio.mmread(d + 'P.mtx').tocsr(), 'xp'), ('yr', sio.mmread(d + 'R.mtx').tocsr(), 'xp'), ('ym', M, 'xm'), ('ys', M, 'xm'),
                ('yf', sio.mmread(d + 'F.mtx').tocsr(), 'xf')]:
    want = A @ np.load(d + x + '.npy').astype(np.float64)  # F: f32 values, written with 9 digits, exact
    tol = 1e-5 if y == 'yf' else 1e-12
    assert np.abs(np.load(d + y + '.npy') - want).max() <= tol * max(1, abs(A).sum(axis=1).max()), y
print('as scipy')
)");
  auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string() + " " + file);
  EXPECT_NE(c.out.find("as scipy"), std::string::npos) << c.out;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"kind": "sparse", "dtype": "f64", "shape": [3, 3]})", "/symbols/A/from: a sparse takes its kind and value from a file or a generator"},
      {R"({"kind": "sparse", "format": "bsr", "from": {"poisson": {"grid": [4, 4]}}})",
       "/symbols/A/format: expected \"auto\" or one of csr, coo, ell, sell, dia, bdia, hyb, bcsr, bell, sbell"},
      {R"({"kind": "sparse", "format": "sbell", "slice": 2000, "from": {"poisson": {"grid": [4, 4]}}})",
       "/symbols/A/slice: expected at most 1024 super-rows a slice"},
      {R"({"kind": "sparse", "block": [4, 4], "from": {"poisson": {"grid": [4, 4]}}})",
       "/symbols/A/block: applies to a named \"format\" (bcsr, bell, sbell, cocktail); the automatic choice lays the matrix out itself"},
      {R"({"kind": "sparse", "format": "csr", "block": [3, 5], "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/block: the format csr has no block"},
      {R"({"kind": "sparse", "format": "sbell", "sigma": 4, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/sigma: the format sbell has no sigma"},
      {R"({"kind": "sparse", "format": "bcsr", "block": [3, 4], "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/block: expected [h, w] with h 1, 2, 4 or 8"},
      {R"({"kind": "sparse", "nnz": 3, "from": {"poisson": {"grid": [4, 4]}}})", "nnz is 64; the declaration says 3"},
      {R"({"kind": "sparse", "from": "x.npy"})", "a file whose format chooses a kind for a sparse (the npy format does not)"},
      {R"({"kind": "sparse", "width": 3, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/width: applies to a named \"format\""},
      {R"({"kind": "sparse", "format": "sell", "width": 3, "from": {"poisson": {"grid": [4, 4]}}})",
       "/symbols/A/width: the format sell has no width (ell, hyb, bell, cocktail have)"},
      // A named format's counts are checked as its kind's declaration checks them.
      {R"({"kind": "sparse", "format": "dia", "diagonals": 2, "from": {"poisson": {"grid": [4, 4]}}})", "/diagonals is 5; the declaration says 2"},
      {R"({"kind": "sparse", "format": "ell", "width": 3, "from": {"poisson": {"grid": [4, 4]}}})", "/width is 5; the declaration says 3"},
      {R"({"kind": "sparse", "diagonals": 5, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/diagonals: applies to a named \"format\" (dia, bdia, cocktail)"},
      {R"({"kind": "sparse", "reads": "many", "from": {"poisson": {"grid": [4, 4]}}})",
       "/symbols/A/reads: expected the number of products the program runs with the matrix (an integer, -1 where unknown), found \"many\""},
      {R"({"kind": "sparse", "reads": -2, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/reads: expected the number of products"},
      {R"({"kind": "sparse", "reads": 1.5, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/reads: expected the number of products"},
      {R"({"kind": "sparse", "reads": 18446744073709551615, "from": {"poisson": {"grid": [4, 4]}}})", "/symbols/A/reads: expected the number of products"},
  };
  test::write_text(dir / "x.npy", "");
  for (size_t k = 0; k < bad.size(); ++k) {
    test::write_text(dir / "bad.json", R"({"fugue": 1, "symbols": {"A": )" + bad[k].first + R"(}, "body": [], "outputs": {}})");
    auto v = test::run_fugue("validate " + (dir / "bad.json").string());
    EXPECT_EQ(v.code, 2) << k << ": " << v.out;
    EXPECT_NE(v.out.find(bad[k].second), std::string::npos) << k << ": " << v.out;
  }
  // The same counts, right, are taken.
  for (const char* good : {R"({"kind": "sparse", "format": "dia", "diagonals": 5, "nnz": 64, "from": {"poisson": {"grid": [4, 4]}}})",
                           R"({"kind": "sparse", "format": "ell", "width": 5, "from": {"poisson": {"grid": [4, 4]}}})",
                           R"({"kind": "sparse", "format": "hyb", "width": 5, "nnz": 64, "from": {"poisson": {"grid": [4, 4]}}})"}) {
    test::write_text(dir / "good.json", R"({"fugue": 1, "symbols": {"A": )" + std::string(good) + R"(}, "body": [], "outputs": {}})");
    auto v = test::run_fugue("validate " + (dir / "good.json").string());
    EXPECT_EQ(v.code, 0) << good << ": " << v.out;
  }
}

// The automatic choice weighs each layout's conversion on the host against the products the program
// runs with the matrix, which the core counts from its loops (ABI 2.16's "reads"): a FEM-like matrix of
// dense 4 x 4 blocks (f32), which the products alone put in a block layout, gets a layout that is cheap to make
// when the program multiplies once, and the block layouts and the cocktail are not even analysed
// (their analysis would cost more than the product); multiplied 100,000 times (a loop counted by a const),
// the choice is the products' alone again. A loop counted by a scalar leaves the count unknown; a
// declaration may give it. Either way the product is SciPy's.
TEST(Sparse, AutoFormatWeighsTheConversionAgainstTheProducts) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  const std::string matrix = R"({"fem": {"nodes": 3000, "block": 4, "neighbours": 4, "seed": 3}})";
  auto program = [&](const std::string& name, const std::string& extra, const std::string& body) {
    test::write_text(dir / name, R"({"fugue": 1, "symbols": {
      "A": {"kind": "sparse", "dtype": "f32"REPLACE, "from": )" + matrix + R"(},
      "n": {"kind": "const", "value": 100000}, "k": {"kind": "scalar", "dtype": "i32", "value": 1},
      "x": {"kind": "array", "dtype": "f32", "shape": [12000], "from": {"random": {"seed": 5, "low": -1, "high": 1}}}},
      "body": )" + body + R"(, "outputs": {"y": "y.npy", "x": "x.npy", "A": "A.mtx"}})");
    std::string text = test::read_text(dir / name);
    text.replace(text.find("REPLACE"), 7, extra);
    test::write_text(dir / name, text);
  };
  const std::string once = R"([{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}])";
  program("once.json", "", once);
  program("loop.json", "", R"([{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]},
    {"for": "i", "count": "n", "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}])");
  program("scalar.json", "", R"([{"for": "i", "count": "k", "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}])");
  program("unknown.json", R"(, "reads": -1)", once);
  program("given.json", R"(, "reads": 7)", once);
  auto chose = [&](const std::string& name) {
    auto r = test::run_fugue("explain " + (dir / name).string());
    EXPECT_EQ(r.code, 0) << r.out;
    const size_t at = r.out.find("A: sparse chose ");
    if (at == std::string::npos) return std::make_pair(std::string(), r.out);
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    return std::make_pair(line.substr(16, line.find(':', 16) - 16), line);
  };
  const auto [products_alone, unknown] = chose("unknown.json");
  EXPECT_TRUE(products_alone == "sbell" || products_alone == "bcsr" || products_alone == "bell") << unknown;
  EXPECT_EQ(unknown.find("read it"), std::string::npos) << unknown;
  const auto [cheap, note] = chose("once.json");
  EXPECT_NE(cheap, products_alone) << note;
  EXPECT_NE(note.find("1 product reads it: each layout's conversion and upload on the host + the products; "), std::string::npos) << note;
  EXPECT_NE(note.find("not weighed: the block layouts (their analysis, about "), std::string::npos) << note;
  EXPECT_NE(note.find("; the cocktail (its analysis, about "), std::string::npos) << note;
  const auto [many, many_note] = chose("loop.json");
  EXPECT_EQ(many, products_alone) << many_note;
  EXPECT_NE(many_note.find("100001 products read it"), std::string::npos) << many_note;
  const auto [scalar, scalar_note] = chose("scalar.json");
  EXPECT_EQ(scalar, products_alone) << scalar_note;
  EXPECT_EQ(scalar_note.find("read it"), std::string::npos) << scalar_note;
  const auto [given, given_note] = chose("given.json");
  EXPECT_NE(given_note.find("7 products read it"), std::string::npos) << given_note;
  // Each program's product (its layout made twice: for its type when loaded, for its value when run).
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(d + 'A.mtx').tocsr()
want = A @ np.load(d + 'x.npy').astype(np.float64)  # f32 values, written with 9 digits: exact
assert np.abs(np.load(d + 'y.npy') - want).max() <= 1e-5 * max(1, abs(A).sum(axis=1).max())
print('as scipy')
)");
  for (const char* name : {"once", "scalar", "unknown"}) {
    auto r = test::run_fugue("run " + (dir / (std::string(name) + ".json")).string() + " --out " + (dir / name).string());
    ASSERT_EQ(r.code, 0) << name << ": " << r.out;
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / name).string());
    EXPECT_NE(c.out.find("as scipy"), std::string::npos) << name << ": " << c.out;
  }
}

// bcsr's block comes from its declaration even where the rows are fewer than a block's height (8 x 4
// blocks on 3 rows once read as 4 x 8), and a value read back through .mtx is the same matrix.
TEST(Sparse, BcsrBlocksTallerThanTheMatrix) {
  test::TempDir dir;
  test::write_text(dir / "A.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 3\n1 1 1\n2 2 2\n3 3 3\n");
  for (const char* block : {"[8, 4]", "[4, 8]", "[1, 4]", "[8, 8]"}) {
    test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {"A": {"kind": "bcsr", "dtype": "f64", "block": )") + block +
                                         R"(, "from": "A.mtx"}, "x": {"kind": "array", "dtype": "f64", "shape": [4], "from": {"arange": {"start": 1, "step": 1}}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy", "A": "B.mtx"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << block << ": " << r.out;
    const fugue::HostArray y = fugue::load_npy(dir / "out" / "y.npy", std::nullopt, std::nullopt);
    EXPECT_EQ(y.get(0), 1) << block;
    EXPECT_EQ(y.get(1), 4) << block;
    EXPECT_EQ(y.get(2), 9) << block;
    std::ifstream written(dir / "out" / "B.mtx");
    std::string text((std::istreambuf_iterator<char>(written)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("3 4 3\n1 1 1\n2 2 2\n3 3 3\n"), std::string::npos) << block << ": " << text;
  }
}

// The generated product (dia, ell, csr: ELEMENT level) with a part of its matrix read by a consumer in
// the same kernel (one parameter for it), and y0 a number the kernel's source must spell (inf). On CPUs
// dia's and ell's products are kernels of their own in vectors of rows (FUGUE_SPARSE_VECTOR_ROWS=0:
// generated): both.
TEST(Sparse, GeneratedKernelsTakePartsOnceAndAnyNumber) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  for (const std::string layout : {"dia", "ell", "dia in vectors", "ell in vectors"}) {
    const bool vectors = layout.size() > 3;
    const std::string environment = vectors ? "" : "FUGUE_SPARSE_VECTOR_ROWS=0";
    test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {
      "A": {"kind": ")") + layout.substr(0, 3) + R"(", "dtype": "f64", "from": {"banded": {"rows": 301, "width": 1, "seed": 3}}},
      "x": {"kind": "array", "dtype": "f64", "shape": [301], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
      "c": {"kind": "const", "value": 2}, "big": {"kind": "const", "value": 1}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}, {"op": "array.add", "out": ["z"], "in": ["y", "A.data"]},
               {"op": "sparse.spmv", "out": ["u"], "in": ["A", "x", "c"], "attrs": {"beta": 0.5}},
               {"op": "sparse.spmv", "out": ["w"], "in": ["A", "x", "big"]}],
      "outputs": {"z": "z.npy", "u": "u.npy", "w": "w.npy", "x": "x.npy", "A": "A.mtx"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --set big=inf --out " + (dir / "out").string(), environment);
    ASSERT_EQ(r.code, 0) << layout << ": " << r.out;
    auto explained = test::run_fugue("explain " + (dir / "p.json").string(), environment);
    if (vectors)
      EXPECT_NE(explained.out.find(" rows a work-item in vectors of the native width, " + std::string(layout[0] == 'd' ? "1 diagonal\n" : "1 place a row\n")),
                std::string::npos) << explained.out;
    else
      EXPECT_NE(explained.out.find("Kernels (1)\n  kernel 0: 4 operations at ELEMENT level"), std::string::npos) << explained.out;
    test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(d + 'A.mtx').tocsr()
x = np.load(d + 'x.npy')
diag = A.diagonal()
assert np.allclose(np.load(d + 'z.npy'), A @ x + diag, rtol=1e-14, atol=1e-14)
assert np.allclose(np.load(d + 'u.npy'), A @ x + 1.0, rtol=1e-14, atol=1e-14)
assert np.isposinf(np.load(d + 'w.npy')).all()
print('as numpy')
)");
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_NE(c.out.find("as numpy"), std::string::npos) << layout << ": " << c.out;
  }
}

// bcsr's product and unsorted sell's are generated kernels too (a row per work-item): the element-wise
// operations that read y join them, at every block size, and the result is SciPy's. Alone, on CPUs, they
// run their own kernels (ABI 2.19's own_kernels_alone), with the same result. bell, sbell and a sell sorted
// in windows (its places are not its rows) keep their own kernels always.
TEST(Sparse, BcsrAndSellProductsJoinTheirConsumersAndRunTheirOwnKernelsAlone) {
  if (test::numpy_python().empty()) GTEST_SKIP() << "no python3 with numpy";
  test::TempDir dir;
  test::write_text(dir / "check.py", R"(import sys, numpy as np, scipy.io as sio
d = sys.argv[1] + '/'
A = sio.mmread(d + 'A.mtx').tocsr()
x = np.load(d + 'x.npy')
y = 2 * (A @ x)
r = x - y
assert np.abs(np.load(d + 'y.npy') - y).max() <= 1e-12 * max(1, np.abs(y).max())
assert np.abs(np.load(d + 'z.npy') - r * r).max() <= 1e-12 * max(1, (r * r).max())
print('as scipy')
)");
  const std::vector<std::pair<std::string, std::string>> layouts = {
      {"bcsr", R"("block": [1, 4])"}, {"bcsr", R"("block": [2, 8])"}, {"bcsr", R"("block": [8, 4])"},
      {"bell", R"("block": [2, 4])"}, {"bell", R"("block": [4, 8])"}, {"sbell", R"("block": [1, 4], "slice": 3)"},
      {"sbell", R"("block": [8, 4], "slice": 2)"}, {"sell", R"("slice": 4)"}, {"sell", R"("slice": 8, "sigma": 16)"}};
  for (const auto& [layout, cut] : layouts) {
    const std::string what = layout + " " + cut;
    const bool own = cut.find("sigma") != std::string::npos || layout == "bell" || layout == "sbell";
    auto program = [&, layout = layout, cut = cut](bool consumers) {
      return std::string(R"({"fugue": 1, "symbols": {
      "A": {"kind": ")") + layout + R"(", "dtype": "f64", )" + cut + R"(, "from": {"fem": {"nodes": 67, "block": 3, "neighbours": 3, "seed": 2}}},
      "x": {"kind": "array", "dtype": "f64", "shape": [201], "from": {"random": {"seed": 4, "low": -1, "high": 1}}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"], "attrs": {"alpha": 2}})" +
             (consumers ? R"(, {"op": "array.sub", "out": ["r"], "in": ["x", "y"]}, {"op": "array.mul", "out": ["z"], "in": ["r", "r"]}],
      "outputs": {"z": "z.npy", "x": "x.npy", "A": "A.mtx"}})"
                        : R"(], "outputs": {"y": "y.npy"}})");
    };
    test::write_text(dir / "fused.json", program(true));
    test::write_text(dir / "alone.json", program(false));
    auto fused = test::run_fugue("explain " + (dir / "fused.json").string());
    auto alone = test::run_fugue("explain " + (dir / "alone.json").string());
    if (own) {
      EXPECT_NE(fused.out.find("Kernels (1)\n  kernel 0: 2 operations at ELEMENT level"), std::string::npos) << what << ": " << fused.out;
      EXPECT_NE(fused.out.find("plan: " + layout + ": "), std::string::npos) << what << ": " << fused.out;
      EXPECT_EQ(fused.out.find("a row per work-item in a generated kernel"), std::string::npos) << what << ": " << fused.out;
    } else {
      EXPECT_NE(fused.out.find("Kernels (1)\n  kernel 0: 3 operations at ELEMENT level"), std::string::npos) << what << ": " << fused.out;
      EXPECT_NE(fused.out.find(layout + ": a row per work-item in a generated kernel"), std::string::npos) << what << ": " << fused.out;
      EXPECT_NE(fused.out.find("; alone, its own kernel: " + layout + ": "), std::string::npos) << what << ": " << fused.out;
      EXPECT_NE(alone.out.find("alone: no other operation joins its ELEMENT-level kernel, and its own kernels run it faster"),
                std::string::npos)
          << what << ": " << alone.out;
    }
    EXPECT_NE(alone.out.find("Kernels (0)"), std::string::npos) << what << ": " << alone.out;
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "fused.json").string() + " --out " + (dir / "out").string());
    ASSERT_EQ(r.code, 0) << what << ": " << r.out;
    r = test::run_fugue("run " + (dir / "alone.json").string() + " --out " + (dir / "out").string() + " --stats");
    ASSERT_EQ(r.code, 0) << what << ": " << r.out;
    EXPECT_NE(r.out.find(layout == "bcsr" ? "spmv bcsr" : layout == "sell" ? "spmv sell" : "spmv " + layout), std::string::npos)
        << what << ": its own kernel, by its trace label: " << r.out;
    auto c = test::run_command(test::numpy_python() + " " + (dir / "check.py").string() + " " + (dir / "out").string());
    EXPECT_NE(c.out.find("as scipy"), std::string::npos) << what << ": " << c.out;
  }
}

// An ell's padding (value 0) may name any column, even one far outside x (parts given inline are checked
// where a value is not 0): no product reads x there, neither in vectors of rows (CPUs) nor a row per
// work-item. 16 rows, so that the vectors' path runs; row 3 alone has a second entry.
TEST(Sparse, EllPaddingColumnsAreNeverRead) {
  test::TempDir dir;
  const int rows = 16;
  std::string col, data;
  for (int place = 0; place < 2 * rows; ++place) {
    const bool first = place < rows, second_of_3 = place == rows + 3;
    col += (place ? ", " : "") + std::to_string(first ? place : second_of_3 ? 5 : 2000000000);
    data += (place ? ", " : "") + std::to_string(first ? place + 1 : second_of_3 ? 7 : 0);
  }
  for (const char* dtype : {"f32", "f64"})
    for (const char* environment : {"", "FUGUE_SPARSE_VECTOR_ROWS=0"}) {
      test::write_text(dir / "p.json", std::string(R"({"fugue": 1, "symbols": {
        "A": {"kind": "ell", "dtype": ")") + dtype + R"(", "shape": [16, 16], "width": 2, "parts": {"col": {"value": [)" + col +
                                           R"(]}, "data": {"value": [)" + data + R"(]}}},
        "x": {"kind": "array", "dtype": ")" + dtype + R"(", "shape": [16], "from": {"arange": {"start": 1, "step": 1}}}},
        "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
      fs::remove_all(dir / "out");
      auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(), environment);
      ASSERT_EQ(r.code, 0) << dtype << " " << environment << ": " << r.out;
      const fugue::HostArray y = fugue::load_npy(dir / "out" / "y.npy", std::nullopt, std::nullopt);
      for (int i = 0; i < rows; ++i) EXPECT_EQ(y.get(i), (i + 1) * (i + 1) + (i == 3 ? 7 * 6 : 0)) << dtype << " " << environment << " row " << i;
    }
}

// A dia's diagonal may lie wholly outside the matrix (its values 0), even at an offset near the index's
// limit: no product reads x there. (In vectors of rows, c + rows <= n wrapped there and read a vector a few
// bytes before x, which this run cannot see; it checks the product.)
TEST(Sparse, DiaOffsetsFarOutsideAreNeverRead) {
  test::TempDir dir;
  std::string data;
  for (int place = 0; place < 32; ++place) data += (place ? ", " : "") + std::to_string(place < 16 ? place + 1 : 0);
  for (const char* environment : {"", "FUGUE_SPARSE_VECTOR_ROWS=0"}) {
    test::write_text(dir / "p.json", R"({"fugue": 1, "symbols": {
      "A": {"kind": "dia", "dtype": "f32", "index": "i64", "shape": [16, 16], "diagonals": 2,
            "parts": {"offsets": {"value": [0, 9223372036854775800]}, "data": {"value": [)" + data + R"(]}}},
      "x": {"kind": "array", "dtype": "f32", "shape": [16], "from": {"arange": {"start": 1, "step": 1}}}},
      "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}})");
    fs::remove_all(dir / "out");
    auto r = test::run_fugue("run " + (dir / "p.json").string() + " --out " + (dir / "out").string(), environment);
    ASSERT_EQ(r.code, 0) << environment << ": " << r.out;
    const fugue::HostArray y = fugue::load_npy(dir / "out" / "y.npy", std::nullopt, std::nullopt);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(y.get(i), (i + 1) * (i + 1)) << environment << " row " << i;
  }
}
