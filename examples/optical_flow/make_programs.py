#!/usr/bin/env python3
"""Writes the optical-flow programs of this folder (run it after changing it; the JSON is committed).

Horn-Schunck with four solvers of its linear system (Jacobi, the 2x2 block solver of Horn and Schunck,
conjugate gradient with an early exit, red-black Gauss-Seidel) and Lucas-Kanade, each single-level and
coarse-to-fine over 4 levels (bilinear warping, a 5x5 median filter after each level). Every program
reads frame1, frame2 and the ground truth (RubberWhale by default; `--set frame1=... frame2=...
truth=...` for others), and writes the flow (.flo), its colour picture (.png), and its average endpoint
and angular errors against the ground truth over the pixels whose flow is known.

The unknowns at each level are the whole flow (u, v), not an increment: the data term is linearised
about the flow the coarser level gives, It' = I2(warped) - I1 - Ix u - Iy v, and the smoothness term
acts on the whole flow. The system per level is A [u; v] = b with
    A = [[Ix^2 + a2 L, Ix Iy], [Ix Iy, Iy^2 + a2 L]],  b = -[Ix It', Iy It'],  L = 4 - (sum of 4 neighbours)
(a2 = alpha^2, borders clamped, which makes L the Neumann Laplacian and A symmetric positive definite).
"""
import json
import os

DATA = "../../../shared/data/middlebury/RubberWhale"
HERE = os.path.dirname(os.path.abspath(__file__))


def stencil(points):
    return {"kind": "stencil", "dtype": "f32", "border": "clamp",
            "points": [{"offset": list(o), "weight": w} for o, w in points]}


class Program:
    def __init__(self, doc):
        self.doc = doc
        self.symbols = {
            "frame1": {"kind": "array", "dtype": "f32", "from": DATA + "/frame10.png",
                       "doc": "the first frame (gray, 0..255)"},
            "frame2": {"kind": "array", "dtype": "f32", "from": DATA + "/frame11.png",
                       "doc": "the second frame"},
            "truth": {"kind": "array", "dtype": "f32", "from": DATA + "/flow10.flo",
                      "doc": "the ground-truth flow [H, W, 2]; |value| > 1e9 marks unknown flow"},
            # Derivatives: the 5-tap central difference (1, -8, 0, 8, -1)/12 along columns and rows.
            "Gx": stencil([((0, -2), 1 / 12), ((0, -1), -8 / 12), ((0, 1), 8 / 12), ((0, 2), -1 / 12)]),
            "Gy": stencil([((-2, 0), 1 / 12), ((-1, 0), -8 / 12), ((1, 0), 8 / 12), ((2, 0), -1 / 12)]),
        }
        self.body = []
        self.outputs = {}

    def const(self, name, value, doc):
        self.symbols[name] = {"kind": "const", "value": value, "doc": doc}

    def op(self, name, ins, outs, attrs=None, into=None):
        statement = {"op": name, "out": outs if isinstance(outs, list) else [outs], "in": ins}
        if attrs:
            statement["attrs"] = attrs
        (self.body if into is None else into).append(statement)

    def document(self):
        return {"fugue": 1, "doc": self.doc, "symbols": self.symbols, "body": self.body,
                "outputs": self.outputs}


def gradients(p, L, I1, I2, u, v, into):
    """I2 warped by (u, v); Ix, Iy of the mean of I1 and the warped I2; It' = I2w - I1 - Ix u - Iy v."""
    s = f"_{L}"
    p.op("stencil.warp", [I2, u, v], "I2w" + s, into=into)
    p.op("array.add", [I1, "I2w" + s], "Isum" + s, into=into)
    p.op("array.mul", ["Isum" + s, 0.5], "Imean" + s, into=into)
    p.op("stencil.apply", ["Gx", "Imean" + s], "Ix" + s, into=into)
    p.op("stencil.apply", ["Gy", "Imean" + s], "Iy" + s, into=into)
    p.op("array.sub", ["I2w" + s, I1], "It" + s, into=into)
    return "Ix" + s, "Iy" + s, "It" + s


def linearised(p, L, Ix, Iy, It, u, v, into):
    s = f"_{L}"
    p.op("array.mul", [Ix, u], "Ixu" + s, into=into)
    p.op("array.mul", [Iy, v], "Iyv" + s, into=into)
    p.op("array.sub", [It, "Ixu" + s], "Itu" + s, into=into)
    p.op("array.sub", ["Itu" + s, "Iyv" + s], "It1" + s, into=into)
    return "It1" + s


def hs_level(p, solver, L, I1, I2, u, v, into):
    """One level of Horn-Schunck: solves for the whole flow, starting from (u, v); returns its names."""
    s = f"_{L}"
    Ix, Iy, It = gradients(p, L, I1, I2, u, v, into)
    It1 = linearised(p, L, Ix, Iy, It, u, v, into)
    w, z = "u" + s, "v" + s  # the flow being solved for, starting from the coarser level's
    p.op("array.copy", [u], w, into=into)
    p.op("array.copy", [v], z, into=into)
    if solver == "block":
        # Horn and Schunck's iteration: each pixel's 2x2 system solved exactly with its neighbours'
        # mean flow held fixed: w = wbar - Ix (Ix wbar + Iy zbar + It') / (Ix^2 + Iy^2 + 4 a2).
        p.op("array.mul", [Ix, Ix], "Ix2" + s, into=into)
        p.op("array.mul", [Iy, Iy], "Iy2" + s, into=into)
        p.op("array.add", ["Ix2" + s, "Iy2" + s], "g2" + s, into=into)
        p.op("array.add", ["g2" + s, "alpha2_4"], "den" + s, into=into)
        loop = []
        p.op("stencil.apply", ["Mean4", w], "wbar" + s, into=loop)
        p.op("stencil.apply", ["Mean4", z], "zbar" + s, into=loop)
        p.op("array.mul", [Ix, "wbar" + s], "t1" + s, into=loop)
        p.op("array.mul", [Iy, "zbar" + s], "t2" + s, into=loop)
        p.op("array.add", ["t1" + s, "t2" + s], "t3" + s, into=loop)
        p.op("array.add", ["t3" + s, It1], "num" + s, into=loop)
        p.op("array.div", ["num" + s, "den" + s], "q" + s, into=loop)
        p.op("array.mul", [Ix, "q" + s], "qx" + s, into=loop)
        p.op("array.mul", [Iy, "q" + s], "qy" + s, into=loop)
        p.op("array.sub", ["wbar" + s, "qx" + s], w, into=loop)
        p.op("array.sub", ["zbar" + s, "qy" + s], z, into=loop)
        into.append({"for": "i" + s, "count": "iterations", "body": loop})
        return w, z

    # The other solvers work on A [w; z] = b.
    p.op("array.mul", [Ix, Ix], "Ix2" + s, into=into)
    p.op("array.mul", [Iy, Iy], "Iy2" + s, into=into)
    p.op("array.mul", [Ix, Iy], "Ixy" + s, into=into)
    p.op("array.mul", [Ix, It1], "b0n" + s, into=into)
    p.op("array.mul", [Iy, It1], "b1n" + s, into=into)
    p.op("array.neg", ["b0n" + s], "b0" + s, into=into)
    p.op("array.neg", ["b1n" + s], "b1" + s, into=into)

    def relax(w_in, z_in, out_w, out_z, target, tag):
        """out_w = (b0 + a2 S w - Ixy z) / (Ix2 + 4 a2); out_z likewise from z and w (both old)."""
        p.op("stencil.apply", ["Sum4", w_in], "Sw" + tag + s, into=target)
        p.op("array.mul", ["Sw" + tag + s, "alpha2"], "aSw" + tag + s, into=target)
        p.op("array.add", ["b0" + s, "aSw" + tag + s], "r0a" + tag + s, into=target)
        p.op("array.mul", ["Ixy" + s, z_in], "cz" + tag + s, into=target)
        p.op("array.sub", ["r0a" + tag + s, "cz" + tag + s], "r0b" + tag + s, into=target)
        p.op("array.mul", ["r0b" + tag + s, "Dinv0" + s], out_w, into=target)
        p.op("stencil.apply", ["Sum4", z_in], "Sz" + tag + s, into=target)
        p.op("array.mul", ["Sz" + tag + s, "alpha2"], "aSz" + tag + s, into=target)
        p.op("array.add", ["b1" + s, "aSz" + tag + s], "r1a" + tag + s, into=target)
        p.op("array.mul", ["Ixy" + s, w_in], "cw" + tag + s, into=target)
        p.op("array.sub", ["r1a" + tag + s, "cw" + tag + s], "r1b" + tag + s, into=target)
        p.op("array.mul", ["r1b" + tag + s, "Dinv1" + s], out_z, into=target)

    if solver in ("jacobi", "redblack"):
        p.op("array.add", ["Ix2" + s, "alpha2_4"], "D0" + s, into=into)
        p.op("array.add", ["Iy2" + s, "alpha2_4"], "D1" + s, into=into)
        p.op("array.div", [1.0, "D0" + s], "Dinv0" + s, into=into)
        p.op("array.div", [1.0, "D1" + s], "Dinv1" + s, into=into)
        loop = []
        if solver == "jacobi":
            relax(w, z, "wn" + s, "zn" + s, loop, "")
            p.op("array.copy", ["wn" + s], w, into=loop)
            p.op("array.copy", ["zn" + s], z, into=loop)
        else:
            p.op("stencil.red", [I1], "red" + s, into=into)
            p.op("stencil.black", [I1], "black" + s, into=into)
            for colour in ("red", "black"):
                tag = colour[0]
                relax(w, z, "wn" + tag + s, "zn" + tag + s, loop, tag)
                p.op("array.select", [colour + s, "wn" + tag + s, w], w, into=loop)
                p.op("array.select", [colour + s, "zn" + tag + s, z], z, into=loop)
        into.append({"for": "i" + s, "count": "iterations", "body": loop})
        return w, z

    assert solver == "cg"

    def apply_A(x0, x1, out0, out1, target, tag):
        p.op("stencil.apply", ["Lap", x0], "L0" + tag + s, into=target)
        p.op("stencil.apply", ["Lap", x1], "L1" + tag + s, into=target)
        p.op("array.mul", ["L0" + tag + s, "alpha2"], "aL0" + tag + s, into=target)
        p.op("array.mul", ["L1" + tag + s, "alpha2"], "aL1" + tag + s, into=target)
        p.op("array.mul", ["Ix2" + s, x0], "d0" + tag + s, into=target)
        p.op("array.mul", ["Iy2" + s, x1], "d1" + tag + s, into=target)
        p.op("array.mul", ["Ixy" + s, x1], "c0" + tag + s, into=target)
        p.op("array.mul", ["Ixy" + s, x0], "c1" + tag + s, into=target)
        p.op("array.add", ["d0" + tag + s, "c0" + tag + s], "e0" + tag + s, into=target)
        p.op("array.add", ["d1" + tag + s, "c1" + tag + s], "e1" + tag + s, into=target)
        p.op("array.add", ["e0" + tag + s, "aL0" + tag + s], out0, into=target)
        p.op("array.add", ["e1" + tag + s, "aL1" + tag + s], out1, into=target)

    apply_A(w, z, "Aw0" + s, "Aw1" + s, into, "x")
    p.op("array.sub", ["b0" + s, "Aw0" + s], "r0" + s, into=into)
    p.op("array.sub", ["b1" + s, "Aw1" + s], "r1" + s, into=into)
    p.op("array.copy", ["r0" + s], "p0" + s, into=into)
    p.op("array.copy", ["r1" + s], "p1" + s, into=into)
    p.op("array.dot", ["r0" + s, "r0" + s], "rr0" + s, into=into)
    p.op("array.dot", ["r1" + s, "r1" + s], "rr1" + s, into=into)
    p.op("array.add", ["rr0" + s, "rr1" + s], "rsold" + s, into=into)
    p.op("array.mul", ["rsold" + s, "cg_tolerance"], "stop" + s, into=into)
    p.op("array.fill", ["rsold" + s], "cg_iterations" + s, {"value": -1, "dtype": "i64"}, into=into)
    loop = []
    # Converged (or nothing to do: identical frames give r = 0, and a = 0/0 would poison the flow).
    loop.append({"if": {"le": ["rsold" + s, "stop" + s]}, "then": [{"break": True}]})
    apply_A("p0" + s, "p1" + s, "Ap0" + s, "Ap1" + s, loop, "p")
    p.op("array.dot", ["p0" + s, "Ap0" + s], "pAp0" + s, into=loop)
    p.op("array.dot", ["p1" + s, "Ap1" + s], "pAp1" + s, into=loop)
    p.op("array.add", ["pAp0" + s, "pAp1" + s], "pAp" + s, into=loop)
    p.op("array.div", ["rsold" + s, "pAp" + s], "a" + s, into=loop)
    p.op("array.mul", ["a" + s, "p0" + s], "ap0" + s, into=loop)
    p.op("array.mul", ["a" + s, "p1" + s], "ap1" + s, into=loop)
    p.op("array.add", [w, "ap0" + s], w, into=loop)
    p.op("array.add", [z, "ap1" + s], z, into=loop)
    p.op("array.mul", ["a" + s, "Ap0" + s], "aAp0" + s, into=loop)
    p.op("array.mul", ["a" + s, "Ap1" + s], "aAp1" + s, into=loop)
    p.op("array.sub", ["r0" + s, "aAp0" + s], "r0" + s, into=loop)
    p.op("array.sub", ["r1" + s, "aAp1" + s], "r1" + s, into=loop)
    p.op("array.dot", ["r0" + s, "r0" + s], "rn0" + s, into=loop)
    p.op("array.dot", ["r1" + s, "r1" + s], "rn1" + s, into=loop)
    p.op("array.add", ["rn0" + s, "rn1" + s], "rsnew" + s, into=loop)
    p.op("array.copy", ["i" + s], "cg_iterations" + s, into=loop)
    p.op("array.div", ["rsnew" + s, "rsold" + s], "beta" + s, into=loop)
    p.op("array.mul", ["beta" + s, "p0" + s], "bp0" + s, into=loop)
    p.op("array.mul", ["beta" + s, "p1" + s], "bp1" + s, into=loop)
    p.op("array.add", ["r0" + s, "bp0" + s], "p0" + s, into=loop)
    p.op("array.add", ["r1" + s, "bp1" + s], "p1" + s, into=loop)
    p.op("array.copy", ["rsnew" + s], "rsold" + s, into=loop)
    into.append({"for": "i" + s, "count": "iterations", "body": loop})
    p.outputs["cg_iterations" + s] = f"cg_iterations_level{L}.npy"
    return w, z


def lk_level(p, L, I1, I2, u, v, into):
    """Lucas-Kanade warps: each solves the 9x9-window least squares for the remaining motion."""
    s = f"_{L}"
    w, z = "u" + s, "v" + s
    p.op("array.copy", [u], w, into=into)
    p.op("array.copy", [v], z, into=into)
    loop = []
    Ix, Iy, It = gradients(p, L, I1, I2, w, z, loop)
    p.op("stencil.lucas_kanade", [It, Ix, Iy], ["du" + s, "dv" + s], {"window": 9}, into=loop)
    p.op("array.add", [w, "du" + s], w, into=loop)
    p.op("array.add", [z, "dv" + s], z, into=loop)
    into.append({"for": "i" + s, "count": "iterations", "body": loop})
    return w, z


def errors(p, u, v):
    """Average endpoint and angular errors over the pixels whose ground truth is known."""
    b = p.body
    p.op("stencil.channel", ["truth"], "ug", {"index": 0})
    p.op("stencil.channel", ["truth"], "vg", {"index": 1})
    p.op("array.abs", ["ug"], "aug")
    p.op("array.abs", ["vg"], "avg")
    p.op("array.maximum", ["aug", "avg"], "amax")
    p.op("array.le", ["amax", 1e9], "known")
    p.op("array.cast", ["known"], "knownf", {"dtype": "f32"})
    p.op("array.sum", ["knownf"], "count")
    p.op("array.sub", [u, "ug"], "eu")
    p.op("array.sub", [v, "vg"], "ev")
    p.op("array.mul", ["eu", "eu"], "eu2")
    p.op("array.mul", ["ev", "ev"], "ev2")
    p.op("array.add", ["eu2", "ev2"], "e2")
    p.op("array.sqrt", ["e2"], "endpoint")
    p.op("array.select", ["known", "endpoint", 0.0], "endpoint_known")
    p.op("array.sum", ["endpoint_known"], "endpoint_sum")
    p.op("array.div", ["endpoint_sum", "count"], "epe")
    # cos of the angle between (u, v, 1) and (ug, vg, 1), clamped against rounding before acos.
    p.op("array.mul", [u, "ug"], "uug")
    p.op("array.mul", [v, "vg"], "vvg")
    p.op("array.add", ["uug", "vvg"], "dot2")
    p.op("array.add", ["dot2", 1.0], "dot3")
    p.op("array.mul", [u, u], "uu")
    p.op("array.mul", [v, v], "vv")
    p.op("array.add", ["uu", "vv"], "n2")
    p.op("array.add", ["n2", 1.0], "n3")
    p.op("array.mul", ["ug", "ug"], "gg1")
    p.op("array.mul", ["vg", "vg"], "gg2")
    p.op("array.add", ["gg1", "gg2"], "g2")
    p.op("array.add", ["g2", 1.0], "g3")
    p.op("array.mul", ["n3", "g3"], "nn")
    p.op("array.sqrt", ["nn"], "norms")
    p.op("array.div", ["dot3", "norms"], "cosine")
    # Clamped with compares and selects, not min/max (which drop NaN): a NaN flow must show as a NaN error.
    p.op("array.gt", ["cosine", 1.0], "above")
    p.op("array.select", ["above", 1.0, "cosine"], "cos_hi")
    p.op("array.lt", ["cos_hi", -1.0], "below")
    p.op("array.select", ["below", -1.0, "cos_hi"], "cos_clamped")
    p.op("array.acos", ["cos_clamped"], "angle")
    p.op("array.mul", ["angle", 57.29577951308232], "degrees")
    p.op("array.select", ["known", "degrees", 0.0], "degrees_known")
    p.op("array.sum", ["degrees_known"], "degrees_sum")
    p.op("array.div", ["degrees_sum", "count"], "aae")
    p.op("stencil.stack", [u, v], "flow")
    p.op("array.copy", ["flow"], "flow_picture")
    p.outputs.update({"flow": "flow.flo", "flow_picture": "flow.png", "epe": "epe.npy", "aae": "aae.npy"})


SOLVERS = {"jacobi": "Jacobi", "block": "the 2x2 block solver of Horn and Schunck",
           "cg": "conjugate gradient (stopping early once the residual falls below cg_tolerance times its start)",
           "redblack": "red-black Gauss-Seidel"}


def make(method, solver, levels, alpha2, iterations):
    name = ("lk" if method == "lk" else "hs_" + solver) + ("_4level" if levels > 1 else "")
    what = ("Lucas-Kanade (9x9 windows)" if method == "lk"
            else "Horn-Schunck with " + SOLVERS[solver])
    pyramid = (f"coarse to fine over {levels} levels (each frame downsampled by 2 per level; the flow "
               "upsampled bilinearly and doubled, then each level warps frame2 by it and refines it)"
               if levels > 1 else "on the full-size frames")
    p = Program(f"Optical flow: {what}, {pyramid}, with a 5x5 median filter of the flow after each level. "
                "Writes the flow (flow.flo), its Middlebury colour picture (flow.png), and its average "
                "endpoint error (epe.npy, pixels) and angular error (aae.npy, degrees) against the ground "
                "truth. RubberWhale by default; --set frame1=... frame2=... truth=... for other data.")
    p.const("iterations", iterations,
            "iterations per level" if method == "hs" else "warps (Lucas-Kanade steps) per level")
    if method == "hs":
        # A scalar, not a const: `--set alpha2=...` then changes no kernel, and 4 alpha^2 follows it.
        p.symbols["alpha2"] = {"kind": "scalar", "dtype": "f32", "value": alpha2,
                               "doc": "alpha^2: the weight of smoothness against the data term (frames of 0..255)"}
        p.op("array.mul", ["alpha2", 4.0], "alpha2_4")
        if solver == "cg":
            p.const("cg_tolerance", 1e-6, "stop when |r|^2 falls below this fraction of its start")
        p.symbols["Mean4"] = stencil([((-1, 0), 0.25), ((1, 0), 0.25), ((0, -1), 0.25), ((0, 1), 0.25)])
        p.symbols["Sum4"] = stencil([((-1, 0), 1), ((1, 0), 1), ((0, -1), 1), ((0, 1), 1)])
        p.symbols["Lap"] = stencil([((0, 0), 4), ((-1, 0), -1), ((1, 0), -1), ((0, -1), -1), ((0, 1), -1)])
    top = levels - 1
    frames = {0: ("frame1", "frame2")}
    for L in range(1, levels):
        a, b = frames[L - 1]
        p.op("stencil.downsample", [a], f"frame1_{L}")
        p.op("stencil.downsample", [b], f"frame2_{L}")
        frames[L] = (f"frame1_{L}", f"frame2_{L}")
    I1, I2 = frames[top]
    p.op("array.fill", [I1], "u0", {"value": 0})
    p.op("array.fill", [I1], "v0", {"value": 0})
    u, v = "u0", "v0"
    for L in range(top, -1, -1):
        I1, I2 = frames[L]
        if L < top:
            p.op("stencil.upsample_to", [u, I1], f"uup_{L}")
            p.op("stencil.upsample_to", [v, I1], f"vup_{L}")
            p.op("array.mul", [f"uup_{L}", 2.0], f"uin_{L}")
            p.op("array.mul", [f"vup_{L}", 2.0], f"vin_{L}")
            u, v = f"uin_{L}", f"vin_{L}"
        if method == "hs":
            w, z = hs_level(p, solver, L, I1, I2, u, v, p.body)
        else:
            w, z = lk_level(p, L, I1, I2, u, v, p.body)
        p.op("stencil.median5", [w], f"um_{L}")
        p.op("stencil.median5", [z], f"vm_{L}")
        u, v = f"um_{L}", f"vm_{L}"
    errors(p, u, v)
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(p.document(), f, indent=1)
        f.write("\n")
    return name


# alpha^2 for frames of 0..255, and iterations per level: chosen on RubberWhale and Dimetrodon.
ALPHA2 = 30.0
ITERATIONS = {"jacobi": 400, "block": 400, "cg": 400, "redblack": 400, "lk": 3}

if __name__ == "__main__":
    for levels in (1, 4):
        for solver in ("jacobi", "block", "cg", "redblack"):
            print(make("hs", solver, levels, ALPHA2, ITERATIONS[solver]))
        print(make("lk", None, levels, 0, ITERATIONS["lk"]))
