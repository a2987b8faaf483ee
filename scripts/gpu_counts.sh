#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# what a count left to the run (ABI 2.21, `{"capacity": n}`) costs a product. For each generated matrix
# (MATRICES, scripts/sparse_matrices.sh's names) and layout (LAYOUTS), two programs run `sparse.spmv`
# COUNT times in a loop: one reads the matrix declared in the layout ("from" the generator), the other
# converts it from a csr into the layout declared with a capacity (CAPACITY times its count) and multiplies
# that. Each is timed by `fugue bench` (wall time on the host, medians of REPEAT) with the loop run COUNT
# times and not at all, so (T(COUNT) - T(0)) / COUNT is a product's time within a loop; the two products'
# y are checked equal first. f32. Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   MATRICES="poisson512 poisson2048" LAYOUTS="csr coo ell dia sell hyb" scripts/gpu_counts.sh
# CONSUMERS=1 adds r = x - y and z = r * r to the loop (the outputs then z): where the product is the
# generated kernel (dia, ell and bcsr on GPUs; ABI 2.22 for a counted one), they join it.
set -u
[ -f .gpu/env.sh ] && source .gpu/env.sh
F=${F:-.gpu/build/host/fugue}
out=${OUT:-/tmp/fugue_gpu}/counts
mkdir -p "$out"
export FUGUE_CACHE_DIR=${FUGUE_CACHE_DIR:-/tmp/fugue_cache} FUGUE_PLUGIN_PATH=
MATRICES=${MATRICES:-"poisson512 poisson2048"}
LAYOUTS=${LAYOUTS:-"csr coo ell dia sell hyb"}
COUNT=${COUNT:-200}
CONSUMERS=${CONSUMERS:-0}
if [ "$CONSUMERS" = 1 ]; then
  after=', {"op": "array.sub", "out": ["r"], "in": ["x", "y"]}, {"op": "array.mul", "out": ["z"], "in": ["r", "r"]}'; result=z
else
  after=''; result=y
fi
REPEAT=${REPEAT:-7}
source scripts/sparse_matrices.sh
$F devices | head -3

# The layout's count key and its extra keys (hyb: its width; sell: its slices).
count_key() { case $1 in csr|coo|hyb) echo nnz ;; ell|bell) echo width ;; sell) echo stored ;; dia) echo diagonals ;; *) echo blocks ;; esac; }
extra_of() { case $1 in hyb) echo ', "width": 4' ;; sell) echo ', "slice": 32, "sigma": 1' ;; *) echo "" ;; esac; }

program() {  # matrix layout counted(0/1) loops file
  local m=$1 layout=$2 counted=$3 loops=$4 file=$5 symbols body
  if [ "$counted" = 1 ]; then
    symbols="\"S\": {\"kind\": \"csr\", \"dtype\": \"f32\", \"from\": $(sparse_source $m)},
    \"A\": {\"kind\": \"$layout\", \"dtype\": \"f32\", \"shape\": [$(cat "$out/rows_$m"), $(cat "$out/rows_$m")], \"$(count_key $layout)\": {\"capacity\": $(cat "$out/capacity_${m}_$layout")}$(extra_of $layout)}"
    body="{\"op\": \"sparse.convert\", \"out\": [\"A\"], \"in\": [\"S\"]},"
  else
    symbols="\"A\": {\"kind\": \"$layout\", \"dtype\": \"f32\", \"from\": $(sparse_source $m)$(extra_of $layout)}"
    body=""
  fi
  cat > "$file" <<JSON
{"fugue": 1, "symbols": {$symbols,
  "loops": {"kind": "const", "value": $loops},
  "x": {"kind": "array", "dtype": "f32", "shape": [$(cat "$out/rows_$m")], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [$body {"for": "k", "count": "loops", "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}$after]}],
 "outputs": {"$result": "y.npy"}}
JSON
}

: > "$out/table.txt"
for m in $MATRICES; do
  for layout in $LAYOUTS; do
    # The layout's count as reading the matrix gives it (its parts' lengths), and the rows (the .mtx header).
    part=data; [ "$layout" = hyb ] && part=coo_data; [ "$layout" = dia ] && part=offsets; [ "$layout" = bcsr ] && part=col
    cat > "$out/shape.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$layout", "dtype": "f32", "from": $(sparse_source $m)$(extra_of $layout)}}, "body": [],
 "outputs": {"A": "A.mtx", "A.$part": "part.npy"}}
JSON
    rm -rf "$out/shape"; $F run "$out/shape.json" --out "$out/shape" > "$out/shape.txt" 2>&1
    read rows count < <(python3 - "$out/shape" "$layout" <<'PY'
import sys, numpy as np
d, layout = sys.argv[1:3]
with open(d + "/A.mtx") as f:
    header = next(l for l in f if not l.startswith("%"))
rows = int(header.split()[0])
n = np.load(d + "/part.npy").size
print(rows, n // rows if layout == "ell" else n)
PY
)
    if [ -z "${rows:-}" ] || [ -z "${count:-}" ]; then echo "$m $layout: no count found"; tail -5 "$out/shape.txt"; continue; fi
    echo "$rows" > "$out/rows_$m"
    slice=32; cap=$(( count + count / 8 + 1 )); [ "$layout" = sell ] && cap=$(( (cap + slice - 1) / slice * slice ))
    echo $cap > "$out/capacity_${m}_$layout"
    # The products' y, declared against counted, equal.
    for c in 0 1; do
      program $m $layout $c 1 "$out/p$c.json"
      rm -rf "$out/y$c"; $F run "$out/p$c.json" --out "$out/y$c" > "$out/run$c.txt" 2>&1 || { echo "$m $layout counted=$c failed"; tail -3 "$out/run$c.txt"; }
    done
    same=$(python3 -c "
import numpy as np, sys
a, b = np.load('$out/y0/y.npy'), np.load('$out/y1/y.npy')
print('y equal' if a.shape == b.shape and np.array_equal(a, b) else 'y DIFFER: max %g' % np.max(np.abs(a - b)))" 2>&1)
    line="$m $layout ($(count_key $layout) $count, capacity $cap): $same"
    for c in 0 1; do
      for loops in 0 $COUNT; do
        program $m $layout $c $loops "$out/b.json"
        $F bench "$out/b.json" --repeat $REPEAT > "$out/bench.txt" 2>&1
        t=$(sed -n 's/^wall ms per run.*median \([0-9.]*\).*/\1/p' "$out/bench.txt")
        eval "t_${c}_${loops}=${t:-0}"
      done
    done
    eval "d0=\${t_0_$COUNT:-0} d1=\${t_1_$COUNT:-0}"
    per=$(python3 -c "print('declared %.4f ms, counted %.4f ms a product (%.2fx)' % (($d0-${t_0_0:-0})/$COUNT, ($d1-${t_1_0:-0})/$COUNT, (($d1-${t_1_0:-0})/max($d0-${t_0_0:-0},1e-9))))" 2>&1)
    echo "$line; $per" | tee -a "$out/table.txt"
  done
done
echo "== table"; cat "$out/table.txt"
