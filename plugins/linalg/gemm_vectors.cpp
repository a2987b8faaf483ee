// gemm_vectors.cpp: see gemm_vectors.h.
#include "gemm_vectors.h"

#include <algorithm>

#include "kernel_text.h"

namespace fugue::linalg {

bool vector_plan(const Tuning& t, fugue_dtype dtype, const fugue_device_desc& device) {
  return t.vector_rows > 0 && !Scalars(dtype).complex && sdk::native_vector_width(&device, dtype) >= 2;
}

VectorShape vector_shape(const Tuning& t, int64_t m, int64_t n, fugue_dtype dtype, const fugue_device_desc& device) {
  int64_t width = std::min<int64_t>(sdk::native_vector_width(&device, dtype), 16);  // OpenCL's widest vector
  while (width > 2 && width / 2 >= n) width /= 2;
  // All of C's rows in one block where they are at most half again the table's: each vector of op(B) is
  // then read once, not once a block of rows (PoCL, 2 cores: normalized cuts' Ritz product, 9 x 2,000 x
  // 56,648 f64, 502 -> 330 ms; 12 rows 506 -> 241; 20,000 f64 products of 12 4.3 -> 3.2 ms, f32 the same).
  const int64_t rows = m <= t.vector_rows + t.vector_rows / 2 ? m : t.vector_rows;
  return {std::max<int64_t>(1, rows), width};
}

std::string vector_block(const NameOf& name, const Scalars& sc, const VectorShape& shape, const TileOperands& ops,
                         const std::string& b) {
  const int64_t R = shape.rows, V = shape.width, column_blocks = (ops.n + V - 1) / V;
  const std::string vt = sc.type + std::to_string(V), zero = sc.literal(0);
  const std::string i0 = name("i0"), j0 = name("j0"), kk = name("kk"), acc = name("acc"), y = name("y"), x = name("x");
  // Rows and columns past the product's edge read its last row or column (a block's values there are
  // never stored); where the blocks tile C exactly, the reads are plain, so that the compiler sees
  // consecutive addresses and loads a vector at once.
  const bool clamp_rows = ops.m % R != 0, clamp_columns = ops.n % V != 0;
  auto row = [&](int64_t r) {
    const std::string i = i0 + " + " + std::to_string(r);
    return clamp_rows ? "min(" + i + ", " + std::to_string(ops.m - 1) + ")" : i;
  };
  auto column = [&](int64_t c) {
    const std::string j = j0 + " + " + std::to_string(c);
    return clamp_columns ? "min(" + j + ", " + std::to_string(ops.n - 1) + ")" : j;
  };
  auto accumulator = [&](int64_t r) { return acc + "_" + std::to_string(r); };
  std::string body = "    const int " + i0 + " = (" + b + " / " + std::to_string(column_blocks) + ") * " + std::to_string(R) + ", " + j0 + " = (" + b +
                     " % " + std::to_string(column_blocks) + ") * " + std::to_string(V) + ";\n";
  for (int64_t r = 0; r < R; ++r) body += "    " + vt + " " + accumulator(r) + " = (" + vt + ")(" + zero + ");\n";
  body += "    for (int " + kk + " = 0; " + kk + " < " + std::to_string(ops.k) + "; ++" + kk + ") {\n";
  body += "      const " + vt + " " + y + " = (" + vt + ")(";
  for (int64_t c = 0; c < V; ++c) body += (c ? ", " : "") + ops.b_at(kk, column(c));
  body += ");\n";
  for (int64_t r = 0; r < R; ++r) {
    body += "      { const " + vt + " " + x + " = (" + vt + ")(" + ops.a_at(row(r), kk) + ");\n";
    body += "        " + accumulator(r) + " = fma(" + x + ", " + y + ", " + accumulator(r) + "); }\n";
  }
  body += "    }\n";
  // Stores: a row's guarded once (where the blocks leave rows over), its columns each where they leave
  // columns over.
  static const char* kLanes = "0123456789abcdef";
  for (int64_t r = 0; r < R; ++r) {
    const std::string i = i0 + " + " + std::to_string(r);
    body += clamp_rows ? "    if (" + i + " < " + std::to_string(ops.m) + ") {\n" : "    {\n";
    for (int64_t c = 0; c < V; ++c) {
      const std::string j = j0 + " + " + std::to_string(c);
      body += "      " + (clamp_columns ? "if (" + j + " < " + std::to_string(ops.n) + ") " : std::string()) +
              ops.store(i, j, accumulator(r) + ".s" + kLanes[c]) + "\n";
    }
    body += "    }\n";
  }
  return body;
}

std::string vector_product(const NameOf& name, const Scalars& sc, const VectorShape& shape, const TileOperands& ops,
                           const std::string& lane, int64_t team) {
  const int64_t blocks = shape.blocks(ops.m, ops.n);
  const std::string b = name("b"), q = name("q"), body = vector_block(name, sc, shape, ops, b);
  // Every work-item runs every trip: one past the last block takes the last block again (storing the
  // same values twice). PoCL lost the stores of blocks guarded by `b < blocks` when their rows were
  // read clamped and C went on in local memory to a fused consumer. The test of the lane (always true)
  // keeps PoCL from seeing the k loop as run alike by every work-item: there it would put the
  // work-items' loop inside it, and the accumulators in memory (gemm of 2,000 products of 64: 150 ms
  // against 17).
  const int64_t trips = (blocks + team - 1) / team;
  return "for (int " + q + " = 0; " + q + " < " + std::to_string(trips) + "; ++" + q + ") {\n  const int " + b + " = min(" + q + " * " +
         std::to_string(team) + " + " + lane + ", " + std::to_string(blocks - 1) + ");\n  if (" + lane + " < " + std::to_string(team) + ") {\n" +
         body + "  }\n}\n";
}

}  // namespace fugue::linalg
