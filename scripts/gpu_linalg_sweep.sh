#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# the linalg plugin's plans against each other, each case under every FUGUE_LINALG_TUNING setting of
# TUNINGS (";"-separated, "" for the table built in), beside peers.py in the same call; the programs and
# batches of scripts/gpu_linalg.sh (20,000 matrices up to n = 16, 2,000 above). Each setting's results are
# checked against the reference first (fugue run --reference, the factor within 1e-4 / 1e-10).
# PEERS=0 leaves peers.py out. KNOB=FUGUE_TUNING sets the core's launch tuning instead of the plugin's.
#   OPS="potrf gemm" SIZES="32 64 128" TUNINGS="grid_order=16;;gemm_block=8" scripts/gpu_linalg_sweep.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu_sweep
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
SIZES=${SIZES:-"32 64 128"}
OPS=${OPS:-"potrf gemm"}
TUNINGS=${TUNINGS:-""}
KNOB=${KNOB:-FUGUE_LINALG_TUNING}
DTYPES=${DTYPES:-"f64 f32"}
source scripts/linalg_programs.sh  # program op count n dtype lower file

IFS=';' read -r -a settings <<< "$TUNINGS;"
[ ${#settings[@]} -eq 0 ] && settings=("")
for op in $OPS; do
  for n in $SIZES; do
    count=$(( n > 16 ? 2000 : 20000 ))
    for dtype in $DTYPES; do
      program "$op" "$count" "$n" "$dtype" true "$out/bench.json"
      program "$op" 7 "$n" "$dtype" true "$out/check.json"
      rm -rf "$out/ref"
      $F run "$out/check.json" --out "$out/ref" --reference > "$out/ref.txt" 2>&1 || cat "$out/ref.txt"
      for tuning in "${settings[@]}"; do
        export "$KNOB=$tuning"
        rm -rf "$out/gpu"
        $F run "$out/check.json" --out "$out/gpu" > "$out/run.txt" 2>&1 || cat "$out/run.txt"
        check=$(python3 - "$out" "$dtype" <<'PY'
import sys, glob, os, numpy as np
d, dtype = sys.argv[1], sys.argv[2]
tol = 1e-4 if dtype in ('f32', 'c64') else 1e-10
refs = glob.glob(d + '/ref/*.npy')
bad = [os.path.basename(f) for f in refs
       if not os.path.exists(d + '/gpu/' + os.path.basename(f))
       or not np.allclose(np.load(f), np.load(d + '/gpu/' + os.path.basename(f)), atol=tol * 10, rtol=tol)]
print('NO REFERENCE' if not refs else 'OK' if not bad else 'MISMATCH ' + ' '.join(bad))
PY
)
        variant=$($F explain "$out/bench.json" 2>&1 | grep -m1 "plan:" | sed 's/^ *//' | cut -c1-150)
        $F bench "$out/bench.json" --repeat 20 --json "$out/b.json" > "$out/bench.txt" 2>&1 || cat "$out/bench.txt"
        ms=$(python3 -c "import json; print('%.4f' % (json.load(open('$out/b.json'))['total']['median_s'] * 1e3))")
        echo "$op $dtype n=$n batch=$count tuning=[$tuning]: $ms ms, check $check; $variant"
      done
      unset "$KNOB"
    done
  done
  [ "${PEERS:-1}" = 1 ] && python3 .gpu/peers.py "$op" | grep '"case"'
done
