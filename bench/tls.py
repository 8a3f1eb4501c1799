"""HTTPS against HTTP on this machine: kiln (examples/generic, one process, one loop)
and nginx (one worker) serving the same static files (servers.jpg, 100 KiB, and
bootstrap.css, 200 KiB) over plain TCP and over TLS with the same certificate, loaded
by wrk over keep-alive connections. Reports requests/s, MiB/s and each server's CPU
time per 1,000 requests (utime+stime from /proc, every process of the server).
bench/tls.sh runs this."""

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
WARMUP = int(os.environ.get("WARMUP", "3"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNS = int(os.environ.get("CONNS", "32"))
BUILD = os.path.realpath(os.environ.get("KILN_BUILD", os.path.join(ROOT, "build")))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "tls.md"))
PUBLIC = os.path.join(ROOT, "examples", "generic", "public")
FILES = [("servers.jpg (100 KiB)", "/servers.jpg"), ("bootstrap.css (200 KiB)", "/bootstrap.css")]


def wrk(url, seconds):
    out = subprocess.run(["wrk", "-t", "1", "-c", str(CONNS), "-d", "%ds" % seconds, url], capture_output=True,
                         text=True, timeout=seconds + 60).stdout
    reqs = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    bad = (int(non2xx.group(1)) if non2xx else 0) + (sum(int(x) for x in errors.groups()) if errors else 0)
    return reqs, bad


def main():
    tmp = tempfile.mkdtemp(prefix="kiln-bench-tls-")
    cert, key = self_signed(tmp)
    procs = []
    ports = {n: free_port() for n in ("kiln http", "kiln https", "nginx http", "nginx https")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    try:
        generic = os.path.join(BUILD, "bin", "generic")
        for name, extra in (("kiln http", []), ("kiln https", ["--tls-cert", cert, "--tls-key", key])):
            start([generic, "--port", str(ports[name]), "--workers", "0", "--threads", "1", *extra], ports[name],
                  procs, name, "tls.py", env=env, cwd=ROOT)
        conf = nginx_conf(tmp, cert, key, """    server { listen 127.0.0.1:%(http)d; root %(root)s; }
    server { listen 127.0.0.1:%(https)d ssl; root %(root)s; }""" % {
            "http": ports["nginx http"], "https": ports["nginx https"], "root": PUBLIC})
        p = start_nginx(tmp, conf, ports["nginx https"], procs, "tls.py")
        pid_of = {"kiln http": procs[0][1].pid, "kiln https": procs[1][1].pid, "nginx http": p.pid, "nginx https": p.pid}

        rows = []
        for label, path in FILES:
            for name in ports:
                scheme = "https" if name.endswith("https") else "http"
                url = "%s://127.0.0.1:%d%s" % (scheme, ports[name], path)
                wrk(url, WARMUP)
            results = {name: [] for name in ports}
            for _ in range(ROUNDS):
                for name in ports:  # the variants alternate within each round
                    scheme = "https" if name.endswith("https") else "http"
                    url = "%s://127.0.0.1:%d%s" % (scheme, ports[name], path)
                    before = tree_ticks(pid_of[name])
                    t0 = time.monotonic()
                    reqs, bad = wrk(url, DURATION)
                    elapsed = time.monotonic() - t0
                    cpu = (tree_ticks(pid_of[name]) - before) * 1000.0 / HZ / max(reqs, 1) * 1000.0
                    results[name].append((reqs / elapsed, cpu, bad))
            size = os.path.getsize(os.path.join(PUBLIC, path.lstrip("/")))
            for name in ports:
                rps = statistics.median(r[0] for r in results[name])
                cpu = statistics.median(r[1] for r in results[name])
                bad = sum(r[2] for r in results[name])
                rows.append((label, name, rps, rps * size / (1 << 20), cpu, bad))
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)
    write(rows)


def write(rows):
    cpu_model, commit = machine()
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    openssl = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    out = ["# HTTPS against HTTP: static files", "",
           "`DURATION=%d WARMUP=%d ROUNDS=%d CONNS=%d bash bench/tls.sh` on %s (%d cores), kiln %s, %s, %s, %s." %
           (DURATION, WARMUP, ROUNDS, CONNS, cpu_model, os.cpu_count(), commit, nginx, openssl, time.strftime("%Y-%m-%d")),
           "", "kiln: `build/bin/generic --workers 0 --threads 1` (one loop), nginx: one worker, sendfile on; the same"
           " files (examples/generic/public) and the same EC P-256 certificate; wrk -t1 over %d keep-alive"
           " connections (TLS 1.3, the handshakes once per connection). Medians of %d rounds, the four servers"
           " alternating. CPU: the server's own utime+stime per 1,000 requests." % (CONNS, ROUNDS), "",
           "The kernel here has no kTLS (`setsockopt(TCP_ULP, \"tls\")` fails with ENOENT): over TLS both servers"
           " read and encrypt in user space; over plain TCP both use sendfile(2).", "",
           "| file | server | req/s | MiB/s | CPU ms / 1k | failed |", "| --- | --- | --- | --- | --- | --- |"]
    for label, name, rps, mib, cpu, bad in rows:
        out.append("| %s | %s | %.0f | %.0f | %.1f | %d |" % (label, name, rps, mib, cpu, bad))
    out.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
