#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# where a linalg operation's time goes, kernel by kernel (`fugue run --stats`), on the programs and batches
# of scripts/gpu_linalg.sh (2,000 matrices above n = 16), only info written out. FUGUE_LINALG_TUNING
# applies as set. The blocked plans (potrf, getrf, geqrf) show their start, panel, solve (swaps), update
# and apply kernels; the plans that are one kernel show one line.
#   OPS="potrf" SIZES="128 512" DTYPES="f64" scripts/gpu_linalg_profile.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_gpu_profile
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
source scripts/linalg_programs.sh  # program op count n dtype lower file
for op in ${OPS:-potrf}; do
  for n in ${SIZES:-"128 512"}; do
    for dtype in ${DTYPES:-f64}; do
      count=$(( n > 16 ? 2000 : 20000 ))
      program "$op" "$count" "$n" "$dtype" true "$out/p.json"
      # Only info (geqrf: tau) leaves the device: writing the factors of 2,000 matrices of 512 would take longer than the run.
      small=$([ "$op" = geqrf ] && echo tau || echo info)
      sed -i "s/\"outputs\": {.*}}/\"outputs\": {\"$small\": \"$small.npy\"}}/" "$out/p.json"
      echo "== $op $dtype n=$n batch=$count FUGUE_LINALG_TUNING=[${FUGUE_LINALG_TUNING:-}]"
      $F run "$out/p.json" --stats --out "$out/o" 2>&1 | grep -E "^/body|^total"
    done
  done
done
