#!/usr/bin/env bash
# sparse.spmv on this machine's OpenCL CPU device (PoCL) beside ViennaCL's formats on the same device:
# the 5-point Poisson matrix of an N x N grid (N=2048: 4.2 million rows, 21 million entries), f32, each of
# Fugue's layouts timed by `fugue bench` (median of REPEAT, device events) and each ViennaCL format by
# build/tests/fugue_viennacl_peers (median of REPEAT, wall clock around a finished product). Build first.
#   N=2048 REPEAT=10 scripts/pocl_sparse.sh
set -eu
cd "$(dirname "$0")/.."
N=${N:-2048}
REPEAT=${REPEAT:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for layout in csr coo ell sell dia bdia bell sbell auto; do
  extra=""; [ $layout = sell ] && extra=', "slice": 32'
  # {"kind": "sparse"}: the format chosen for the device, for the product alone ("reads": -1: bench times
  # the product; the program's one product would weigh the conversion too)
  kind=$layout; [ $layout = auto ] && kind=sparse extra=', "reads": -1'
  cat > "$work/$layout.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$kind", "dtype": "f32", "from": {"poisson": {"grid": [$N, $N]}}$extra},
  "x": {"kind": "array", "dtype": "f32", "shape": [$((N * N))], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}}
JSON
  build/host/fugue bench "$work/$layout.json" --repeat "$REPEAT" --json "$work/fugue_$layout.json" > /dev/null
done
build/host/fugue explain "$work/auto.json" | grep -m1 "sparse chose" > "$work/choice.txt"
build/tests/fugue_viennacl_peers "$N" "$REPEAT" > "$work/viennacl.txt"
/usr/bin/env python3 - "$work" "$N" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
peers = [json.loads(l) for l in open(f"{work}/viennacl.txt") if l.startswith("{")]
nnz = peers[0]["nnz"]
best = max(peers, key=lambda p: p["GFLOPs"])
print(f"Poisson {n}x{n} ({n * n} rows, {nnz} entries), f32, GFLOP/s; ViennaCL's best: {best['format']} {best['GFLOPs']:.2f}")
print("ViennaCL: " + ", ".join(f"{p['format']} {p['GFLOPs']:.2f}" for p in peers))
times = {}
for layout in ["csr", "coo", "ell", "sell", "dia", "bdia", "bell", "sbell", "auto"]:
    b = json.load(open(f"{work}/fugue_{layout}.json"))["total"]
    g = 2 * nnz / b["median_s"] / 1e9
    times[layout] = b["median_s"]
    print(f"Fugue {layout}: {b['median_s'] * 1e3:.2f} ms = {g:.2f} GFLOP/s, {b['gbps']:.1f} GB/s; {g / best['GFLOPs']:.2f}x ViennaCL's best")
fastest = min((t, l) for l, t in times.items() if l != "auto")
print(f"auto ({open(f'{work}/choice.txt').read().split('chose ')[1].split(':')[0]}) takes {times['auto'] / fastest[0]:.2f}x the time of the fastest layout ({fastest[1]})")
PY
