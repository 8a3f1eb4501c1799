"""WebSocket on this machine: kiln (examples/hello's /echo) against actix-web with
actix-ws (bench/peers/actix-ws), one worker each, no compression.

1. Echo: bench/clients/ws-echo-go, C connections each in a closed loop (send a
   message, wait for its echo), 64-byte and 16 KiB text messages; messages/s, p50/p99
   and each server's own CPU time per 1,000 messages (utime+stime from /proc).
2. Idle: 10,000 WebSockets opened and left idle (bench/idle_conns.py --websocket):
   the server's RSS growth per WebSocket, and wrk's latency on /plaintext from 50
   other connections meanwhile, against the same run without them.
bench/websocket.sh runs this."""

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
from servers import free_port, machine, start, stop_all  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
WARMUP = int(os.environ.get("WARMUP", "2"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNS = int(os.environ.get("CONNS", "50"))
IDLE = int(os.environ.get("IDLE", "10000"))
BUILD = os.path.realpath(os.environ.get("KILN_BUILD", os.path.join(ROOT, "build")))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "websocket.md"))
ECHO = os.path.join(ROOT, "bench", "clients", "ws-echo-go", "bin", "ws-echo")
ACTIX = os.path.join(ROOT, "bench", "peers", "actix-ws", "target", "release", "actix-ws-echo")
SIZES = [64, 16384]


def echo(url, size, seconds):
    """(messages/s, p50 us, p99 us, errors) from one ws-echo run."""
    r = subprocess.run([ECHO, "-url", url, "-c", str(CONNS), "-d", "%ds" % seconds, "-size", str(size)],
                       capture_output=True, text=True, timeout=seconds + 60, env=dict(os.environ, GOMAXPROCS="1"))
    m = re.search(r"result msgs_per_s=(\S+) p50_us=(\d+) p99_us=(\d+) errors=(\d+)", r.stdout)
    if not m:
        sys.exit("websocket.py: no ws-echo result for %s:\n%s%s" % (url, r.stdout[-2000:], r.stderr[-2000:]))
    return float(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))


def wrk_latency(url, seconds):
    """(requests/s, p99 ms) of wrk on url."""
    out = subprocess.run(["wrk", "-t", "1", "-c", "50", "-d", "%ds" % seconds, "--latency", url],
                         capture_output=True, text=True, timeout=seconds + 60).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
    if not rps or not p99:
        sys.exit("websocket.py: no wrk summary for %s:\n%s" % (url, out[-2000:]))
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    return float(rps.group(1)), float(p99.group(1)) * scale


def idle_run(port, pid, path, plaintext_url):
    """KiB of RSS per idle WebSocket, and wrk's p99 while they are open."""
    hold = DURATION + 8
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "idle_conns.py"), "--port", str(port),
                             "--pid", str(pid), "-n", str(IDLE), "--websocket", path, "--hold", str(hold)],
                            stdout=subprocess.PIPE, text=True)
    line = ""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:  # the result line comes once every WebSocket is open
        line = proc.stdout.readline()
        if not line or line.startswith("result "):
            break
    m = re.search(r"kib_per_conn=(\S+) open=(\d+)", line)
    if not m:
        proc.kill()
        sys.exit("websocket.py: idle WebSockets did not open: %r" % line)
    rps, p99 = wrk_latency(plaintext_url, DURATION)
    rest = proc.communicate(timeout=hold + 120)[0]
    return float(m.group(1)), int(m.group(2)), rps, p99, rest.strip().splitlines()[-1:] if rest else []


def main():
    procs = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    echo_rows, idle_rows = [], []
    try:
        kp, ap = free_port(), free_port()
        k = start([os.path.join(BUILD, "bin", "hello"), "--port", str(kp), "--workers", "0", "--threads", "1"],
                  kp, procs, "kiln", "websocket.py", env=env, cwd=ROOT)
        a = start([ACTIX, str(ap), "1"], ap, procs, "actix-ws", "websocket.py")
        servers = {"kiln": ("ws://127.0.0.1:%d/echo" % kp, k.pid), "actix-ws": ("ws://127.0.0.1:%d/ws" % ap, a.pid)}

        for size in SIZES:
            for url, _ in servers.values():
                echo(url, size, WARMUP)
            results = {name: [] for name in servers}
            for _ in range(ROUNDS):
                for name, (url, pid) in servers.items():  # alternating within each round
                    before = tree_ticks(pid)
                    t0 = time.monotonic()
                    mps, p50, p99, errors = echo(url, size, DURATION)
                    elapsed = time.monotonic() - t0
                    cpu = (tree_ticks(pid) - before) * 1000.0 / HZ / max(mps * DURATION, 1) * 1000.0
                    results[name].append((mps, p50, p99, cpu, errors, elapsed))
            med = {n: tuple(statistics.median(r[i] for r in results[n]) for i in range(4)) +
                   (sum(r[4] for r in results[n]),) for n in results}
            for name in servers:
                echo_rows.append((size, name, *med[name], med[name][0] / med["actix-ws"][0],
                                  med[name][3] / med["actix-ws"][3]))

        for name, port, pid, path in (("kiln", kp, k.pid, "/echo"), ("actix-ws", ap, a.pid, "/ws")):
            plain = "http://127.0.0.1:%d/plaintext" % port
            base_rps, base_p99 = wrk_latency(plain, DURATION)
            kib, opened, rps, p99, _ = idle_run(port, pid, path, plain)
            idle_rows.append((name, kib, opened, base_rps, base_p99, rps, p99))
    finally:
        stop_all(procs)
    write(echo_rows, idle_rows)


def write(echo_rows, idle_rows):
    cpu_model, commit = machine()
    go = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip() if shutil.which("go") else "?"
    out = ["# WebSocket: kiln and actix-ws", "",
           "Generated by `bench/websocket.sh` (bench/websocket.py) on %s, commit %s, %s." % (
               time.strftime("%Y-%m-%d"), commit, cpu_model),
           "Both servers: one worker (kiln `--workers 0 --threads 1`, actix-ws `workers(1)`), no compression;",
           "the client shares the machine's 2 cores (ws-echo with GOMAXPROCS=1; %s)." % go, "",
           "## Echo (%d connections, each in a closed loop; median of %d rounds of %d s)" % (CONNS, ROUNDS, DURATION),
           "", "| message | server | messages/s | p50 µs | p99 µs | server CPU ms / 1k | errors | msgs vs actix-ws "
           "| CPU vs actix-ws |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size, name, mps, p50, p99, cpu, errors, r_mps, r_cpu in echo_rows:
        out.append("| %d B | %s | %.0f | %.0f | %.0f | %.3f | %d | %.2f× | %.2f× |" % (
            size, name, mps, p50, p99, cpu, errors, r_mps, r_cpu))
    out += ["", "## %d idle WebSockets" % IDLE, "",
            "RSS growth of the server per open, idle WebSocket (user space; the kernel's socket buffers are not in",
            "RSS), and wrk (1 thread, 50 connections, %d s) on /plaintext without and with them open." % DURATION, "",
            "| server | KiB per idle WebSocket | open | plaintext req/s alone | p99 ms alone | req/s with them "
            "| p99 ms with them |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, kib, opened, base_rps, base_p99, rps, p99 in idle_rows:
        out.append("| %s | %.2f | %d | %.0f | %.2f | %.0f | %.2f |" % (name, kib, opened, base_rps, base_p99, rps, p99))
    text = "\n".join(out) + "\n"
    with open(OUT, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
