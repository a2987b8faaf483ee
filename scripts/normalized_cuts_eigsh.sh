#!/usr/bin/env bash
# Normalized cuts of a whole Middlebury frame (examples/normalized_cuts/normalized_cuts_full.json, 388 x 584
# pixels, 226,592 unknowns, 18.4 M entries in 81 diagonals) timed with `fugue bench`, beside SciPy's eigsh
# (ARPACK's implicitly restarted Lanczos) on the same normalized Laplacian, which the run writes as W.npz:
# Fugue's steps, its time per Lanczos step and to the 9 eigenvectors, eigsh's time to the same 9
# eigenvalues, and both sets of values side by side. Also the halved frame's example, for its figures.
# On this machine (PoCL) from the repository root after scripts/setup.sh; on the GPU machine (see
# ../shared/gpu/README.md) with the bundle in .gpu and the frame copied there:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   cp ../shared/data/middlebury/RubberWhale/frame10.png .gpu/
#   GPU=1 scripts/normalized_cuts_eigsh.sh
# NAMES picks the examples, REPEAT fugue bench's runs, EIGSH_RUNS eigsh's (the fastest is shown; EIGSH=0: none).
set -u
cd "$(dirname "$0")/.."
if [ "${GPU:-0}" = 1 ]; then
  source .gpu/env.sh
  F=.gpu/build/host/fugue
  frame=$PWD/.gpu/frame10.png
  python=python3
else
  F=build/host/fugue
  frame=$(realpath ../shared/data/middlebury/RubberWhale/frame10.png)
  python=/usr/bin/python3  # Debian's, with NumPy and SciPy
fi
out=${OUT:-/tmp/fugue_normalized_cuts}
mkdir -p "$out"
export FUGUE_CACHE_DIR=${FUGUE_CACHE_DIR:-/tmp/fugue_cache} FUGUE_PLUGIN_PATH=
$F devices | head -3
for name in ${NAMES:-normalized_cuts_full normalized_cuts}; do
  echo "== $name"
  sed "s#../../../shared/data/middlebury/RubberWhale/frame10.png#$frame#" examples/normalized_cuts/$name.json > "$out/$name.json"
  # The same program, writing its Laplacian too (for eigsh).
  $python - "$out/$name.json" "$out/${name}_w.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["outputs"]["W"] = "W.npz"
json.dump(p, open(sys.argv[2], "w"))
PY
  rm -rf "$out/$name"
  $F run "$out/${name}_w.json" --out "$out/$name" > "$out/run.txt" 2>&1 || { cat "$out/run.txt"; continue; }
  $F bench "$out/$name.json" --repeat "${REPEAT:-3}" --json "$out/$name.bench.json" > "$out/bench.txt" 2>&1 || { cat "$out/bench.txt"; continue; }
  grep -E "^total|^wall" "$out/bench.txt"
  $python - "$out/$name" "$out/$name.bench.json" <<'PY'
import json, os, sys, time
import numpy as np
d, bench = sys.argv[1], json.load(open(sys.argv[2]))
steps, theta = int(np.load(d + "/steps.npy")), np.sort(np.load(d + "/theta.npy"))
kernels = bench["kernels"]
total = bench["total"]["median_s"]
# A Lanczos step: the product with the step's fused vector work, the puts and the norm, each run once a
# step; the Ritz values every 20 steps, the Ritz vectors' product and the picture once.
once = [k for k in kernels if "affinity" in k["name"] or "linalg.gemm" in k["name"] or "ritz" in k["name"]
        or "array.reduce" in k["name"] or "array.cast" in k["name"] or "array.reshape" in k["name"]]
step = total - sum(k["median_s"] for k in once)
print(f"fugue: {steps} steps, {total * 1e3:.1f} ms of kernels to the 9 eigenvectors (median of {bench['repetitions']}); "
      f"a Lanczos step {step / steps * 1e6:.1f} us; the Ritz vectors' product "
      f"{sum(k['median_s'] for k in kernels if 'linalg.gemm' in k['name']) * 1e3:.2f} ms")
if os.environ.get("EIGSH", "1") == "0":
    sys.exit(0)
try:
    import scipy, scipy.sparse, scipy.sparse.linalg
except ImportError:
    print("eigsh: no SciPy here")
    sys.exit(0)
L = scipy.sparse.load_npz(d + "/W.npz").tocsr()
v0 = np.random.default_rng(1).uniform(-1, 1, L.shape[0])
times = []
for _ in range(int(os.environ.get("EIGSH_RUNS", "2"))):
    t = time.perf_counter()
    values = scipy.sparse.linalg.eigsh(L, k=9, which="SA", tol=1e-6, v0=v0, return_eigenvectors=True)[0]
    times.append(time.perf_counter() - t)
values = np.sort(values)
print(f"eigsh (SciPy {scipy.__version__}, which='SA', tol 1e-6): {min(times):.2f} s on {L.shape[0]} unknowns, {L.nnz} entries; "
      f"Fugue {min(times) / total:.1f}x faster")
print("fugue theta:", " ".join(f"{x:.8f}" for x in theta))
print("eigsh      :", " ".join(f"{x:.8f}" for x in values))
print(f"largest difference {np.abs(theta - values).max():.2e}")
PY
done
