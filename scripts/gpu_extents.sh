#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# what extents as kernel arguments (FUGUE_TUNING=extent_args=1: one compiled kernel for every size) cost
# against literals (extent_args=0, the GPU default): the 5-point stencil and Jacobi on 8192^2, each way,
# beside peers.py copy in the same run; then both runs' results compared.
# Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
for p in stencil5 jacobi; do
  for m in 0 1 0 1; do
    FUGUE_TUNING=extent_args=$m $F bench examples/bench/$p.json --repeat 20 --json "$out/${p}_${m}.json" > /dev/null 2>&1
    python3 -c "import json; t=json.load(open('$out/${p}_${m}.json'))['total']; print('$p extent_args=$m', round(t['median_s']*1e3, 4), 'ms')"
  done
done
for m in 0 1; do FUGUE_TUNING=extent_args=$m $F run examples/jacobi.json --out "$out/j$m" > /dev/null 2>&1; done
cmp "$out/j0/x.npy" "$out/j1/x.npy" && echo "jacobi: the same bits either way"
python3 .gpu/peers.py copy | tail -1
