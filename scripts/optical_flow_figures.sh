#!/usr/bin/env bash
# The optical-flow figures: accuracy of every program on RubberWhale and Dimetrodon, time per solver
# iteration at Middlebury size and on a 4096 x 4096 synthetic pair (fused and --no-fuse), and cold vs
# warm start-up. Runs on whatever device `fugue` picks; on the GPU machine, from the repository root
# with the bundle in .gpu (see scripts/gpu_fusion.sh), it uses the bundle.
#   FIGURES="accuracy speed startup" (default all); SIDE=4096 (synthetic size); N1/N2 iteration counts;
#   SOLVERS="hs_jacobi hs_block ..." (default all five) for the speed figures.
set -u
if [ -f .gpu/env.sh ] && command -v nvidia-smi > /dev/null; then source .gpu/env.sh; F=.gpu/build/host/fugue
else F=build/host/fugue; fi
work=${OUT:-/tmp/fugue_flow}/work
mkdir -p "$work"
export FUGUE_CACHE_DIR=${FUGUE_CACHE_DIR:-/tmp/fugue_flow_cache}
FIGURES=${FIGURES:-accuracy speed startup}
SIDE=${SIDE:-4096}
N1=${N1:-50}
N2=${N2:-150}
SOLVERS=${SOLVERS:-hs_jacobi hs_block hs_cg hs_redblack lk}
D=examples/optical_flow
DATA=${DATA:-../shared/data/middlebury}
$F devices | grep default

scalar() {  # the one number in a .npy file (no numpy needed)
  python3 - "$1" <<'PY'
import ast, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<H", raw[8:10])[0]
header = ast.literal_eval(raw[10:10 + n].decode())
code = {"<f4": "<f", "<f8": "<d", "<i8": "<q", "<i4": "<i"}[header["descr"]]
print("%.4f" % struct.unpack(code, raw[10 + n:10 + n + struct.calcsize(code)])[0])
PY
}

if [[ " $FIGURES " == *" accuracy "* ]]; then
  echo "== accuracy (AAE degrees, EPE pixels; CG: iterations run per level, finest last)"
  printf "%-12s %-20s %8s %8s  %s\n" data program AAE EPE notes
  for data in RubberWhale Dimetrodon; do
    for p in hs_jacobi hs_block hs_cg hs_redblack lk hs_jacobi_4level hs_block_4level hs_cg_4level hs_redblack_4level lk_4level; do
      o=$work/$data/$p
      mkdir -p "$work/$data"
      if ! $F run $D/$p.json --out "$o" --set frame1=$DATA/$data/frame10.png --set frame2=$DATA/$data/frame11.png \
           --set truth=$DATA/$data/flow10.flo > "$o.log" 2>&1; then
        echo "$data $p FAILED"; tail -3 "$o.log"; continue
      fi
      notes=""
      for f in "$o"/cg_iterations_level*.npy; do [ -f "$f" ] && notes="$notes $(basename $f .npy | sed 's/cg_iterations_//')=$(( $(scalar $f | cut -d. -f1) + 1 ))"; done
      printf "%-12s %-20s %8s %8s %s\n" $data $p "$(scalar $o/aae.npy)" "$(scalar $o/epe.npy)" "$notes"
    done
  done
fi

total() {  # median device seconds of one run of the program, from bench's JSON
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total']['median_s'])" "$1"
}
per_iteration() {  # label program extra-options...: (T(N2) - T(N1)) / (N2 - N1), fused and --no-fuse
  local label=$1 prog=$2; shift 2
  local row="$label"
  for mode in fused nofuse; do
    local flag=""; [ $mode = nofuse ] && flag=--no-fuse
    for n in $N1 $N2; do
      $F bench $D/$prog.json --repeat 3 --set iterations=$n "$@" $flag --json $work/b_${label}_${mode}_$n.json > $work/b.log 2>&1 \
        || { echo "$label $mode FAILED"; tail -3 $work/b.log; }
    done
    local t=$(python3 -c "import json,sys; a,b=(json.load(open(f))['total']['median_s'] for f in sys.argv[1:3]); print('%.4f' % ((b-a)/($N2-$N1)*1e3))" \
      $work/b_${label}_${mode}_$N1.json $work/b_${label}_${mode}_$N2.json)
    row="$row $t"
  done
  echo "$row" | awk '{printf "%-34s %12s %12s %8.2fx\n", $1, $2, $3, $3/$2}'
}

if [[ " $FIGURES " == *" speed "* ]]; then
  echo "== time per iteration (ms; device time from OpenCL events; LK: per warp)"
  printf "%-34s %12s %12s %9s\n" solver fused no-fuse fusion
  mid="--set frame1=$DATA/RubberWhale/frame10.png --set frame2=$DATA/RubberWhale/frame11.png --set truth=$DATA/RubberWhale/flow10.flo"
  # CG never stops early here (tolerance 0), so every count runs its iterations.
  nostop() { [ $1 = hs_cg ] && echo "--set cg_tolerance=0"; }
  for p in $SOLVERS; do per_iteration "${p}_584x388" $p $mid $(nostop $p); done
  syn=$work/synthetic_$SIDE
  $F run $D/synthetic_pair.json --set side=$SIDE --out $syn > $work/syn.log 2>&1 || { echo "synthetic pair FAILED"; tail -3 $work/syn.log; }
  big="--set frame1=$syn/frame1.npy --set frame2=$syn/frame2.npy --set truth=$syn/truth.flo"
  for p in $SOLVERS; do per_iteration "${p}_${SIDE}x${SIDE}" $p $big $(nostop $p); done
fi

if [[ " $FIGURES " == *" startup "* ]]; then
  echo "== start-up: whole run of hs_block_4level (RubberWhale), cold kernel cache, then warm"
  # Only Fugue's own cache may act: the drivers' caches (NVIDIA's, PoCL's) are switched off.
  export FUGUE_CACHE_DIR=$work/cold_cache CUDA_CACHE_DISABLE=1 POCL_KERNEL_CACHE=0
  rm -rf "$FUGUE_CACHE_DIR"
  for run in cold warm; do
    s=$(date +%s.%N)
    $F run $D/hs_block_4level.json --out $work/startup --stats > $work/startup_$run.log 2>&1
    e=$(date +%s.%N)
    echo "$run: $(python3 -c "print('%.2f s' % ($e - $s))"), $(grep '^programs:' $work/startup_$run.log)"
  done
fi
