"""HTTPS against HTTP on this machine: kiln (examples/generic, one process, one loop)
and nginx (one worker) serving the same static files (servers.jpg, 100 KiB, and
bootstrap.css, 200 KiB) over plain TCP and over TLS with the same certificate, loaded
by wrk over keep-alive connections. Reports requests/s, MiB/s and each server's CPU
time per 1,000 requests (utime+stime from /proc, every process of the server).
bench/tls.sh runs this."""

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from cluster import tree_ticks, HZ  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
WARMUP = int(os.environ.get("WARMUP", "3"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNS = int(os.environ.get("CONNS", "32"))
BUILD = os.path.realpath(os.environ.get("KILN_BUILD", os.path.join(ROOT, "build")))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "tls.md"))
PUBLIC = os.path.join(ROOT, "examples", "generic", "public")
FILES = [("servers.jpg (100 KiB)", "/servers.jpg"), ("bootstrap.css (200 KiB)", "/bootstrap.css")]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("tls.py: a server exited at start")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("tls.py: a server did not start")


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
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost"], check=True,
                   capture_output=True)
    procs = []
    ports = {n: free_port() for n in ("kiln http", "kiln https", "nginx http", "nginx https")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    try:
        generic = os.path.join(BUILD, "bin", "generic")
        for name, extra in (("kiln http", []), ("kiln https", ["--tls-cert", cert, "--tls-key", key])):
            p = subprocess.Popen([generic, "--port", str(ports[name]), "--workers", "0", "--threads", "1", *extra],
                                 env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            procs.append((name, p))
            wait_port(ports[name], p)
        os.makedirs(os.path.join(tmp, "nginx"))
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""worker_processes 1;
daemon off;
master_process on;
pid %(tmp)s/nginx.pid;
error_log %(tmp)s/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server_tokens off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    client_body_temp_path %(tmp)s/nginx;
    proxy_temp_path %(tmp)s/nginx;
    fastcgi_temp_path %(tmp)s/nginx;
    uwsgi_temp_path %(tmp)s/nginx;
    scgi_temp_path %(tmp)s/nginx;
    types { image/jpeg jpg; text/css css; }
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_certificate %(cert)s;
    ssl_certificate_key %(key)s;
    server { listen 127.0.0.1:%(http)d; root %(root)s; }
    server { listen 127.0.0.1:%(https)d ssl; root %(root)s; }
}
""" % {"tmp": tmp, "cert": cert, "key": key, "http": ports["nginx http"], "https": ports["nginx https"],
       "root": PUBLIC})
        user = ["-g", "user root;"] if os.geteuid() == 0 else []
        p = subprocess.Popen(["nginx", "-p", tmp, "-c", conf, "-e", os.path.join(tmp, "error.log"), *user],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        procs.append(("nginx", p))
        wait_port(ports["nginx https"], p)
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
        for _, p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    write(rows)


def write(rows):
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
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
