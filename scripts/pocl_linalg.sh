#!/usr/bin/env bash
# On this machine (PoCL, the CPU): the linalg plugin's potrf, getrf, geqrf and gemm beside what a CPU
# user runs instead, LAPACKE / CBLAS from OpenBLAS called in a loop over the batch split over the cores
# (build/tests/fugue_lapack_peers, OpenBLAS single-threaded inside), and for gemm CLBlast's
# GemmStridedBatched on the same OpenCL device too, on the cases of scripts/gpu_linalg.sh: n = 4 ... 128,
# 20,000 matrices up to n = 16, 2,000 above. Installs OpenBLAS (libopenblas0-pthread) when missing:
# Debian's reference LAPACK would be a weaker peer. Build first (scripts/setup.sh).
#   OPS="potrf getrf geqrf gemm" SIZES="4 8 16 32 64 128" scripts/pocl_linalg.sh
set -euo pipefail
cd "$(dirname "$0")/.."
F=build/host/fugue
out=${OUT:-/tmp/fugue_pocl_linalg}
mkdir -p "$out"
SIZES=${SIZES:-"4 8 16 32 64 128"}
OPS=${OPS:-"potrf getrf geqrf gemm"}
if ! dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libopenblas0-pthread >/dev/null
fi
source scripts/linalg_programs.sh

for op in $OPS; do
  for n in $SIZES; do
    count=$(( n > 16 ? 2000 : 20000 ))
    for dtype in f64 f32; do
      program "$op" "$count" "$n" "$dtype" true "$out/bench.json"
      $F bench "$out/bench.json" --repeat 5 --json "$out/bench_${op}_${dtype}_$n.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
    done
  done
done
peers=$OPS
[[ " $OPS " == *" gemm "* ]] && peers="$peers gemm_clblast"
OPENBLAS_NUM_THREADS=1 build/tests/fugue_lapack_peers $peers | tee "$out/peers.txt"
echo "LAPACK: $(readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3)"

python3 - "$out" "$SIZES" "$OPS" <<'PY'
import json, sys, os
out, sizes, ops = sys.argv[1], list(map(int, sys.argv[2].split())), sys.argv[3].split()
flops = {"potrf": lambda n: n ** 3 / 3, "getrf": lambda n: 2 * n ** 3 / 3, "geqrf": lambda n: 4 * n ** 3 / 3, "gemm": lambda n: 2 * n ** 3}
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{"):
        j = json.loads(l); peers[(j["family"], j["case"])] = j
for op in ops:
    for dtype in ("f64", "f32"):
        for n in sizes:
            count = 2000 if n > 16 else 20000
            ms = json.load(open(os.path.join(out, f"bench_{op}_{dtype}_{n}.json")))["total"]["median_s"] * 1e3
            gflops = count * flops[op](n) / ms / 1e6
            p = peers.get((op, f"{dtype} n={n} batch={count}"))
            ratio = f", LAPACK loop {p['GFLOPs']:.2f} GFLOP/s ({p['ms']:.3f} ms): {gflops / p['GFLOPs']:.2f}x" if p else ""
            c = peers.get(("gemm_clblast", f"{dtype} n={n} batch={count}")) if op == "gemm" else None
            ratio += f", CLBlast {c['GFLOPs']:.2f} GFLOP/s ({c['ms']:.3f} ms): {gflops / c['GFLOPs']:.2f}x" if c else ""
            print(f"{op} {dtype} n={n} batch={count}: {ms:.3f} ms = {gflops:.2f} GFLOP/s{ratio}")
PY
