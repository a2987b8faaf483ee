#!/usr/bin/env bash
# The seed's offline benchmark for the sparse format choice: every layout's SpMV on dense banded matrices
# (ROWS rows, WIDTHS entries a row), f32, on this machine's OpenCL device (or DEVICE), as GB/s of the bytes
# the cost model counts. Prints one line per layout: the numbers behind a row of the throughput table in
# plugins/sparse/format_choice.cpp. Build first.
# sell and sbell take slices of SLICE rows (super-rows): 8, as the choice weighs them on CPUs; pass
# SLICE=32 on GPUs. The block kinds take their default 2 x 4 blocks. LAYOUTS picks the layouts.
#   ROWS=1048576 WIDTHS="1 4 16 64" scripts/sparse_table.sh
set -eu
cd "$(dirname "$0")/.."
ROWS=${ROWS:-1048576}
SLICE=${SLICE:-8}
WIDTHS=${WIDTHS:-"1 4 16 64"}
F=${F:-build/host/fugue}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for layout in ${LAYOUTS:-csr coo ell sell dia bdia bcsr bell sbell}; do
  line="$layout:"
  extra=""; case $layout in sell | sbell) extra=", \"slice\": $SLICE" ;; esac
  for w in $WIDTHS; do
    cat > "$work/p.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": "$layout", "dtype": "f32", "from": {"banded": {"rows": $ROWS, "width": $w, "seed": 1}}$extra},
  "x": {"kind": "array", "dtype": "f32", "shape": [$ROWS], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}], "outputs": {"y": "y.npy"}}
JSON
    $F bench "$work/p.json" --repeat ${REPEAT:-10} --json "$work/b.json" ${DEVICE:+--device $DEVICE} > /dev/null
    line="$line $(/usr/bin/env python3 -c "import json; print(round(json.load(open('$work/b.json'))['total']['gbps'], 1))")"
  done
  echo "$line"
done
