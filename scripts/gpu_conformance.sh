#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# `fugue conformance` of the histogram and pairwise plugins and of the linalg operations named in OPS on
# NVIDIA's OpenCL, each plugin within TIMEOUT seconds; prints each one's summary line, then the failures.
# Build and bundle first:  ../shared/gpu/bundle.sh .gpu build/host/fugue build/plugins examples
#   OPS="linalg.getrf linalg.gemm_vbatched" TIMEOUT=60 scripts/gpu_conformance.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
TIMEOUT=${TIMEOUT:-60}
OPS=${OPS:-"linalg.getrf linalg.getrs linalg.gemv linalg.geqrf linalg.gebrd linalg.potrf_vbatched linalg.gemm_vbatched"}
out=${OUT:-/tmp/fugue_gpu_conformance}
mkdir -p "$out"
$F devices | head -3
run() {  # name plugin [--op ...]
  local name=$1
  shift
  timeout "$TIMEOUT" $F conformance "$@" > "$out/$name.txt" 2>&1
  echo "$name (exit $?): $(tail -1 "$out/$name.txt")"
}
run histogram .gpu/build/plugins/libfugue_histogram.so
run pairwise .gpu/build/plugins/libfugue_pairwise.so
op_args=()
for op in $OPS; do op_args+=(--op "$op"); done
run linalg .gpu/build/plugins/libfugue_linalg.so "${op_args[@]}"
grep -h "^FAIL" "$out"/*.txt | cut -c1-400 | head -20
