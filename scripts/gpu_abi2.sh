#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in
# .gpu and RubberWhale in .gpu/data/middlebury: the figures ABI 2.0 must keep, each beside PyTorch in
# the same call: the fused 6-op chain over 2^28 f32 (torch.compile, eager), the 5-point stencil on
# 8192^2 (torch.compile, conv2d, copy) and the Horn-Schunck 2x2 block iteration at 4096^2
# (scripts/peers_optical_flow.py: torch.compile, eager). Bundle first:
#   ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins
#   mkdir -p .gpu/data/middlebury && cp -a ../shared/data/middlebury/RubberWhale .gpu/data/middlebury/
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=${OUT:-/tmp/fugue_gpu}
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F devices | grep default
$F bench examples/bench/chain.json --repeat 10 --json "$out/chain.json" > "$out/chain.txt" 2>&1 || tail -3 "$out/chain.txt"
$F bench examples/bench/stencil5.json --repeat 10 --json "$out/stencil.json" > "$out/stencil.txt" 2>&1 || tail -3 "$out/stencil.txt"
python3 .gpu/peers.py copy chain stencil > "$out/peers.txt" 2>&1
python3 scripts/peers_optical_flow.py > "$out/peers_hs.txt" 2>&1
SOLVERS=hs_block FIGURES=speed DATA=.gpu/data/middlebury N1=20 N2=120 SIDE=4096 \
  bash scripts/optical_flow_figures.sh > "$out/hs.txt" 2>&1
cat "$out/hs.txt"
grep '^{' "$out/peers_hs.txt"
echo "== summary"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
peers = {}
for f in ("peers.txt",):
    for l in open(os.path.join(out, f)):
        if l.startswith("{") and '"case"' in l:
            j = json.loads(l); peers[j["case"]] = j
copy = peers["f32 x 2^28"]["GBps"]
compiled = peers["6 ops torch.compile f32 x 2^28"]["ms"]; eager = peers["6 ops eager f32 x 2^28"]["ms"]
t = json.load(open(os.path.join(out, "chain.json")))["total"]; ms = t["median_s"] * 1e3
print(f"copy {copy:.0f} GB/s")
print(f"chain    {ms:.3f} ms = {compiled/ms:.2f}x torch.compile's throughput ({compiled:.3f} ms), {eager/ms:.2f}x eager")
tc = peers["5-point torch.compile(roll) f32 8192x8192"]
t = json.load(open(os.path.join(out, "stencil.json")))["total"]; it = t["median_s"] * 1e3 / 10
gbs = 8 * 8192 * 8192 / (it / 1e3) / 1e9
print(f"stencil5 {it:.4f} ms/iteration = {gbs:.0f} GB/s = {gbs/copy:.2f}x copy; torch.compile {tc['ms']:.4f} ms ({tc['ms']/it:.2f}x)")
PY
