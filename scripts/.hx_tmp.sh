source .gpu/env.sh; F=.gpu/build/host/fugue; export FUGUE_PLUGIN_PATH=
d=$OUT/h; mkdir -p $d
for bins in 16 256 4096; do for src in '{"random": {"seed": 3}}' '{"fill": 0.5}'; do
cat > $d/h.json <<JSON
{"fugue": 1, "symbols": {"a": {"kind": "array", "dtype": "f32", "shape": [268435456], "from": $src}},
 "body": [{"op": "histogram.even", "out": ["h"], "in": ["a"], "attrs": {"bins": $bins, "low": 0, "high": 1}}], "outputs": {"h": "h.npy"}}
JSON
for runs in 1 0; do
  export FUGUE_CACHE_DIR=/tmp/c_${bins}_$runs
  FUGUE_HISTOGRAM_TUNING=runs=$runs $F bench $d/h.json --repeat 20 --json $d/b.json > $d/log.txt 2>&1 || tail -2 $d/log.txt
  python3 -c "import json; print('bins $bins', '$src'[:10], 'runs=$runs', round(json.load(open('$d/b.json'))['total']['median_s'] * 1e3, 4), 'ms')"
done; done; done
cp /tmp/c_256_1/*.bin $d/ 2>/dev/null; ls -la $d | head
