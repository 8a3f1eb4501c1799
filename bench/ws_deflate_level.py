"""permessage-deflate: what zlib's level costs kiln. The test server's /ws/echo codes
what it sends at kiln's default level (WsOptions::compression_level = 1) and
/ws/echo-level6 at zlib's default (6). Autobahn's largest compressed-echo cases, run
by kosoku (scripts/kosoku.sh), send 1,000 messages of 128 KiB each:

  12.2.15  a bitmap (binary, barely compressible)
  12.3.15  Goethe (text)
  12.5.15  a PDF (binary)

For each case and level: the server's CPU (utime+stime from /proc, one process,
--workers 0) per case, the bytes the client received (the compressed echoes), and
the wall time. Medians over ROUNDS, the two levels alternating first.
bench/ws_deflate_level.sh runs this."""

import json
import os
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

ROUNDS = int(os.environ.get("ROUNDS", "3"))
CASES = os.environ.get("CASES", "12.2.15 12.3.15 12.5.15").split()
BUILD = os.environ.get("KILN_BUILD", os.path.join(ROOT, "build"))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "ws-deflate-level.md"))
ENDPOINTS = [("1 (kiln's default)", "/ws/echo"), ("6 (zlib's default)", "/ws/echo-level6")]


def run_case(kosoku, server_pid, port, path, case, out):
    before = tree_ticks(server_pid)
    t0 = time.monotonic()
    r = subprocess.run([kosoku, "-m", "fuzzingclient", "-i", case, "-o", out,
                        "ws://127.0.0.1:%d%s" % (port, path)], capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    cpu = (tree_ticks(server_pid) - before) / HZ
    with open(os.path.join(out, "kiln_case_%s.json" % case.replace(".", "_"))) as f:
        report = json.load(f)
    if r.returncode != 0 or report["behavior"] not in ("OK", "NON-STRICT", "INFORMATIONAL"):
        sys.exit("ws_deflate_level: case %s on %s failed: %s %s" % (case, path, report["behavior"], r.stderr[-2000:]))
    received = sum(int(size) * count for size, count in report["rxOctetStats"].items())
    return cpu, received, wall


def main():
    kosoku = subprocess.run(["bash", os.path.join(ROOT, "scripts", "kosoku.sh")], capture_output=True, text=True,
                            check=True).stdout.strip()
    server = os.path.join(BUILD, "tests", "kiln_test_server")
    if not os.access(server, os.X_OK):
        sys.exit("ws_deflate_level: no %s (make build)" % server)
    procs = []
    results = {}  # (case, level label) -> [(cpu, bytes, wall)]
    try:
        port = free_port()
        p = start([server, "--port", str(port), "--workers", "0"], port, procs, "kiln", who="ws_deflate_level")
        with tempfile.TemporaryDirectory() as out:
            for rnd in range(ROUNDS):
                order = ENDPOINTS if rnd % 2 == 0 else ENDPOINTS[::-1]
                for case in CASES:
                    for label, path in order:
                        got = run_case(kosoku, p.pid, port, path, case, out)
                        results.setdefault((case, label), []).append(got)
                        print("round %d %s level %s: %.2f s CPU, %d bytes, %.1f s" % (rnd + 1, case, label, *got),
                              flush=True)
    finally:
        stop_all(procs)

    lines = ["# permessage-deflate: zlib level 1 against 6", "",
             "Command: `ROUNDS=%d bash bench/ws_deflate_level.sh` on %s, at %s." % (ROUNDS, *machine()), "",
             "Autobahn's cases (kosoku), 1,000 messages of 128 KiB echoed with permessage-deflate; "
             "kiln_test_server with one loop (`--workers 0`). Server CPU is its utime+stime for the "
             "case; bytes are what the client received. Medians of %d rounds." % ROUNDS, "",
             "| case | level | server CPU s | bytes received | wall s |", "| --- | --- | ---: | ---: | ---: |"]
    for case in CASES:
        for label, _ in ENDPOINTS:
            runs = results[(case, label)]
            med = [statistics.median(r[i] for r in runs) for i in range(3)]
            lines.append("| %s | %s | %.2f | %s | %.1f |" % (case, label, med[0], format(int(med[1]), ","), med[2]))
    text = "\n".join(lines) + "\n"
    print(text)
    with open(OUT, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
