#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# csr's chunk starts kept from the first product (the default; STARTS="kept search rows"), or found on
# every product by a search per chunk or by a pass over the rows (FUGUE_SPARSE_CHUNK_STARTS),
# f32 products on generated matrices (MATRICES: rmat20 rmat21 fem1m poisson4096), each kernel's median
# time and the whole product's: what plugins/sparse/spmv.cpp's kStartsByRowsMost is made from.
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
work=$(mktemp -d)
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH= FUGUE_SPARSE_CSR=chunks
for m in ${MATRICES:-rmat20 rmat21 fem1m poisson4096}; do
  case $m in
    rmat20) from='{"rmat": {"scale": 20, "edges": 16, "seed": 1}}'; n=1048576 ;;
    rmat21) from='{"rmat": {"scale": 21, "edges": 16, "seed": 1}}'; n=2097152 ;;
    fem1m) from='{"fem": {"nodes": 1000000, "block": 3, "neighbours": 4, "seed": 1}}'; n=3000000 ;;
    poisson4096) from='{"poisson": {"grid": [4096, 4096]}}'; n=16777216 ;;
  esac
  cat > "$work/p.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "csr", "dtype": "f32", "from": $from},
  "x": {"kind": "array", "dtype": "f32", "shape": [$n], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}}
JSON
  for starts in ${STARTS:-kept search rows}; do
    FUGUE_SPARSE_CHUNK_STARTS=${starts#kept} $F bench "$work/p.json" --repeat ${REPEAT:-20} --json "$work/b.json" > "$work/log.txt" 2>&1 || { tail -3 "$work/log.txt"; continue; }
    python3 - "$work/b.json" "$m" "$starts" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
parts = ", ".join(f"{k['name'].split(' / ')[-1]} {k['median_s'] * 1e3:.4f}" for k in j["kernels"])
print(f"{sys.argv[2]} starts={sys.argv[3]}: {j['total']['median_s'] * 1e3:.4f} ms ({parts})")
PY
  done
done
rm -rf "$work"
