#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# batched solves A X = B beside what a user would run instead, torch.linalg.solve (LU with pivoting,
# cuSOLVER/cuBLAS), and torch.cholesky_solve after torch.linalg.cholesky, timed in the same run with CUDA
# events: OP=gesv_nopiv (the default; Gauss-Jordan without pivoting, the seed's STAP solver, on SPD
# systems of cond 100), OP=posv (the same systems) or OP=gesv (Gauss-Jordan with partial pivoting, on
# uniform [-1, 1) systems); n = 4 ... 64 with 4 right-hand sides (batches of 20,000 up to n = 16, 2,000
# above) and STAP's 18 x 18 with 16 (4,096 systems); DTYPES="f64 f32" (the default) or "c64 c128" (complex;
# Hermitian positive definite systems); ATTRS the operation's attributes (posv reads A's upper triangle
# unless ATTRS='"lower": true'). The GPU's X is checked against NumPy first (relative to cond(A)).
# Build and bundle first:  ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
CASES=${CASES:-"4:4:20000 8:4:20000 16:4:20000 18:16:4096 32:4:2000 64:4:2000"}
OP=${OP:-gesv_nopiv}
DTYPES=${DTYPES:-"f64 f32"}
ATTRS=${ATTRS:-}  # the operation's attributes, e.g. ATTRS='"lower": true' for posv from A's lower triangle
if [ "$OP" = gesv ]; then A_FROM='{"random": {"seed": 1, "low": -1, "high": 1}}'; else A_FROM='{"spd": {"seed": 1, "cond": 100}}'; fi

program() {  # count n k dtype file
  cat > "$5" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "$4", "shape": [$1, $2, $2], "from": $A_FROM},
                         "B": {"kind": "array", "dtype": "$4", "shape": [$1, $2, $3], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
 "body": [{"op": "linalg.$OP", "out": ["X", "info"], "in": ["A", "B"], "attrs": {$ATTRS}}],
 "outputs": {"X": "X.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}}
JSON
}

: > "$out/solve.txt"
for c in $CASES; do
  IFS=: read -r n k count <<< "$c"
  for dtype in $DTYPES; do
    program 257 "$n" "$k" "$dtype" "$out/check.json"
    $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
    check=$(python3 - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
A, B, X = (np.load(f'{d}/gpu/{s}.npy').astype(np.complex128) for s in 'ABX')
want = np.linalg.solve(A, B)
err = (np.abs(X - want).max(axis=(1, 2)) / np.abs(want).max(axis=(1, 2)) / np.linalg.cond(A)).max()
eps = 1.2e-7 if np.load(f'{d}/gpu/X.npy').dtype in (np.float32, np.complex64) else 2.3e-16
ok = err < 50 * A.shape[-1] * eps and not np.load(f'{d}/gpu/info.npy').any()
print('OK' if ok else f'MISMATCH {err:.2e}')
PY
)
    program "$count" "$n" "$k" "$dtype" "$out/bench.json"
    $F bench "$out/bench.json" --repeat 20 --json "$out/bench.json.out" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
    ms=$(python3 -c "import json; print(json.load(open('$out/bench.json.out'))['total']['median_s'] * 1e3)")
    python3 - "$n" "$k" "$count" "$dtype" "$ms" "$check" "$OP" <<'PY' | tee -a "$out/solve.txt"
import sys, torch
n, k, count, dtype, ms, check, op = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5]), sys.argv[6], sys.argv[7]
dt = {'f64': torch.float64, 'f32': torch.float32, 'c64': torch.complex64, 'c128': torch.complex128}[dtype]
g = torch.Generator(device='cuda').manual_seed(1)
M = torch.randn(count, n, n, device='cuda', dtype=dt, generator=g)
A = M @ M.mH + n * torch.eye(n, device='cuda', dtype=dt)
B = torch.rand(count, n, k, device='cuda', dtype=dt, generator=g)
def bench(fn, warm=3, rep=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(rep):
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[rep // 2]
solve = bench(lambda: torch.linalg.solve(A, B))
chol = bench(lambda: torch.cholesky_solve(B, torch.linalg.cholesky(A)))
flops = count * (n ** 3 / 3 + 2 * n * n * k if op == 'posv' else n ** 3 + 2 * n * n * k)  # Cholesky's or Gauss-Jordan's count
flops *= 4 if dtype.startswith('c') else 1  # a complex multiply-add is 8 real operations
print(f"{op} {dtype} n={n} k={k} batch={count}: {ms:.4f} ms ({flops / ms / 1e6:.0f} GFLOP/s), check {check}; "
      f"torch.linalg.solve {solve:.4f} ms: {solve / ms:.1f}x, cholesky + cholesky_solve {chol:.4f} ms: {chol / ms:.1f}x")
PY
  done
done
cp "$out/solve.txt" "${OUT:-$out}/solve_$OP.txt" 2>/dev/null || true
