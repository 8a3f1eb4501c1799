"""What bench/tls.py and bench/h2.py share: free ports, starting and stopping the
servers they compare (each in its own session, stopped by process group), a
throwaway certificate, and the nginx settings common to both."""

import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, who="bench"):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("%s: a server exited at start" % who)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("%s: a server did not start" % who)


def start(cmd, port, procs, name, who="bench", **kw):
    """Starts cmd in a session of its own, waits for port; appended to procs."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, **kw)
    procs.append((name, p))
    wait_port(port, p, who)
    return p


def stop_all(procs):
    for _, p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def self_signed(tmp):
    """An EC P-256 certificate for localhost in tmp: (cert path, key path)."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost"], check=True,
                   capture_output=True)
    return cert, key


def nginx_conf(tmp, cert, key, servers):
    """An nginx.conf in tmp: one worker, no logs, sendfile, the certificate, and the
    given server blocks. Returns its path."""
    os.makedirs(os.path.join(tmp, "nginx"), exist_ok=True)
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
%(servers)s
}
""" % {"tmp": tmp, "cert": cert, "key": key, "servers": servers})
    return conf


def start_nginx(tmp, conf, port, procs, who="bench"):
    user = ["-g", "user root;"] if os.geteuid() == 0 else []
    return start(["nginx", "-p", tmp, "-c", conf, "-e", os.path.join(tmp, "error.log"), *user], port, procs, "nginx",
                 who)


def machine():
    """(cpu model, commit) for a results header."""
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    commit = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    return cpu, commit
