#!/usr/bin/env python3
"""make_seeds.py OUT: writes the seed corpora of the binary readers' fuzz targets into OUT/npy,
OUT/png (PNG and PGM), OUT/flo, OUT/mtx and OUT/npz: small valid files of every variant the readers accept, and a few
they refuse. Python's standard library only; the output is the same on every run."""
import os
import struct
import sys
import zlib


def npy(descr, shape, data, major=1):
    shape_text = "(" + "".join("%d, " % e for e in shape).rstrip(" ") + ")" if len(shape) != 1 else "(%d,)" % shape[0]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    pre = 10 if major == 1 else 12
    total = (pre + len(header) + 1 + 63) // 64 * 64
    header = header + " " * (total - pre - len(header) - 1) + "\n"
    length = struct.pack("<H", len(header)) if major == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin-1") + data


def count(shape):
    n = 1
    for e in shape:
        n *= e
    return n


def npy_seeds():
    out = {}
    for descr, fmt, size in [("<f4", "<f", 4), ("<f8", "<d", 8), ("<i4", "<i", 4), ("<i8", "<q", 8),
                             ("|u1", "<B", 1), ("<u4", "<I", 4)]:
        for shape in [(5,), (2, 3), ()]:
            n = count(shape)
            data = b"".join(struct.pack(fmt, i % 100) for i in range(n))
            out["%s_%s.npy" % (descr[1:], "x".join(map(str, shape)) or "scalar")] = npy(descr, shape, data)
    out["c8_3.npy"] = npy("<c8", (3,), struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    out["c16_2.npy"] = npy("<c16", (2,), struct.pack("<4d", 1, 2, 3, 4))
    out["f4_v2.npy"] = npy("<f4", (2, 2), struct.pack("<4f", 1, 2, 3, 4), major=2)
    out["f4_v3.npy"] = npy("<f4", (4,), struct.pack("<4f", 1, 2, 3, 4), major=3)
    out["f4_empty.npy"] = npy("<f4", (0, 3), b"")
    out["f4_rank8.npy"] = npy("<f4", (1,) * 8, struct.pack("<f", 1))
    out["f4_bigendian.npy"] = npy(">f4", (2,), struct.pack(">2f", 1, 2))
    out["f4_fortran.npy"] = npy("<f4", (2, 2), struct.pack("<4f", 1, 2, 3, 4)).replace(b"False", b"True ")
    out["f4_truncated.npy"] = npy("<f4", (4,), struct.pack("<3f", 1, 2, 3))
    return out


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, bit_depth, colour_type, rows, palette=None):
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    raw = b"".join(b"\x00" + row for row in rows)
    body = png_chunk(b"IHDR", ihdr)
    if palette:
        body += png_chunk(b"PLTE", palette)
    return b"\x89PNG\r\n\x1a\n" + body + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b"")


def png_seeds():
    w, h = 5, 3
    out = {}
    out["gray8.png"] = png(w, h, 8, 0, [bytes((x * 40 + y * 10) % 256 for x in range(w)) for y in range(h)])
    out["gray16.png"] = png(w, h, 16, 0, [b"".join(struct.pack(">H", x * 9000 + y) for x in range(w)) for y in range(h)])
    out["gray1.png"] = png(8, 2, 1, 0, [b"\xa5", b"\x5a"])
    out["gray4.png"] = png(4, 2, 4, 0, [b"\x12\x34", b"\xfe\xdc"])
    out["rgb8.png"] = png(w, h, 8, 2, [bytes((x * 30 + c * 70) % 256 for x in range(w) for c in range(3)) for _ in range(h)])
    out["rgba8.png"] = png(w, h, 8, 6, [bytes((x * 30 + c * 50) % 256 for x in range(w) for c in range(4)) for _ in range(h)])
    out["graya8.png"] = png(w, h, 8, 4, [bytes((x * 30 + c * 50) % 256 for x in range(w) for c in range(2)) for _ in range(h)])
    out["palette.png"] = png(4, 2, 8, 3, [b"\x00\x01\x02\x01", b"\x02\x01\x00\x00"], palette=b"\x00\x00\x00\x80\x80\x80\xff\xff\xff")
    out["p5_8.pgm"] = b"P5\n# a comment\n5 3\n255\n" + bytes(range(0, 150, 10))
    out["p5_16.pgm"] = b"P5 4 2 65535\n" + b"".join(struct.pack(">H", i * 8000) for i in range(8))
    out["p2.pgm"] = b"P2\n3 2\n15\n0 1 2\n13 14 15\n"
    return out


def flo(width, height, values=None):
    n = width * height * 2
    values = values if values is not None else [0.25 * (i % 9) - 1 for i in range(n)]
    return b"PIEH" + struct.pack("<ii", width, height) + struct.pack("<%df" % n, *values)


def flo_seeds():
    return {"flow_3x2.flo": flo(3, 2), "flow_1x1.flo": flo(1, 1), "flow_8x4.flo": flo(8, 4),
            "unknown.flo": flo(2, 1, [1e10, 0, float("nan"), 2]), "truncated.flo": flo(4, 4)[:-8],
            "header_only.flo": b"PIEH" + struct.pack("<ii", 2, 2)}


def mtx_seeds():
    head = b"%%MatrixMarket matrix coordinate "
    return {"general.mtx": head + b"real general\n% a comment\n4 4 9\n1 1 3\n1 2 7\n2 2 4\n2 3 8\n3 1 1\n3 3 5\n3 4 9\n4 2 2\n4 4 6\n",
            "symmetric.mtx": head + b"real symmetric\n3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n",
            "skew.mtx": head + b"integer skew-symmetric\n3 3 2\n2 1 5\n3 1 -2\n",
            "pattern.mtx": head + b"pattern general\n2 5 3\n1 5\n2 1\n2 2\n",
            "empty_rows.mtx": head + b"real general\n6 3 2\n2 1 1.5e-3\n5 3 -7\n",
            "empty.mtx": head + b"real general\n0 0 0\n"}


def npz(members, method):
    import io
    import zipfile
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for key, data in members:
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return out.getvalue()


def npz_seeds():
    import zipfile

    def ints(descr, fmt, values):
        return npy(descr, (len(values),), b"".join(struct.pack(fmt, v) for v in values))
    shape = ("shape", ints("<i8", "<q", [3, 4]))
    csr = [("indices", ints("<i4", "<i", [0, 3, 1])), ("indptr", ints("<i4", "<i", [0, 2, 2, 3])),
           ("format", npy("|S3", (), b"csr")), shape, ("data", npy("<f8", (3,), struct.pack("<3d", 1.5, -2, 4)))]
    csc = [("indices", ints("<i8", "<q", [0, 2, 0])), ("indptr", ints("<i8", "<q", [0, 2, 2, 2, 3])),
           ("format", npy("<U3", (), "csc".encode("utf-32-le"))), shape, ("data", npy("<f4", (3,), struct.pack("<3f", 1, 2, 3)))]
    coo = [("row", ints("<i4", "<i", [2, 0, 1])), ("col", ints("<i4", "<i", [1, 3, 0])), ("format", npy("|S3", (), b"coo")), shape,
           ("data", ints("<i8", "<q", [5, 6, 7]))]
    empty = [("indices", ints("<i4", "<i", [])), ("indptr", ints("<i4", "<i", [0])), ("format", npy("|S3", (), b"csr")),
             ("shape", ints("<i8", "<q", [0, 0])), ("data", npy("<f8", (0,), b""))]
    return {"csr_stored.npz": npz(csr, zipfile.ZIP_STORED), "csr_deflated.npz": npz(csr, zipfile.ZIP_DEFLATED),
            "csc.npz": npz(csc, zipfile.ZIP_DEFLATED), "coo.npz": npz(coo, zipfile.ZIP_STORED),
            "empty.npz": npz(empty, zipfile.ZIP_STORED)}


def main():
    root = sys.argv[1]
    for name, files in [("npy", npy_seeds()), ("png", png_seeds()), ("flo", flo_seeds()), ("mtx", mtx_seeds()),
                        ("npz", npz_seeds())]:
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for file, data in files.items():
            with open(os.path.join(root, name, file), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
