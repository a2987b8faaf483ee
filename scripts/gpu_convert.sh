#!/usr/bin/env bash
# sparse.convert on a GPU, in one call: the conformance suite's calls of sparse.convert on the device,
# then Poisson matrices (GRIDS, default "2048 4096") converted on the device between csr, coo, ell and
# dia, from csr into hyb, sell (slices of 32, windows of 2048 rows), bdia, bcsr, bell and sbell (blocks
# of 2 x 4, sbell's slices of 32 super-rows) and back, from dia into sell and bcsr (through a csr), a sell and a hyb into themselves cut anew
# (sell_sell, hyb_hyb), and
# from a cocktail (each row's first 3 entries a sell's, the rest a csr's) into csr and dia, and from csr
# and dia into a cocktail split so (csr_cocktail, dia_cocktail; csr_cocktail_host: its sell's rows sorted
# in windows too wide for the device, so the host converts) or of its dense diagonals
# (csr_cocktail_dia); CONVERSIONS
# (e.g. "hyb_csr coo_csr") runs some of them. For each: the conversion's
# kernels (fugue run --stats), fugue run's wall time against the same program without the conversion,
# and the product of the result against the source's (max |difference| / max |y|). The wall times are
# the best of REPS runs (default 2). Run from the
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

# program NAME SOURCE_KIND TARGET_DECLARATION|none GRID [SOURCE_KEYS]: y = A x, and z = B x for B = convert(A).
program() {
  local name=$1 source=$2 target=$3 g=$4 keys=${5:-}
  local n=$((g * g))
  local b="" body='{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}' outputs='"y": "y.npy"'
  if [ "$target" != none ]; then
    b=", \"B\": $target"
    body="{\"op\": \"sparse.convert\", \"out\": [\"B\"], \"in\": [\"A\"]}, $body, {\"op\": \"sparse.spmv\", \"out\": [\"z\"], \"in\": [\"B\", \"x\"]}"
    outputs="$outputs, \"z\": \"z.npy\""
  fi
  cat > "$work/$name.json" <<JSON
{"fugue": 1, "symbols": {
  "A": {"kind": "$source", "dtype": "f32", "from": {"poisson": {"grid": [$g, $g]}}$keys},
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
  # sell: each window's rows by length, longest first; each slice as wide as its longest row
  stored=$(${PYTHON:-python3} - "$g" <<'PY'
import sys, numpy as np
g = int(sys.argv[1]); i, j = np.divmod(np.arange(g * g), g)
lengths = 5 - (i == 0) - (i == g - 1) - (j == 0) - (j == g - 1)
windows = [-np.sort(-lengths[w:w + 2048], kind="stable") for w in range(0, g * g, 2048)]
order = np.concatenate(windows); order = np.pad(order, (0, -len(order) % 32))
print(int(order.reshape(-1, 32).max(axis=1).sum()) * 32)
PY
)
  sell="{\"kind\": \"sell\", \"dtype\": \"f32\", $shape, \"slice\": 32, \"sigma\": 2048, \"stored\": $stored}"
  # the block layouts of 2 x 4: each super-row's blocks; a bcsr's and a sbell's (slices of 32) places for blocks, a bell's width
  read -r bcsr_blocks bell_width sbell_blocks < <(${PYTHON:-python3} - "$g" <<'PY'
import sys, numpy as np
g = int(sys.argv[1]); n = g * g; r = np.arange(n)
keys = []
for d, ok in ((-g, r >= g), (-1, r % g != 0), (0, r >= 0), (1, r % g != g - 1), (g, r < n - g)):
    keys.append((r[ok] // 2) * ((n + 3) // 4) + (r[ok] + d) // 4)
counts = np.bincount(np.unique(np.concatenate(keys)) // ((n + 3) // 4), minlength=(n + 1) // 2)
widths = np.pad(counts, (0, -len(counts) % 32)).reshape(-1, 32).max(axis=1)
print(int(counts.sum()), int(counts.max()), int(widths.sum()) * 32)
PY
)
  block='"block": [2, 4]'
  bcsr="{\"kind\": \"bcsr\", \"dtype\": \"f32\", $shape, $block, \"blocks\": $bcsr_blocks}"
  bell="{\"kind\": \"bell\", \"dtype\": \"f32\", $shape, $block, \"width\": $bell_width}"
  sbell_b="{\"kind\": \"sbell\", \"dtype\": \"f32\", $shape, $block, \"slice\": 32, \"blocks\": $sbell_blocks}"
  for k in csr dia coo ell bdia sell hyb bcsr bell sbell; do program "base_$k" "$k" none "$g"; done
  program csr_dia csr "$dia" "$g"
  program csr_ell csr "$ell" "$g"
  program csr_coo csr "$coo" "$g"
  program dia_csr dia "$csr" "$g"
  program coo_csr coo "$csr" "$g"
  program ell_csr ell "$csr" "$g"
  program coo_dia coo "$dia" "$g"
  program dia_ell dia "$ell" "$g"
  program csr_hyb csr "{\"kind\": \"hyb\", \"dtype\": \"f32\", $shape, \"width\": 4, \"nnz\": $hyb}" "$g"
  program csr_bdia csr "$bdia" "$g"
  program bdia_csr bdia "$csr" "$g"
  program csr_sell csr "$sell" "$g"
  program sell_csr sell "$csr" "$g"
  program hyb_csr hyb "$csr" "$g"
  program dia_sell dia "$sell" "$g"
  program csr_bcsr csr "$bcsr" "$g"
  program bcsr_csr bcsr "$csr" "$g"
  program csr_bell csr "$bell" "$g"
  program bell_csr bell "$csr" "$g"
  program csr_sbell csr "$sbell_b" "$g"
  program sbell_csr sbell "$csr" "$g"
  program dia_bcsr dia "$bcsr" "$g"
  # a layout into itself cut anew, through a csr: a sell of unsorted rows sorted in windows of 2048, a hyb
  # of the default width (Bell and Garland's rule) made one of width 4
  program sell_sell sell "$sell" "$g"
  program hyb_hyb hyb "{\"kind\": \"hyb\", \"dtype\": \"f32\", $shape, \"width\": 4, \"nnz\": $hyb}" "$g"
  # a cocktail of each row's first 3 entries in a sell and the rest in a csr (no dense diagonals or blocks taken)
  split=', "diagonal_fill": 2, "block_fill": 2, "width": 3, "slice": 32'
  program base_cocktail cocktail none "$g" "$split"
  program cocktail_csr cocktail "$csr" "$g" "$split"
  program cocktail_dia cocktail "$dia" "$g" "$split"
  # into such a cocktail: the sell's 3 places a row, the csr's rows with more (all but the 4 corners)
  flat="{\"kind\": \"cocktail\", \"dtype\": \"f32\", $shape$split, \"diagonals\": 0, \"blocks\": 0, \"stored\": $((3 * n)), \"csr_rows\": $((n - 4)), \"nnz\": $((4 * (g - 2) + 2 * (g - 2) * (g - 2)))}"
  program csr_cocktail csr "$flat" "$g"
  program dia_cocktail dia "$flat" "$g"
  # the same with the sell's rows sorted in windows of 4096 (all as long: the same parts), which the host converts
  program csr_cocktail_host csr "${flat%\}}, \"sigma\": 4096}" "$g"
  # and into one of the diagonals holding 90% of their places: all five, the other parts empty
  dense="{\"kind\": \"cocktail\", \"dtype\": \"f32\", $shape, \"diagonal_fill\": 0.9, \"diagonals\": 5, \"blocks\": 0, \"stored\": 0, \"csr_rows\": 0, \"nnz\": 0}"
  program csr_cocktail_dia csr "$dense" "$g"
  conversions=${CONVERSIONS:-"csr_dia csr_ell csr_coo dia_csr coo_csr ell_csr coo_dia dia_ell csr_hyb csr_bdia bdia_csr csr_sell sell_csr hyb_csr dia_sell csr_bcsr bcsr_csr csr_bell bell_csr csr_sbell sbell_csr dia_bcsr sell_sell hyb_hyb cocktail_csr cocktail_dia csr_cocktail dia_cocktail csr_cocktail_dia csr_cocktail_host"}
  bases=$(for p in $conversions; do echo "base_${p%%_*}"; done | sort -u)
  declare -A wall
  for p in $bases $conversions; do
    best=""
    for rep in $(seq "${REPS:-2}"); do
      t0=$(now)
      "$FUGUE" run --stats "$work/$p.json" --out "$work/out_$p" > "$work/$p.stats" 2>&1 || { cat "$work/$p.stats"; exit 1; }
      t1=$(now)
      best=$(awk -v a="$t0" -v b="$t1" -v best="$best" 'BEGIN {t = b - a; if (best == "" || t < best) best = t; printf "%.3f", best}')
    done
    wall[$p]=$best
  done
  for p in $conversions; do
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
  for p in $conversions; do grep -h "sparse.convert" "$work/$p.stats" | sed "s/^/$g² $p /" || true; done
done
cat "$work/table"
