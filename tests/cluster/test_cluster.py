"""Two blog nodes behind HAProxy, on one PostgreSQL and one Redis, through faults.

Run inside tests/pg/pg_server.py and tests/redis/redis_server.py (ctest does), which
start PostgreSQL and Redis (append-only file on) on 127.0.0.1 and give their URLs and
ctl commands. This script starts HAProxy (round robin, health checks on /health) and
two blog nodes (each a supervisor with 2 workers, --database-url, --session-store
redis), all on ports it picks, and stops them by PID. A client signs up and logs in
through HAProxy, then writes posts in a loop while the test:

1. kills one node's whole process group with SIGKILL: the client stays logged in on
   the other node, and errors are limited to requests in flight on the killed node;
2. restarts that node: HAProxy routes to it again, and it sees the same session;
3. restarts Redis: sessions survive, and during the restart requests get 503, never
   a log-out;
4. restarts PostgreSQL: writes in flight fail cleanly, then writing resumes by itself;
5. starts a third node, on a new database, while PostgreSQL and Redis are both down:
   it starts, its /health answers 503 naming both, and once they are back it becomes
   healthy (migrating its database) and serves by itself.

Afterwards every post whose creation was acknowledged (303 to the new post) is in the
database, none twice. Prints a summary: requests, acknowledged writes, writes found,
errors by kind. Nothing skips: a missing binary fails the run with the reason."""

import argparse
import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import harness  # noqa: E402
from test_blog import Client  # noqa: E402

HOST = "127.0.0.1"
PHASE_TIMEOUT = 30.0  # seconds for any one wait below
POST = re.compile(r"^/posts/(\d+)$")


def fail(message):
    sys.stderr.write("cluster test: FAILED: " + message + "\n")
    sys.exit(1)


def wait_until(what, predicate, timeout=PHASE_TIMEOUT, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(step)
    fail("timed out waiting until " + what)


def can_connect(port):
    try:
        socket.create_connection((HOST, port), timeout=0.5).close()
        return True
    except OSError:
        return False


class Node:
    """One blog node: a supervisor and its workers in a process group of their own."""

    def __init__(self, name, binary, port, env, tmp, workers=2):
        self.name, self.binary, self.port, self.env, self.workers = name, binary, port, env, workers
        self.log_path = os.path.join(tmp, name + ".log")
        self.proc = None

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--workers", str(self.workers), "--threads", "1",
             "--health-path", "/health"],
            env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        log.close()
        wait_until(self.name + " accepts connections", lambda: self.proc.poll() is None and can_connect(self.port))

    def kill_group(self):
        os.killpg(self.proc.pid, signal.SIGKILL)  # its own group: the supervisor and its workers
        self.proc.wait(timeout=10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)

    def output(self):
        try:
            return open(self.log_path, errors="replace").read()[-4000:]
        except OSError:
            return ""


class HAProxy:
    def __init__(self, tmp, port, nodes):
        self.sock = os.path.join(tmp, "haproxy.sock")
        self.cfg = os.path.join(tmp, "haproxy.cfg")
        self.port = port
        servers = "\n".join("    server %s %s:%d check" % (n.name, HOST, n.port) for n in nodes)
        with open(self.cfg, "w") as f:
            f.write("""global
    stats socket %s level admin
    maxconn 512
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
    # A node is checked every 200 ms; a killed one refuses at once. A slow /health
    # on a busy machine (ctest -j2 on 2 cores) is given 1 s before it counts as failed.
    timeout check 1s
    default-server inter 200ms fall 2 rise 2
frontend web
    bind %s:%d
    default_backend blog
backend blog
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
%s
""" % (self.sock, HOST, port, servers))
        exe = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not os.access(exe, os.X_OK):
            fail("haproxy not found: install Debian's haproxy (scripts/deps.sh)")
        self.log = open(os.path.join(tmp, "haproxy.log"), "ab")
        self.proc = subprocess.Popen([exe, "-db", "-f", self.cfg], stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=self.log)
        wait_until("HAProxy accepts connections", lambda: self.proc.poll() is None and can_connect(port))

    def states(self):
        """{server: "UP" | "DOWN" | ...} from the stats socket."""
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(self.sock)
            s.sendall(b"show stat\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
        except OSError:
            return {}
        out = {}
        lines = data.decode().splitlines()
        if not lines:
            return out
        cols = lines[0].lstrip("# ").split(",")
        for line in lines[1:]:
            row = dict(zip(cols, line.split(",")))
            if row.get("pxname") == "blog" and row.get("svname") not in ("BACKEND", "FRONTEND", None):
                out[row["svname"]] = row.get("status", "")
        return out

    def cpu_ticks(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.log.close()


class Writer(threading.Thread):
    """Creates posts through HAProxy in a loop, recording what each attempt got."""

    def __init__(self, client, token):
        super().__init__(daemon=True)
        self.client, self.token = client, token
        self.stop_flag = threading.Event()
        self.lock = threading.Lock()
        self.requests = 0
        self.acked = []                          # titles whose creation was acknowledged
        self.errors = collections.Counter()      # kind -> count
        self.phase = "start"
        self.by_phase = collections.defaultdict(collections.Counter)
        self.logouts = 0
        self.n = 0

    def run(self):
        while not self.stop_flag.is_set():
            self.n += 1
            title = "cluster post %06d" % self.n
            kind = None
            try:
                r = self.client.post("/posts", [("_csrf", self.token), ("title", title), ("body", "written in a loop")])
                loc = r.header("Location") or ""
                if r.status == 303 and POST.match(loc):
                    kind = "ok"
                elif r.status == 303 and loc.startswith("/login"):
                    kind = "logged out"
                elif r.status == 503 and b"No server is available" in r.body:
                    kind = "503 from HAProxy: no node up"  # both health checks failed
                else:
                    kind = "status %d" % r.status
            except (OSError, RuntimeError, AssertionError) as e:
                kind = "connection: " + type(e).__name__
            with self.lock:
                self.requests += 1
                if kind == "ok":
                    self.acked.append(title)
                else:
                    self.errors[kind] += 1
                    if kind == "logged out":
                        self.logouts += 1
                self.by_phase[self.phase][kind] += 1
            time.sleep(0.01)

    def set_phase(self, name):
        with self.lock:
            self.phase = name

    def oks(self):
        with self.lock:
            return len(self.acked)

    def wait_for_oks(self, more, what):
        start = self.oks()
        wait_until(what + " (%d more acknowledged writes)" % more, lambda: self.oks() >= start + more)


def logged_in(client):
    r = client.get("/posts/new")
    return r.status == 200


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--blog", required=True)
    args = parser.parse_args()
    pg_url, pg_ctl = os.environ.get("KILN_TEST_PG_URL"), os.environ.get("KILN_TEST_PG_CTL")
    redis_url, redis_ctl = os.environ.get("KILN_TEST_REDIS_URL"), os.environ.get("KILN_TEST_REDIS_CTL")
    if not (pg_url and pg_ctl and redis_url and redis_ctl):
        fail("run inside tests/pg/pg_server.py and tests/redis/redis_server.py (ctest does)")

    tmp = tempfile.mkdtemp(prefix="kiln-cluster-")
    db_name = "cluster_blog"
    harness.psql(pg_url, "DROP DATABASE IF EXISTS %s" % db_name)
    harness.psql(pg_url, "CREATE DATABASE %s" % db_name)
    db_url = pg_url.rsplit("/", 1)[0] + "/" + db_name
    base = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}  # the test's own, not settings
    env = dict(base, KILN_DATABASE_URL=db_url, KILN_SESSION_STORE="redis", KILN_REDIS_URL=redis_url,
               KILN_SECRET="cluster-test-secret-0123456789", BLOG_DB=os.path.join(tmp, "unused.sqlite"))
    nodes = [Node("n1", args.blog, harness.free_port(), env, tmp), Node("n2", args.blog, harness.free_port(), env, tmp)]
    proxy = None
    writer = None
    ok = False
    try:
        for n in nodes:
            n.start()
        proxy = HAProxy(tmp, harness.free_port(), nodes)
        wait_until("HAProxy sees both nodes up", lambda: list(proxy.states().values()) == ["UP", "UP"])

        client = Client(proxy.port)
        client.sign_up("cluster@example.org", name="Cluster", password="cluster password")
        if not logged_in(client):
            fail("not logged in after signing up through HAProxy")
        token = client.token("/posts/new")
        writer = Writer(client, token)
        writer.start()
        writer.wait_for_oks(20, "writes through both nodes")

        # 1. SIGKILL one node's whole process group mid-run.
        writer.set_phase("node killed")
        nodes[0].kill_group()
        wait_until("HAProxy marks n1 down", lambda: proxy.states().get("n1", "").startswith("DOWN"))
        writer.wait_for_oks(20, "writes on the surviving node")
        if not logged_in(client):
            fail("logged out after a node was killed")

        # 2. Restart it: routed to again, and it sees the same session.
        writer.set_phase("node restarted")
        nodes[0].start()
        wait_until("HAProxy marks n1 up again", lambda: proxy.states().get("n1") == "UP")
        direct = Client(nodes[0].port)
        direct.cookies = dict(client.cookies)
        if not logged_in(direct):
            fail("the restarted node does not see the session")
        writer.wait_for_oks(20, "writes through both nodes again")

        # 3. Restart Redis: 503 meanwhile, never a log-out; sessions survive (AOF).
        writer.set_phase("redis restart")
        if subprocess.call(redis_ctl + " stop", shell=True) != 0:
            fail("stopping Redis failed")
        time.sleep(0.5)
        r = client.get("/posts/new")
        if r.status != 503:
            fail("with Redis down a page that needs the session answered %d, not 503" % r.status)
        if subprocess.call(redis_ctl + " start", shell=True) != 0:
            fail("starting Redis failed")
        wait_until("the session is back after the Redis restart", lambda: logged_in(client))
        writer.wait_for_oks(20, "writes after the Redis restart")

        # 4. Restart PostgreSQL: writes in flight fail cleanly, then resume.
        writer.set_phase("postgresql restart")
        if subprocess.call(pg_ctl + " stop", shell=True) != 0:
            fail("stopping PostgreSQL failed")
        time.sleep(0.5)
        if subprocess.call(pg_ctl + " start", shell=True) != 0:
            fail("starting PostgreSQL failed")
        writer.wait_for_oks(20, "writes after the PostgreSQL restart")

        writer.set_phase("end")
        writer.stop_flag.set()
        writer.join(timeout=30)

        # 5. A node started while PostgreSQL and Redis are down.
        fresh_db = db_name + "_cold"
        harness.psql(pg_url, "DROP DATABASE IF EXISTS %s" % fresh_db)
        harness.psql(pg_url, "CREATE DATABASE %s" % fresh_db)
        for ctl in (pg_ctl, redis_ctl):
            if subprocess.call(ctl + " stop", shell=True) != 0:
                fail("stopping a server failed")
        cold_env = dict(env, KILN_DATABASE_URL=pg_url.rsplit("/", 1)[0] + "/" + fresh_db)
        cold = Node("n3", args.blog, harness.free_port(), cold_env, tmp)
        nodes.append(cold)
        cold.start()
        r = Client(cold.port).get("/health")
        if r.status != 503 or b'"database"' not in r.body or b'"sessions"' not in r.body:
            fail("a node without its database and Redis answered /health with %d %r" % (r.status, r.body))
        for ctl in (pg_ctl, redis_ctl):
            if subprocess.call(ctl + " start", shell=True) != 0:
                fail("starting a server failed")
        wait_until("the cold node turns healthy", lambda: Client(cold.port).get("/health").status == 200)
        # /health is one worker's answer: another may still wait out its Redis back-off
        # (up to a second) and answer 503 meanwhile. Every worker serves soon after.
        wait_until("every worker of the cold node serves pages with a session",
                   lambda: all(Client(cold.port).get("/signup").status == 200 for _ in range(6)))
        late = Client(cold.port)
        late.sign_up("late@example.org", name="Late")
        if late.create("after a cold start")[0].status != 303:
            fail("the cold node does not write after recovering")
        print("  cold start          503 while PostgreSQL and Redis were down, healthy once they were back")

        stored = harness.psql(db_url, "SELECT title FROM posts WHERE author_name = 'Cluster' ORDER BY title").splitlines()
        counts = collections.Counter(stored)
        twice = sorted(t for t, c in counts.items() if c > 1)
        lost = sorted(set(writer.acked) - set(counts))
        print("cluster test: %d requests, %d acknowledged writes, %d posts found in PostgreSQL" %
              (writer.requests, len(writer.acked), len(stored)))
        for phase, kinds in writer.by_phase.items():
            print("  %-20s %s" % (phase, ", ".join("%s: %d" % kv for kv in sorted(kinds.items()))))
        print("  errors by kind: %s" % (dict(writer.errors) or "none"))
        if lost:
            fail("%d acknowledged writes are missing: %s" % (len(lost), lost[:5]))
        if twice:
            fail("%d posts were stored twice: %s" % (len(twice), twice[:5]))
        if writer.logouts:
            fail("the client was logged out %d times" % writer.logouts)
        killed = writer.by_phase["node killed"]
        failures = sum(v for k, v in killed.items() if k != "ok")
        if failures > 8:  # what was in flight on the killed node (one client: at most a few)
            fail("%d failed writes while one node was killed: %s" % (failures, dict(killed)))
        for phase in ("start", "node restarted"):
            bad = {k: v for k, v in writer.by_phase[phase].items() if k != "ok"}
            if bad:
                fail("errors with every part up (%s): %s" % (phase, bad))
        ok = True
    finally:
        if writer:
            writer.stop_flag.set()
            writer.join(timeout=30)
        if proxy:
            proxy.stop()
        for n in nodes:
            n.stop()
        if not ok:
            for n in nodes:
                sys.stderr.write("--- %s ---\n%s\n" % (n.name, n.output()))
        shutil.rmtree(tmp, ignore_errors=True)
    print("cluster test: ok")


if __name__ == "__main__":
    main()
