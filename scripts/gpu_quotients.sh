#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# chi2's and canberra's f32 quotients by the reciprocal instruction (the NVIDIA row's division=native) against the exact
# division (FUGUE_PAIRWISE_TUNING=division=exact), and Minkowski (p = 3). First the special values on
# the GPU against NumPy in f64 (rows of 1e36, coordinates of 1.5e38 and 2e38, subnormal rows, zero rows, x = -y;
# the exact division's f32 squares overflow where the f64 ones do not, and it says MISMATCH there),
# then 8192 x 8192 rows of 128 f32 timed both ways; the kernels' PTX is kept under $OUT/ptx.
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples; scripts/gpu_quotients.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}
mkdir -p "$out/logs" "$out/ptx"
export FUGUE_PLUGIN_PATH=
METRICS=${METRICS:-"chi2 canberra minkowski"}
$F devices | head -3

echo "== special values on the GPU against NumPy"
python3 - "$out/logs" <<'PY'
import numpy as np, sys
rng = np.random.default_rng()
X = rng.uniform(0, 10, (301, 128)); Y = rng.uniform(0, 10, (290, 128))
X[3] *= 1e36; X[5] *= 1e-39; X[7] = 0; X[9, 0] = 2e38
Y[2] *= 1e35; Y[4] *= 1e-39; Y[6] = 0; Y[8] = -X[1]; Y[10, 0] = 2e38; Y[11, 0] = 1.5e38
np.save(f'{sys.argv[1]}/X.npy', X.astype(np.float32)); np.save(f'{sys.argv[1]}/Y.npy', Y.astype(np.float32))
PY
for division in native exact; do
  for metric in chi2 canberra; do
    cat > "$out/logs/special.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "from": "X.npy"}, "Y": {"kind": "array", "from": "Y.npy"}},
 "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "$metric", "blocking": "64x96"}}],
 "outputs": {"D": "D.npy"}}
JSON
    FUGUE_PAIRWISE_TUNING=division=$division $F explain "$out/logs/special.json" | grep -m1 "plan:"
    FUGUE_PAIRWISE_TUNING=division=$division $F run "$out/logs/special.json" --out "$out/logs/gpu" > "$out/logs/run.txt" 2>&1 || cat "$out/logs/run.txt"
    python3 - "$out/logs" $metric $division <<'PY'
import numpy as np, sys
d, metric, division = sys.argv[1:4]
X, Y = (np.load(f'{d}/{n}.npy').astype(np.float64) for n in 'XY')
D = np.load(f'{d}/gpu/D.npy').astype(np.float64)
a, b = X[:, None, :], Y[None, :, :]
with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
    num, den = ((a - b) ** 2, a + b) if metric == 'chi2' else (np.abs(a - b), np.abs(a) + np.abs(b))
    # f32's numerators: where they underflow to 0 (subnormal rows) f32 arithmetic adds 0, whatever the division.
    want = np.where(num.astype(np.float32) == 0, 0, num / den).sum(-1).astype(np.float32).astype(np.float64)
with np.errstate(invalid='ignore', divide='ignore', over='ignore'):  # f32 sums of terms of either sign: relative to their magnitudes
    scale = np.where(num.astype(np.float32) == 0, 0, np.abs(num / den)).sum(-1)
bad = ~((D == want) | (np.abs(D - want) <= 2e-5 * scale))
print(f'{metric} division={division}:', 'OK' if not bad.any() else f'MISMATCH at {np.argwhere(bad)[:4].tolist()} ({bad.sum()} values), e.g. {D[bad][:3]} against {want[bad][:3]}')
PY
  done
done | tee "$out/logs/check.txt"

echo "== bench"
for division in native exact; do
  for metric in $METRICS; do
    [ $metric = minkowski ] && [ $division = exact ] && continue
    cat > "$out/logs/b.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [8192, 128], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [8192, 128], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "$metric", "p": 3}}], "outputs": {}}
JSON
    export FUGUE_CACHE_DIR=$out/ptx/$metric-$division
    FUGUE_PAIRWISE_TUNING=division=$division $F bench "$out/logs/b.json" --repeat ${REPEAT:-20} --json "$out/logs/bench.json" > "$out/logs/bench.txt" 2>&1 || cat "$out/logs/bench.txt"
    python3 -c "
import json; ms = json.load(open('$out/logs/bench.json'))['total']['median_s'] * 1e3
print(f'$metric division=$division: {ms:.4f} ms = {3 * 8192**2 * 128 / ms / 1e6:.0f} GFLOP/s ({3 * 8192**2 * 128 / ms / 1e6 / 67000:.0%} of FP32 peak, 3nmk)')"
  done
done | tee "$out/logs/bench_summary.txt"

# Each kernel's PTX out of the program cache, and (where ptxas is installed) its sm_90 instructions counted.
for f in "$out"/ptx/*/*.bin; do
  d=$(dirname "$f")
  python3 - "$f" "$d.ptx" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
i = b.find(b'//\n// Generated'); i = i if i >= 0 else b.find(b'.version')
j = b.find(b'\0', i)
open(sys.argv[2], 'wb').write(b[i:j if j > 0 else len(b)])
PY
  rm -rf "$d"
  if command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
    PATH=$PATH:/usr/local/cuda/bin ptxas -arch=sm_90 -v "$d.ptx" -o "$d.cubin" 2>&1 | grep -m1 "Used"
    echo "$(basename "$d") pairwise_tiles: $(PATH=$PATH:/usr/local/cuda/bin cuobjdump -sass "$d.cubin" | awk '/Function : pairwise_tiles/{p=1} /Function : pair_in/{p=0} p' |
      grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z][A-Z0-9._]+' | awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -8 | tr -s ' \n' ' ')"
    rm -f "$d.cubin"
  fi
done
