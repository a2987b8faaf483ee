#!/usr/bin/env bash
# Tuning experiment on the GPU machine: element-wise launch shapes (FUGUE_TUNING) vs PyTorch's copy.
source .gpu/env.sh
F=.gpu/build/host/fugue
export FUGUE_CACHE_DIR=/tmp/fc FUGUE_PLUGIN_PATH=
python3 .gpu/peers.py copy | tail -1
gbps() { FUGUE_TUNING=$1 $F bench examples/bench/$2.json --repeat 10 --json - | tail -1 |
         python3 -c "import json,sys; print(round(json.load(sys.stdin)['total']['gbps']))"; }
for cfg in ${CONFIGS:-element_local=256,element_groups_per_cu=0 element_local=512,element_groups_per_cu=0 \
           element_local=256,element_groups_per_cu=16 element_local=256,element_groups_per_cu=64 \
           element_local=512,element_groups_per_cu=8 element_local=1024,element_groups_per_cu=4}; do
  echo "$cfg scale=$(gbps $cfg elementwise_scale) mul=$(gbps $cfg elementwise_mul)"
done
python3 .gpu/peers.py copy | tail -1
