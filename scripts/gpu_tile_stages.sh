#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# kernels in tile stages and 3-D launches, and the 9-point stencil's launch variants, in one call.
#  - the biharmonic step (examples/bench/stencil_chain.json, two 5-point Laplacians a cell apart): tile
#    stages of several sizes against two kernels per iteration (FUGUE_TUNING=stage_tile_cols=0);
#  - the 3-D 7-point stencil (stencil3d.json, 512^3): the flat walk against 3-D launches;
#  - the 9-point clamp stencil with an axpy (stencil9.json) and the 5-point one: column-strip variants;
# each checked against its reference walk first (bit for bit where the arithmetic is the same), then
# timed beside peers.py copy stencil. Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_stages
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | grep -i default
chain_variants=${CHAIN:-"stage_tile_cols=0 stage_tile_cols=32 stage_tile_cols=32,stage_tile_rows=16 stage_tile_cols=64,stage_tile_rows=16 stage_tile_cols=32,stage_tile_rows=64 stage_tile_cols=64,stage_tile_rows=32,element_local=512"}
grid3_variants=${GRID3:-"grid3_cols=0 grid3_cols=32 grid3_cols=64,grid3_rows=2 grid3_cols=32,grid3_rows=8,grid3_planes=1 grid3_cols=128,grid3_rows=2,grid3_planes=1"}
strip_variants=${STRIPS:-"grid_strip_rows=8 grid_strip_rows=8,element_local=128 grid_strip_rows=8,element_local=512 grid_strip_rows=6 grid_strip_rows=12,grid_strip_unroll=2 grid_strip_rows=16,grid_strip_unroll=4"}

echo "== correctness"
check() {  # program size ref_variant variants...: bitwise against the reference variant, and the reference run
  local p=$1 size=$2 ref=$3; shift 3
  FUGUE_TUNING=$ref $F run examples/bench/$p.json --set side=$size --out "$out/base_$p" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  $F run examples/bench/$p.json --set side=$size --set iterations=2 --out "$out/refrun_$p" --reference > /dev/null 2>&1
  FUGUE_TUNING=$ref $F run examples/bench/$p.json --set side=$size --set iterations=2 --out "$out/base2_$p" > /dev/null 2>&1
  for v in "$@"; do
    FUGUE_TUNING=$v $F run examples/bench/$p.json --set side=$size --out "$out/v_$p" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
    python3 - "$out/base_$p/x.npy" "$out/v_$p/x.npy" "$p $v" <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
d = float(np.max(np.abs(a - b) / np.maximum(1, np.abs(a))))
print(f"{sys.argv[3]}: {'bit-identical' if np.array_equal(a, b) else f'max rel diff {d:.1e}'}")
PY
  done
  python3 - "$out/base2_$p/x.npy" "$out/refrun_$p/x.npy" "$p" <<'PY'
import sys, numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print(f"{sys.argv[3]} (2 iterations) vs reference: max rel err {float(np.max(np.abs(a - b) / np.maximum(1, np.abs(b)))):.1e}")
PY
}
check stencil_chain 1000 stage_tile_cols=0 $chain_variants
check stencil3d 100 grid3_cols=0 $grid3_variants
check stencil9 1000 grid_strip_rows=0 $strip_variants

echo "== bench"
b() {  # name tuning program
  FUGUE_TUNING=$2 $F bench examples/bench/$3.json --repeat 20 --json "$out/b_$1.json" > "$out/b.txt" 2>&1 || cat "$out/b.txt"
}
for v in $chain_variants; do b "stencil_chain_${v//[=,]/_}" "$v" stencil_chain; done
for v in $grid3_variants; do b "stencil3d_${v//[=,]/_}" "$v" stencil3d; done
for v in $strip_variants; do b "stencil9_${v//[=,]/_}" "$v" stencil9; done
b stencil5_default "" stencil5
# Lucas-Kanade (its gradients and window sums in tile stages) on RubberWhale, where the bundle has it
# (cp ../shared/data/middlebury/RubberWhale/{frame10.png,frame11.png,flow10.flo} .gpu/data/).
if [ -f .gpu/data/frame10.png ]; then
  for v in "" stage_tile_cols=0; do
    FUGUE_TUNING=$v $F bench examples/optical_flow/lk.json --set frame1=.gpu/data/frame10.png --set frame2=.gpu/data/frame11.png \
      --set truth=.gpu/data/flow10.flo --repeat 20 --json "$out/b_lk_${v//[=,]/_}.json" > "$out/b.txt" 2>&1 || cat "$out/b.txt"
  done
fi
python3 .gpu/peers.py copy stencil > "$out/peers.txt" 2>&1
$F explain examples/bench/stencil_chain.json > "$out/explain_chain.txt" 2>&1

echo "== summary"
python3 - "$out" "$chain_variants" "$grid3_variants" "$strip_variants" <<'PY'
import json, sys, os
out = sys.argv[1]
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers["f32 x 2^28"]["GBps"]
print(f"copy {copy:.0f} GB/s")
def ms(name):
    try: return json.load(open(os.path.join(out, f"b_{name}.json")))["total"]["median_s"] * 1e3 / 10
    except Exception: return float("nan")
for prog, variants, cells, per_cell in (("stencil_chain", sys.argv[2], 8192 * 8192, 8), ("stencil3d", sys.argv[3], 512 ** 3, 8),
                                        ("stencil9", sys.argv[4], 8192 * 8192, 8)):
    for v in variants.split():
        it = ms(f"{prog}_{v.replace('=', '_').replace(',', '_')}")
        print(f"{prog:13s} {v:55s} {it:.4f} ms per iteration = {per_cell * cells / (it / 1e3) / 1e9 / copy:.2f}x copy ({per_cell} B/cell)")
for v in ("", "stage_tile_cols_0"):
    try:
        t = json.load(open(os.path.join(out, f"b_lk_{v}.json")))["total"]["median_s"] * 1e3
        print(f"lk.json (RubberWhale, whole program) {v or 'default (tile stages)'}: {t:.3f} ms")
    except Exception: pass
it = ms("stencil5_default")
print(f"stencil5      default {it:.4f} ms = {8 * 8192 * 8192 / (it / 1e3) / 1e9 / copy:.2f}x copy")
for k, j in peers.items():
    if "stencil" in k or "5-point" in k: print(f"peer {k}: {j.get('ms', float('nan')):.4f} ms")
PY
