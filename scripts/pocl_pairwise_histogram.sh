#!/usr/bin/env bash
# This machine (PoCL): pairwise.distance of 2000 x 2000 rows of 128 f32 for METRICS beside SciPy's cdist,
# and histogram.even of 2^24 f32 into 16 / 256 / 4096 bins beside NumPy's histogram, on the same CPU
# (medians of fugue bench and of 5 timed Python calls), and the 16 nearest of 2000 rows in 20000 beside
# SciPy's cdist and NumPy's argpartition. Build first (scripts/setup.sh).
#   METRICS="euclidean cityblock" scripts/pocl_pairwise_histogram.sh
set -u
F=${F:-build/host/fugue}
PY=${PY:-/usr/bin/python3}
out=${OUT:-/tmp/fugue_pocl}
mkdir -p "$out"
METRICS=${METRICS:-"euclidean sqeuclidean cityblock chebyshev canberra cosine"}
for metric in $METRICS; do
  ours=$metric; [ "$metric" = cityblock ] && ours=manhattan
  cat > "$out/d.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [2000, 128], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [2000, 128], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "$ours"}}], "outputs": {}}
JSON
  $F bench "$out/d.json" --repeat 5 --json "$out/b.json" > /dev/null
  $PY - "$out/b.json" "$metric" <<'PY'
import json, sys, time, numpy as np
from scipy.spatial.distance import cdist
ms = json.load(open(sys.argv[1]))["total"]["median_s"] * 1e3
X, Y = np.random.rand(2000, 128).astype(np.float32), np.random.rand(2000, 128).astype(np.float32)
t = []
for _ in range(5):
    s = time.perf_counter(); cdist(X, Y, sys.argv[2]); t.append((time.perf_counter() - s) * 1e3)
peer = sorted(t)[2]
print(f"distance {sys.argv[2]} 2000x2000x128 f32: {ms:.1f} ms, SciPy cdist {peer:.1f} ms: {peer / ms:.2f}x")
PY
done
# The 16 nearest of 2000 queries in 20000 rows of 128 (NEAREST=0 skips) beside SciPy's cdist and NumPy's
# argpartition and sort of each row's 16.
if [ "${NEAREST:-1}" != 0 ]; then
  cat > "$out/n.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [2000, 128], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [20000, 128], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.nearest", "out": ["d", "i"], "in": ["X", "Y"], "attrs": {"count": 16}}], "outputs": {}}
JSON
  $F bench "$out/n.json" --repeat 3 --json "$out/b.json" > /dev/null
  $PY - "$out/b.json" <<'PY'
import json, sys, time, numpy as np
from scipy.spatial.distance import cdist
ms = json.load(open(sys.argv[1]))["total"]["median_s"] * 1e3
X, Y = np.random.rand(2000, 128).astype(np.float32), np.random.rand(20000, 128).astype(np.float32)
t = []
for _ in range(3):
    s = time.perf_counter()
    D = cdist(X, Y)
    part = np.argpartition(D, 16, axis=1)[:, :16]
    order = np.take_along_axis(part, np.argsort(np.take_along_axis(D, part, 1), axis=1), 1)
    t.append((time.perf_counter() - s) * 1e3)
peer = sorted(t)[1]
print(f"nearest 16 of 2000 in 20000 x 128 f32: {ms:.1f} ms, SciPy cdist + argpartition {peer:.1f} ms: {peer / ms:.2f}x")
PY
fi
for bins in 16 256 4096; do
  cat > "$out/h.json" <<JSON
{"fugue": 1, "symbols": {"a": {"kind": "array", "dtype": "f32", "shape": [16777216], "from": {"random": {"seed": 1}}}},
 "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": $bins, "low": 0, "high": 1}}], "outputs": {}}
JSON
  $F bench "$out/h.json" --repeat 5 --json "$out/b.json" > /dev/null
  $PY - "$out/b.json" "$bins" <<'PY'
import json, sys, time, numpy as np
ms = json.load(open(sys.argv[1]))["total"]["median_s"] * 1e3
a = np.random.rand(1 << 24).astype(np.float32)
t = []
for _ in range(5):
    s = time.perf_counter(); np.histogram(a, bins=int(sys.argv[2]), range=(0, 1)); t.append((time.perf_counter() - s) * 1e3)
peer = sorted(t)[2]
print(f"histogram.even 2^24 f32 into {sys.argv[2]} bins: {ms:.1f} ms, NumPy histogram {peer:.1f} ms: {peer / ms:.2f}x")
PY
done
