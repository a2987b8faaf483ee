#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu
# (or here with F=build/host/fugue and no .gpu/env.sh): a program's wall time (fugue run, conversion
# included) with its matrix declared sparse, the products counted by the core (1, and 100 in a `for`),
# unknown ("reads": -1: the products alone), and declared csr; explain's line on the choice. MATRICES:
# bandmix20 (a band with scattered entries and long rows, 17.8 M entries) fem1m (FEM-like, 74.5 M).
set -u
[ -f .gpu/env.sh ] && source .gpu/env.sh
F=${F:-.gpu/build/host/fugue}
export FUGUE_CACHE_DIR=/tmp/fc FUGUE_PLUGIN_PATH=
$F devices | head -3
w=${OUT:-/tmp/fugue_reads}/w; mkdir -p "$w"
echo "host cores: $(nproc)"
for m in ${MATRICES:-bandmix20 fem1m}; do
  case $m in
    bandmix20) src='{"banded": {"rows": 1048576, "width": 16, "scattered": 1, "long_rows": 64, "seed": 1}}'; n=1048576 ;;
    fem1m) src='{"fem": {"nodes": 1000000, "block": 3, "neighbours": 4, "seed": 1}}'; n=3000000 ;;
  esac
  for v in once loop100 unknown csr; do
    kind='"sparse"'; extra=""; body='[{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]'
    [ $v = unknown ] && extra=', "reads": -1'
    [ $v = csr ] && kind='"csr"'
    [ $v = loop100 ] && body='[{"for": "i", "count": 100, "body": [{"op": "sparse.spmv", "out": ["y"], "in": ["A", "x"]}]}]'
    cat > "$w/${m}_${v}.json" <<JSON
{"fugue": 1, "symbols": {"A": {"kind": $kind, "dtype": "f32", "from": $src$extra},
  "x": {"kind": "array", "dtype": "f32", "shape": [$n], "from": {"random": {"seed": 7, "low": -1, "high": 1}}}},
 "body": $body, "outputs": {"y": "y.npy"}}
JSON
    s=$(date +%s.%N)
    timeout 200 $F run "$w/${m}_${v}.json" --out "$w/out" > "$w/log_${m}_${v}.txt" 2>&1; rc=$?
    e=$(date +%s.%N)
    echo "$m $v rc=$rc wall $(python3 -c "print('%.2f' % ($e - $s))") s"
    [ $v = once ] || [ $v = loop100 ] && timeout 150 $F explain "$w/${m}_${v}.json" 2>/dev/null | grep -m1 "sparse chose" | cut -c1-420
  done
done
