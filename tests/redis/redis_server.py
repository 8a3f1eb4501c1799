"""A private Redis for kiln's tests (stdlib only).

    redis_server.py run -- COMMAND...   start redis-server on 127.0.0.1 at a free port, its
                                        data (append-only file on) in a temp dir; run COMMAND
                                        with KILN_TEST_REDIS_URL and KILN_TEST_REDIS_CTL set;
                                        stop the server by its PID; exit with COMMAND's status.
    redis_server.py ctl DIR stop        SIGTERM that server (it writes its AOF), wait until gone
    redis_server.py ctl DIR start       start it again on the same port and data, wait until ready
    redis_server.py ctl DIR pause MS    SIGSTOP it for MS milliseconds, then SIGCONT (a stuck server)

Nothing here skips: if redis-server cannot be found or started, the run fails and says
why (exit 2). Every wait is bounded, and only the server started here is ever signalled,
by its own PID.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0
STATE = "kiln-redis.json"


def fail(message):
    sys.stderr.write("redis_server: " + message + "\n")
    sys.exit(2)


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ping(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as c:
            c.sendall(b"PING\r\n")
            return c.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start(state):
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.access(binary, os.X_OK):
        fail("redis-server not found: install Debian's redis-server (scripts/deps.sh)")
    args = [binary, "--port", str(state["port"]), "--bind", "127.0.0.1", "--dir", state["dir"],
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no",
            "--logfile", os.path.join(state["dir"], "redis.log"), "--protected-mode", "yes"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, start_new_session=True)
    state["pid"] = proc.pid
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log = open(os.path.join(state["dir"], "redis.log"), errors="replace").read()[-2000:]
            fail("redis-server exited with status %d:\n%s" % (proc.returncode, log))
        if ping(state["port"]):
            save(state)
            return proc
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    fail("redis-server did not answer PING within %.0f s" % START_TIMEOUT)


def stop(state):
    pid = state.get("pid")
    if not pid:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
        except ChildProcessError:  # not our child (ctl from another process): gone, or a zombie
            if not alive(pid):
                break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
    state["pid"] = None
    save(state)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def save(state):
    with open(os.path.join(state["dir"], STATE), "w") as f:
        json.dump(state, f)


def load(directory):
    with open(os.path.join(directory, STATE)) as f:
        return json.load(f)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "run" and sys.argv[2] == "--":
        command = sys.argv[3:]
        if not command:
            fail("run -- needs a command")
        directory = tempfile.mkdtemp(prefix="kiln-redis-")
        state = {"dir": directory, "port": free_port(), "pid": None}
        start(state)
        env = dict(os.environ)
        env["KILN_TEST_REDIS_URL"] = "redis://127.0.0.1:%d" % state["port"]
        env["KILN_TEST_REDIS_CTL"] = "%s %s ctl %s" % (sys.executable, os.path.abspath(__file__), directory)
        try:
            status = subprocess.call(command, env=env)
        finally:
            stop(load(directory))
            shutil.rmtree(directory, ignore_errors=True)
        sys.exit(status)
    if len(sys.argv) >= 4 and sys.argv[1] == "ctl":
        state = load(sys.argv[2])
        action = sys.argv[3]
        if action == "stop":
            stop(state)
        elif action == "start":
            if state.get("pid"):
                fail("the server is running")
            start(state)
        elif action == "pause" and len(sys.argv) == 5:
            os.kill(state["pid"], signal.SIGSTOP)
            time.sleep(int(sys.argv[4]) / 1000.0)
            os.kill(state["pid"], signal.SIGCONT)
        else:
            fail("ctl DIR stop|start|pause MS")
        return
    fail(__doc__)


if __name__ == "__main__":
    main()
