#!/usr/bin/env python3
"""Draws the README's batched linear algebra figures as plots, GFLOP/s against n, Fugue beside its peers,
from the README's own tables, so that a plot and its table cannot disagree. Plain SVG, no plotting library.

- docs/linalg_h100.svg from the H100 table (header "| n | 4 | 8 | ...", cells "time ms, GFLOP/s, ratio to
  torch"): Fugue and torch.
- docs/linalg_pocl.svg from the PoCL table (header "| n (PoCL) | 4 | ...", cells "Fugue's GFLOP/s, the
  peer's GFLOP/s, ratio"): Fugue, LAPACKE/CBLAS in a loop (OpenBLAS), and for gemm CLBlast (rows "`gemm`
  f64 CLBlast").

Usage: python3 scripts/plot_linalg.py [README.md] [docs/]
"""
import math
import os
import re
import sys

readme = sys.argv[1] if len(sys.argv) > 1 else "README.md"
folder = sys.argv[2] if len(sys.argv) > 2 else "docs"
OPS = ["potrf", "getrf", "geqrf", "gemm"]
ROW = re.compile(r"\| `(potrf|getrf|geqrf|gemm)` (f64|f32)( CLBlast)? \|(.*)")


def torch_cell(parts):
    """The H100 table's cell "time ms, GFLOP/s, ratio to torch": (Fugue's GFLOP/s, torch's)."""
    fugue, ratio = float(parts[1]), float(parts[2].rstrip("×"))
    return fugue, fugue / ratio


def peer_cell(parts):
    """The PoCL table's cell "Fugue's GFLOP/s, the peer's GFLOP/s, ratio"."""
    return float(parts[0]), float(parts[1])


def read_table(header, cell):
    """The sizes and {(op, dtype, peer): [(fugue, peer), ...]} of the first table whose header starts so,
    each cell read by `cell` from its comma-separated parts."""
    sizes, rows, inside = [], {}, False
    for line in open(readme, encoding="utf-8"):
        if not sizes and line.startswith(header):
            sizes = [int(x) for x in line.strip().strip("|").split("|")[1:]]
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith("|"):
            break
        m = ROW.match(line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(4).strip().strip("|").split("|")]
        points = [cell([p.strip() for p in c.split(",")]) for c in cells]
        if len(points) != len(sizes):
            sys.exit(f"{readme}: the row of {m.group(1)} {m.group(2)} has {len(points)} cells for {len(sizes)} sizes")
        rows[(m.group(1), m.group(2), "clblast" if m.group(3) else "peer")] = points
    if not sizes or not rows:
        sys.exit(f"{readme}: no table under a header starting {header!r}")
    return sizes, rows


def draw(target, title, sizes, rows, peers, low, high):
    width, height, pad = 1000, 720, 60
    panel_w, panel_h = (width - 3 * pad) / 2, (height - 3 * pad) / 2

    def y_of(v, top):
        v = min(max(v, low), high)
        return top + panel_h - (math.log10(v) - math.log10(low)) / (math.log10(high) - math.log10(low)) * panel_h

    # Each series: (who, dtype) -> colour; who is "fugue" or a peer's key.
    colors = {("fugue", "f64"): "#1f5fbf", ("fugue", "f32"): "#7fa8e8"}
    shades = [("#c0392b", "#f0a090"), ("#2e8b57", "#98d8b0")]
    for (key, _), (dark, light) in zip(peers, shades):
        colors[(key, "f64")], colors[(key, "f32")] = dark, light
    names = dict(peers, fugue="Fugue")
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">{title}</text>']
    for index, op in enumerate(OPS):
        left = pad + (index % 2) * (panel_w + pad)
        top = pad + (index // 2) * (panel_h + pad)
        svg.append(f'<rect x="{left}" y="{top}" width="{panel_w}" height="{panel_h}" fill="none" stroke="#888"/>')
        svg.append(f'<text x="{left + 8}" y="{top + 16}" font-size="14">{op}</text>')
        for decade in range(round(math.log10(low)), round(math.log10(high)) + 1):
            v = 10 ** decade
            y = y_of(v, top)
            svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + panel_w}" y2="{y:.1f}" stroke="#eee"/>')
            svg.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
        xs = [left + (i + 0.5) * panel_w / len(sizes) for i in range(len(sizes))]
        for x, n in zip(xs, sizes):
            svg.append(f'<text x="{x:.1f}" y="{top + panel_h + 16}" text-anchor="middle">{n}</text>')
        for dtype in ("f64", "f32"):
            dash = "" if dtype == "f64" else ' stroke-dasharray="6,4"'
            series = []
            for key, _ in peers:
                points = rows.get((op, dtype, key))
                if points:
                    if not series:
                        series.append(("fugue", [p[0] for p in points]))
                    series.append((key, [p[1] for p in points]))
            for who, values in series:
                line = " ".join(f"{x:.1f},{y_of(v, top):.1f}" for x, v in zip(xs, values))
                svg.append(f'<polyline points="{line}" fill="none" stroke="{colors[(who, dtype)]}" stroke-width="2"{dash}/>')
    legend_y, x = height - 18, pad
    for who, dtype in colors:  # side by side, each as wide as its label (about 7 px a character)
        label = f"{names[who]} {dtype}"
        dash = "" if dtype == "f64" else ' stroke-dasharray="6,4"'
        svg.append(f'<line x1="{x:.1f}" y1="{legend_y - 4}" x2="{x + 30:.1f}" y2="{legend_y - 4}" stroke="{colors[(who, dtype)]}" stroke-width="2"{dash}/>')
        svg.append(f'<text x="{x + 36:.1f}" y="{legend_y}">{label}</text>')
        x += 36 + 7 * len(label) + 24
    svg.append("</svg>")
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(svg) + "\n")
    print(f"wrote {target}: {len(rows)} series from {readme}")


sizes, rows = read_table("| n | 4 | 8 |", torch_cell)
draw(os.path.join(folder, "linalg_h100.svg"),
     "Batched linear algebra on the H100: GFLOP/s against n (20,000 matrices up to 16, 2,000 above; LAPACK's flop counts)",
     sizes, rows, [("peer", "torch")], 1.0, 100000.0)
sizes, rows = read_table("| n (PoCL) |", peer_cell)
draw(os.path.join(folder, "linalg_pocl.svg"),
     "Batched linear algebra on PoCL (2 cores): GFLOP/s against n (20,000 matrices up to 16, 2,000 above; LAPACK's flop counts)",
     sizes, rows, [("peer", "OpenBLAS loop"), ("clblast", "CLBlast")], 0.01, 1000.0)
