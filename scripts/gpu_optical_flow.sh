#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with the bundle in .gpu and the Middlebury data in
# .gpu/data/middlebury (the shared data folder is not shipped with the checkout):
#   PART=tests    the three test suites and the bundled plugins' conformance on the GPU
#   PART=figures  scripts/optical_flow_figures.sh (accuracy, time per iteration, start-up)
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_TEST_BUILD=$PWD/.gpu/build FUGUE_TEST_SOURCE=$PWD FUGUE_PLUGIN_PATH=
# The tests look for the data beside the repository, as on the development machine.
if [ ! -d ../shared/data/middlebury ]; then mkdir -p ../shared/data && ln -s "$PWD/.gpu/data/middlebury" ../shared/data/middlebury; fi
$F devices | grep default
if [ "${PART:-tests}" = tests ]; then
  for t in fugue_unit_tests fugue_plugin_tests fugue_integration_tests; do
    s=$(date +%s)
    .gpu/build/tests/$t --gtest_brief=1 > /tmp/$t.log 2>&1; echo "$t exit $? ($(( $(date +%s) - s )) s)"; tail -3 /tmp/$t.log
  done
  grep -h "on the crop\|synthetic pair" /tmp/fugue_integration_tests.log
  for p in array stencil; do $F conformance $p --report /tmp/conf_$p.json | tail -2; done
else
  DATA=.gpu/data/middlebury bash scripts/optical_flow_figures.sh
fi
