"""Samples, once a second, the resident memory (VmRSS, summed) and open descriptors of
each server's process tree, until SECONDS have passed. One CSV line per server and
second: t_s,server,processes,rss_kb,fds. Reads /proc only; signals nothing.

    sample.py OUT.csv SECONDS NAME=PID [NAME=PID ...]
"""
import os
import sys
import time

out, seconds, roots = sys.argv[1], float(sys.argv[2]), [a.split("=") for a in sys.argv[3:]]


def tree(root):
    parent = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    parent[int(p)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    members, changed = {root}, True
    while changed:
        changed = False
        for p, pp in parent.items():
            if pp in members and p not in members:
                members.add(p)
                changed = True
    return [p for p in members if p in parent]


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


start = time.monotonic()
with open(out, "w") as f:
    f.write("t_s,server,processes,rss_kb,fds\n")
    while time.monotonic() - start < seconds:
        t = time.monotonic() - start
        for name, pid in roots:
            members = tree(int(pid))
            f.write("%.1f,%s,%d,%d,%d\n" % (t, name, len(members), sum(rss_kb(p) for p in members),
                                            sum(fds(p) for p in members)))
        f.flush()
        time.sleep(max(0.0, 1.0 - (time.monotonic() - start - t)))
