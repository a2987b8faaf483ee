#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# array.transpose and array.slice on the device: their conformance, then ten indexings of [6, 7, 5] arrays
# (f64, i32, c64) against NumPy evaluating the same index, then 20,000 SPD matrices of order N factored by
# potrf as stored ([batch, n, n]) and fed from a structure of arrays ([n, n, batch]) through a transpose in
# potrf's kernel, and every other matrix of a [40,000, n, n] batch through a slice: each kernel's time.
#   SIZES="8 16" scripts/gpu_rearrange.sh
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_rearrange
mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
$F conformance array --op array.transpose --op array.slice 2>&1 | tail -2
python3 - "$F" "$out" <<'PY'
import json, subprocess, sys, numpy as np
F, out = sys.argv[1], sys.argv[2]
cases = [("transpose", {}, "np.transpose(x)"), ("transpose", {"axes": "2, 0, 1"}, "np.transpose(x, (2, 0, 1))"),
         ("slice", {"index": "::2"}, "x[::2]"), ("slice", {"index": "::-1, 1:6:3, -2:"}, "x[::-1, 1:6:3, -2:]"),
         ("slice", {"index": "..., 3"}, "x[..., 3]"), ("slice", {"index": "-1, ..., ::-2"}, "x[-1, ..., ::-2]"),
         ("slice", {"index": "-100:100:4, 5:-100:-2"}, "x[-100:100:4, 5:-100:-2]"), ("slice", {"index": "4:2"}, "x[4:2]"),
         ("slice", {"index": "[1:, 2,]"}, "x[1:, 2]"), ("transpose", {"axes": "0 -1 1"}, "np.transpose(x, (0, 2, 1))")]
for dtype in ("f64", "i32", "c64"):
    body = [{"op": "array." + op, "out": ["y%d" % k], "in": ["x"], "attrs": attrs} for k, (op, attrs, _) in enumerate(cases)]
    outputs = {"x": "x.npy", **{"y%d" % k: "y%d.npy" % k for k in range(len(cases))}}
    prog = {"fugue": 1, "symbols": {"x": {"kind": "array", "dtype": dtype, "shape": [6, 7, 5], "from": {"random": {"seed": 5, "low": -100, "high": 100}}}},
            "body": body, "outputs": outputs}
    json.dump(prog, open(out + "/p.json", "w"))
    subprocess.run([F, "run", out + "/p.json", "--out", out + "/o"], check=True)
    x = np.load(out + "/o/x.npy")
    bad = [k for k, (_, _, want) in enumerate(cases) if not np.array_equal(np.load(out + "/o/y%d.npy" % k), eval(want))]
    print(dtype, "ten indexings:", "OK" if not bad else "DIFFER %s" % bad)
PY
for n in ${SIZES:-"8 16"}; do
  for layout in stored soa every_other; do
    python3 - "$layout" "$n" > "$out/b.json" <<'PY'
import json, sys
layout, n = sys.argv[1], int(sys.argv[2])
count = 40000 if layout == "every_other" else 20000
S = {"kind": "array", "dtype": "f64", "shape": [count, n, n], "from": {"spd": {"seed": 1, "cond": 100}}}
body = {"stored": [], "soa": [{"op": "array.transpose", "out": ["Soa"], "in": ["S"], "attrs": {"axes": "1, 2, 0"}},
                              {"op": "array.transpose", "out": ["A"], "in": ["Soa"], "attrs": {"axes": "2, 0, 1"}}],
        "every_other": [{"op": "array.slice", "out": ["A"], "in": ["S"], "attrs": {"index": "::2"}}]}[layout]
a = "S" if layout == "stored" else "A"
body.append({"op": "linalg.potrf", "out": ["L", "info"], "in": [a], "attrs": {"lower": True}})
print(json.dumps({"fugue": 1, "symbols": {"S": S}, "body": body, "outputs": {"L": "L.npy", "S": "S.npy"}}))
PY
    rm -rf "$out/r" && $F run "$out/b.json" --out "$out/r" > /dev/null 2>&1
    check=$(python3 -c "
import numpy as np; S = np.load('$out/r/S.npy'); L = np.load('$out/r/L.npy')
S = S[::2] if '$layout' == 'every_other' else S
print('OK' if np.abs(L - np.linalg.cholesky(S)).max() <= 1e-12 * np.abs(S).max() else 'MISMATCH')")
    $F bench "$out/b.json" --repeat 30 --json "$out/t.json" > /dev/null 2>&1
    python3 -c "
import json; k = json.load(open('$out/t.json'))['kernels']
print('potrf f64 n=$n $layout: ' + ', '.join('%s %.4f ms' % (x['name'], x['median_s'] * 1e3) for x in k) + ', check $check')"
  done
done
