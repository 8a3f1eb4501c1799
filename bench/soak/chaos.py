"""The soak's hostile side (bench/soak.sh), bounded in time: every PERIOD seconds an
aborted request head, an upload cut off mid-body, and a malformed request that must get
a 400 and a close; every RELOAD_EVERY seconds SIGHUP to the supervisor; every
KILL_EVERY seconds SIGKILL to one of its workers (by PID, children of the supervisor
only). Writes one JSON line of counts at the end.

    chaos.py PORT SUPERVISOR_PID SECONDS RELOAD_EVERY KILL_EVERY
"""
import json
import os
import signal
import socket
import sys
import time

port, sup, seconds, reload_every, kill_every = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                                 float(sys.argv[4]), float(sys.argv[5]))
PERIOD = 0.05
counts = {"aborted_heads": 0, "cut_uploads": 0, "malformed": 0, "malformed_not_400": 0, "reloads": 0, "kills": 0,
          "connect_errors": 0}


def children(pid):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    return out


def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    return s


start = time.monotonic()
next_reload = start + reload_every
next_kill = start + kill_every
while time.monotonic() - start < seconds:
    try:
        s = conn()
        s.sendall(b"GET /bootstrap.css HTTP/1.1\r\nHost: soak\r\nUser-Ag")  # and gone
        s.close()
        counts["aborted_heads"] += 1
        s = conn()
        s.sendall(b"POST /upload HTTP/1.1\r\nHost: soak\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                  b"Content-Length: 100000\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n"
                  + b"x" * 3000)
        s.close()
        counts["cut_uploads"] += 1
        s = conn()
        s.sendall(b"GET /\x01bad HTTP/1.1\r\nHost: soak\r\n\r\n")
        data = b""
        try:
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        s.close()
        counts["malformed"] += 1
        if not data.startswith(b"HTTP/1.1 400"):
            counts["malformed_not_400"] += 1
    except OSError:
        counts["connect_errors"] += 1  # a worker was being replaced
    now = time.monotonic()
    if now >= next_reload:
        os.kill(sup, signal.SIGHUP)
        counts["reloads"] += 1
        next_reload += reload_every
    if now >= next_kill:
        kids = children(sup)
        if kids:
            os.kill(kids[0], signal.SIGKILL)
            counts["kills"] += 1
        next_kill += kill_every
    time.sleep(PERIOD)
print(json.dumps(counts))
