#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# batched Cholesky (linalg.potrf) of f64 and f32 SPD matrices, n = 4 ... 128 (batches of 20,000 up to
# n = 16, 2,000 above, as peers.py), checked against NumPy and the reference first, then timed beside
# peers.py potrf (torch.linalg.cholesky) in the same run; GFLOP/s with LAPACK's count n^3 / 3.
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu  # logs; $OUT gets the summary
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
SIZES=${SIZES:-"4 8 16 32 64 128"}

program() {  # count n dtype lower file
  cat > "$5" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$3", "shape": [$1, $2, $2], "from": {"spd": {"seed": 1, "cond": 100}}}},
 "body": [{"op": "linalg.potrf", "out": ["L", "info"], "in": ["A"], "attrs": {"lower": $4}}],
 "outputs": {"L": "L.npy", "info": "info.npy", "A": "A.npy"}}
JSON
}

echo "== correctness on the GPU against NumPy and the reference"
: > "$out/check.txt"
for n in $SIZES 1 3 9 33 100; do
  for dtype in f64 f32; do
    for lower in true false; do
      program 257 "$n" "$dtype" "$lower" "$out/check.json"
      $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
      $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
      python3 - "$out" "$dtype" "$lower" "$n" <<'PY'
import sys, numpy as np
d, dtype, lower, n = sys.argv[1], sys.argv[2], sys.argv[3] == 'true', int(sys.argv[4])
A = np.load(d + '/gpu/A.npy').astype(np.float64)
L = np.linalg.cholesky(A)
want = L if lower else np.swapaxes(L, -1, -2)
g, r = np.load(d + '/gpu/L.npy'), np.load(d + '/ref/L.npy')
tol = 1e-4 if dtype == 'f32' else 1e-11
ok = np.allclose(g, want, atol=tol) and np.allclose(g, r, atol=tol) and not np.load(d + '/gpu/info.npy').any()
print(f'{dtype} n={n} {"lower" if lower else "upper"}:', 'OK' if ok else f'MISMATCH {np.abs(g - want).max():.2e}')
PY
    done
  done
done | tee -a "$out/check.txt"

echo "== bench"
for n in $SIZES; do
  count=$(( n > 16 ? 2000 : 20000 ))
  for dtype in f64 f32; do
    program "$count" "$n" "$dtype" true "$out/bench.json"
    $F explain "$out/bench.json" | grep "kernel 0:" | head -1
    $F bench "$out/bench.json" --repeat 20 --json "$out/bench_${dtype}_$n.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
  done
done
python3 .gpu/peers.py potrf | tee "$out/peers.txt"

echo "== summary"
python3 - "$out" "$SIZES" <<'PY' | tee "${OUT:-$out}/summary.txt"
import json, sys, os
out, sizes = sys.argv[1], list(map(int, sys.argv[2].split()))
checks = open(os.path.join(out, "check.txt")).read()
print(f"checks against NumPy and the reference: {checks.count(': OK')} OK, {checks.count('MISMATCH')} MISMATCH")
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
for dtype in ("f64", "f32"):
    for n in sizes:
        count = 2000 if n > 16 else 20000
        ms = json.load(open(os.path.join(out, f"bench_{dtype}_{n}.json")))["total"]["median_s"] * 1e3
        gflops = count * n ** 3 / 3 / ms / 1e6
        p = peers.get(f"{dtype} n={n} batch={count}")
        ratio = f", torch {p['GFLOPs']:.1f} GFLOP/s ({p['ms']:.3f} ms): {gflops / p['GFLOPs']:.1f}x" if p else ""
        print(f"potrf {dtype} n={n} batch={count}: {ms:.4f} ms = {gflops:.1f} GFLOP/s{ratio}")
PY
