#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu
# and the frame copied to .gpu/frame10.png: reductions whose last work-group combines the partials
# (the default on GPUs) against a second kernel of one work-group (FUGUE_TUNING=last_group_finalize=0),
# side by side: 2,000 rounds of two reductions of a changing array (examples/bench/reductions_loop.json),
# whose totals must be equal bit for bit; one sum of 2^26 f32 (examples/bench/sum.json); the Lanczos
# example; and normalized cuts of the halved and the whole frame (kernels and wall time).
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   cp ../shared/data/middlebury/RubberWhale/frame10.png .gpu/
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_last_group}
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | head -3
for mode in 1 0; do
  echo "== last_group_finalize=$mode"
  export FUGUE_TUNING=last_group_finalize=$mode
  rm -rf "$out/loop$mode"
  $F run examples/bench/reductions_loop.json --out "$out/loop$mode" > /dev/null || echo "run failed"
  $F bench examples/bench/reductions_loop.json --repeat 5 | grep -E "^total|^wall|launches"
  $F bench examples/bench/sum.json --repeat 20 | grep -E "^total|^wall|launches"
  $F bench examples/lanczos/lanczos.json --repeat 5 | grep -E "^total|^wall|launches"
  GPU=1 REPEAT=5 EIGSH=0 bash scripts/normalized_cuts_eigsh.sh 2>&1 | grep -E "^total|^wall|^fugue"
done
unset FUGUE_TUNING
for f in total peaks; do
  cmp "$out/loop1/$f.npy" "$out/loop0/$f.npy" && echo "$f: equal bit for bit"
done
python3 -c "
import numpy as np
for f in ['total', 'peaks']:
    print(f, np.load('$out/loop1/' + f + '.npy'), np.load('$out/loop0/' + f + '.npy'))"
