#!/usr/bin/env bash
# sparse.convert on a GPU, in one call: the conformance suite's calls of sparse.convert on the device,
# then Poisson matrices (GRIDS, default "2048 4096") converted between csr, coo, ell and dia on the
# device (and from csr into hyb), and from csr into bdia on the host for contrast. For each: the conversion's
# kernels (fugue run --stats), fugue run's wall time against the same program without the conversion,
# and the product of the result against the source's (max |difference| / max |y|). Run from the
# repository root with the bundle in .gpu (../shared/gpu/README.md); FUGUE=path runs another build.
set -euo pipefail
if [ -z "${FUGUE:-}" ]; then
  source .gpu/env.sh
  FUGUE=.gpu/build/host/fugue
fi
GRIDS=${GRIDS:-"2048 4096"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$FUGUE" devices
"$FUGUE" conformance sparse --op sparse.convert | tail -n 14

# program NAME SOURCE_KIND TARGET_DECLARATION|none: y = A x, and z = B x for B = convert(A).
program() {
  local name=$1 source=$2 target=$3 g=$4
  local n=$((g * g))
  local b="" body='{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}' outputs='"y": "y.npy"'
  if [ "$target" != none ]; then
    b=", \"B\": $target"
    body="{\"op\": \"sparse.convert\", \"out\": [\"B\"], \"in\": [\"A\"]}, $body, {\"op\": \"sparse.spmv\", \"out\": [\"z\"], \"in\": [\"B\", \"x\"]}"
    outputs="$outputs, \"z\": \"z.npy\""
  fi
  cat > "$work/$name.json" <<JSON
{"fugue": 1, "symbols": {
  "A": {"kind": "$source", "dtype": "f32", "from": {"poisson": {"grid": [$g, $g]}}},
  "x": {"kind": "array", "dtype": "f32", "shape": [$n], "from": {"random": {"seed": 1, "low": -1, "high": 1}}}$b},
 "body": [$body],
 "outputs": {$outputs}}
JSON
}

now() { date +%s.%N; }
printf '\n%-8s %-22s %12s %14s %12s\n' grid conversion "kernels ms" "added wall s" "product err" > "$work/table"
for g in $GRIDS; do
  n=$((g * g)); nnz=$((5 * n - 4 * g)); hyb=$(((g - 2) * (g - 2)))  # hyb of width 4: the inner rows' fifth entries
  shape="\"shape\": [$n, $n]"
  dia="{\"kind\": \"dia\", \"dtype\": \"f32\", $shape, \"diagonals\": 5}"
  ell="{\"kind\": \"ell\", \"dtype\": \"f32\", $shape, \"width\": 5}"
  coo="{\"kind\": \"coo\", \"dtype\": \"f32\", $shape, \"nnz\": $nnz}"
  csr="{\"kind\": \"csr\", \"dtype\": \"f32\", $shape, \"nnz\": $nnz}"
  bdia="{\"kind\": \"bdia\", \"dtype\": \"f32\", $shape, \"diagonals\": 5, \"bands\": 3}"
  for k in csr dia coo ell; do program "base_$k" "$k" none "$g"; done
  program csr_dia csr "$dia" "$g"
  program csr_ell csr "$ell" "$g"
  program csr_coo csr "$coo" "$g"
  program dia_csr dia "$csr" "$g"
  program coo_csr coo "$csr" "$g"
  program ell_csr ell "$csr" "$g"
  program coo_dia coo "$dia" "$g"
  program dia_ell dia "$ell" "$g"
  program csr_hyb csr "{\"kind\": \"hyb\", \"dtype\": \"f32\", $shape, \"width\": 4, \"nnz\": $hyb}" "$g"
  program csr_bdia_host csr "$bdia" "$g"
  declare -A wall
  for p in base_csr base_dia base_coo base_ell csr_dia csr_ell csr_coo dia_csr coo_csr ell_csr coo_dia dia_ell csr_hyb csr_bdia_host; do
    best=""
    for rep in 1 2; do
      t0=$(now)
      "$FUGUE" run --stats "$work/$p.json" --out "$work/out_$p" > "$work/$p.stats" 2>&1 || { cat "$work/$p.stats"; exit 1; }
      t1=$(now)
      best=$(awk -v a="$t0" -v b="$t1" -v best="$best" 'BEGIN {t = b - a; if (best == "" || t < best) best = t; printf "%.3f", best}')
    done
    wall[$p]=$best
  done
  for p in csr_dia csr_ell csr_coo dia_csr coo_csr ell_csr coo_dia dia_ell csr_hyb csr_bdia_host; do
    base=base_${p%%_*}
    kernels=$(awk '/sparse.convert/ {s += $(NF-2)} END {printf "%.3f", s}' "$work/$p.stats")
    err=$(${PYTHON:-python3} - "$work/out_$p" <<'PY'
import sys, numpy as np
y = np.load(sys.argv[1] + "/y.npy").astype(np.float64); z = np.load(sys.argv[1] + "/z.npy").astype(np.float64)
print("%.2e" % (np.abs(y - z).max() / max(np.abs(y).max(), 1e-300)))
PY
)
    printf '%-8s %-22s %12s %14.2f %12s\n' "$g²" "$p" "$kernels" "$(awk -v a="${wall[$base]}" -v b="${wall[$p]}" 'BEGIN {print b - a}')" "$err" >> "$work/table"
  done
  grep -h "sparse.convert" "$work/csr_dia.stats" "$work/coo_dia.stats" | sed "s/^/$g² /"
done
cat "$work/table"
