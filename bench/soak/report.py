"""Turns a soak's samples and load outputs into bench/results/soak.md and soak.svg:
RSS flat within +-5% after warm-up (the mean of the first fifth after warm-up against
the mean of the last fifth of the load), descriptors back to where they started once
the load is over, the requests served and failed, and a plot of RSS and descriptors.

    report.py SAMPLES.csv RAW_DIR LOAD_S OUT.md OUT.svg COMMAND RAW_DIR_AS_SHOWN

The samples start at rest after the warm-up; the load runs from about 1 s to LOAD_S.
"""
import csv
import glob
import json
import os
import re
import sys

samples, raw, load, out_md, out_svg, command, raw_shown = sys.argv[1:8]
load = float(load)
warmup = 1.0  # the first sample is before the load
rows = list(csv.DictReader(open(samples)))
servers = sorted({r["server"] for r in rows})


def series(name, key):
    return [(float(r["t_s"]), int(r[key])) for r in rows if r["server"] == name]


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def wrk_totals(path):
    text = open(path).read()
    req = int(re.search(r"(\d+) requests in", text).group(1))
    non2xx = int(re.search(r"Non-2xx or 3xx responses: (\d+)", text).group(1)) if "Non-2xx" in text else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    errs = sum(int(x) for x in m.groups()) if m else 0
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    return req, non2xx, errs, rps


lines = ["# Soak", "", "`%s` on this machine (2 cores, shared by the load, the chaos client and the servers)." % command,
         "Raw samples and outputs: `%s/` (not committed)." % raw_shown, ""]
total = 0
lines += ["## Load", "", "| load | requests | req/s | non-2xx | socket errors |", "|---|---:|---:|---:|---:|"]
for path in sorted(glob.glob(os.path.join(raw, "wrk-*.txt"))):  # the measured load (not the warm-up)
    req, non2xx, errs, rps = wrk_totals(path)
    total += req
    lines.append("| %s | %d | %.0f | %d | %d |" % (os.path.basename(path)[4:-4], req, rps, non2xx, errs))
chaos = json.load(open(os.path.join(raw, "chaos.json")))
lines += ["", "Requests in all: **%d**. Beside them (`chaos.py`): %s." % (total, ", ".join("%s %d" % kv for kv in chaos.items())), ""]

lines += ["## Memory and descriptors", "",
          "| server | RSS, first fifth of the load (KiB) | RSS, last fifth (KiB) | change | fds at rest before | fds at rest after | processes |",
          "|---|---:|---:|---:|---:|---:|---|"]
verdicts = []
for s in servers:
    rss = series(s, "rss_kb")
    fd = series(s, "fds")
    procs = series(s, "processes")
    span = load - warmup
    early = mean([v for t, v in rss if warmup <= t < warmup + span / 5])
    late = mean([v for t, v in rss if load - span / 5 <= t < load])
    change = (late - early) / early * 100 if early else 0
    fd_before = fd[0][1] if fd else 0
    fd_after = fd[-1][1] if fd else 0
    lines.append("| %s | %.0f | %.0f | %+.1f%% | %d | %d | %d-%d |" % (s, early, late, change, fd_before, fd_after,
                                                                        min(p for _, p in procs), max(p for _, p in procs)))
    verdicts.append((s, abs(change) <= 5.0, fd_after == fd_before))
lines += [""]
for s, rss_ok, fd_ok in verdicts:
    lines.append("- %s: RSS %s; descriptors %s." % (s, "flat within 5%" if rss_ok else "**not flat within 5%**",
                                                   "back to the start" if fd_ok else "**not back to the start**"))
lines += ["", "![RSS and descriptors over time](soak.svg)", ""]
open(out_md, "w").write("\n".join(lines) + "\n")

# The plot: RSS (MiB, left) and descriptors (right) per server over time.
W, H, L, R, T, B = 900, 360, 60, 60, 20, 40
tmax = max(float(r["t_s"]) for r in rows)
rss_max = max(int(r["rss_kb"]) for r in rows) / 1024 * 1.1
fd_max = max(int(r["fds"]) for r in rows) * 1.1
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (W, H),
       '<rect width="100%" height="100%" fill="white"/>',
       '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - R, H - B),
       '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, H - B),
       '<text x="%d" y="%d">seconds</text>' % (W // 2, H - 8),
       '<text x="4" y="%d">RSS MiB (solid)</text>' % (T + 10),
       '<text x="%d" y="%d">fds (dashed)</text>' % (W - R - 40, T + 10)]
for i in range(5):
    x = L + (W - L - R) * i / 4
    svg.append('<text x="%.0f" y="%d">%.0f</text>' % (x - 8, H - B + 14, tmax * i / 4))
    y = H - B - (H - T - B) * i / 4
    svg.append('<text x="4" y="%.0f">%.0f</text>' % (y + 4, rss_max * i / 4))
    svg.append('<text x="%d" y="%.0f">%.0f</text>' % (W - R + 6, y + 4, fd_max * i / 4))
for k, s in enumerate(servers):
    c = colors[k % len(colors)]
    pts = " ".join("%.1f,%.1f" % (L + (W - L - R) * t / tmax, H - B - (H - T - B) * v / 1024 / rss_max) for t, v in series(s, "rss_kb"))
    svg.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (c, pts))
    pts = " ".join("%.1f,%.1f" % (L + (W - L - R) * t / tmax, H - B - (H - T - B) * v / fd_max) for t, v in series(s, "fds"))
    svg.append('<polyline fill="none" stroke="%s" stroke-dasharray="4,3" points="%s"/>' % (c, pts))
    svg.append('<text x="%d" y="%d" fill="%s">%s</text>' % (L + 10 + 120 * k, T + 26, c, s))
svg.append("</svg>")
open(out_svg, "w").write("\n".join(svg) + "\n")
print("wrote", out_md, "and", out_svg)
