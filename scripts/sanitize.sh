#!/usr/bin/env bash
# Builds Fugue with AddressSanitizer and UndefinedBehaviorSanitizer (-DFUGUE_SANITIZE=ON, the default
# compiler, RelWithDebInfo) in build-asan/ and runs the tests there. Any sanitizer report fails the
# run, in a test process or in a `fugue` it starts: reports go to build-asan/sanitizer-reports/ and
# are printed at the end. Leaks inside PoCL, LLVM and the OpenCL ICD loader (not Fugue's) are
# suppressed by tests/sanitizers/lsan.supp; tests/sanitizers/ubsan.supp lists known reports whose fix
# is pending.
#
#   scripts/sanitize.sh                 the unit, plugin and integration tests (every CTest test but
#                                       the conformance and sdk labels)
#   scripts/sanitize.sh -L conformance  other ctest selections (arguments are passed to ctest)
#
# Environment: SANITIZE_BUILD (build folder, default build-asan), SANITIZE_JOBS (build and test
# jobs, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${SANITIZE_BUILD:-build-asan}
jobs=${SANITIZE_JOBS:-2}
selection=("$@")
((${#selection[@]})) || selection=(-LE '^(conformance|sdk)$')

start=$(date +%s)
cmake -S . -B "$build" -DFUGUE_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"
built=$(date +%s)

reports=$root/$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
common="log_path=$reports/report:exitcode=99:print_stacktrace=1:allocator_may_return_null=1"
# handle_segv=0: the plugin probe and the conformance suite run deliberately crashing test plugins in
# child processes and expect them to die by their signal (ASan's handler would exit 99 instead, and
# report a fault that is the test's point). A segmentation fault anywhere else still fails its test.
export ASAN_OPTIONS="$common:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:handle_segv=0"
# use_tls=0: with PoCL loaded, LeakSanitizer's tracer crashes reading threads' dynamic TLS ("Tracer
# caught signal 11", exit 1, no report) in most runs of the unit tests. Not scanning TLS can only add
# leak reports (a block reachable from TLS alone), never hide one.
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0:use_tls=0"
export UBSAN_OPTIONS="$common:halt_on_error=1:suppressions=$root/tests/sanitizers/ubsan.supp"

set +e
ctest --test-dir "$build" -j"$jobs" --output-on-failure "${selection[@]}"
rc=$?
set -e
end=$(date +%s)

found=("$reports"/report.*)
if [ -e "${found[0]}" ]; then
  echo
  echo "sanitizer reports (${#found[@]} processes):"
  for f in "${found[@]}"; do
    echo "---- $f"
    head -60 "$f"
  done
  rc=1
fi
echo
echo "sanitize.sh: build $((built - start)) s, tests $((end - built)) s; $([ "$rc" -eq 0 ] && echo clean || echo FAILED)"
exit "$rc"
