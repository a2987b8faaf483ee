#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# softmax(x * scale + bias) over rows of 4 to 1024 f32 (2^26 elements each, so every case moves 512 MiB),
# where short rows share a work-group side by side, a team of work-items each (fugue_plan.entry_teams).
# Checked against NumPy and the reference first, then timed beside torch eager and torch.compile on the same
# shapes (timed as peers.py times) and peers.py copy, in the same run.
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu  # logs; $OUT gets the summary
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
WIDTHS=${WIDTHS:-"4 16 64 256 1024"}

program() {  # rows cols dtype seed file
  cat > "$5" <<JSON
{"fugue": 1, "symbols": {
  "x": {"kind": "array", "dtype": "$3", "shape": [$1, $2], "from": {"random": {"seed": $4, "low": -8, "high": 8}}},
  "scale": {"kind": "scalar", "dtype": "$3", "value": 0.7}, "bias": {"kind": "scalar", "dtype": "$3", "value": 0.3}},
 "body": [{"op": "array.mul", "out": ["t"], "in": ["x", "scale"]}, {"op": "array.add", "out": ["u"], "in": ["t", "bias"]},
          {"op": "array.softmax", "out": ["y"], "in": ["u"]}, {"op": "array.logsumexp", "out": ["l"], "in": ["u"]}],
 "outputs": {"y": "y.npy", "l": "l.npy", "x": "x.npy"}}
JSON
}

echo "== correctness on the GPU against NumPy and the reference"
: > "$out/check.txt"
for w in $WIDTHS 3 5 33; do
  for dtype in f32 f64; do
    program 1001 "$w" "$dtype" 7 "$out/check.json"
    $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
    $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
    python3 - "$out" "$dtype" <<'PY'
import sys, numpy as np
d, dtype = sys.argv[1], sys.argv[2]
u = np.load(d + '/gpu/x.npy').astype(np.float64) * 0.7 + 0.3
m = u.max(-1, keepdims=True); e = np.exp(u - m)
want = {'y': e / e.sum(-1, keepdims=True), 'l': np.log(e.sum(-1)) + m[:, 0]}
tol = 1e-5 if dtype == 'f32' else 1e-12
for name in ('y', 'l'):
    g, r = np.load(f'{d}/gpu/{name}.npy'), np.load(f'{d}/ref/{name}.npy')
    ok = np.allclose(g, want[name], rtol=tol, atol=tol) and np.allclose(g, r, rtol=tol, atol=tol)
    print(f'{dtype} {u.shape} {name}:', 'OK' if ok else 'MISMATCH')
PY
  done
done | tee -a "$out/check.txt"

echo "== bench"
for w in $WIDTHS; do
  rows=$(( (1 << 26) / w ))
  program "$rows" "$w" f32 1 "$out/rows$w.json"
  # softmax alone (y), as torch times it
  python3 - "$out/rows$w.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); p["body"] = p["body"][:3]; p["outputs"] = {"y": "y.npy"}
json.dump(p, open(sys.argv[1], "w"))
PY
  $F explain "$out/rows$w.json" | sed -n '/^Kernels/,/traffic/p' > "$out/explain_rows$w.txt"
  head -2 "$out/explain_rows$w.txt" | tail -1
  for v in default ${VARIANTS:-block_team_items=64 block_team_items=256 block_team_items=512}; do
    if [ "$v" = default ]; then tuning=; else tuning=$v; fi
    FUGUE_TUNING=$tuning $F bench "$out/rows$w.json" --repeat 20 --json "$out/bench_rows${w}_${v//[=,]/_}.json" \
      > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
  done
done
python3 - "$WIDTHS" <<'PY' | tee "$out/torch.txt"
import json, sys, torch
sys.path.insert(0, ".gpu")
from peers import bench
for w in map(int, sys.argv[1].split()):
    x = torch.rand((1 << 26) // w, w, device="cuda")
    f = lambda: torch.softmax(x * 0.7 + 0.3, dim=-1)
    print(json.dumps({"width": w, "eager": bench(f)}))
    print(json.dumps({"width": w, "compile": bench(torch.compile(f))}))
PY
python3 .gpu/peers.py copy | tee "$out/peers.txt"

echo "== summary"
python3 - "$out" "$WIDTHS" <<'PY' | tee "${OUT:-$out}/summary.txt"
import json, sys, os, glob
out, widths = sys.argv[1], list(map(int, sys.argv[2].split()))
copy = [json.loads(l)["GBps"] for l in open(os.path.join(out, "peers.txt")) if l.startswith("{") and "2^28" in l][0]
torch_ms = {}
for l in open(os.path.join(out, "torch.txt")):
    j = json.loads(l); torch_ms[(j["width"], "eager" if "eager" in j else "compile")] = j.get("eager", j.get("compile"))
bytes_ = 2 * (1 << 26) * 4
checks = open(os.path.join(out, "check.txt")).read()
print(f"checks against NumPy and the reference: {checks.count(' OK')} OK, {checks.count('MISMATCH')} MISMATCH")
print(f"copy {copy:.0f} GB/s")
for w in widths:
    c, e = torch_ms[(w, "compile")], torch_ms[(w, "eager")]
    print(f"rows of {w}: torch eager {e:.3f} ms, torch.compile {c:.3f} ms ({bytes_ / c / 1e6 / copy:.2f}x copy)")
    for p in sorted(glob.glob(os.path.join(out, f"bench_rows{w}_*.json"))):
        ms = json.load(open(p))["total"]["median_s"] * 1e3
        name = os.path.basename(p)[len(f"bench_rows{w}_"):-5]
        print(f"  fugue {name:28s} {ms:.3f} ms = {bytes_ / ms / 1e6 / copy:.2f}x copy, {c / ms:.2f}x torch.compile, {e / ms:.2f}x eager")
PY
