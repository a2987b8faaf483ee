#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# linalg.gemm of f64 on the tensor cores (plugins/linalg/gemm_mma.h; NVIDIA sm_90 and later) against
# NumPy: every transposition, sizes that are not multiples of the panels or the chunks, several
# panels, alpha with beta C, variable sizes and C written over A (one panel), each under the
# table's panels and FUGUE_LINALG_TUNING=mma_panel=64 and 32 (mma_order=16, so that small products
# take them too). Prints one line per case and "mma checks: N OK, M failed" last.
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
out=/tmp/fugue_mma_check
rm -rf "$out" && mkdir -p "$out"
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
python3 - "$F" "$out" <<'PY'
import json, os, subprocess, sys
import numpy as np
fugue, out = sys.argv[1], sys.argv[2]
cases = [(128, 128, 128, 'N', 'N'), (128, 128, 128, 'T', 'N'), (128, 128, 128, 'N', 'T'), (128, 128, 128, 'T', 'T'),
         (33, 47, 65, 'N', 'N'), (100, 130, 77, 'T', 'N'), (200, 129, 64, 'N', 'T'), (65, 300, 19, 'T', 'T'),
         (256, 256, 256, 'N', 'N'), (17, 16, 3, 'N', 'N'), (64, 64, 1000, 'N', 'T')]
ok = bad = 0
def run(program, tuning, name):
    path = os.path.join(out, name + '.json')
    json.dump(program, open(path, 'w'))
    env = dict(os.environ, FUGUE_LINALG_TUNING=tuning)
    folder = os.path.join(out, name)
    r = subprocess.run([fugue, 'run', path, '--out', folder, '--stats'], env=env, capture_output=True, text=True)
    plan = subprocess.run([fugue, 'explain', path], env=env, capture_output=True, text=True).stdout
    return r, folder, plan
for tuning in ['mma_order=16', 'mma_order=16,mma_panel=64', 'mma_order=16,mma_panel=32']:
    for (m, n, k, ta, tb) in cases:
        count = 3
        ashape = [count, k, m] if ta == 'T' else [count, m, k]
        bshape = [count, n, k] if tb == 'T' else [count, k, n]
        program = {"fugue": 1, "symbols": {
            "A": {"kind": "array", "dtype": "f64", "shape": ashape, "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
            "B": {"kind": "array", "dtype": "f64", "shape": bshape, "from": {"random": {"seed": 2, "low": -1, "high": 1}}},
            "C": {"kind": "array", "dtype": "f64", "shape": [count, m, n], "from": {"random": {"seed": 3}}}},
            "body": [{"op": "linalg.gemm", "out": ["P"], "in": ["A", "B"], "attrs": {"trans_a": ta, "trans_b": tb, "alpha": 0.5}},
                     {"op": "array.mul", "out": ["E"], "in": ["C", -2]},
                     {"op": "array.add", "out": ["D"], "in": ["E", "P"]}],
            "outputs": {"D": "D.npy", "A": "A.npy", "B": "B.npy", "C": "C.npy"}}
        name = 'c%d_%d_%d_%s%s' % (m, n, k, ta, tb)
        r, folder, plan = run(program, tuning, name)
        what = '%s %dx%dx%d %s%s' % (tuning, m, n, k, ta, tb)
        if r.returncode != 0:
            bad += 1; print('FAILED to run', what, r.stdout[-600:], r.stderr[-600:]); continue
        A, B, C, D = (np.load(os.path.join(folder, x + '.npy')) for x in 'ABCD')
        opa = np.swapaxes(A, 1, 2) if ta == 'T' else A
        opb = np.swapaxes(B, 1, 2) if tb == 'T' else B
        want = 0.5 * np.matmul(opa, opb) - 2 * C
        err = np.abs(D - want).max()
        bound = 4 * (k + 2) * np.finfo(np.float64).eps * (k / 2 + 2)
        tensor = 'mma.sync' in plan  # the generated kernel, as explain prints it
        good = err < bound and tensor
        ok += good; bad += not good
        print('%s %s: max error %.3g (bound %.3g), %s' % ('OK ' if good else 'BAD', what, err, bound, 'tensor cores' if tensor else 'NOT on the tensor cores'))
# Variable sizes and C over its input, against NumPy.
prog = {"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [5, 130, 90], "from": {"random": {"seed": 3, "low": -1, "high": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [5, 90, 70], "from": {"random": {"seed": 4, "low": -1, "high": 1}}},
    "sizes": {"kind": "array", "dtype": "i32", "shape": [5, 3], "value": [[130, 70, 90], [65, 33, 17], [0, 4, 4], [129, 1, 89], [131, 2, 2]]}},
    "body": [{"op": "linalg.gemm_vbatched", "out": ["C", "info"], "in": ["A", "B", "sizes"]}],
    "outputs": {"C": "C.npy", "info": "info.npy", "A": "A.npy", "B": "B.npy"}}
r, folder, plan = run(prog, 'mma_order=16', 'vbatched')
if r.returncode != 0:
    bad += 1; print('FAILED to run variable sizes', r.stdout[-600:], r.stderr[-600:])
else:
    A, B, C, info = (np.load(os.path.join(folder, x + '.npy')) for x in ['A', 'B', 'C', 'info'])
    want = np.zeros_like(C); winfo = []
    for e, (m, n, k) in enumerate(prog['symbols']['sizes']['value']):
        if m > 130 or n > 70 or k > 90: winfo.append(-1); continue
        winfo.append(0); want[e, :m, :n] = A[e, :m, :k] @ B[e, :k, :n]
    err = np.abs(C - want).max()
    good = err < 1e-12 * 90 and list(info) == winfo and 'mma.sync' in plan
    ok += good; bad += not good
    print('%s variable sizes: max error %.3g, info %s (want %s)' % ('OK ' if good else 'BAD', err, list(info), winfo))
prog = {"fugue": 1, "symbols": {
    "A": {"kind": "array", "dtype": "f64", "shape": [2, 100, 100], "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
    "B": {"kind": "array", "dtype": "f64", "shape": [2, 100, 100], "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
    "body": [{"op": "array.copy", "out": ["A0"], "in": ["A"]},
             {"op": "linalg.gemm", "out": ["A"], "in": ["A", "B"], "attrs": {"trans_a": "T"}}],
    "outputs": {"A": "C.npy", "A0": "A0.npy", "B": "B.npy"}}
r, folder, plan = run(prog, 'mma_order=16', 'over')
if r.returncode != 0:
    bad += 1; print('FAILED to run C over A', r.stdout[-600:], r.stderr[-600:])
else:
    C, A0, B = (np.load(os.path.join(folder, x + '.npy')) for x in ['C', 'A0', 'B'])
    err = np.abs(C - np.matmul(np.swapaxes(A0, 1, 2), B)).max()
    good = err < 1e-12 * 100 and 'mma.sync' in plan
    ok += good; bad += not good
    print('%s C over A (one panel of 128): max error %.3g' % ('OK ' if good else 'BAD', err))
print('mma checks: %d OK, %d failed' % (ok, bad))
PY
