"""The cluster's costs on this machine (bench/cluster.sh runs this inside a private
PostgreSQL and Redis; see there for the environment variables).

1. The blog (examples/blog) with PostgreSQL and Redis sessions: its index (GET /posts,
   no session) and post creation (POST /posts, logged in: a Redis session read, a
   PostgreSQL insert and a session write with the flash) through HAProxy to two nodes,
   and straight to one node.
2. The session study's read and write scenarios (examples/generic, `kiln bench`) with
   the Redis session store and with the shared-memory one.

Every run reports requests/s and the CPU time per 1,000 requests of each part:
HAProxy, the nodes (supervisor and workers), PostgreSQL (postmaster and backends),
Redis, and the load client. On a 2-core machine these are overheads, not scaling."""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
sys.path.insert(0, os.path.join(ROOT, "bench", "lib"))

from test_blog import Client  # noqa: E402
from test_cluster import HAProxy, Node, can_connect, wait_until  # noqa: E402
from servers import free_port  # noqa: E402

DURATION = int(os.environ.get("DURATION", "10"))
WARMUP = int(os.environ.get("WARMUP", "3"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CONNS = int(os.environ.get("CONNS", "32"))
BUILD = os.path.realpath(os.environ.get("KILN_BUILD", os.path.join(ROOT, "build")))
OUT = os.environ.get("OUT", os.path.join(ROOT, "bench", "results", "cluster.md"))
HZ = os.sysconf("SC_CLK_TCK")


def tree_ticks(root_pid):
    """utime+stime (and reaped children's) of root_pid and all its descendants."""
    parent, ticks = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(rest[1])
        ticks[int(d)] = int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])
    tree, changed = {root_pid}, True
    while changed:
        changed = False
        for p, pp in parent.items():
            if p not in tree and pp in tree:
                tree.add(p)
                changed = True
    return sum(ticks.get(p, 0) for p in tree)


def own_ticks():
    with open("/proc/self/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return int(rest[13]) + int(rest[14])  # reaped children: the load clients


class Parts:
    """The processes whose CPU is reported, by name."""

    def __init__(self):
        self.pids = {}

    def snapshot(self):
        snap = {name: tree_ticks(pid) for name, pid in self.pids.items()}
        snap["client"] = own_ticks()
        return snap


def wrk(url, seconds, script=None):
    cmd = ["wrk", "-t", "1", "-c", str(CONNS), "-d", "%ds" % seconds, "--latency"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=seconds + 60).stdout
    reqs = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    bad = (int(non2xx.group(1)) if non2xx else 0) + (sum(int(x) for x in errors.groups()) if errors else 0)
    return reqs, bad, out


def kiln_bench(url, seconds, write):
    args = [os.path.join(BUILD, "bin", "kiln"), "bench", "-b", "100", "-r", "10000", "-c", "2", "-g", "-d",
            str(seconds), "--json"]
    if write:
        args.append("-u")
    p = subprocess.run(args + [url], capture_output=True, text=True, timeout=seconds + 60)
    j = json.loads(p.stdout.strip().splitlines()[-1])
    return j.get("ok", 0), j.get("failed", 0), p.stdout


def measure(parts, run):
    """Runs run() -> (requests, failures, raw); returns rps and CPU ms per 1k by part."""
    before = parts.snapshot()
    t0 = time.monotonic()
    reqs, bad, raw = run()
    elapsed = time.monotonic() - t0
    after = parts.snapshot()
    cpu = {k: (after[k] - before[k]) * 1000.0 / HZ / max(reqs, 1) * 1000.0 for k in after}
    return {"rps": reqs / elapsed, "requests": reqs, "failed": bad, "cpu": cpu, "raw": raw}


def median_result(results):
    rps = statistics.median(r["rps"] for r in results)
    keys = results[0]["cpu"].keys()
    cpu = {k: statistics.median(r["cpu"][k] for r in results) for k in keys}
    return {"rps": rps, "failed": sum(r["failed"] for r in results), "cpu": cpu,
            "requests": sum(r["requests"] for r in results)}


def posts(db_url):
    return int(subprocess.run(["psql", db_url, "-XAtc", "SELECT count(*) FROM posts"], capture_output=True, text=True,
                              check=True).stdout)


def post_script(tmp, cookie, token):
    path = os.path.join(tmp, "create.lua")
    with open(path, "w") as f:
        f.write('''counter = 0
request = function()
  counter = counter + 1
  local body = "_csrf=%s&title=bench+post+" .. counter .. "&body=written+by+wrk"
  return wrk.format("POST", "/posts", {["Content-Type"] = "application/x-www-form-urlencoded",
                                       ["Cookie"] = "%s"}, body)
end
''' % (token, cookie))
    return path


def main():
    pg_url, redis_url = os.environ["KILN_TEST_PG_URL"], os.environ["KILN_TEST_REDIS_URL"]
    pg_dir = os.environ["KILN_TEST_PG_CTL"].split()[-1]
    redis_dir = os.environ["KILN_TEST_REDIS_CTL"].split()[-1]
    for tool in ("wrk", "haproxy", "psql"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit("cluster.py: %s is needed (scripts/deps.sh bench)" % tool)
    tmp = tempfile.mkdtemp(prefix="kiln-bench-cluster-")
    subprocess.run(["psql", pg_url, "-qc", "DROP DATABASE IF EXISTS bench_blog"], check=True)
    subprocess.run(["psql", pg_url, "-qc", "CREATE DATABASE bench_blog"], check=True)
    db_url = pg_url.rsplit("/", 1)[0] + "/bench_blog"
    base = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    env = dict(base, KILN_DATABASE_URL=db_url, KILN_SESSION_STORE="redis", KILN_REDIS_URL=redis_url,
               KILN_SECRET="bench-cluster-secret-0123456789")
    blog = os.path.join(BUILD, "bin", "blog")
    nodes = [Node("n1", blog, free_port(), env, tmp, workers=1), Node("n2", blog, free_port(), env, tmp, workers=1)]
    proxy = None
    generic_procs = []
    rows = []
    try:
        for n in nodes:
            n.start()
        proxy = HAProxy(tmp, free_port(), nodes)
        wait_until("both nodes up", lambda: list(proxy.states().values()) == ["UP", "UP"])
        parts = Parts()
        parts.pids = {"haproxy": proxy.proc.pid, "node 1": nodes[0].proc.pid, "node 2": nodes[1].proc.pid,
                      "postgresql": int(open(os.path.join(pg_dir, "postmaster.pid")).readline()),
                      "redis": json.load(open(os.path.join(redis_dir, "kiln-redis.json")))["pid"]}
        c = Client(proxy.port)
        c.sign_up("bench@example.org", name="Bench", password="bench password")
        for i in range(30):  # an index with a page of posts on it
            c.create("seed post %d" % i)
        token = c.token("/posts/new")
        cookie = "; ".join("%s=%s" % kv for kv in c.cookies.items())
        script = post_script(tmp, cookie, token)

        targets = [("through HAProxy to 2 nodes", "http://127.0.0.1:%d" % proxy.port),
                   ("straight to 1 node", "http://127.0.0.1:%d" % nodes[0].port)]
        for scenario, path, lua in (("blog index (GET /posts)", "/posts", None),
                                    ("post creation (POST /posts)", "/posts", script)):
            for label, url in targets:
                wrk(url + path, WARMUP, lua)
            results = {label: [] for label, _ in targets}
            for _ in range(ROUNDS):
                for label, url in targets:
                    before = posts(db_url)
                    r = measure(parts, lambda: wrk(url + path, DURATION, lua)[:3])
                    if lua:  # every acknowledged creation is a row: a 303 to /login would count as ok in wrk
                        stored = posts(db_url) - before
                        if stored < r["requests"] * 0.99:
                            sys.exit("cluster.py: %d requests but %d posts stored (%s)" % (r["requests"], stored, label))
                    results[label].append(r)
            for label, _ in targets:
                rows.append(("blog", scenario, label, median_result(results[label])))

        # The session study: shared memory vs Redis, one generic node each in turn.
        generic = os.path.join(BUILD, "bin", "generic")
        for store in ("memory", "redis"):
            port = free_port()
            genv = dict(base, KILN_SESSION_STORE=store, KILN_REDIS_URL=redis_url, KILN_WORKERS="1",
                        KILN_THREADS="1")
            log = open(os.path.join(tmp, "generic-%s.log" % store), "ab")
            p = subprocess.Popen([generic, "--port", str(port)], env=genv, cwd=ROOT, stdout=log, stderr=log,
                                 start_new_session=True)
            generic_procs.append(p)
            wait_until("the generic app answers", lambda: can_connect(port))
            sparts = Parts()
            sparts.pids = {"node": p.pid, "redis": parts.pids["redis"]}
            url = "http://127.0.0.1:%d/" % port
            for write in (False, True):
                kiln_bench(url, WARMUP, write)
                res = [measure(sparts, lambda: kiln_bench(url, DURATION, write)) for _ in range(ROUNDS)]
                rows.append(("study", "session study, %s scenario" % ("write" if write else "read"),
                             "%s store" % store, median_result(res)))
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=20)
    finally:
        for p in generic_procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        if proxy:
            proxy.stop()
        for n in nodes:
            n.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    write_report(rows)


def growth(rows):
    """How throughput would grow with nodes, from the per-request CPU measured here."""
    def row(scenario, label):
        for kind, s, l, r in rows:
            if kind == "blog" and s.startswith(scenario) and l.startswith(label):
                return r
        return None
    out = ["## How it grows, on paper", "",
           "From the CPU each request cost above (one core = 1,000,000 ms of CPU per 1,000 s): the requests per"
           " second one core of each part sustains, if it did nothing else. A node is one core's worth of"
           " loops here; nodes add up until the shared parts are full.", "",
           "| scenario | per node core | per HAProxy core | per PostgreSQL core | per Redis core |", "| --- | --- | --- | --- | --- |"]
    for scenario in ("blog index", "post creation"):
        direct, balanced = row(scenario, "straight"), row(scenario, "through")
        if not direct or not balanced:
            continue
        def per_core(ms):
            return "%.0f" % (1_000_000.0 / ms) if ms > 0.05 else "not used"
        out.append("| %s | %s | %s | %s | %s |" % (scenario, per_core(direct["cpu"]["node 1"]),
                                                   per_core(balanced["cpu"]["haproxy"]),
                                                   per_core(direct["cpu"]["postgresql"]), per_core(direct["cpu"]["redis"])))
    out += ["", "So with N nodes of C cores each, throughput grows as N x C x (per node core) until the first"
            " shared part fills: PostgreSQL first for writes (each creation reads its user and inserts the"
            " post; each index page is a COUNT and a SELECT), then HAProxy; Redis, at one GETEX and one EVAL per logged-in request, is"
            " the last. Past that: PostgreSQL read replicas for the index, a second HAProxy (DNS or a"
            " layer-4 balancer in front), and Redis sharded by session id.", ""]
    return out


def write_report(rows):
    cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    out = ["# The cluster: what a balancer and shared stores cost", "",
           "`DURATION=%d WARMUP=%d ROUNDS=%d CONNS=%d bash bench/cluster.sh` on %s (%d cores), kiln %s, %s." %
           (DURATION, WARMUP, ROUNDS, CONNS, cpu_model, os.cpu_count(), commit, time.strftime("%Y-%m-%d")),
           "", "Each cell is the median of %d rounds (the variants alternate). CPU: milliseconds of CPU time"
           " (utime+stime from /proc, every process of the part) per 1,000 requests. PostgreSQL runs with"
           " tests/pg/pg_server.py's settings (fsync, synchronous_commit and full_page_writes off: durability is"
           " not what is measured); Redis with its append-only file on (appendfsync everysec). Every"
           " acknowledged post creation was checked to be a row." % ROUNDS, "",
           "Everything shares the same 2 cores: the client, HAProxy, both nodes, PostgreSQL and Redis."
           " So the two-node rows show what the balancer and a second process cost, not scaling: a"
           " second node here only takes cores the first one had.", ""]
    for kind, title in (("blog", "The blog on PostgreSQL with Redis sessions (each node: 1 worker, 1 thread; wrk -t1 -c%d)" % CONNS),
                        ("study", "The session study (examples/generic, 1 worker, 1 thread; kiln bench -b 100 -c 2 -g, write adds -u)")):
        sel = [r for r in rows if r[0] == kind]
        if not sel:
            continue
        parts = list(sel[0][3]["cpu"].keys())
        out += ["## " + title, "", "| scenario | path | req/s | failed | " + " | ".join("CPU %s" % p for p in parts) + " |",
                "|" + " --- |" * (4 + len(parts))]
        for _, scenario, label, r in sel:
            out.append("| %s | %s | %.0f | %d | %s |" % (scenario, label, r["rps"], r["failed"],
                                                         " | ".join("%.1f" % r["cpu"][p] for p in parts)))
        out.append("")
    out += growth(rows)
    with open(OUT, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
