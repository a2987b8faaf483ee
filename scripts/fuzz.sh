#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, -DFUGUE_FUZZ=ON) in build-fuzz/ and runs each in
# turn: first over its regression inputs (tests/fuzz/regressions/<target>/, each must pass), then
# fuzzing from its seeds for FUZZ_SECONDS (default 60) or FUZZ_RUNS executions. Fails on any crash,
# sanitizer report, leak, timeout (10 s for one input) or out-of-memory (2 GiB). Findings are kept in
# build-fuzz/fuzz-artifacts/<target>/; the growing corpus in build-fuzz/fuzz-corpus/<target>/.
#
#   scripts/fuzz.sh                        every target, 60 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh npy   one target, 10 minutes
#   FUZZ_RUNS=10000000 scripts/fuzz.sh     every target, 10^7 executions each
#
# Environment: FUZZ_BUILD (build folder, default build-fuzz), FUZZ_BUILD_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${FUZZ_BUILD:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-}
targets=("$@")
((${#targets[@]})) || targets=(validate npy png flo mtx npz)
declare -A max_len=([validate]=16384 [npy]=4096 [png]=8192 [flo]=4096 [mtx]=4096 [npz]=8192)
for t in "${targets[@]}"; do
  [ -n "${max_len[$t]:-}" ] || { echo "fuzz.sh: unknown target '$t' (expected: validate npy png flo mtx npz)" >&2; exit 2; }
done

export CC=${CC:-clang} CXX=${CXX:-clang++}
cmake -S . -B "$build" -DFUGUE_FUZZ=ON -DFUGUE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${FUZZ_BUILD_JOBS:-2}" --target fugue_fuzzers

# Seeds: the binary readers' from make_seeds.py; the loader's every program in examples/ and tests/.
seeds=$build/fuzz-seeds
rm -rf "$seeds"
python3 tests/fuzz/make_seeds.py "$seeds"
mkdir -p "$seeds/validate"
find examples tests -name '*.json' -size -64k -print0 | while IFS= read -r -d '' f; do
  grep -q '"fugue"' "$f" && cp "$f" "$seeds/validate/$(echo "${f%.json}" | tr / _).json"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$root/tests/sanitizers/ubsan.supp}
summary=()
status=0
for t in "${targets[@]}"; do
  exe=$build/fuzz/fuzz_$t
  corpus=$build/fuzz-corpus/$t
  artifacts=$build/fuzz-artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  # 1. Every input that once crashed it must now pass (run once each, no fuzzing).
  regressions=(tests/fuzz/regressions/$t/*)
  if [ -e "${regressions[0]}" ]; then
    echo "== fuzz_$t: ${#regressions[@]} regression inputs"
    if ! "$exe" -timeout=10 -rss_limit_mb=2048 "${regressions[@]}" >"$artifacts/regressions.log" 2>&1; then
      tail -40 "$artifacts/regressions.log"
      echo "fuzz_$t: a regression input fails again (log: $artifacts/regressions.log)" >&2
      status=1
      summary+=("$t: REGRESSION")
      continue
    fi
  fi
  # 2. Fuzz.
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="tests/fuzz/$t.dict")
  echo "== fuzz_$t: ${limit[*]}"
  log=$artifacts/fuzz.log
  set +e
  "$exe" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len="${max_len[$t]}" "${dict[@]}" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds/$t" >"$log" 2>&1 &
  pid=$!
  wait $pid
  rc=$?
  set -e
  rm -rf "${FUZZ_SCRATCH:-/dev/shm}/fugue-fuzz-$pid"  # the target's scratch folder, left by a crash
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|fuzz_[a-z]+: unexpected|ALARM|.*-timeout)' "$log" | head -10
    tail -30 "$log"
    echo "fuzz_$t: FAILED (exit $rc); the input is in $artifacts/, the log $log" >&2
    status=1
    summary+=("$t: FAILED after ${execs:-?} executions")
  else
    summary+=("$t: ok, ${execs:-?} executions, ${rate:-?}/s, $cov, corpus $(find "$corpus" -type f | wc -l) files")
  fi
done
echo
echo "fuzz summary ($root/$build):"
printf '  %s\n' "${summary[@]}"
exit $status
