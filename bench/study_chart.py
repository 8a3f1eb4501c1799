#!/usr/bin/env python3
"""Draws the session study's results as an SVG bar chart (Python stdlib only).

    python3 bench/study_chart.py SUMMARY.json OUT.svg [--title TEXT]

SUMMARY.json is what bench/study.sh writes to its raw folder:
    {"servers": [{"name": "kiln", "read_rps": 1234.5, "write_rps": 987.0,
                  "read_cpu_ms_per_1k": 12.3, "write_cpu_ms_per_1k": 20.1}, ...
                 {"name": "flask", "not_run": "setup failed: ..."}]}
Two panels, one bar pair (read, write) per server: requests per second (higher is
better) and the server's CPU milliseconds per 1,000 requests (lower is better).
A missing value draws no bar and says "n/a"; a server that did not run says "not run".
"""
import json
import math
import sys
from xml.sax.saxutils import escape

READ_COLOR, WRITE_COLOR = "#2f6db5", "#e08a1e"
FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""


def axis(v):
    """(top, ticks) for values up to v: round steps (1, 2, 2.5 or 5 times a power of ten),
    4 or 5 of them, with room above the tallest bar for its label."""
    if not v or v <= 0:
        return 1.0, 4
    target = v * 1.1
    raw = target / 4
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        step = m * 10 ** exp
        if step >= raw:
            break
    ticks = max(1, math.ceil(target / step))
    return ticks * step, ticks


def fmt(v):
    if v is None:
        return "n/a"
    if v == 0:
        return "0"
    if v >= 100:
        return "{:,.0f}".format(v)
    if v >= 10:
        return "{:.1f}".format(v)
    return "{:.2f}".format(v)


def panel(x0, y0, w, h, title, servers, keys, note):
    """One bar panel; keys = (read_key, write_key). Returns SVG elements."""
    out = []
    values = [s.get(k) for s in servers for k in keys if isinstance(s.get(k), (int, float))]
    top, ticks = axis(max(values) if values else 0)
    left, bottom = 64, 58
    pw, ph = w - left - 10, h - bottom - 36
    px, py = x0 + left, y0 + 36
    out.append('<text x="%d" y="%d" %s font-size="14" font-weight="bold">%s</text>'
               % (x0 + 10, y0 + 16, FONT, escape(title)))
    out.append('<text x="%d" y="%d" %s font-size="11" fill="#555">%s</text>'
               % (x0 + 10, y0 + 30, FONT, escape(note)))
    for i in range(ticks + 1):
        v = top * i / ticks
        y = py + ph - ph * i / ticks
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (px, y, px + pw, y))
        out.append('<text x="%d" y="%.1f" %s font-size="10" text-anchor="end" fill="#444">%s</text>'
                   % (px - 4, y + 3, FONT, escape(fmt(v))))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (px, py + ph, px + pw, py + ph))
    n = max(1, len(servers))
    slot = pw / n
    bar = min(28.0, slot * 0.36)
    for i, s in enumerate(servers):
        cx = px + slot * (i + 0.5)
        out.append('<text x="%.1f" y="%d" %s font-size="12" text-anchor="middle">%s</text>'
                   % (cx, py + ph + 16, FONT, escape(s.get("name", "?"))))
        if s.get("not_run"):
            out.append('<text x="%.1f" y="%d" %s font-size="10" text-anchor="middle" fill="#a00">not run</text>'
                       % (cx, py + ph - 6, FONT))
            continue
        for j, (k, color) in enumerate(zip(keys, (READ_COLOR, WRITE_COLOR))):
            v = s.get(k)
            bx = cx - bar - 1 + j * (bar + 2)
            if not isinstance(v, (int, float)):
                out.append('<text x="%.1f" y="%d" %s font-size="9" text-anchor="middle" fill="#777">n/a</text>'
                           % (bx + bar / 2, py + ph - 4, FONT))
                continue
            bh = ph * min(v, top) / top
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>'
                       % (bx, py + ph - bh, bar, bh, color, escape(s.get("name", "?")),
                          "read" if j == 0 else "write", escape(fmt(v))))
            out.append('<text x="%.1f" y="%.1f" %s font-size="9" text-anchor="middle" fill="#222">%s</text>'
                       % (bx + bar / 2, py + ph - bh - 3, FONT, escape(fmt(v))))
    # legend
    lx, ly = px, py + ph + 34
    for label, color in (("read (-g -c 2)", READ_COLOR), ("write (-g -c 2 -u)", WRITE_COLOR)):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, ly - 10, color))
        out.append('<text x="%d" y="%d" %s font-size="11">%s</text>' % (lx + 16, ly, FONT, escape(label)))
        lx += 150
    return out


def render(summary, title):
    servers = summary.get("servers", [])
    pw, ph = 480, 340
    width, height = 2 * pw + 20, ph + 40
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
             % (width, height, width, height),
             '<rect width="100%" height="100%" fill="#fff"/>',
             '<text x="10" y="22" %s font-size="15" font-weight="bold">%s</text>' % (FONT, escape(title))]
    parts += panel(0, 34, pw, ph, "Requests per second", servers, ("read_rps", "write_rps"),
                   "median over rounds; higher is better")
    parts += panel(pw + 20, 34, pw, ph, "Server CPU ms per 1,000 requests", servers,
                   ("read_cpu_ms_per_1k", "write_cpu_ms_per_1k"), "whole process tree; lower is better")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv):
    args = argv[1:]
    title = "Session study"
    if "--title" in args:
        i = args.index("--title")
        if i + 1 >= len(args):
            sys.exit("study_chart.py: --title needs a value")
        title = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit("usage: study_chart.py SUMMARY.json OUT.svg [--title TEXT]")
    try:
        with open(args[0]) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("study_chart.py: cannot read %s: %s" % (args[0], e))
    if not isinstance(summary, dict) or not isinstance(summary.get("servers"), list):
        sys.exit("study_chart.py: %s has no \"servers\" list" % args[0])
    with open(args[1], "w") as f:
        f.write(render(summary, title))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
