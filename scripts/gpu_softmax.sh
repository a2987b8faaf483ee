#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# the batched softmax (examples/bench/softmax.json: softmax(x * scale + bias) over [65536, 1024] f32, one
# kernel) checked against the reference and NumPy, then timed fused, unfused and with other launches,
# side by side with peers.py copy and softmax (torch eager and torch.compile) in the same run.
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu  # logs; $OUT gets the summary
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | tee "$out/devices.txt"

if [ "${SKIP_CHECK:-0}" != 1 ]; then
echo "== correctness on the GPU: softmax and logsumexp of x * scale + bias, [512, 1000] and [64, 4099] f32 and f64"
for shape in "512 1000 f32" "64 4099 f32" "300 77 f64"; do
  set -- $shape
  cat > "$out/check.json" <<JSON
{"fugue": 1, "symbols": {
  "x": {"kind": "array", "dtype": "$3", "shape": [$1, $2], "from": {"random": {"seed": 5, "low": -8, "high": 8}}},
  "bias": {"kind": "array", "dtype": "$3", "shape": [$1, $2], "from": {"random": {"seed": 6}}},
  "scale": {"kind": "scalar", "dtype": "$3", "value": 1.5}},
 "body": [{"op": "array.mul", "out": ["t"], "in": ["x", "scale"]}, {"op": "array.add", "out": ["u"], "in": ["t", "bias"]},
          {"op": "array.softmax", "out": ["y"], "in": ["u"]}, {"op": "array.logsumexp", "out": ["l"], "in": ["u"]}],
 "outputs": {"y": "y.npy", "l": "l.npy", "x": "x.npy", "bias": "bias.npy"}}
JSON
  $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
  python3 - "$out" "$3" <<'PY'
import sys, numpy as np
d, dtype = sys.argv[1], sys.argv[2]
u = np.load(d + '/gpu/x.npy').astype(np.float64) * 1.5 + np.load(d + '/gpu/bias.npy')
m = u.max(-1, keepdims=True); e = np.exp(u - m)
y, l = e / e.sum(-1, keepdims=True), np.log(e.sum(-1)) + m[:, 0]
tol = 1e-5 if dtype == 'f32' else 1e-12
for name, want in (('y', y), ('l', l)):
    g, r = np.load(f'{d}/gpu/{name}.npy'), np.load(f'{d}/ref/{name}.npy')
    print(f'{dtype} {u.shape} {name}: max rel err vs numpy {np.max(np.abs(g - want) / np.maximum(1, np.abs(want))):.2e}, vs reference {np.max(np.abs(g - r) / np.maximum(1, np.abs(r))):.2e}',
          'OK' if np.allclose(g, want, rtol=tol, atol=tol) and np.allclose(g, r, rtol=tol, atol=tol) else 'MISMATCH')
PY
done
fi

echo "== bench"
b() {  # name program [options...]
  local name=$1; shift
  $F bench "$@" --repeat 20 --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1 || cat "$out/bench_$name.txt"
  tail -1 "$out/bench_$name.txt"
}
b softmax examples/bench/softmax.json
b softmax_nofuse examples/bench/softmax.json --no-fuse
for v in ${VARIANTS:-block_local=256 block_local=64 block_local=32 block_groups_per_cu=16 block_groups_per_cu=0}; do
  FUGUE_TUNING=$v b "softmax_${v//[=,]/_}" examples/bench/softmax.json
done
python3 .gpu/peers.py copy softmax | tee "$out/peers.txt"
$F explain examples/bench/softmax.json > "$out/explain_softmax.txt"

echo "== summary"
python3 - "$out" <<'PY' | tee "${OUT:-$out}/summary.txt"
import json, sys, os, glob
out = sys.argv[1]
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers["f32 x 2^28"]["GBps"]
compiled = peers["softmax(x*s+b) f32 65536x1024 torch.compile"]["ms"]
eager = peers["softmax(x*s+b) f32 65536x1024 eager"]["ms"]
bytes_ = 2 * 65536 * 1024 * 4
print(f"copy {copy:.0f} GB/s; torch eager {eager:.3f} ms, torch.compile {compiled:.3f} ms ({bytes_ / compiled / 1e6 / copy:.2f}x copy)")
for p in sorted(glob.glob(os.path.join(out, "bench_softmax*.json"))):
    ms = json.load(open(p))["total"]["median_s"] * 1e3
    print(f"{os.path.basename(p)[6:-5]:45s} {ms:.3f} ms = {bytes_ / ms / 1e6 / copy:.2f}x copy, {compiled / ms:.2f}x torch.compile, {eager / ms:.2f}x eager")
PY
