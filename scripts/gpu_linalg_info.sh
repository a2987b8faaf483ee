#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# potrf and getrf of batches that mix good matrices with failing ones (potrf: not positive definite at
# a random step; getrf: a zero column, singular however it is rounded), in f32 and f64 at each order of SIZES, checked against
# `fugue run --reference` on the same input: info equal, the factors within 1e-4 / 1e-10 (relative).
#   SIZES="8 12 16 32" scripts/gpu_linalg_info.sh
set -u
source .gpu/env.sh
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
F=$PWD/.gpu/build/host/fugue SIZES=${SIZES:-"8 12 16 32"} python3 - <<'PY'
import json, os, subprocess, tempfile, numpy as np
F = os.environ['F']
rng = np.random.default_rng()
for op in ('potrf', 'getrf'):
    for dt in ('f32', 'f64'):
        for n in map(int, os.environ['SIZES'].split()):
            d = tempfile.mkdtemp()
            A = rng.uniform(-1, 1, (301, n, n))
            if op == 'potrf':
                A = A @ A.transpose(0, 2, 1) + n * np.eye(n)
                for e in range(0, 301, 7):  # not positive definite from a random step on
                    k = rng.integers(0, n); A[e, k, k] = -abs(A[e, k, k]) - 1
            else:
                for e in range(0, 301, 7):  # exactly singular in any arithmetic: a zero column
                    A[e, :, rng.integers(0, n)] = 0
            np.save(d + '/A.npy', A.astype(np.float32 if dt == 'f32' else np.float64))
            outs = '["L", "info"]' if op == 'potrf' else '["LU", "ipiv", "info"]'
            attrs = ', "attrs": {"lower": true}' if op == 'potrf' else ''
            names = json.loads(outs)
            prog = ('{"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": "%s", "shape": [301, %d, %d], "from": "A.npy"}},'
                    ' "body": [{"op": "linalg.%s", "out": %s, "in": ["A"]%s}], "outputs": {%s}}'
                    % (dt, n, n, op, outs, attrs, ', '.join('"%s": "%s.npy"' % (s, s) for s in names)))
            open(d + '/p.json', 'w').write(prog)
            for where, extra in (('gpu', []), ('ref', ['--reference'])):
                r = subprocess.run([F, 'run', d + '/p.json', '--out', d + '/' + where] + extra, capture_output=True, text=True)
                if r.returncode: print(op, dt, n, where, 'FAILED', r.stderr[-500:])
            tol = 1e-4 if dt == 'f32' else 1e-10
            bad = []
            for s in names:
                g, ref = np.load(d + '/gpu/%s.npy' % s), np.load(d + '/ref/%s.npy' % s)
                ok = np.array_equal(g, ref) if s in ('info', 'ipiv') else np.allclose(g, ref, rtol=tol, atol=tol * np.abs(ref).max())
                if not ok: bad.append(s)
            info = np.load(d + '/ref/info.npy')
            print(op, dt, 'n=%d' % n, 'failing entries %d' % np.count_nonzero(info), 'OK' if not bad else 'MISMATCH ' + ' '.join(bad), flush=True)
PY
