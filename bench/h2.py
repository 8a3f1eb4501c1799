"""HTTP/2 on this machine: kiln and nginx (one worker each) under h2load, many streams
per connection, over TLS (h2 chosen by ALPN) and over h2c (prior knowledge), on a
small response (13 bytes: kiln's hello /plaintext, nginx's `return 200`) and a 100 KiB
static file (examples/generic/public/servers.jpg: kiln's generic example, nginx's
root). Reports requests/s and each server's own CPU time per 1,000 requests
(utime+stime from /proc, every process of the server). bench/h2.sh runs this."""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))

from cluster import tree_ticks, HZ  # noqa: E402
from servers import free_port, machine, nginx_conf, self_signed, start, start_nginx, stop_all  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
WARMUP = int(os.environ.get("WARMUP", "2"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
BUILD = os.path.realpath(os.environ.get("KILN_BUILD", os.path.join(ROOT, "build")))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "h2.md"))
PUBLIC = os.path.join(ROOT, "examples", "generic", "public")
# (label, path, kiln binary, connections, streams per connection)
LOADS = [("small response (13 B)", "/plaintext", "hello", 8, 32),
         ("static file (100 KiB)", "/servers.jpg", "generic", 8, 8)]


def h2load(url, conns, streams, seconds):
    out = subprocess.run(["h2load", "-t", "1", "-c", str(conns), "-m", str(streams), "-D", str(seconds), url],
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                  out)
    if not m:
        sys.exit("h2.py: no h2load summary for %s:\n%s" % (url, out[-2000:]))
    proto = re.search(r"Application protocol: (\S+)", out)
    if not proto or proto.group(1) not in ("h2", "h2c"):
        sys.exit("h2.py: %s did not speak HTTP/2:\n%s" % (url, out[-2000:]))
    done, ok = int(m.group(3)), int(m.group(4))
    return ok, done - ok


def main():
    tmp = tempfile.mkdtemp(prefix="kiln-bench-h2-")
    cert, key = self_signed(tmp)
    procs = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    rows = []
    try:
        # One kiln process per (binary, transport); one nginx with four listeners.
        ports = {"nginx h2": free_port(), "nginx h2c": free_port()}
        kiln = {}
        for binary in ("hello", "generic"):
            for tls in (True, False):
                port = free_port()
                extra = ["--tls-cert", cert, "--tls-key", key] if tls else []
                p = start([os.path.join(BUILD, "bin", binary), "--port", str(port), "--workers", "0", "--threads",
                           "1", *extra], port, procs, "kiln " + binary, "h2.py", env=env, cwd=ROOT)
                kiln[(binary, tls)] = (port, p.pid)
        conf = nginx_conf(tmp, cert, key, """    http2_max_requests 100000000;
    server {
        listen 127.0.0.1:%(h2)d ssl http2;
        listen 127.0.0.1:%(h2c)d http2;
        root %(root)s;
        location = /plaintext { default_type text/plain; return 200 "Hello, World!"; }
    }""" % {"h2": ports["nginx h2"], "h2c": ports["nginx h2c"], "root": PUBLIC})
        ng = start_nginx(tmp, conf, ports["nginx h2"], procs, "h2.py")

        for label, path, binary, conns, streams in LOADS:
            for tls in (True, False):
                variants = {
                    "kiln": ("%s://127.0.0.1:%d%s" % ("https" if tls else "http", kiln[(binary, tls)][0], path),
                             kiln[(binary, tls)][1]),
                    "nginx": ("%s://127.0.0.1:%d%s" % ("https" if tls else "http",
                                                       ports["nginx h2" if tls else "nginx h2c"], path), ng.pid),
                }
                for url, _ in variants.values():
                    h2load(url, conns, streams, WARMUP)
                results = {name: [] for name in variants}
                for _ in range(ROUNDS):
                    for name, (url, pid) in variants.items():  # alternating within each round
                        before = tree_ticks(pid)
                        t0 = time.monotonic()
                        ok, bad = h2load(url, conns, streams, DURATION)
                        elapsed = time.monotonic() - t0
                        cpu = (tree_ticks(pid) - before) * 1000.0 / HZ / max(ok, 1) * 1000.0
                        results[name].append((ok / elapsed, cpu, bad))
                med = {n: (statistics.median(r[0] for r in results[n]), statistics.median(r[1] for r in results[n]),
                           sum(r[2] for r in results[n])) for n in results}
                for name in variants:
                    rows.append((label, "h2 (TLS)" if tls else "h2c", name, *med[name],
                                 med[name][0] / med["nginx"][0], med[name][1] / med["nginx"][1]))
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    write(rows)


def write(rows):
    cpu_model, commit = machine()
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    h2load = subprocess.run(["h2load", "--version"], capture_output=True, text=True).stdout.strip()
    out = ["# HTTP/2: kiln and nginx under h2load", "",
           "`DURATION=%d WARMUP=%d ROUNDS=%d bash bench/h2.sh` on %s (%d cores), kiln %s, %s, %s, %s." %
           (DURATION, WARMUP, ROUNDS, cpu_model, os.cpu_count(), commit, nginx, h2load, time.strftime("%Y-%m-%d")),
           "", "One process and one loop each: kiln `--workers 0 --threads 1` (hello for the small response, generic"
           " for the file), nginx one worker (sendfile on, `return 200` for the small response). h2load -t1, the"
           " connections and streams per connection in the table. Medians of %d rounds of %d s, kiln and nginx"
           " alternating. CPU: the server's own utime+stime per 1,000 requests; the ratios are kiln / nginx."
           % (ROUNDS, DURATION), "",
           "kiln sends a file's DATA frames with each payload read (pread) right behind its 9-byte frame header,"
           " so a write carries many frames. Its first version sent a file frame as a write of the header and a"
           " sendfile(2) of the payload: on h2c that measured 3x the CPU per request and a third of the"
           " requests/s (2026-11-25, 100 KiB file, 8 x 8 streams).", "",
           "| load | transport | server | req/s | CPU ms / 1k | failed | req/s ratio | CPU ratio |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, transport, name, rps, cpu, bad, rr, cr in rows:
        out.append("| %s | %s | %s | %.0f | %.2f | %d | %.2f | %.2f |" % (label, transport, name, rps, cpu, bad, rr, cr))
    out.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
