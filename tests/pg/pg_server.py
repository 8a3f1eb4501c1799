"""A private PostgreSQL for kiln's tests (stdlib only).

    pg_server.py run -- COMMAND...   initdb in a temp dir, start postgres on 127.0.0.1 at a
                                     free port, run COMMAND with KILN_TEST_PG_URL (the URL)
                                     and KILN_TEST_PG_CTL (this script's ctl, below) set,
                                     stop postgres by its PID, exit with COMMAND's status.
    pg_server.py ctl DATADIR stop    fast shutdown of that server, waits until it is down
    pg_server.py ctl DATADIR start   starts it again on the same port, waits until ready
    pg_server.py ctl DATADIR pause MS  SIGSTOP the postmaster for MS milliseconds (sessions go on)

KILN_PG_SETTINGS="name=value ..." adds server settings (postgres -c), e.g.
shared_preload_libraries=pg_stat_statements for a test that counts queries.

The server listens on 127.0.0.1 only, its unix socket lives in the temp dir, and as root
it runs as the `postgres` system user (initdb refuses root). Nothing here skips: if
PostgreSQL cannot be found or started, the run fails and says why. Every wait is bounded,
and only the server started here is ever signalled, by its own PID.
"""

import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

START_TIMEOUT = 30.0  # seconds until pg_isready says yes
STOP_TIMEOUT = 30.0   # seconds for a fast shutdown before SIGKILL
STATE = "kiln-pg.json"


def fail(message):
    sys.stderr.write("pg_server: " + message + "\n")
    sys.exit(2)


def find_bindir():
    if os.environ.get("KILN_PG_BINDIR"):  # given: that one only
        candidates = [os.environ["KILN_PG_BINDIR"]]
    else:
        candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                            key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0, reverse=True)
        on_path = shutil.which("postgres")
        if on_path:
            candidates.append(os.path.dirname(on_path))
    for d in candidates:
        if all(os.access(os.path.join(d, b), os.X_OK) for b in ("initdb", "postgres", "pg_isready")):
            return d
    fail("PostgreSQL server binaries (initdb, postgres, pg_isready) not found in " + ", ".join(candidates or ["PATH"]) +
         ": install Debian's postgresql (scripts/deps.sh) or set KILN_PG_BINDIR")


def server_user():
    """(user, uid, gid) to run the server as: the postgres system user when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"],
                       check=False)
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            fail("running as root, and there is no `postgres` user to run the server as (useradd failed)")
    return pw


def as_user(pw):
    if pw is None:
        return {}
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def postmaster_pid(datadir):
    try:
        with open(os.path.join(datadir, "postmaster.pid")) as f:
            return int(f.readline().strip())
    except (OSError, ValueError):
        return None


def log_tail(state):
    try:
        with open(state["log"], errors="replace") as f:
            return "".join(f.readlines()[-20:])
    except OSError:
        return "(no log)"


def start(state):
    """Starts postgres from state; returns the Popen. Fails with the log if it never gets ready."""
    pw = server_user()
    log = open(state["log"], "ab")
    args = [os.path.join(state["bindir"], "postgres"), "-D", state["datadir"], "-p", str(state["port"]),
            "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + state["socketdir"],
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            "-c", "max_connections=40", "-c", "shared_buffers=16MB"]
    for setting in os.environ.get("KILN_PG_SETTINGS", "").split():  # name=value, later ones win
        args += ["-c", setting]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                            **as_user(pw))
    log.close()
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            fail("postgres exited with status %d while starting; its log:\n%s" % (proc.returncode, log_tail(state)))
        r = subprocess.run([os.path.join(state["bindir"], "pg_isready"), "-h", "127.0.0.1", "-p", str(state["port"]),
                            "-t", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return proc
        time.sleep(0.1)
    proc.kill()
    proc.wait()
    fail("postgres was not ready after %.0f s; its log:\n%s" % (START_TIMEOUT, log_tail(state)))


def stop(state):
    """Fast shutdown of the server running on state's data dir (its PID from postmaster.pid)."""
    pid = postmaster_pid(state["datadir"])
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGINT)  # fast shutdown: sessions are ended, then it exits
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        # The pid file goes when it is down (the process may linger as our zombie).
        if postmaster_pid(state["datadir"]) != pid:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(command):
    bindir = find_bindir()
    pw = server_user()
    root = tempfile.mkdtemp(prefix="kiln-pg-")
    state = {"bindir": bindir, "datadir": os.path.join(root, "data"), "socketdir": root,
             "log": os.path.join(root, "server.log"), "port": free_port()}
    if pw is not None:
        os.chown(root, pw.pw_uid, pw.pw_gid)
    os.chmod(root, 0o700)
    proc = None
    try:
        r = subprocess.run([os.path.join(bindir, "initdb"), "-D", state["datadir"], "-U", "kiln", "-A", "trust",
                            "-E", "UTF8", "--no-sync", "--no-instructions"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **as_user(pw))
        if r.returncode != 0:
            fail("initdb failed:\n" + r.stdout.decode(errors="replace"))
        with open(os.path.join(state["datadir"], STATE), "w") as f:
            json.dump(state, f)
        for _attempt in range(3):  # the free port may have been taken meanwhile
            try:
                proc = start(state)
                break
            except SystemExit:
                if "could not bind" not in log_tail(state) and "already in use" not in log_tail(state):
                    raise
                state["port"] = free_port()
                with open(os.path.join(state["datadir"], STATE), "w") as f:
                    json.dump(state, f)
        env = dict(os.environ)
        env["KILN_TEST_PG_URL"] = "postgresql://kiln@127.0.0.1:%d/postgres" % state["port"]
        env["KILN_TEST_PG_CTL"] = "%s %s ctl %s" % (sys.executable, os.path.abspath(__file__), state["datadir"])
        try:
            return subprocess.call(command, env=env)
        except OSError as e:
            fail("cannot run %s: %s" % (command[0] if command else "(no command)", e))
    finally:
        stop(state)
        if proc is not None:
            try:
                proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def ctl(datadir, action, arg=None):
    with open(os.path.join(datadir, STATE)) as f:
        state = json.load(f)
    if action == "stop" and arg is None:
        stop(state)
    elif action == "start" and arg is None:
        start(state)  # left running (in its own session); run()'s stop() ends it by PID
    elif action == "pause" and arg is not None:
        # The postmaster only: sessions under way go on, new connections are accepted
        # by the kernel and then get no answer (a server that is stuck).
        pid = postmaster_pid(state["datadir"])
        if pid is None:
            fail("ctl: no postmaster to pause")
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(int(arg) / 1000.0)
        finally:
            os.kill(pid, signal.SIGCONT)
    else:
        fail("ctl: unknown action " + action)
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "run" and argv[1] == "--":
        return run(argv[2:])
    if len(argv) in (3, 4) and argv[0] == "ctl":
        return ctl(*argv[1:])
    fail("usage: pg_server.py run -- COMMAND... | pg_server.py ctl DATADIR stop|start|pause MS")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
