source .gpu/env.sh; F=.gpu/build/host/fugue; export FUGUE_PLUGIN_PATH= FUGUE_CACHE_DIR=/tmp/fc
d=$OUT/h; mkdir -p $d
for bins in 16 256 4096; do for src in '{"random": {"seed": 3}}' '{"fill": 0.5}'; do
[ "$bins" != 256 ] && [ "$src" = '{"fill": 0.5}' ] && continue
cat > $d/h.json <<JSON
{"fugue": 1, "symbols": {"a": {"kind": "array", "dtype": "f32", "shape": [268435456], "from": $src}},
 "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": $bins, "low": 0, "high": 1}}], "outputs": {"h": "h.npy"}}
JSON
for runs in 1 0; do for u in 2 4 8; do
  FUGUE_TUNING=element_unroll=$u FUGUE_HISTOGRAM_TUNING=runs=$runs $F bench $d/h.json --repeat 20 --json $d/b.json > $d/log.txt 2>&1 || tail -2 $d/log.txt
  python3 -c "import json; ms=json.load(open('$d/b.json'))['total']['median_s'] * 1e3; print('bins $bins', '$src'[:10], 'runs=$runs unroll=$u', round(ms, 4), 'ms', round(2**30/ms/1e6/4194, 3), 'x copy')"
done; done; done; done
for u in 2 4 8; do FUGUE_TUNING=element_unroll=$u $F bench examples/bench/bincount.json --set idx=x --repeat 20 --json $d/b.json > /dev/null 2>&1; done
