#!/usr/bin/env bash
# Runs on the GPU machine (see ../shared/gpu/README.md), from the repository root, with the bundle in .gpu:
# linalg.gemm of single products (gemm_spread.h) against NumPy (f32, f64, c64; NN, NT, TN, TT and CN),
# then single products of 9 x 760 x 56648, 1024^3 and 4096^3 spread
# and in one work-group (FUGUE_LINALG_TUNING=spread_tiles=0), then torch.matmul on the same sizes.
set -u
source .gpu/env.sh
F=.gpu/build/host/fugue
export FUGUE_CACHE_DIR=/tmp/fugue_cache FUGUE_PLUGIN_PATH=
mkdir -p /tmp/sp
python3 - "$F" <<'PY'
import json, os, subprocess, sys
import numpy as np
F = sys.argv[1]
ok = bad = 0
for dtype in ['f64', 'f32', 'c64']:
    for (m, n, k, ta, tb, count) in [(70, 150, 300, 'N', 'N', 1), (9, 5000, 760, 'N', 'N', 1), (130, 129, 65, 'T', 'T', 1), (200, 100, 70, 'C' if dtype == 'c64' else 'T', 'N', 1), (100, 70, 64, 'N', 'T', 1)]:
        ash = [count, k, m] if ta != 'N' else [count, m, k]; bsh = [count, n, k] if tb != 'N' else [count, k, n]
        p = {"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": dtype, "shape": ash, "from": {"random": {"seed": 1, "low": -1, "high": 1}}},
             "B": {"kind": "array", "dtype": dtype, "shape": bsh, "from": {"random": {"seed": 2, "low": -1, "high": 1}}}},
             "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"], "attrs": {"trans_a": ta, "trans_b": tb, "alpha": 0.5}}],
             "outputs": {"C": "C.npy", "A": "A.npy", "B": "B.npy"}}
        json.dump(p, open('/tmp/sp/p.json', 'w'))
        r = subprocess.run([F, 'run', '/tmp/sp/p.json', '--out', '/tmp/sp/o'], capture_output=True, text=True)
        plan = subprocess.run([F, 'explain', '/tmp/sp/p.json'], capture_output=True, text=True).stdout
        if r.returncode: bad += 1; print('FAILED', r.stderr[-400:]); continue
        A, B, C = (np.load('/tmp/sp/o/%s.npy' % x) for x in 'ABC')
        opa = np.swapaxes(A, 1, 2) if ta != 'N' else A; opb = np.swapaxes(B, 1, 2) if tb != 'N' else B
        if ta == 'C': opa = np.conj(opa)
        want = 0.5 * np.matmul(opa.astype(np.complex128 if dtype == 'c64' else np.float64), opb)
        err = np.abs(C - want).max() / max(1.0, np.abs(want).max())
        tol = 1e-12 if dtype == 'f64' else 2e-5
        good = err < tol and 'plan: spread' in plan
        ok += good; bad += not good
        print('%s %s %dx%dx%d %s%s x%d: relative error %.3g, %s' % ('OK ' if good else 'BAD', dtype, m, n, k, ta, tb, count, err, 'spread' if 'plan: spread' in plan else 'NOT spread'))
print('spread checks: %d OK, %d failed' % (ok, bad))
for dtype in ['f32', 'f64']:
    p = {"fugue": 1, "symbols": {"A": {"kind": "array", "dtype": dtype, "shape": [1, 9, 760], "from": {"random": {"seed": 1}}},
         "B": {"kind": "array", "dtype": dtype, "shape": [1, 760, 56648], "from": {"random": {"seed": 2}}}},
         "body": [{"op": "linalg.gemm", "out": ["C"], "in": ["A", "B"]}], "outputs": {"C": "C.npy"}}
    for (m, k, n) in [(9, 760, 56648), (1024, 1024, 1024), (4096, 4096, 4096)]:
        p['symbols']['A']['shape'] = [1, m, k]; p['symbols']['B']['shape'] = [1, k, n]
        json.dump(p, open('/tmp/sp/big.json', 'w'))
        for tuning in ['', 'spread_tiles=0']:
            subprocess.run([F, 'bench', '/tmp/sp/big.json', '--repeat', '5', '--json', '/tmp/sp/b.json'], env=dict(os.environ, FUGUE_LINALG_TUNING=tuning), capture_output=True)
            ms = json.load(open('/tmp/sp/b.json'))['total']['median_s'] * 1e3
            print('%s %dx%dx%d [%s]: %.3f ms, %.0f GFLOP/s' % (dtype, m, k, n, tuning, ms, 2 * m * n * k / ms / 1e6))
import torch
for dt in [torch.float32, torch.float64]:
    for (m, k, n) in [(9, 760, 56648), (1024, 1024, 1024), (4096, 4096, 4096)]:
        a = torch.rand(m, k, dtype=dt, device='cuda'); b = torch.rand(k, n, dtype=dt, device='cuda')
        for _ in range(3): torch.matmul(a, b)
        torch.cuda.synchronize(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(5):
            s.record(); torch.matmul(a, b); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
        ts.sort(); print('torch %s %dx%dx%d: %.3f ms' % (dt, m, k, n, ts[2]))
PY
