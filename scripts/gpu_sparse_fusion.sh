#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# sparse.spmv fused with its consumers, the residual step of a solver r = b - A x, rr = dot(r, r), for
# the layouts whose product is a generated kernel (LAYOUTS: bcsr@4x4 bell@4x4 sbell@4x4 sell1, a sell
# of slices of 32 rows not sorted, csr dia ell; any kind, the block kinds with a block as in
# gpu_sparse.sh). For each generated matrix (MATRICES: fem300k4, 300,000 nodes of dense 4 x 4 blocks;
# poisson4096) and layout it times with `fugue bench`: the product alone (its own kernels where the
# layout runs them alone, ABI 2.19), the product and a multiplication by 1 (the generated kernel with
# nothing else to do), the step fused, and the step with --no-fuse; beside torch's eager step on the same
# matrix (cuSPARSE CSR, a subtraction and a dot product), all in one run (WHAT: some of alone ones step apart). The step's rr is checked against
# torch's in f64 first on a small matrix (CHECKED). Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/logs
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
MATRICES=${MATRICES-"fem300k4 poisson4096"}
CHECKED=${CHECKED-"fem10k4"}
LAYOUTS=${LAYOUTS:-"bcsr@4x4 bell@4x4 sbell@4x4 sell1 csr dia ell"}
$F devices | head -3

source scripts/sparse_matrices.sh
source_of() { sparse_source "$1"; }
# program matrix layout dtype file what: what = alone (y = A x), ones (y = A x, z = y * 1), step (r = b - A x, rr = r . r)
program() {
  local extra="" kind=${2%@*}
  [ "$2" = sell1 ] && kind=sell extra=', "slice": 32, "sigma": 1'
  case $2 in *@*) local b=${2#*@}; extra=", \"block\": [${b%x*}, ${b#*x}]" ;; esac
  local body outputs
  case $5 in
    alone) body='{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}'; outputs='"y": "y.npy"' ;;
    ones) body='{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}, {"op": "array.mul", "out": ["z"], "in": ["y", 1]}'; outputs='"z": "z.npy"' ;;
    step) body='{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}, {"op": "array.sub", "out": ["r"], "in": ["b", "y"]}, {"op": "array.dot", "out": ["rr"], "in": ["r", "r"]}'
          outputs='"r": "r.npy", "rr": "rr.npy", "x": "x.npy", "b": "b.npy"' ;;
  esac
  cat > "$4" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$kind", "dtype": "$3", "from": $(source_of $1)$extra},
  "x": {"kind": "array", "dtype": "$3", "shape": [$(cat "$out/cols_$1")], "from": {"random": {"seed": 7, "low": -1, "high": 1}}},
  "b": {"kind": "array", "dtype": "$3", "shape": [$(cat "$out/cols_$1")], "from": {"random": {"seed": 8, "low": -1, "high": 1}}}},
 "body": [$body],
 "outputs": {$outputs}}
JSON
}

echo "== matrices: csr parts for torch, and the step checked against torch in f64"
: > "$out/check.txt"
for m in $(echo $CHECKED $MATRICES | tr ' ' '\n' | awk '!seen[$0]++'); do
  sparse_csr_parts $F "$out" $m
  case " $CHECKED " in *" $m "*) ;; *) continue ;; esac
  for layout in $LAYOUTS; do
    program $m $layout f64 "$out/check.json" step
    rm -rf "$out/gpu"
    if ! $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1; then
      echo "$m $layout: refused: $(tail -1 "$out/run.txt")" >> "$out/check.txt"; continue
    fi
    python3 - "$out" $m $layout >> "$out/check.txt" <<'PY'
import sys, numpy as np, torch
d, m, layout = sys.argv[1:4]
p = f'{d}/parts_{m}/'
n = np.load(p + 'row_ptr.npy').shape[0] - 1
A = torch.sparse_csr_tensor(torch.from_numpy(np.load(p + 'row_ptr.npy')).long(), torch.from_numpy(np.load(p + 'col.npy')).long(),
                            torch.from_numpy(np.load(p + 'data.npy')), size=(n, n), dtype=torch.float64).cuda()
x, b = (torch.from_numpy(np.load(f'{d}/gpu/{v}.npy')).cuda() for v in 'xb')
r = b - A @ x
want = float(torch.dot(r, r))
got = float(np.load(f'{d}/gpu/rr.npy'))
err = abs(got - want) / max(1.0, abs(want))
rerr = np.abs(np.load(f'{d}/gpu/r.npy') - r.cpu().numpy()).max()
print(f"{m} {layout}: {'OK' if err < 1e-12 and rerr < 1e-12 else 'MISMATCH'} (rr relative error {err:.2e}, r {rerr:.2e})")
PY
  done
done
cat "$out/check.txt"

echo "== bench (f32)"
for m in $MATRICES; do
  for layout in $LAYOUTS; do
    name=${layout//[@:]/-}
    for what in ${WHAT:-alone ones step apart}; do
      program $m $layout f32 "$out/b.json" ${what/apart/step}
      [ $what = step ] && $F explain "$out/b.json" | grep -E "^  kernel|plan:" > "$out/plan_${m}_$name.txt"
      $F bench "$out/b.json" $([ $what = apart ] && echo --no-fuse) --repeat ${REPEAT:-20} --json "$out/bench_${m}_${name}_$what.json" > "$out/bench.txt" 2>&1 || { echo "$m $layout $what: $(tail -1 "$out/bench.txt")"; rm -f "$out/bench_${m}_${name}_$what.json"; }
    done
  done
  python3 - "$out" $m >> "$out/torch.txt" <<'PY'
import sys, json, numpy as np, torch
d, m = sys.argv[1:3]
p = f'{d}/parts_{m}/'
n = np.load(p + 'row_ptr.npy').shape[0] - 1
A = torch.sparse_csr_tensor(torch.from_numpy(np.load(p + 'row_ptr.npy')).long(), torch.from_numpy(np.load(p + 'col.npy')).long(),
                            torch.from_numpy(np.load(p + 'data.npy')), size=(n, n), dtype=torch.float32).cuda()
x, b = torch.rand(n, device='cuda'), torch.rand(n, device='cuda')
def median(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]
def step():
    r = b - A @ x
    return torch.dot(r, r)
print(json.dumps({"matrix": m, "spmv_ms": median(lambda: A @ x), "step_ms": median(step), "nnz": int(A._nnz()), "rows": n}))
PY
done

echo "== summary"
python3 - "$out" $LAYOUTS <<'PY' | tee "$out/../summary.txt"
import json, sys, os
out, layouts = sys.argv[1], sys.argv[2:]
checks = open(os.path.join(out, "check.txt")).read()
print(f"steps checked against torch (f64): {checks.count(': OK')} OK, {checks.count('MISMATCH')} MISMATCH, {checks.count('refused')} refused")
for l in open(os.path.join(out, "torch.txt")):
    if not l.startswith("{"): continue
    t = json.loads(l); m = t["matrix"]
    print(f"{m}: {t['rows']} rows, {t['nnz']} entries; torch: product {t['spmv_ms']:.4f} ms, step {t['step_ms']:.4f} ms")
    for layout in layouts:
        name = layout.replace('@', '-').replace(':', '-')
        ms = {}
        for what in ("alone", "ones", "step", "apart"):
            f = os.path.join(out, f"bench_{m}_{name}_{what}.json")
            if os.path.exists(f): ms[what] = json.load(open(f))["total"]["median_s"] * 1e3
        if "step" not in ms: print(f"  {layout}: " + ", ".join(f"{k} {v:.4f} ms" for k, v in ms.items())); continue
        print(f"  {layout}: product alone {ms.get('alone', 0):.4f} ms ({t['spmv_ms'] / ms.get('alone', 1):.2f}x torch), generated {ms.get('ones', 0):.4f}; "
              f"step fused {ms['step']:.4f} ms ({t['step_ms'] / ms['step']:.2f}x torch's step), --no-fuse {ms.get('apart', 0):.4f} "
              f"(fusion {ms.get('apart', 0) / ms['step']:.2f}x)")
PY
