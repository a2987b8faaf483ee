#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), with the bundle in .gpu: launch variants of the
# column-strip walk (FUGUE_TUNING) for the 5- and 9-point stencils and Jacobi on 8192^2 f32, each checked
# bit for bit against the flat walk on 1000^2 first, then timed beside peers.py copy in the same call.
#   VARIANTS="grid_strip_rows=8 grid_strip_rows=8,grid_strip_unroll=2" bash scripts/gpu_stencil_sweep.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_sweep
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
variants=${VARIANTS:-grid_strip_rows=0}
programs=${PROGRAMS:-stencil5 stencil9 jacobi}
for p in $programs; do
  FUGUE_TUNING=grid_strip_rows=0 $F run examples/bench/$p.json --set side=1000 --out "$out/flat_$p" > /dev/null 2>&1
  for v in $variants; do
    FUGUE_TUNING=$v $F run examples/bench/$p.json --set side=1000 --out "$out/v_$p" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
    cmp -s "$out/flat_$p/x.npy" "$out/v_$p/x.npy" || echo "$p $v: DIFFERS from the flat walk"
  done
done
for p in $programs; do
  for v in $variants; do
    FUGUE_TUNING=$v $F bench examples/bench/$p.json --repeat 20 --json "$out/b_${p}_${v//[=,]/_}.json" > "$out/b.txt" 2>&1 || cat "$out/b.txt"
  done
done
python3 .gpu/peers.py copy > "$out/peers.txt" 2>&1
python3 - "$out" "$variants" "$programs" <<'PY'
import json, sys, os
out, variants, programs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
copy = [json.loads(l) for l in open(os.path.join(out, "peers.txt")) if l.startswith("{") and '"case"' in l][0]["GBps"]
print(f"copy {copy:.0f} GB/s")
for p in programs:
    per_cell = 12 if p == "jacobi" else 8
    for v in variants:
        f = os.path.join(out, f"b_{p}_{v.replace('=', '_').replace(',', '_')}.json")
        try: it = json.load(open(f))["total"]["median_s"] * 1e3 / 10
        except Exception: it = float("nan")
        print(f"{p:9s} {v:55s} {it:.4f} ms = {per_cell * 8192 * 8192 / (it / 1e3) / 1e9 / copy:.2f}x copy")
PY
