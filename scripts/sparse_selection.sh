#!/usr/bin/env bash
# How well the automatic format choice does: for each matrix (generated, or a .mtx from MTX_DIR), every
# layout's sparse.spmv timed with `fugue bench` (f32, medians of REPEAT) and the layout
# {"kind": "sparse", "format": "auto"} chose, as a table: the choice's time over the fastest layout's.
# Runs on this machine's device (or DEVICE), or on the GPU machine with F=.gpu/build/host/fugue after
# `source .gpu/env.sh`. Build first.
#   MATRICES="poisson2048 banded16 rmat18 fem300k" scripts/sparse_selection.sh
set -u
cd "$(dirname "$0")/.."
F=${F:-build/host/fugue}
REPEAT=${REPEAT:-10}
MATRICES=${MATRICES-"poisson2048 banded16 rmat18 fem300k"}
MTX_DIR=${MTX_DIR:-../shared/data/matrices}
MTX=${MTX-"bcsstk13 cryg2500 jagmesh7"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/sparse_matrices.sh
source_of() {  # a generated matrix, or a .mtx file from MTX_DIR
  sparse_source "$1" || echo "\"$(realpath "$MTX_DIR/$1.mtx")\""
}
cols_of() {  # x's length: the matrix's columns
  case $1 in
    poisson2048) echo 4194304 ;; banded16) echo 1048576 ;; bandlong21) echo 2097152 ;; bandmix20) echo 1048576 ;; rmat18) echo 262144 ;; fem300k) echo 900000 ;; fem300k4) echo 1200000 ;;
    *) grep -v '^%' "$MTX_DIR/$1.mtx" | head -1 | awk '{print $2}' ;;
  esac
}
# LAYOUTS: the layouts tried (the block kinds at a block as bell@4x4); the fastest of them is the yardstick.
LAYOUTS=${LAYOUTS:-"csr coo ell sell dia bdia bcsr bell sbell bcsr@1x4 bell@1x4 sbell@1x4 bcsr@4x4 bell@4x4 sbell@4x4 cocktail"}
printf "%-12s %8s" matrix "nnz/row"; for l in $LAYOUTS; do printf " %10s" $l; done; printf "   %-26s %s\n" "auto's choice" "its time / the fastest"
for m in $MATRICES $MTX; do
  declare -A ms=()
  choice="" cut="" per_row=""
  for layout in $LAYOUTS auto; do
    # auto for the product alone ("reads": -1): bench times products, not the conversion a run pays once
    kind=${layout%@*} extra=""; [ $layout = auto ] && kind=sparse extra=', "reads": -1'
    case $layout in *@*) b=${layout#*@}; extra=", \"block\": [${b%x*}, ${b#*x}]" ;; esac
    cat > "$work/p.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$kind", "dtype": "f32", "from": $(source_of $m)$extra},
  "x": {"kind": "array", "dtype": "f32", "shape": [$(cols_of $m)], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}}
JSON
    if ! $F bench "$work/p.json" --repeat $REPEAT --json "$work/b.json" ${DEVICE:+--device $DEVICE} > "$work/out.txt" 2>&1; then
      ms[$layout]="-"; continue
    fi
    ms[$layout]=$(python3 -c "import json; print('%.4f' % (json.load(open('$work/b.json'))['total']['median_s'] * 1e3))")
    if [ $layout = auto ]; then
      line=$($F explain "$work/p.json" 2>/dev/null | grep -m1 "sparse chose")
      choice=$(echo "$line" | sed 's/.*sparse chose \([a-z]*\).*/\1/')
      cut=$(echo "$line" | sed -n "s/.*)): $choice \([0-9]x[0-9]\) .*/@\1/p")
      per_row=$(echo "$line" | sed 's/.*: \([0-9.]*\) entries a row.*/\1/')
    fi
  done
  best=$(for l in $LAYOUTS; do [ "${ms[$l]}" != "-" ] && echo "${ms[$l]} $l"; done | sort -g | head -1)
  ratio=$(python3 -c "print('%.2f (fastest: %s)' % (${ms[auto]} / ${best% *}, '${best#* }'))" 2>/dev/null || echo "-")
  printf "%-12s %8s" "$m" "${per_row:-?}"; for l in $LAYOUTS; do printf " %10s" "${ms[$l]}"; done
  printf "   %-26s %s\n" "${choice:-?}$cut ${ms[auto]} ms" "$ratio"
  unset ms
done
