// matrix_generators.h: sparse matrices made from a few numbers, so tests and benchmarks need no
// downloads; each made as the declaration's kind ({"kind": "dia", "from": {"poisson": {"grid": [512, 512]}}}).
//   poisson  {"grid": [n1, n2]} or [n1, n2, n3]: the 5-point (7-point) Laplacian, 4 (6) on the diagonal and
//            -1 for each neighbour, grid points numbered row-major
//   banded   {"rows": m, "width": w, "seed": s}: a dense band of w entries a row around the diagonal (the
//            seed's offline benchmark), values uniform in [-1, 1) and never zero
//   rmat     {"scale": s, "edges": e, "seed": s, "a": 0.57, "b": 0.19, "c": 0.19}: an R-MAT (power-law) graph on
//            2^s vertices with about e * 2^s edges (repeats dropped), each entry 1
//   fem      {"nodes": n, "block": b, "neighbours": k, "seed": s}: finite-element-like, each node coupled to
//            itself and k nearby nodes by dense b x b blocks, symmetric in structure
#pragma once

#include <memory>
#include <vector>

#include <fugue/sdk.hpp>

namespace fugue::sparse {

std::vector<std::unique_ptr<sdk::Generator>> matrix_generators();

}  // namespace fugue::sparse
