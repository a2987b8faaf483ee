#!/usr/bin/env bash
# Runs on a GPU machine with several GPUs (nvidia-h200-x2, -x4; see ../shared/gpu/README.md), from the
# repository root, with the bundle in .gpu: batched LU and Cholesky of 32 x 32 f64 on one GPU and split
# over all of them (wall time on the host, the same measure for both), the split checked against one GPU
# at 20,000 entries, and where a split starts to pay (SWEEP entries of LU, split_bytes=0); then the
# stencils (the periodic 5-point stencil, Jacobi, the biharmonic chain) on 32768^2 f32, each device
# holding its neighbours' rows, checked against one GPU at 4096^2; with PARTS=spmv, y = A x on a
# Poisson matrix of 10^8 entries, each device its rows of A, checked against one GPU at 1024^2, and
# conjugate gradients on it (SPMV_FORMATS=" " times CG alone).
#   PARTS="batched stencils spmv" SWEEP="250 1000 4000 16000 64000" scripts/gpu_several_devices.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}/several_devices
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
echo "GPUs: $($F devices | grep -c ' gpu ')"
wall_one() { $F bench "$@" --device gpu | grep "^wall ms per run" | sed 's/.*median \([0-9.]*\).*/\1/'; }
wall_all() { $F bench "$@" --device gpu:all | grep "^wall ms:" | sed 's/.*median \([0-9.]*\).*/\1/'; }
two_gpus=$($F devices | awk '$2 == "gpu" {print $1}' | head -2 | paste -sd,)
wall_two() { $F bench "$@" --device "$two_gpus" | grep "^wall ms:" | sed 's/.*median \([0-9.]*\).*/\1/'; }
compare() {  # compare OUT P: every output of one GPU against all of them
  python3 - "$1" "$2" <<'PY'
import sys, glob, os, numpy as np
out, p = sys.argv[1:]
for f in sorted(glob.glob(f"{out}/one_{p}/*.npy")):
    a, b = np.load(f), np.load(f.replace("/one_", "/all_"))
    print(f"{p} {os.path.basename(f)} {a.shape}: max |one GPU - all| = {float(np.max(np.abs(a.astype(float) - b.astype(float)))):.3g}")
PY
}
if [[ " ${PARTS:-batched stencils} " == *" spmv "* ]]; then
  # y = A x ITERATIONS times on the 5-point Poisson matrix of GRID^2 rows (4473^2: 100.0 M entries), f32, in
  # the automatically chosen layout and in csr; each device its rows of A and y, x whole. Checked at 1024^2.
  spmv() {  # spmv GRID FORMAT ITERATIONS FILE
    local kind='"sparse", "format": "auto", "reads": -1'  # chosen for the products bench times, not the conversion
    [[ $2 == auto ]] || kind="\"$2\""
    cat > "$4" <<EOF
{"fugue": 1, "symbols": {"iterations": {"kind": "const", "value": $3},
 "A": {"kind": $kind, "dtype": "f32", "from": {"poisson": {"grid": [$1, $1]}}},
 "x": {"kind": "array", "dtype": "f32", "shape": [$(($1 * $1))], "from": {"random": {"seed": 1, "low": -1, "high": 1}}}},
 "body": [{"for": "i", "count": "iterations", "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}],
 "outputs": {"y": "y.npy"}}
EOF
  }
  for format in ${SPMV_FORMATS:-auto csr}; do
    spmv 1024 $format 1 "$out/spmv_check.json"
    $F run "$out/spmv_check.json" --device gpu --out "$out/one_spmv_$format" || exit 1
    FUGUE_TUNING=split_bytes=0 $F run "$out/spmv_check.json" --device gpu:all --stats --out "$out/all_spmv_$format" |
      grep -E "split by rows|whole on every" || exit 1
    compare "$out" "spmv_$format"
    spmv ${SPMV_GRID:-4473} $format ${SPMV_ITERATIONS:-100} "$out/spmv_$format.json"
    $F explain "$out/spmv_$format.json" --device gpu:all | grep -E "placement|split by rows|sparse.spmv" | head -5
    args="$out/spmv_$format.json --repeat 5"
    echo "spmv $format grid=${SPMV_GRID:-4473}^2 iterations=${SPMV_ITERATIONS:-100} one GPU $(wall_one $args) ms," \
         "two ($two_gpus) $(wall_two $args) ms, all $(wall_all $args) ms"
  done
  # Conjugate gradients (CG_ITERATIONS, 100) on the same matrix: each device keeps current the rows of the
  # direction p its rows of A reach, got from its neighbours after each update. Checked at 1024^2.
  cg() {  # cg GRID FILE
    python3 - "$2" "$1" ${CG_ITERATIONS:-100} <<'PY'
import json, sys
path, grid, iterations = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
op = lambda name, out, *ins: {"op": "array." + name, "out": [out], "in": list(ins)}
json.dump({"fugue": 1, "symbols": {
    "A": {"kind": "sparse", "format": "auto", "reads": -1, "dtype": "f32", "from": {"poisson": {"grid": [grid, grid]}}},
    "b": {"kind": "array", "dtype": "f32", "shape": [grid * grid], "from": {"random": {"seed": 2}}},
    "x": {"kind": "array", "dtype": "f32", "shape": [grid * grid], "from": {"zeros": {}}}},
  "body": [op("copy", "r", "b"), op("copy", "p", "b"), op("dot", "rs", "r", "r"),
           {"for": "k", "count": iterations, "body": [
             {"op": "sparse.spmv", "out": ["Ap"], "in": ["A", "p"]}, op("dot", "pAp", "p", "Ap"), op("div", "alpha", "rs", "pAp"),
             op("mul", "ap", "p", "alpha"), op("add", "x", "x", "ap"), op("mul", "aAp", "Ap", "alpha"), op("sub", "r", "r", "aAp"),
             op("dot", "rs_new", "r", "r"), op("div", "beta", "rs_new", "rs"), op("mul", "bp", "p", "beta"), op("add", "p", "r", "bp"),
             op("dot", "rs", "r", "r")]}],
  "outputs": {"x": "x.npy", "rs": "rs.npy"}}, open(path, "w"))
PY
  }
  cg 1024 "$out/cg_check.json"
  $F run "$out/cg_check.json" --device gpu --out "$out/one_cg" || exit 1
  FUGUE_TUNING=split_bytes=0 $F run "$out/cg_check.json" --device gpu:all --stats --out "$out/all_cg" | grep -E "gathered|combined" || exit 1
  compare "$out" cg
  cg ${SPMV_GRID:-4473} "$out/cg.json"
  $F explain "$out/cg.json" --device gpu:all | grep -E "^placement" | cut -c1-300
  # Split all the same (by default each meeting must be worth 512 MB of the split's arrays): what it costs.
  FUGUE_TUNING=split_bytes=0 $F run "$out/cg.json" --device gpu:all --stats | grep -E "gathered [0-9]|combined [0-9]|^device|sparse|core.gather"
  args="$out/cg.json --repeat 3"
  echo "cg grid=${SPMV_GRID:-4473}^2 ${CG_ITERATIONS:-100} iterations one GPU $(wall_one $args) ms, split anyway: two ($two_gpus)" \
       "$(FUGUE_TUNING=split_bytes=0 wall_two $args) ms, all $(FUGUE_TUNING=split_bytes=0 wall_all $args) ms"
fi
if [[ " ${PARTS:-batched stencils} " == *" stencils "* ]]; then
  for p in stencil5 jacobi stencil_chain; do
    $F run examples/bench/$p.json --set side=4096 --device gpu --out "$out/one_$p" || exit 1
    FUGUE_TUNING=split_bytes=0 $F run examples/bench/$p.json --set side=4096 --device gpu:all --stats --out "$out/all_$p" |
      grep -E "rows held|holds|traded" || exit 1
    compare "$out" "$p"
  done
  for run in ${STENCIL_RUNS:-stencil5:10 stencil5:100 jacobi:100 stencil_chain:100}; do
    p=${run%:*} it=${run#*:}
    args="examples/bench/$p.json --set side=32768 --set iterations=$it --repeat 5"
    echo "$p side=32768 iterations=$it one GPU $(wall_one $args) ms, two ($two_gpus) $(wall_two $args) ms," \
         "all $(wall_all $args) ms"
  done
fi
[[ " ${PARTS:-batched stencils} " == *" batched "* ]] || exit 0
for p in lu_batch cholesky_batch; do
  $F run examples/bench/$p.json --set entries=20000 --device gpu --out "$out/one_$p" || exit 1
  FUGUE_TUNING=split_bytes=0 $F run examples/bench/$p.json --set entries=20000 --device gpu:all --out "$out/all_$p" || exit 1
  compare "$out" "$p"
done
for n in ${SWEEP:-250 1000 4000 16000 64000}; do
  echo "lu_batch entries=$n one GPU $(wall_one examples/bench/lu_batch.json --set entries=$n --repeat 20) ms," \
       "all $(FUGUE_TUNING=split_bytes=0 wall_all examples/bench/lu_batch.json --set entries=$n --repeat 20) ms"
done
for p in lu_batch cholesky_batch; do
  echo "$p entries=1000000 one GPU $(wall_one examples/bench/$p.json --repeat 5) ms, all $(wall_all examples/bench/$p.json --repeat 5) ms"
done
