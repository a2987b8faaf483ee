#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# issue 15's figures. Checks pairwise.distance, pairwise.nearest and histogram.even/bincount on the GPU
# against NumPy first, then times them beside peers.py copy cdist knn histc scatter in the same run:
#   distances of 8192 x 8192 rows of 128 (and 1024 x 1024 x 128, 8192 x 8192 x 1024 for euclidean),
#   the 16 nearest of 10^5 (and, KNN_BIG=1, 10^6) queries in 10^5 points of 128 dimensions,
#   histc of 2^28 f32 at 16 / 256 / 4096 bins and all in one bin, bincount of 2^26 i64 into 4096 bins.
# CHECKS=0 skips the checks. Build and bundle first:  ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   METRICS="euclidean chi2" PEERS="cdist" scripts/gpu_pairwise_histogram.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/logs  # logs, and the summary beside them
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
METRICS=${METRICS:-"euclidean sqeuclidean manhattan chebyshev minkowski chi2 canberra cosine"}
PEERS=${PEERS:-"copy cdist knn histc scatter"}
$F devices | head -3

distance() {  # n m k metric dtype file
  cat > "$6" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "$5", "shape": [$1, $3], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "$5", "shape": [$2, $3], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "$4", "p": 3}}],
 "outputs": {"D": "D.npy", "X": "X.npy", "Y": "Y.npy"}}
JSON
}
nearest() {  # n m k count file
  cat > "$5" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [$1, $3], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [$2, $3], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"count": $4}}],
 "outputs": {"d": "d.npy", "index": "index.npy", "X": "X.npy", "Y": "Y.npy"}}
JSON
}
even() {  # n bins source file
  cat > "$4" <<JSON
{"fugue": 1, "symbols": {"a": {"kind": "array", "dtype": "f32", "shape": [$1], "from": $3}},
 "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": $2, "low": 0, "high": 1}}], "outputs": {"h": "h.npy", "a": "a.npy"}}
JSON
}
bincount() {  # n length source file
  cat > "$4" <<JSON
{"fugue": 1, "symbols": {"idx": {"kind": "array", "dtype": "i64", "shape": [$1], "from": $3}},
 "body": [{"op": "histogram.bincount", "out": ["h"], "in": ["idx"], "attrs": {"length": $2}}], "outputs": {"h": "h.npy", "idx": "idx.npy"}}
JSON
}
uniform='{"random": {"seed": 3}}'; one_bin='{"fill": 0.5}'

echo "== correctness on the GPU against NumPy"
: > "$out/check.txt"
if [ "${CHECKS:-1}" = 1 ]; then
for metric in $METRICS; do
  for dtype in f32 f64; do
    distance 1000 777 61 "$metric" "$dtype" "$out/check.json"
    $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
    python3 - "$out" "$metric" "$dtype" <<'PY'
import sys, numpy as np
d, metric, dtype = sys.argv[1:4]
X, Y, D = (np.load(f'{d}/gpu/{n}.npy').astype(np.float64) for n in 'XYD')
a, b = X[:, None, :], Y[None, :, :]
with np.errstate(invalid='ignore', divide='ignore'):
    want = {'euclidean': lambda: np.sqrt(((a - b) ** 2).sum(-1)), 'sqeuclidean': lambda: ((a - b) ** 2).sum(-1),
            'manhattan': lambda: np.abs(a - b).sum(-1), 'chebyshev': lambda: np.abs(a - b).max(-1),
            'minkowski': lambda: (np.abs(a - b) ** 3).sum(-1) ** (1 / 3), 'chi2': lambda: np.nan_to_num((a - b) ** 2 / (a + b)).sum(-1),
            'canberra': lambda: np.nan_to_num(np.abs(a - b) / (np.abs(a) + np.abs(b))).sum(-1),
            'cosine': lambda: 1 - X @ Y.T / np.outer(np.linalg.norm(X, axis=1), np.linalg.norm(Y, axis=1))}[metric]()
err = np.abs(D - want).max() / max(1, np.abs(want).max())
print(f'distance {metric} {dtype}:', 'OK' if err < (2e-5 if dtype == 'f32' else 1e-12) else f'MISMATCH {err:.2e}')
PY
  done
done | tee -a "$out/check.txt"
for count in 1 16; do
  nearest 3001 4099 128 $count "$out/check.json"
  $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  python3 - "$out" $count <<'PY'
import sys, numpy as np
d, count = sys.argv[1], int(sys.argv[2])
X, Y = (np.load(f'{d}/gpu/{n}.npy').astype(np.float64) for n in 'XY')
D = np.sqrt(((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))
want = np.argsort(D, axis=1, kind='stable')[:, :count]
g, gd = np.load(f'{d}/gpu/index.npy'), np.load(f'{d}/gpu/d.npy')
agree = (g == want).mean()  # f32 rounding may swap near ties
derr = np.abs(gd - np.take_along_axis(D, want, 1)).max()
print(f'nearest count={count}:', 'OK' if agree > 0.999 and derr < 1e-4 else 'MISMATCH', f'(index agreement {agree:.5f}, distance error {derr:.1e})')
PY
done | tee -a "$out/check.txt"
for case in "16 uniform" "4096 uniform" "256 one_bin"; do
  set -- $case
  even 10000019 $1 "${!2}" "$out/check.json"
  $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  python3 - "$out" $1 $2 <<'PY'
import sys, numpy as np
d, bins, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
a, h = np.load(f'{d}/gpu/a.npy'), np.load(f'{d}/gpu/h.npy')
want = np.histogram(a, bins=bins, range=(np.float32(0), np.float32(1)))[0]
print(f'histogram.even {bins} bins {tag}:', 'OK' if np.array_equal(h, want) else f'MISMATCH {np.abs(h - want).max()}')
PY
done | tee -a "$out/check.txt"
bincount 10000019 4096 '{"random": {"seed": 4, "low": 0, "high": 4095}}' "$out/check.json"
$F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
python3 -c "
import numpy as np; i, h = np.load('$out/gpu/idx.npy'), np.load('$out/gpu/h.npy')
print('bincount 4096:', 'OK' if np.array_equal(h, np.bincount(i, minlength=4096)) else 'MISMATCH')" | tee -a "$out/check.txt"
fi

echo "== bench"
bench() {  # name file
  $F explain "$2" | grep -m1 "plan:" > "$out/plan_$1.txt"
  $F bench "$2" --repeat ${REPEAT:-20} --json "$out/bench_$1.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
}
for nk in "1024 128" "8192 128" "8192 1024"; do
  set -- $nk
  distance $1 $1 $2 euclidean f32 "$out/b.json"; bench "distance_euclidean_${1}_$2" "$out/b.json"
done
for metric in $METRICS; do
  [ "$metric" = euclidean ] && continue
  distance 8192 8192 128 "$metric" f32 "$out/b.json"; bench "distance_${metric}_8192_128" "$out/b.json"
done
for q in 100000 $([ "${KNN_BIG:-0}" = 1 ] && echo 1000000); do
  nearest $q 100000 128 16 "$out/b.json"; REPEAT=3 bench "knn_$q" "$out/b.json"
done
for bins in 16 256 4096; do even $((1 << 28)) $bins "$uniform" "$out/b.json"; bench "histc_$bins" "$out/b.json"; done
even $((1 << 28)) 256 "$one_bin" "$out/b.json"; bench histc_256_one_bin "$out/b.json"
bincount $((1 << 26)) 4096 '{"random": {"seed": 4, "low": 0, "high": 4095}}' "$out/b.json"; bench bincount_uniform "$out/b.json"
bincount $((1 << 26)) 4096 '{"fill": 0}' "$out/b.json"; bench bincount_one_bin "$out/b.json"
for p in $PEERS; do python3 .gpu/peers.py $p; done > "$out/peers.txt" 2>&1

echo "== summary"
python3 - "$out" <<'PY' | tee "$out/../summary.txt"
import json, sys, os, glob
out = sys.argv[1]
checks = open(os.path.join(out, "check.txt")).read()
print(f"checks against NumPy: {checks.count(': OK')} OK, {checks.count('MISMATCH')} MISMATCH")
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers.get("f32 x 2^28", {}).get("GBps")
print("copy:", copy, "GB/s")
for f in sorted(glob.glob(os.path.join(out, "bench_*.json"))):
    name = os.path.basename(f)[6:-5]
    ms = json.load(open(f))["total"]["median_s"] * 1e3
    plan = open(os.path.join(out, f"plan_{name}.txt")).read().strip()
    line = f"{name}: {ms:.4f} ms"
    parts = name.split("_")
    if parts[0] == "distance":
        n, k = int(parts[-2]), int(parts[-1])
        g = 3 * n * n * k / ms / 1e6
        line += f" = {g:.0f} GFLOP/s ({g / 67000:.0%} of FP32 peak)"
        p = peers.get(f"euclidean f32 {n}x{n} k={k}")
        if p and parts[1] == "euclidean": line += f"; torch.cdist {p['ms']:.3f} ms: {p['ms'] / ms:.2f}x"
    elif parts[0] == "knn":
        p = peers.get(f"cdist+topk f32 q={parts[1]} n=100000 d=128 k=16")
        if p: line += f"; torch cdist+topk {p['ms']:.1f} ms: {p['ms'] / ms:.2f}x"
    elif parts[0] == "histc":
        gbs = (1 << 28) * 4 / ms / 1e6
        line += f" = {gbs:.0f} GB/s" + (f" ({gbs / copy:.2f}x copy)" if copy else "")
        p = peers.get(f"f32 x 2^28 bins={parts[1]}") if len(parts) == 2 else peers.get("histc f32 x 2^28 bins=256 (all-one-bin)")
        if p: line += f"; torch.histc {p['ms']:.3f} ms: {p['ms'] / ms:.2f}x"
    elif parts[0] == "bincount":
        tag = "uniform" if parts[1] == "uniform" else "all-one-bin"
        p = peers.get(f"bincount i64 x 2^26 into 4096 ({tag})")
        if p: line += f"; torch.bincount {p['ms']:.3f} ms: {p['ms'] / ms:.2f}x"
    print(line, "|", plan)
PY
