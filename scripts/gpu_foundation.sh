#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# devices, the test suites against the GPU, every example vs the CPU reference, then the foundation's
# figures side by side with PyTorch's copy: fugue bench of one element-wise op over 2^26 and 2^28 f32.
# Build and bundle first (test_plugins holds a deliberate non-library, which bundle.sh cannot ldd):
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins build/tests/fugue_{unit,plugin,integration}_tests
#   cp -a build/test_plugins .gpu/build/
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}
mkdir -p "$out"
export FUGUE_CACHE_DIR=$out/cache FUGUE_TEST_BUILD=$PWD/.gpu/build FUGUE_TEST_SOURCE=$PWD
export FUGUE_PLUGIN_PATH=  # the bundle's own plugins only
$F devices | tee "$out/devices.txt"

echo "== tests on the GPU"
for t in fugue_unit_tests fugue_plugin_tests fugue_integration_tests; do
  .gpu/build/tests/$t --gtest_brief=1 > "$out/$t.log" 2>&1; echo "$t exit $?"; tail -3 "$out/$t.log"
done

echo "== bench"
for n in 67108864 268435456; do
  $F bench examples/bench/elementwise_scale.json --set n=$n --repeat 20 --json "$out/scale_$n.json" | tail -2
  $F bench examples/bench/elementwise_mul.json --set n=$n --repeat 20 --json "$out/mul_$n.json" | tail -2
done
$F bench examples/bench/sum.json --repeat 20 --json "$out/sum.json" | tail -3
python3 .gpu/peers.py copy | tee "$out/peers.txt"

echo "== cache: a second run compiles nothing"
$F run examples/statistics.json --out "$out/r1" --stats | tail -1
$F run examples/statistics.json --out "$out/r2" --stats | tail -1

echo "== summary"
python3 - "$out" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
peer = [json.loads(l) for l in open(os.path.join(out, "peers.txt")) if '"copy"' in l][0]
print(f"torch copy f32 x 2^28: {peer['GBps']:.0f} GB/s")
for f in sorted(glob.glob(os.path.join(out, "*_*.json"))) + [os.path.join(out, "sum.json")]:
    j = json.load(open(f)); t = j["total"]
    print(f"{os.path.basename(f):24s} median {t['median_s']*1e3:8.3f} ms  {t['gbps']:7.0f} GB/s  = {t['gbps']/peer['GBps']:.2f} x copy")
PY
