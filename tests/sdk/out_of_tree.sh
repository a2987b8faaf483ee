#!/usr/bin/env bash
# out_of_tree.sh BUILD_DIR SOURCE_DIR: the SDK as a plugin author uses it.
#  1. install the build tree into a fresh prefix; check the package's files are there and that the
#     installed fugue finds its bundled plugins;
#  2. build sdk/examples/signal and sdk/template out of tree against that prefix (find_package(Fugue));
#  3. install the example into a prefix of its own, and with FUGUE_PLUGIN_PATH pointing there run
#     `fugue plugins`, the example's program, and `fugue conformance` on both plugins.
# Environment: CMAKE (default cmake), CXX (the compiler for the plugins), FUGUE_CACHE_DIR.
# Prints each step; on failure the step's output and what failed, and exits 1. Cleans up after itself.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd) || exit 2
src=$(cd "$2" && pwd) || exit 2
cmake=${CMAKE:-cmake}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fugue-sdk.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fugue=$prefix/bin/fugue
unset FUGUE_PLUGIN_PATH

fail() {
  echo "FAILED: $*" >&2
  exit 1
}
# step DESCRIPTION COMMAND...: runs it, output to a log shown only when it fails.
step() {
  local what=$1
  shift
  echo "-- $what"
  if ! "$@" >"$tmp/step.log" 2>&1; then
    tail -n 60 "$tmp/step.log" >&2
    fail "$what: $*"
  fi
}
expect_file() {
  [[ -f $1 ]] || fail "$2: no file $1"
}

# 1. The installed package.
step "install $build into a fresh prefix" "$cmake" --install "$build" --prefix "$prefix"
expect_file "$fugue" "install"
for header in fugue_plugin.h sdk.hpp sdk_device.hpp; do
  expect_file "$prefix/include/fugue/$header" "install"
done
config=$(find "$prefix" -path '*/cmake/Fugue/FugueConfig.cmake' | head -n 1)
[[ -n $config ]] || fail "install: no FugueConfig.cmake under $prefix"
for f in FugueConfigVersion.cmake FugueTargets.cmake FuguePlugin.cmake FugueEmbed.cmake embed_file.cmake; do
  expect_file "$(dirname "$config")/$f" "install"
done
bundled=$(find "$prefix" -name libfugue_array.so | head -n 1)
[[ -n $bundled ]] || fail "install: no bundled plugin libfugue_array.so under $prefix"
step "installed fugue lists its bundled plugins" "$fugue" plugins
grep -q "^array " "$tmp/step.log" || fail "installed fugue does not find the bundled plugins (in $(dirname "$bundled"))"

# 2. Out-of-tree builds, as a plugin author runs them.
build_plugin() {  # NAME SOURCE_FOLDER
  local name=$1 folder=$2
  step "configure $name against the installed prefix" \
    "$cmake" -S "$folder" -B "$tmp/$name-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
  step "build $name" "$cmake" --build "$tmp/$name-build" -j2
  expect_file "$tmp/$name-build/plugins/libfugue_$name.so" "build $name"
}
build_plugin signal "$src/sdk/examples/signal"
build_plugin template "$src/sdk/template"

# 3. Install the example into a prefix of its own and use it from there.
step "install signal into its own prefix" "$cmake" --install "$tmp/signal-build" --prefix "$tmp/signal-prefix"
installed=$(find "$tmp/signal-prefix" -name libfugue_signal.so | head -n 1)
[[ -n $installed ]] || fail "install signal: no libfugue_signal.so under $tmp/signal-prefix"
[[ $(dirname "$installed") == */fugue/plugins ]] || fail "install signal: $installed is not in a fugue/plugins folder"
export FUGUE_PLUGIN_PATH=$(dirname "$installed")

step "fugue plugins lists signal" "$fugue" plugins
for op in signal.softclip signal.cumsum; do
  grep -q "$op" "$tmp/step.log" || { cat "$tmp/step.log" >&2; fail "fugue plugins does not list $op"; }
done

step "fugue run sdk/examples/signal/program.json" "$fugue" run "$src/sdk/examples/signal/program.json" --out "$tmp/out"
expect_file "$tmp/out/cumulative_energy.npy" "fugue run"
expect_file "$tmp/out/clipped.npy" "fugue run"

step "fugue conformance signal" "$fugue" conformance signal --report "$tmp/report-signal.json"
expect_file "$tmp/report-signal.json" "fugue conformance signal"

step "fugue conformance template (by file)" \
  "$fugue" conformance "$tmp/template-build/plugins/libfugue_template.so" --report "$tmp/report-template.json"
expect_file "$tmp/report-template.json" "fugue conformance template"

echo "sdk out of tree: all steps passed"
