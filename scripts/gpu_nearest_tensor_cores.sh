#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# pairwise.nearest's dot-form sweep on the tensor cores (mma.sync m16n8k8 tf32, sm_90) against the same
# sweep in the FP32 units (FUGUE_PAIRWISE_TUNING=mma=0).
#  1. checks: the 16 nearest of 20,011 rows in 30,029 of 97 and 128 coordinates, for data of five kinds
#     (uniform, integers, far from the origin, coordinates of scales 10^-3..10^3, exact duplicates), must
#     equal the FP32 sweep's d and index bit for bit, and NumPy's (f64) index where its distances are apart;
#  2. the kernels' times (run --stats) on 10^5 uniform queries, for both sweeps;
#  3. the 16 nearest of 10^5 and (KNN_BIG=1) 10^6 queries in 10^5 points of 128, beside peers.py knn.
#   KNN_BIG=1 scripts/gpu_nearest_tensor_cores.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/nearest_tc
rm -rf "$out"; mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | head -3

echo "== checks"
python3 - "$out" <<'PY'
import numpy as np, sys
out = sys.argv[1]
rng = np.random.default_rng(7)
n, m = 20011, 30029
for k in (97, 128):
    sets = {
        "uniform": (rng.random((n, k)), rng.random((m, k))),
        "integers": (rng.integers(0, 256, (n, k)), rng.integers(0, 256, (m, k))),
        "offset": (1000 + rng.random((n, k)), 1000 + rng.random((m, k))),
        "scales": (rng.standard_normal((n, k)) * 10.0 ** rng.uniform(-3, 3, k), None),
        "duplicates": (None, rng.integers(0, 4, (m, k)) * 0.1),
    }
    x, y = sets["scales"]; sets["scales"] = (x, rng.standard_normal((m, k)) * (x.std(axis=0) + 0))
    x, y = sets["duplicates"]; sets["duplicates"] = (y[rng.integers(0, m, n)], y)
    for name, (x, y) in sets.items():
        np.save(f"{out}/X_{name}_{k}.npy", x.astype(np.float32)); np.save(f"{out}/Y_{name}_{k}.npy", y.astype(np.float32))
PY
for k in 97 128; do
for name in uniform integers offset scales duplicates; do
  cat > "$out/c.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [20011, $k], "from": "X_${name}_$k.npy"},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [30029, $k], "from": "Y_${name}_$k.npy"}},
 "body": [{"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"count": 16}}],
 "outputs": {"d": "d.npy", "index": "index.npy"}}
JSON
  for mma in 1 0; do
    FUGUE_PAIRWISE_TUNING=mma=$mma $F run "$out/c.json" --out "$out/o$mma" --stats > "$out/run_${name}_${k}_$mma.txt" 2>&1 || { echo "$name $k mma=$mma failed"; tail -5 "$out/run_${name}_${k}_$mma.txt"; }
  done
  python3 - "$out" "$name" "$k" <<'PY' | tee -a "$out/check.txt"
import numpy as np, sys
out, name, k = sys.argv[1:]
d1, i1 = np.load(f"{out}/o1/d.npy"), np.load(f"{out}/o1/index.npy")
d0, i0 = np.load(f"{out}/o0/d.npy"), np.load(f"{out}/o0/index.npy")
same = np.array_equal(d1, d0) and np.array_equal(i1, i0)
x, y = np.load(f"{out}/X_{name}_{k}.npy").astype(np.float64), np.load(f"{out}/Y_{name}_{k}.npy").astype(np.float64)
rows = np.arange(0, x.shape[0], 97)
c = y[0]; xr, yc = x[rows] - c, y - c  # f64 dot form on rows centred on Y's first
dd = np.sqrt(np.maximum((xr ** 2).sum(1)[:, None] + (yc ** 2).sum(1)[None, :] - 2 * xr @ yc.T, 0))
order = np.argsort(dd, axis=1, kind="stable")[:, :16]
ref = np.take_along_axis(dd, order, 1)
close = np.allclose(d1[rows], ref, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(ref).max()))
# indices where the 16th and 17th distances are apart (else ties may order either way in f32)
s = np.sort(dd, axis=1)
apart = (s[:, 16] - s[:, 15]) > 1e-4 * np.maximum(s[:, 15], 1e-30)
idx_ok = all(set(i1[r]) == set(order[q]) for q, r in enumerate(rows) if apart[q])
print(f"{name} k={k}: tensor cores == FP32 sweep: {'OK' if same else 'MISMATCH'}; against NumPy: {'OK' if close and idx_ok else 'MISMATCH'}")
PY
  grep -h "undecided" "$out/run_${name}_${k}_1.txt" | head -2
done
done

echo "== kernels, 10^5 uniform queries"
Q=100000
cat > "$out/p.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [$Q, 128], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"count": 16}}], "outputs": {}}
JSON
for mma in 1 0; do
  echo "-- mma=$mma"; FUGUE_PAIRWISE_TUNING=mma=$mma $F run "$out/p.json" --stats 2>&1 | grep -i "pairwise\|total" | head -12
done

echo "== bench"
for q in 100000 $([ "${KNN_BIG:-0}" = 1 ] && echo 1000000); do
  sed "s/\[100000, 128\], \"from\": {\"random\": {\"seed\": 1}}/[$q, 128], \"from\": {\"random\": {\"seed\": 1}}/" "$out/p.json" > "$out/q.json"
  for mma in 1 0; do
    FUGUE_PAIRWISE_TUNING=mma=$mma $F bench "$out/q.json" --repeat 3 --json "$out/b.json" > "$out/bench.txt" 2>&1 || { cat "$out/bench.txt"; continue; }
    python3 -c "import json; print('knn $q mma=$mma:', round(json.load(open('$out/b.json'))['total']['median_s'] * 1e3, 2), 'ms')"
  done
done | tee "$out/bench_summary.txt"
python3 .gpu/peers.py knn 2>&1 | grep '"case"' | tee "$out/peers.txt"
