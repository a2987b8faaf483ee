#!/usr/bin/env python3
"""The conversions a PyTorch user runs on the GPU instead of sparse.convert (cuSPARSE's csr2coo and
coo2csr; torch's csr -> bsr did not finish within nine minutes at 2048² on an H200, so it is left
out), on the Poisson matrices of scripts/gpu_convert.sh, timed as peers.py times (device-event medians after warm-up; f32). Usage: python3 scripts/peers_convert.py [GRID ...]
with the bundle's peers.py in .gpu (../shared/gpu/README.md). One JSON line a case."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".gpu"))
import peers  # noqa: E402  (the bundle's copy: bench, out, poisson2d)

for g in [int(a) for a in sys.argv[1:]] or [2048, 4096]:
    csr = peers.poisson2d(g)
    coo = csr.to_sparse_coo().coalesce()
    nnz = csr._nnz()
    cases = [("csr -> coo", lambda: csr.to_sparse_coo()),
             ("coo -> csr", lambda: coo.to_sparse_csr())]
    for name, fn in cases:
        try:
            peers.out("convert", f"{name} f32 poisson2d {g}x{g} nnz={nnz}", peers.bench(fn))
        except Exception as e:  # a conversion torch does not make on the GPU
            print(f'{{"family": "convert", "case": "{name} poisson2d {g}x{g}", "error": "{type(e).__name__}: {str(e)[:120]}"}}', flush=True)
