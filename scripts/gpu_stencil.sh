#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# stencils against the copy bandwidth, walks compared in one call: the 5-point periodic stencil
# (examples/bench/stencil5.json), the 9-point clamp stencil fused with an axpy (stencil9.json) and Jacobi
# (jacobi.json), each on 8192^2 f32, with the flat grid-stride walk, the default launch and column strips
# of several heights (FUGUE_TUNING grid_strip_rows); the strips checked bit for bit against the flat walk. Then
# array.reduce with user functions (reduce_rows, reduce_columns, reduce_all) against the reference and
# torch, and peers.py copy stencil. Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | grep -i default
if [ "${ONLY_SUMMARY:-0}" != 1 ]; then

echo "== correctness: strips against the flat walk (bitwise), and against the reference"
for p in stencil5 stencil9 jacobi; do
  FUGUE_TUNING=grid_strip_rows=0 $F run examples/bench/$p.json --set side=1000 --out "$out/flat_$p" > /dev/null 2>&1 || echo "$p flat run failed"
  $F run examples/bench/$p.json --set side=1000 --out "$out/ref_$p" --reference > /dev/null 2>&1 || echo "$p reference failed"
  for s in ${STRIPS:-4 16}; do
    FUGUE_TUNING=grid_strip_rows=$s $F run examples/bench/$p.json --set side=1000 --out "$out/strip${s}_$p" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  done
  python3 - "$out" "$p" ${STRIPS:-4 16} <<'PY'
import sys, numpy as np
d, p, strips = sys.argv[1], sys.argv[2], sys.argv[3:]
flat, ref = np.load(f'{d}/flat_{p}/x.npy'), np.load(f'{d}/ref_{p}/x.npy')
err = np.max(np.abs(flat - ref) / np.maximum(1, np.abs(ref)))
same = all(np.array_equal(np.load(f'{d}/strip{s}_{p}/x.npy'), flat) for s in strips)
print(f'{p}: flat vs reference {err:.2e}; strips {"bit-identical" if same else "DIFFER"}')
PY
done
echo "== correctness: array.reduce against the reference"
for p in reduce_rows reduce_columns reduce_all; do
  a="--set rows=300"; [ $p = reduce_all ] && a="--set n=1000003"
  $F run examples/bench/$p.json $a --out "$out/gpu_$p" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
  $F run examples/bench/$p.json $a --out "$out/ref_$p" --reference > /dev/null 2>&1
  python3 - "$out" "$p" <<'PY'
import sys, glob, numpy as np
d, p = sys.argv[1], sys.argv[2]
for f in glob.glob(f'{d}/gpu_{p}/*.npy'):
    g, r = np.load(f), np.load(f.replace('/gpu_', '/ref_'))
    err = float(np.max(np.abs(g - r) / np.maximum(1, np.abs(r))))
    print(f'{p}: {g.shape} max rel err vs reference {err:.2e}', 'OK' if err < 1e-4 else 'MISMATCH')
PY
done

echo "== bench"
b() {  # name program [options...]
  local name=$1; shift
  $F bench "$@" --repeat 20 --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1 || cat "$out/bench_$name.txt"
}
for p in stencil5 stencil9 jacobi; do
  FUGUE_TUNING=grid_strip_rows=0 b "${p}_flat" examples/bench/$p.json
  b "${p}_default" examples/bench/$p.json
  for s in ${STRIPS:-4 16}; do FUGUE_TUNING=grid_strip_rows=$s b "${p}_strip$s" examples/bench/$p.json; done
done
for p in reduce_rows reduce_columns reduce_all; do b $p examples/bench/$p.json; done
python3 .gpu/peers.py copy stencil > "$out/peers.txt" 2>&1
python3 - > "$out/torch_reduce.txt" 2>&1 <<'PY'
import json, torch
def bench(fn, warm=3, rep=20):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True); ts = []
    for _ in range(rep):
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]
x = torch.rand(65536, 1024, device='cuda') * 2 - 1
print(json.dumps({"case": "reduce_rows", "ms": bench(lambda: x.abs().amax(dim=1))}))
y = torch.rand(1024, 65536, device='cuda') * 2 - 1
print(json.dumps({"case": "reduce_columns", "ms": bench(lambda: y.abs().amax(dim=0))}))
v = torch.rand(1 << 28, device='cuda') * 2 - 1
print(json.dumps({"case": "reduce_all", "ms": bench(lambda: (v * v).sum())}))
print(json.dumps({"case": "reduce_all torch.compile", "ms": bench(torch.compile(lambda: (v * v).sum()))}))
PY
$F explain examples/bench/stencil9.json > "$out/explain_stencil9.txt" 2>&1
fi

echo "== summary"
python3 - "$out" ${STRIPS:-4 16} <<'PY'
import json, sys, os
out, strips = sys.argv[1], sys.argv[2:]
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers["f32 x 2^28"]["GBps"]
print(f"copy {copy:.0f} GB/s")
def ms(name):
    try: return json.load(open(os.path.join(out, f"bench_{name}.json")))["total"]["median_s"] * 1e3
    except Exception as e: return float("nan")
cells = 8192 * 8192
for p, bytes_per_cell in (("stencil5", 8), ("stencil9", 8), ("jacobi", 12)):
    row = []
    for walk in ["flat", "default"] + [f"strip{s}" for s in strips]:
        it = ms(f"{p}_{walk}") / 10
        gbs = bytes_per_cell * cells / (it / 1e3) / 1e9
        row.append(f"{walk} {it:.4f} ms = {gbs/copy:.2f}x copy")
    print(f"{p:9s} " + "; ".join(row))
tc = peers.get("5-point torch.compile(roll) f32 8192x8192", {}).get("ms", float("nan"))
print(f"5-point torch.compile {tc:.4f} ms per iteration")
torch = {}
for l in open(os.path.join(out, "torch_reduce.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); torch[j["case"]] = j["ms"]
for p, n in (("reduce_rows", 65536 * 1024), ("reduce_columns", 65536 * 1024), ("reduce_all", 1 << 28)):
    t = ms(p); gbs = 4 * n / (t / 1e3) / 1e9
    print(f"{p:15s} {t:.4f} ms = {gbs:.0f} GB/s read = {gbs/copy:.2f}x copy's rate; torch {torch.get(p, float('nan')):.4f} ms ({torch.get(p, float('nan'))/t:.2f}x)")
print(f"reduce_all torch.compile {torch.get('reduce_all torch.compile', float('nan')):.4f} ms")
PY
