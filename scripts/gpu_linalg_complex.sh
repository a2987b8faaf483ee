#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# issue 13's complex table: linalg.potrf (Hermitian positive definite), getrf, geqrf and gemm of c64 (and
# DTYPES="c64 c128") at n = 8, 32, 128 (20,000 matrices up to n = 16, 2,000 above, as peers.py), each
# checked against NumPy first (potrf: L against np.linalg.cholesky; getrf: P A = L U and the pivots
# against the reference's; geqrf: |R| against np.linalg.qr's; gemm: C against A B), then timed beside
# torch.linalg.cholesky, lu_factor, qr(mode="r") and bmm on the same complex batches in the same run.
# GFLOP/s with LAPACK's real counts times 4 (a complex multiply-add is 8 real operations).
#   SIZES="8 32 128" DTYPES=c64 OPS="potrf getrf geqrf gemm" scripts/gpu_linalg_complex.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/complex
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
SIZES=${SIZES:-"8 32 128"}
DTYPES=${DTYPES:-c64}
OPS=${OPS:-"potrf getrf geqrf gemm"}
source scripts/linalg_programs.sh  # program op count n dtype lower file

for op in $OPS; do
  for dtype in $DTYPES; do
    for n in $SIZES; do
      count=$(( n > 16 ? 2000 : 20000 ))
      program "$op" 257 "$n" "$dtype" true "$out/check.json"
      $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
      $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
      check=$(python3 - "$out" "$op" "$dtype" "$n" <<'PY'
import sys, numpy as np
d, op, dtype, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
eps = 1.2e-7 if dtype == 'c64' else 2.3e-16
A = np.load(d + '/gpu/A.npy').astype(np.complex128)
scale = np.abs(A).max()
if op == 'potrf':
    err = np.abs(np.load(d + '/gpu/L.npy') - np.linalg.cholesky(A)).max() / np.sqrt(scale)
    ok = err < 100 * n * eps and not np.load(d + '/gpu/info.npy').any()
elif op == 'getrf':
    g, piv = np.load(d + '/gpu/LU.npy').astype(np.complex128), np.load(d + '/gpu/ipiv.npy')
    L, U, PA = np.tril(g, -1) + np.eye(n), np.triu(g), A.copy()
    for e in range(A.shape[0]):
        for s in range(n):
            PA[e, [s, piv[e, s] - 1]] = PA[e, [piv[e, s] - 1, s]]
    err = np.abs(L @ U - PA).max() / scale
    ok = err < 100 * n * eps and np.array_equal(piv, np.load(d + '/ref/ipiv.npy'))
elif op == 'geqrf':
    err = np.abs(np.abs(np.triu(np.load(d + '/gpu/QR.npy'))) - np.abs(np.linalg.qr(A, mode='r'))).max() / scale
    ok = err < 100 * n * eps
else:
    B = np.load(d + '/gpu/B.npy').astype(np.complex128)
    err = np.abs(np.load(d + '/gpu/C.npy') - A @ B).max() / scale ** 2
    ok = err < 10 * n * eps
print('OK' if ok else f'MISMATCH {err:.1e}')
PY
)
      $F bench "$(program "$op" "$count" "$n" "$dtype" true "$out/bench.json"; echo "$out/bench.json")" --repeat 20 --json "$out/b.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
      python3 - "$out/b.json" "$op" "$dtype" "$n" "$count" "$check" <<'PY'
import sys, json, torch
path, op, dtype, n, count, check = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
ms = json.load(open(path))["total"]["median_s"] * 1e3
dt = {'c64': torch.complex64, 'c128': torch.complex128}[dtype]
g = torch.Generator(device='cuda').manual_seed(1)
A = torch.randn(count, n, n, device='cuda', dtype=dt, generator=g)
if op == 'potrf':
    S = A @ A.mH + n * torch.eye(n, device='cuda', dtype=dt); fn = lambda: torch.linalg.cholesky(S)
elif op == 'getrf': fn = lambda: torch.linalg.lu_factor(A)
elif op == 'geqrf': fn = lambda: torch.linalg.qr(A, mode='r')
else: fn = lambda: torch.bmm(A, A)
for _ in range(3): fn()
torch.cuda.synchronize()
ts = []
for _ in range(10):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
peer = sorted(ts)[5]
flops = 4 * count * {'potrf': n ** 3 / 3, 'getrf': 2 * n ** 3 / 3, 'geqrf': 4 * n ** 3 / 3, 'gemm': 2 * n ** 3}[op]
print(f"{op} {dtype} n={n} batch={count} (check {check}): {ms:.4f} ms = {flops / ms / 1e6:.0f} GFLOP/s; torch {peer:.4f} ms: {peer / ms:.1f}x")
PY
    done
  done
done | tee "$out/summary.txt"
