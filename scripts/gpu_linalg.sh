#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# batched Cholesky (linalg.potrf, SPD matrices), LU (linalg.getrf, random matrices), QR (linalg.geqrf)
# and products (linalg.gemm, C = A B) of f64 and f32,
# n = 4 ... 128 (batches of 20,000 up to n = 16, 2,000 above, as peers.py), checked against NumPy and
# the reference first, then timed beside peers.py potrf / getrf / geqrf / gemm (torch.linalg.cholesky,
# lu_factor, qr(mode="r"), bmm) in the same run; GFLOP/s with LAPACK's counts (n^3 / 3, 2 n^3 / 3,
# 4 n^3 / 3, 2 n^3). Least squares (linalg.gels, 2n x n, two right-hand sides) is checked only (no peer).
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
# OPS="potrf getrf geqrf gemm" (gels: checks only) and SIZES="4 8 16 32 64 128" choose what runs.
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu  # logs; $OUT gets the summary
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
SIZES=${SIZES:-"4 8 16 32 64 128"}
OPS=${OPS:-"potrf getrf gemm"}

source scripts/linalg_programs.sh  # program op count n dtype lower file

echo "== correctness on the GPU against NumPy and the reference"
: > "$out/check.txt"
for op in $OPS; do
  for n in $SIZES 1 3 9 33 100; do
    for dtype in f64 f32; do
      for lower in true false; do
        [ "$op" != potrf ] && [ "$lower" = false ] && continue
        program "$op" 257 "$n" "$dtype" "$lower" "$out/check.json"
        $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
        $F run "$out/check.json" --out "$out/ref" --reference > /dev/null 2>&1
        python3 - "$out" "$op" "$dtype" "$lower" "$n" <<'PY'
import sys, numpy as np
d, op, dtype, lower, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == 'true', int(sys.argv[5])
A = np.load(d + '/gpu/A.npy').astype(np.float64)
tol = 1e-4 if dtype == 'f32' else 1e-11
if op == 'potrf':
    L = np.linalg.cholesky(A)
    want = L if lower else np.swapaxes(L, -1, -2)
    g, r = np.load(d + '/gpu/L.npy'), np.load(d + '/ref/L.npy')
    ok = np.allclose(g, want, atol=tol) and np.allclose(g, r, atol=tol) and not np.load(d + '/gpu/info.npy').any()
    err = np.abs(g - want).max()
elif op == 'geqrf':
    # R against LAPACK's through NumPy (the same signs), QR and tau against the reference.
    g, r = np.load(d + '/gpu/QR.npy').astype(np.float64), np.load(d + '/ref/QR.npy')
    R = np.linalg.qr(A, mode='r')
    err = np.abs(np.triu(g) - R).max() / np.abs(A).max()
    ok = err < 50 * n * (1.2e-7 if dtype == 'f32' else 2.3e-16) and np.allclose(g, r, atol=100 * tol) \
        and np.allclose(np.load(d + '/gpu/tau.npy'), np.load(d + '/ref/tau.npy'), atol=100 * tol)
elif op == 'gels':
    B = np.load(d + '/gpu/B.npy').astype(np.float64)
    g, r = np.load(d + '/gpu/X.npy').astype(np.float64), np.load(d + '/ref/X.npy')
    X = np.linalg.pinv(A) @ B
    err = np.abs(g - X).max() / np.abs(X).max()
    ok = err < 1e3 * n * (1.2e-7 if dtype == 'f32' else 2.3e-16) and np.allclose(g, r, atol=100 * n * tol) \
        and not np.load(d + '/gpu/info.npy').any()
elif op == 'gemm':
    B = np.load(d + '/gpu/B.npy').astype(np.float64)
    g, r = np.load(d + '/gpu/C.npy'), np.load(d + '/ref/C.npy')
    err = np.abs(g - A @ B).max()
    ok = err < n * (1e-5 if dtype == 'f32' else 1e-13) and np.allclose(g, r, atol=n * tol)
else:
    # P A = L U rebuilt from the GPU's factors and pivots, against A (NumPy), and the factors against the reference.
    g, r = np.load(d + '/gpu/LU.npy').astype(np.float64), np.load(d + '/ref/LU.npy')
    piv = np.load(d + '/gpu/ipiv.npy')
    L = np.tril(g, -1) + np.eye(n); U = np.triu(g)
    PA = A.copy()
    for e in range(A.shape[0]):
        for s in range(n):
            PA[e, [s, piv[e, s] - 1]] = PA[e, [piv[e, s] - 1, s]]
    err = np.abs(L @ U - PA).max() / np.abs(A).max()
    ok = err < 50 * n * (1.2e-7 if dtype == 'f32' else 2.3e-16) and np.array_equal(piv, np.load(d + '/ref/ipiv.npy')) \
        and np.allclose(g, r, atol=100 * tol) and not np.load(d + '/gpu/info.npy').any()
print(f'{op} {dtype} n={n} {"lower" if lower else "upper"}:', 'OK' if ok else f'MISMATCH {err:.2e}')
PY
      done
    done
  done
done | tee -a "$out/check.txt"

echo "== bench"
for op in $OPS; do
  [ "$op" = gels ] && continue
  for n in $SIZES; do
    count=$(( n > 16 ? 2000 : 20000 ))
    for dtype in f64 f32; do
      program "$op" "$count" "$n" "$dtype" true "$out/bench.json"
      $F explain "$out/bench.json" | grep "kernel 0:" | head -1
      $F bench "$out/bench.json" --repeat 20 --json "$out/bench_${op}_${dtype}_$n.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
    done
  done
  python3 .gpu/peers.py "$op" | tee "$out/peers_$op.txt"
done

echo "== summary"
python3 - "$out" "$SIZES" "$OPS" <<'PY' | tee "${OUT:-$out}/summary.txt"
import json, sys, os
out, sizes, ops = sys.argv[1], list(map(int, sys.argv[2].split())), sys.argv[3].split()
checks = open(os.path.join(out, "check.txt")).read()
print(f"checks against NumPy and the reference: {checks.count(': OK')} OK, {checks.count('MISMATCH')} MISMATCH")
flops = {"potrf": lambda n: n ** 3 / 3, "getrf": lambda n: 2 * n ** 3 / 3, "geqrf": lambda n: 4 * n ** 3 / 3, "gemm": lambda n: 2 * n ** 3}
for op in ops:
    if op == "gels":
        continue
    peers = {}
    for l in open(os.path.join(out, f"peers_{op}.txt")):
        if l.startswith("{") and '"case"' in l:
            j = json.loads(l); peers[j["case"]] = j
    for dtype in ("f64", "f32"):
        for n in sizes:
            count = 2000 if n > 16 else 20000
            ms = json.load(open(os.path.join(out, f"bench_{op}_{dtype}_{n}.json")))["total"]["median_s"] * 1e3
            gflops = count * flops[op](n) / ms / 1e6
            p = peers.get(f"{dtype} n={n} batch={count}")
            ratio = f", torch {p['GFLOPs']:.1f} GFLOP/s ({p['ms']:.3f} ms): {gflops / p['GFLOPs']:.1f}x" if p else ""
            print(f"{op} {dtype} n={n} batch={count}: {ms:.4f} ms = {gflops:.1f} GFLOP/s{ratio}")
PY
