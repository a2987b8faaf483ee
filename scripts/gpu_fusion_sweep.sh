#!/usr/bin/env bash
# Tuning experiment on the GPU machine: launch shapes (FUGUE_TUNING) of the fused chain, stencil and
# Jacobi programs, side by side with PyTorch in the same run. Bundle as for gpu_fusion.sh.
source .gpu/env.sh
F=.gpu/build/host/fugue
export FUGUE_CACHE_DIR=/tmp/fc FUGUE_PLUGIN_PATH=
python3 .gpu/peers.py copy chain stencil | grep case
ms() { FUGUE_TUNING=$1 $F bench examples/bench/$2.json --repeat 10 --json - | tail -1 |
       python3 -c "import json,sys; print(round(json.load(sys.stdin)['total']['median_s']*1e3, 4))"; }
for cfg in ${CONFIGS:-element_unroll=1 element_unroll=2 element_unroll=4 element_unroll=8 \
           element_unroll=4,element_groups_per_cu=32 element_unroll=4,element_groups_per_cu=16 \
           element_unroll=2,element_groups_per_cu=32 element_unroll=8,element_groups_per_cu=16 \
           element_groups_per_cu=0 element_local=512,element_unroll=4,element_groups_per_cu=16}; do
  echo "$cfg chain_ms=$(ms $cfg chain) stencil10_ms=$(ms $cfg stencil5) jacobi10_ms=$(ms $cfg jacobi)"
done
python3 .gpu/peers.py copy chain | grep case
