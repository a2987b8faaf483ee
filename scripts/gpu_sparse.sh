#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# issue 14's SpMV figures. For each generated matrix (MATRICES: poisson1024 poisson4096 rmat22 fem1m; also
# fem1m4, dense 4 x 4 blocks; rmat20, rmat21, rmat20e4, rmat18e64 power laws) and each layout (LAYOUTS: csr
# coo ell sell dia; any kind, the block kinds with a block as bell@4x4, sbell@1x8; csr's GPU kernels
# forced as csr:lanes, csr:chunks8, csr:chunks4g256 with the entries a work-item takes and the
# work-items a chunk), checks y = A x against torch's CSR product in f64, then times sparse.spmv in f32
# with `fugue bench` beside torch.sparse (cuSPARSE CSR) on the same matrix and peers.py copy spmv, all in
# one run (EXPLAIN= skips writing each run's plan). Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/logs
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
MATRICES=${MATRICES-"poisson1024 poisson4096 rmat22 fem1m"}
CHECKED=${CHECKED-"poisson1024 rmat16 fem10k"}  # CHECKED="" checks none  # small ones: every layout checked against torch
LAYOUTS=${LAYOUTS:-"csr coo ell sell dia"}
$F devices | head -3

source scripts/sparse_matrices.sh
source_of() { sparse_source "$1"; }
# The environment a layout's runs take (csr:chunks8g256 -> FUGUE_SPARSE_CSR=chunks FUGUE_SPARSE_CHUNK_ITEMS=8
# FUGUE_SPARSE_CHUNK_GROUP=256).
env_of() {
  case $1 in *:*) local v=${1#*:} n g; g=$(echo "$v" | sed -n 's/.*g\([0-9]*\)$/\1/p'); v=${v%g*}; n=${v##*[a-z]}
    echo "FUGUE_SPARSE_CSR=${v%%[0-9]*}${n:+ FUGUE_SPARSE_CHUNK_ITEMS=$n}${g:+ FUGUE_SPARSE_CHUNK_GROUP=$g}" ;; esac
}
program() {  # matrix layout dtype file outputs
  local extra="" kind=${2%@*}; kind=${kind%:*}; [ "$2" = sell ] && extra=', "slice": 32, "sigma": 1024'
  [ "$kind" = sparse ] && extra=', "reads": -1'  # auto for the product alone: bench times products, not the conversion
  case $2 in *@*) local b=${2#*@}; extra=", \"block\": [${b%x*}, ${b#*x}]" ;; esac
  cat > "$4" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$kind", "dtype": "$3", "from": $(source_of $1)$extra},
  "x": {"kind": "array", "dtype": "$3", "shape": [$(cat "$out/cols_$1")], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}],
 "outputs": {$5}}
JSON
}

echo "== matrices: csr parts for torch, and the check against torch in f64"
: > "$out/check.txt"
for m in $(echo $CHECKED $MATRICES | tr ' ' '\n' | awk '!seen[$0]++'); do
  # The column count: a first run writes the csr parts (the shape is the row count of row_ptr - 1 for these square matrices).
  sparse_csr_parts $F "$out" $m
  case " $CHECKED " in *" $m "*) ;; *) continue ;; esac
  for layout in $LAYOUTS; do
    program $m $layout f64 "$out/check.json" '"y": "y.npy", "x": "x.npy"'
    rm -rf "$out/gpu"
    if ! env $(env_of $layout) $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1; then
      echo "$m $layout: refused: $(tail -1 "$out/run.txt")" >> "$out/check.txt"; continue
    fi
    python3 - "$out" $m $layout >> "$out/check.txt" <<'PY'
import sys, numpy as np, torch
d, m, layout = sys.argv[1:4]
p = f'{d}/parts_{m}/'
A = torch.sparse_csr_tensor(torch.from_numpy(np.load(p + 'row_ptr.npy')).long(), torch.from_numpy(np.load(p + 'col.npy')).long(),
                            torch.from_numpy(np.load(p + 'data.npy')), size=(np.load(p + 'row_ptr.npy').shape[0] - 1, np.load(f'{d}/gpu/x.npy').shape[0]), dtype=torch.float64).cuda()
x = torch.from_numpy(np.load(f'{d}/gpu/x.npy')).cuda()
want = (A @ x).cpu().numpy()
y = np.load(f'{d}/gpu/y.npy')
err = np.abs(y - want).max() / max(1.0, np.abs(want).max())
print(f"{m} {layout}: {'OK' if err < 1e-12 else 'MISMATCH'} (max relative error {err:.2e})")
PY
  done
done
cat "$out/check.txt"

echo "== bench (f32)"
for m in $MATRICES; do
  for layout in $LAYOUTS; do
    program $m $layout f32 "$out/b.json" '"y": "y.npy"'
    name=${layout//[@:]/-}
    [ -n "${EXPLAIN-1}" ] && env $(env_of $layout) $F explain "$out/b.json" | grep -m1 "plan:" > "$out/plan_${m}_$name.txt"
    env $(env_of $layout) $F bench "$out/b.json" --repeat ${REPEAT:-20} --json "$out/bench_${m}_$name.json" > "$out/bench.txt" 2>&1 || { echo "$m $layout: $(tail -1 "$out/bench.txt")"; rm -f "$out/bench_${m}_$name.json"; }
  done
  # torch (cuSPARSE CSR) on the same matrix, timed as peers.py times.
  python3 - "$out" $m >> "$out/torch.txt" <<'PY'
import sys, json, numpy as np, torch
d, m = sys.argv[1:3]
p = f'{d}/parts_{m}/'
A = torch.sparse_csr_tensor(torch.from_numpy(np.load(p + 'row_ptr.npy')).long(), torch.from_numpy(np.load(p + 'col.npy')).long(),
                            torch.from_numpy(np.load(p + 'data.npy')), size=(np.load(p + 'row_ptr.npy').shape[0] - 1,) * 2, dtype=torch.float32).cuda()
x = torch.rand(A.shape[1], device='cuda')
for _ in range(3): A @ x
torch.cuda.synchronize()
ts = []
for _ in range(20):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); A @ x; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort()
print(json.dumps({"matrix": m, "ms": ts[len(ts) // 2], "nnz": int(A._nnz()), "rows": A.shape[0]}))
PY
done
python3 .gpu/peers.py copy spmv > "$out/peers.txt" 2>&1

echo "== summary"
python3 - "$out" $LAYOUTS <<'PY' | tee "$out/../summary.txt"
import json, sys, os
out, layouts = sys.argv[1], sys.argv[2:]
checks = open(os.path.join(out, "check.txt")).read()
print(f"checks against torch (f64): {checks.count(': OK')} OK, {checks.count('MISMATCH')} MISMATCH, {checks.count('refused')} refused")
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
copy = peers.get("f32 x 2^28", {}).get("GBps")
print("copy:", copy, "GB/s;", "; ".join(f"{k}: {v['ms']} ms" for k, v in peers.items() if k.startswith("csr")))
torch = {}
for l in open(os.path.join(out, "torch.txt")):
    if l.startswith("{"): j = json.loads(l); torch[j["matrix"]] = j
for m, t in torch.items():
    g = 2 * t["nnz"] / t["ms"] / 1e6
    print(f"{m}: {t['rows']} rows, {t['nnz']} entries; torch (cuSPARSE CSR) {t['ms']:.4f} ms = {g:.0f} GFLOP/s")
    for layout in layouts:
        f = os.path.join(out, f"bench_{m}_{layout.replace('@', '-').replace(':', '-')}.json")
        if not os.path.exists(f): print(f"  {layout}: -"); continue
        b = json.load(open(f))["total"]
        ms = b["median_s"] * 1e3
        gbs = b["bytes"] / b["median_s"] / 1e9
        print(f"  {layout}: {ms:.4f} ms = {2 * t['nnz'] / ms / 1e6:.0f} GFLOP/s, {gbs:.0f} GB/s" + (f" ({gbs / copy:.2f}x copy)" if copy else "") +
              f"; {t['ms'] / ms:.2f}x torch")
PY
