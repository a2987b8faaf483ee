#!/usr/bin/env python3
"""What a PyTorch user would run instead of Fugue's Horn-Schunck 2x2 block iteration
(examples/optical_flow/hs_block.json), timed on the GPU machine beside it: the same update with
clamped (replicate) borders, eager and torch.compile, per iteration, at Middlebury size and 4096^2.
Prints one JSON object per measurement, like ../shared/gpu/peers.py (run it in the same call).
"""
import json
import torch
import torch.nn.functional as F

dev = "cuda"


def mean4(x):
    p = F.pad(x[None, None], (1, 1, 1, 1), mode="replicate")[0, 0]
    return 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


def block_step(w, z, ix, iy, it1, den):
    wbar, zbar = mean4(w), mean4(z)
    q = (ix * wbar + iy * zbar + it1) / den
    return wbar - ix * q, zbar - iy * q


def per_iteration(step, args, iterations=100, warm=2, rep=5):
    w, z = torch.zeros_like(args[0]), torch.zeros_like(args[0])
    def run():
        a, b = w, z
        for _ in range(iterations):
            a, b = step(a, b, *args)
        return a
    for _ in range(warm):
        run()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rep):
        s.record(); run(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / iterations)
    times.sort()
    return times[len(times) // 2]


if __name__ == "__main__":
    print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
    compiled = torch.compile(block_step)
    for rows, cols in ((388, 584), (4096, 4096)):
        ix, iy, it1 = (torch.randn(rows, cols, device=dev) for _ in range(3))
        den = ix * ix + iy * iy + 120.0
        args = (ix, iy, it1, den)
        for name, step in (("eager", block_step), ("torch.compile", compiled)):
            ms = per_iteration(step, args)
            # Fugue's kernel moves 8 arrays of 4 bytes per pixel: the same count for an effective rate.
            print(json.dumps({"family": "optical_flow", "case": f"HS 2x2 block iteration {name} f32 {cols}x{rows}",
                              "ms": round(ms, 4), "effGBps": round(8 * 4 * rows * cols / ms / 1e6, 1)}), flush=True)
