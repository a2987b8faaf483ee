#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# array.scatter_add (SCATTER, atomics, a private copy of h per work-group, runs of equal indices summed
# in registers) checked on the GPU against the reference (integers exactly), then 2^26 f32 values into
# 4,096 bins timed with uniform indices and with every index equal, beside peers.py scatter (torch's
# index_add_) and copy in the same run.
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu  # logs; $OUT gets the summary
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices > "$out/devices.txt"

echo "== correctness on the GPU"
for case in "i32 fill 0" "i64 fill 0" "f32 random 4096" "f64 random 300000"; do
  set -- $case
  if [ "$2" = fill ]; then src='{"fill": 0}'; else src="{\"random\": {\"seed\": 3, \"low\": 0, \"high\": $3}}"; fi
  bins=$([ "$2" = fill ] && echo 64 || echo "$3")
  cat > "$out/check.json" <<JSON
{"fugue": 1, "symbols": {
  "h": {"kind": "array", "dtype": "$1", "shape": [$bins], "from": {"zeros": {}}},
  "index": {"kind": "array", "dtype": "i64", "shape": [3000017], "from": $src},
  "values": {"kind": "array", "dtype": "$1", "shape": [3000017], "from": {"random": {"seed": 4, "low": 0, "high": 100}}}},
 "body": [{"op": "array.mul", "out": ["v"], "in": ["values", 3]}, {"op": "array.scatter_add", "out": ["h"], "in": ["h", "index", "v"]}],
 "outputs": {"h": "h.npy"}}
JSON
  $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
  python3 - "$out" "$1" "$2" <<'PY'
import sys, numpy as np
d, dtype, kind = sys.argv[1:4]
g, r = np.load(d + '/gpu/h.npy'), np.load(d + '/ref/h.npy')
if dtype.startswith('i'):
    ok = np.array_equal(g, r); err = int(np.abs(g.astype(np.int64) - r.astype(np.int64)).max())
else:
    err = float(np.max(np.abs(g - r) / np.maximum(1, np.abs(r)))); ok = err <= (1e-4 if dtype == 'f32' else 1e-11)
print(f'{dtype} {kind} into {g.size} bins: max error {err}', 'OK' if ok else 'MISMATCH')
PY
done

echo "== bench"
b() {  # name program [options...]
  local name=$1; shift
  $F bench "$@" --repeat 20 --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1 || cat "$out/bench_$name.txt"
  tail -1 "$out/bench_$name.txt"
}
b scatter_uniform examples/bench/scatter_uniform.json
b scatter_one_bin examples/bench/scatter_one_bin.json
for v in ${VARIANTS:-item_groups_per_cu=4 item_groups_per_cu=16 item_groups_per_cu=32}; do
  FUGUE_TUNING=$v b "scatter_uniform_${v//[=,]/_}" examples/bench/scatter_uniform.json
  FUGUE_TUNING=$v b "scatter_one_bin_${v//[=,]/_}" examples/bench/scatter_one_bin.json
done
python3 .gpu/peers.py copy scatter | tee "$out/peers.txt"

echo "== summary"
python3 - "$out" <<'PY' | tee "${OUT:-$out}/summary.txt"
import json, sys, os, glob
out = sys.argv[1]
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers["f32 x 2^28"]["GBps"]
tu = peers["index_add f32 x 2^26 into 4096 (uniform)"]["ms"]; to = peers["index_add f32 x 2^26 into 4096 (all-one-bin)"]["ms"]
print(f"copy {copy:.0f} GB/s; torch index_add_ uniform {tu:.3f} ms, all in one bin {to:.3f} ms")
for p in sorted(glob.glob(os.path.join(out, "bench_scatter*.json"))):
    ms = json.load(open(p))["total"]["median_s"] * 1e3
    name = os.path.basename(p)[6:-5]
    peer = to if "one_bin" in name else tu
    print(f"{name:45s} {ms:.3f} ms = {(1 << 26) * 12 / ms / 1e6 / copy:.2f}x copy, {peer / ms:.2f}x torch index_add_")
PY
