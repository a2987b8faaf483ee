#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# the test suites against the GPU, then the fusion figures side by side with PyTorch in the same run:
# the 6-op chain over 2^28 f32 (vs eager and torch.compile), the 5-point stencil on 8192^2 (vs copy,
# torch.compile and conv2d) and the Jacobi solver on 8192^2, each fused and with --no-fuse.
# Build and bundle first (test_plugins holds a deliberate non-library, which bundle.sh cannot ldd):
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins build/tests/fugue_{unit,plugin,integration}_tests
#   cp -a build/test_plugins .gpu/build/
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_TEST_BUILD=$PWD/.gpu/build FUGUE_TEST_SOURCE=$PWD
export FUGUE_PLUGIN_PATH=  # the bundle's own plugins only
$F devices | tee "$out/devices.txt"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  echo "== tests on the GPU"
  for t in fugue_unit_tests fugue_plugin_tests fugue_integration_tests; do
    .gpu/build/tests/$t --gtest_brief=1 > "$out/$t.log" 2>&1; echo "$t exit $?"; tail -3 "$out/$t.log"
  done
fi

echo "== bench"
b() {  # name program [options...]
  local name=$1; shift
  $F bench "$@" --repeat 10 --json "$out/bench_$name.json" > "$out/bench_$name.txt" 2>&1 || cat "$out/bench_$name.txt"
  tail -1 "$out/bench_$name.txt"
}
b chain examples/bench/chain.json
b chain_nofuse examples/bench/chain.json --no-fuse
b stencil examples/bench/stencil5.json
b stencil_noswap examples/bench/stencil5.json --no-swap
b jacobi examples/bench/jacobi.json
b jacobi_nofuse examples/bench/jacobi.json --no-fuse
b jacobi_nofuse_noswap examples/bench/jacobi.json --no-fuse --no-swap
python3 .gpu/peers.py copy chain stencil | tee "$out/peers.txt"
$F explain examples/jacobi.json > "$out/explain_jacobi.txt"

echo "== cold and warm start-up of the Jacobi example"
rm -rf /tmp/fugue_cache_startup
for k in cold warm; do
  s=$(date +%s.%N); FUGUE_CACHE_DIR=/tmp/fugue_cache_startup $F run examples/jacobi.json --out "$out/run_$k" --stats | tail -1
  e=$(date +%s.%N); echo "$k: $(python3 -c "print(f'{$e-$s:.2f} s')")"
done

echo "== summary"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
peers = {}
for l in open(os.path.join(out, "peers.txt")):
    if l.startswith("{") and '"case"' in l:
        j = json.loads(l); peers[j["case"]] = j
def bench(name):
    p = os.path.join(out, f"bench_{name}.json")
    return json.load(open(p))["total"] if os.path.exists(p) else None
copy = peers["f32 x 2^28"]["GBps"]
eager = peers["6 ops eager f32 x 2^28"]["ms"]; compiled = peers["6 ops torch.compile f32 x 2^28"]["ms"]
print(f"torch copy f32 x 2^28: {copy:.0f} GB/s")
for name in ["chain", "chain_nofuse"]:
    t = bench(name); ms = t["median_s"] * 1e3
    print(f"{name:22s} {ms:8.3f} ms  {t['gbps']:6.0f} GB/s  throughput {compiled/ms:.2f}x torch.compile ({compiled:.3f} ms), {eager/ms:.2f}x eager ({eager:.3f} ms)")
conv = peers["5-point conv2d f32 8192x8192"]; tc = peers["5-point torch.compile(roll) f32 8192x8192"]
for name in ["stencil", "stencil_noswap", "jacobi", "jacobi_nofuse", "jacobi_nofuse_noswap"]:
    t = bench(name); it = t["median_s"] * 1e3 / 10
    cell = 8192 * 8192; per = 12 if name.startswith("jacobi") else 8
    gbs = per * cell / (it / 1e3) / 1e9
    print(f"{name:22s} {it:8.4f} ms/iteration  {gbs:6.0f} GB/s at {per} B/cell = {gbs/copy:.2f}x copy; "
          f"torch.compile {tc['ms']:.4f} ms ({tc['GBps']:.0f} GB/s), conv2d {conv['ms']:.4f} ms ({conv['GBps']:.0f} GB/s)")
PY
