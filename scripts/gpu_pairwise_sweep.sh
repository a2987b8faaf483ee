#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# the seed's 36 blockings of the tiled pairwise plan, in each layout of LAYOUTS (rows and cols of D per work-group, 16 ... 96, and SIDES="112 128" for the larger ones; set
# through FUGUE_PAIRWISE_TUNING) timed on n x n rows of k f32 for each metric in METRICS, the best of each
# printed last: what plugins/pairwise/tiles.cpp's table rows are made from.
#   METRICS="euclidean chi2" N=8192 K=128 SIDES="64 96" LAYOUTS=strided EXTRA=depth=32,prefetch=1 scripts/gpu_pairwise_sweep.sh
# (EXTRA: further FUGUE_PAIRWISE_TUNING fields for every run)
# Build and bundle first:  ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/sweep
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
METRICS=${METRICS:-"euclidean manhattan chi2 cosine"}
N=${N:-8192}
K=${K:-128}
SIDES=${SIDES:-"16 32 48 64 80 96"}
LAYOUTS=${LAYOUTS:-"strided contiguous"}
for metric in $METRICS; do
  cat > "$out/p.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [$N, $K], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [$N, $K], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.distance", "out": ["D"], "in": ["X", "Y"], "attrs": {"metric": "$metric", "p": 3}}], "outputs": {"D": "D.npy"}}
JSON
  for layout in $LAYOUTS; do for rows in $SIDES; do
    for cols in $SIDES; do
      FUGUE_PAIRWISE_TUNING=rows=$rows,cols=$cols,layout=$layout${EXTRA:+,$EXTRA} $F bench "$out/p.json" --repeat 10 --json "$out/b.json" > "$out/log.txt" 2>&1 || { echo "$metric $rows $cols $layout failed"; tail -3 "$out/log.txt"; continue; }
      python3 -c "import json; print('$metric', $rows, $cols, json.load(open('$out/b.json'))['total']['median_s'] * 1e3, '$layout${EXTRA:+,$EXTRA}')"
    done
  done; done
done | tee "$out/sweep.txt"
python3 - "$out/sweep.txt" "$N" "$K" <<'PY'
import sys, collections
n, k = int(sys.argv[2]), int(sys.argv[3])
best = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 5 and p[1].isdigit():
        best[p[0]].append((float(p[3]), int(p[1]), int(p[2]), p[4]))
for metric, runs in best.items():
    runs.sort()
    top = ", ".join(f"{r}x{c} {l} {ms:.3f} ms ({3 * n * n * k / ms / 1e9:.1f} TFLOP/s)" for ms, r, c, l in runs[:5])
    print(f"{metric} {n}x{n}x{k}: best {top}; worst {runs[-1][1]}x{runs[-1][2]} {runs[-1][3]} {runs[-1][0]:.3f} ms")
PY
