#!/usr/bin/env python3
"""Draws docs/linalg_h100.svg, GFLOP/s against n for the batched factorizations and products on the H100,
Fugue beside torch, from the README's table (its cells: "time ms, GFLOP/s, ratio to torch"), so the plot
and the table cannot disagree. Plain SVG, no plotting library.

Usage: python3 scripts/plot_linalg.py [README.md] [docs/linalg_h100.svg]
"""
import math
import re
import sys

readme = sys.argv[1] if len(sys.argv) > 1 else "README.md"
target = sys.argv[2] if len(sys.argv) > 2 else "docs/linalg_h100.svg"

rows = {}
sizes = []
for line in open(readme, encoding="utf-8"):
    if line.startswith("| n | 4 | 8 |") and not sizes:
        sizes = [int(x) for x in line.strip().strip("|").split("|")[1:]]
    m = re.match(r"\| `(potrf|getrf|geqrf|gemm)` (f64|f32) \|(.*)", line)
    if m and (m.group(1), m.group(2)) not in rows:
        cells = [c.strip() for c in m.group(3).strip().strip("|").split("|")]
        points = []
        for c in cells:
            parts = [p.strip() for p in c.split(",")]
            fugue = float(parts[1])
            ratio = float(parts[2].rstrip("×"))
            points.append((fugue, fugue / ratio))
        rows[(m.group(1), m.group(2))] = points
if not sizes or not rows:
    sys.exit(f"{readme}: no linalg table found")

ops = ["potrf", "getrf", "geqrf", "gemm"]
width, height, pad = 1000, 720, 60
panel_w, panel_h = (width - 3 * pad) / 2, (height - 3 * pad) / 2
low, high = 1.0, 20000.0  # GFLOP/s, log scale


def y_of(v, top):
    v = min(max(v, low), high)
    return top + panel_h - (math.log10(v) - math.log10(low)) / (math.log10(high) - math.log10(low)) * panel_h


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">Batched linear algebra on the H100: GFLOP/s against n '
       '(20,000 matrices up to 16, 2,000 above; LAPACK\'s flop counts)</text>']
colors = {("fugue", "f64"): "#1f5fbf", ("fugue", "f32"): "#7fa8e8", ("torch", "f64"): "#c0392b", ("torch", "f32"): "#f0a090"}
for index, op in enumerate(ops):
    left = pad + (index % 2) * (panel_w + pad)
    top = pad + (index // 2) * (panel_h + pad)
    svg.append(f'<rect x="{left}" y="{top}" width="{panel_w}" height="{panel_h}" fill="none" stroke="#888"/>')
    svg.append(f'<text x="{left + 8}" y="{top + 16}" font-size="14">{op}</text>')
    for decade in range(0, 5):
        v = 10 ** decade
        y = y_of(v, top)
        svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + panel_w}" y2="{y:.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    xs = [left + (i + 0.5) * panel_w / len(sizes) for i in range(len(sizes))]
    for x, n in zip(xs, sizes):
        svg.append(f'<text x="{x:.1f}" y="{top + panel_h + 16}" text-anchor="middle">{n}</text>')
    for dtype in ("f64", "f32"):
        points = rows.get((op, dtype))
        if not points:
            continue
        for who, column in (("fugue", 0), ("torch", 1)):
            line = " ".join(f"{x:.1f},{y_of(p[column], top):.1f}" for x, p in zip(xs, points))
            dash = "" if dtype == "f64" else ' stroke-dasharray="6,4"'
            svg.append(f'<polyline points="{line}" fill="none" stroke="{colors[(who, dtype)]}" stroke-width="2"{dash}/>')
legend_y = height - 18
for i, (who, dtype) in enumerate(colors):
    x = pad + i * 200
    dash = "" if dtype == "f64" else ' stroke-dasharray="6,4"'
    svg.append(f'<line x1="{x}" y1="{legend_y - 4}" x2="{x + 30}" y2="{legend_y - 4}" stroke="{colors[(who, dtype)]}" stroke-width="2"{dash}/>')
    svg.append(f'<text x="{x + 36}" y="{legend_y}">{"Fugue" if who == "fugue" else "torch"} {dtype}</text>')
svg.append("</svg>")
with open(target, "w", encoding="utf-8") as out:
    out.write("\n".join(svg) + "\n")
print(f"wrote {target}: {len(rows)} series from {readme}")
