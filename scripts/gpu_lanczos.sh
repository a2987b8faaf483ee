#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu
# and the frame copied to .gpu/frame10.png: the Lanczos examples (no, selective and full
# reorthogonalization) and the normalized cuts of a Middlebury frame, timed with `fugue bench`; the
# eigenvector strip comes back in $OUT/nc. Build and bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   cp ../shared/data/middlebury/RubberWhale/frame10.png .gpu/
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | head -3
for f in lanczos lanczos_selective lanczos_full; do
  echo "== $f"
  $F run examples/lanczos/$f.json --out "$out/$f" > /dev/null && python3 -c "import numpy as np; print('steps', np.load('$out/$f/steps.npy'), 'theta', np.load('$out/$f/theta.npy'))"
  $F bench examples/lanczos/$f.json --repeat ${REPEAT:-5} --json "$out/$f.json" | grep -E "^total|spmv|gemv|ritz"
done
echo "== normalized cuts"
sed "s#../../../shared/data/middlebury/RubberWhale/frame10.png#$PWD/.gpu/frame10.png#" examples/normalized_cuts/normalized_cuts.json > /tmp/nc.json
$F run /tmp/nc.json --out "$out/nc" > /dev/null && python3 -c "import numpy as np; print('steps', np.load('$out/nc/steps.npy'), 'theta', np.load('$out/nc/theta.npy'))"
$F bench /tmp/nc.json --repeat ${REPEAT:-5} --json "$out/nc.json" | grep -E "^total|affinity|spmv|ritz|gemm|put"
