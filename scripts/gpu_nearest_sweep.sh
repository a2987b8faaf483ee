#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# pairwise.nearest's tiled plan (the 16 nearest of Q queries in 10^5 points of 128 f32) under the
# blockings of SIDES_ROWS x SIDES_COLS (FUGUE_PAIRWISE_TUNING), fastest first: what the table's nearest
# column is made from; TUNING adds fields (TUNING=dot=0: the difference form throughout).
#   Q=100000 SIDES_ROWS="16 32" SIDES_COLS="64 96" scripts/gpu_nearest_sweep.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/nearest_sweep
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
Q=${Q:-100000}
cat > "$out/p.json" <<JSON
{"fugue": 1, "symbols": {"X": {"kind": "array", "dtype": "f32", "shape": [$Q, 128], "from": {"random": {"seed": 1}}},
                         "Y": {"kind": "array", "dtype": "f32", "shape": [100000, 128], "from": {"random": {"seed": 2}}}},
 "body": [{"op": "pairwise.nearest", "out": ["d", "index"], "in": ["X", "Y"], "attrs": {"count": 16}}], "outputs": {}}
JSON
SIDES_ROWS=${SIDES_ROWS:-16 32 48}
SIDES_COLS=${SIDES_COLS:-32 64 96}
for rows in $SIDES_ROWS; do
  for cols in $SIDES_COLS; do
    FUGUE_PAIRWISE_TUNING=rows=$rows,cols=$cols${TUNING:+,$TUNING} $F bench "$out/p.json" --repeat 3 --json "$out/b.json" > "$out/log.txt" 2>&1 || { echo "$rows x $cols failed"; tail -3 "$out/log.txt"; continue; }
    python3 -c "import json; print(round(json.load(open('$out/b.json'))['total']['median_s'] * 1e3, 2), 'ms', '$rows x $cols')"
  done
done | sort -n | tee "$out/sweep.txt"
