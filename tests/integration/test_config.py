"""Settings: kiln.toml, KILN_<KEY> variables and flags, in that order of precedence;
every malformed file in tests/config/bad/ gives exactly the message its first line
expects, with exit status 2, before anything starts."""
import glob
import http.client
import os
import subprocess
import tempfile
import time
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG_DIR = os.path.join(os.path.dirname(HERE), "config")


def check_config(args, env=None, cwd=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
    e.update(env or {})
    p = subprocess.run([harness.BINARIES["hello"], *args, "--check-config"], env=e, cwd=cwd,
                       capture_output=True, text=True, timeout=10)
    return p.returncode, p.stdout, p.stderr


class MalformedFiles(unittest.TestCase):
    def test_each_bad_file_gives_its_exact_message_and_exit_2(self):
        files = sorted(glob.glob(os.path.join(CONFIG_DIR, "bad", "*.toml")))
        self.assertGreaterEqual(len(files), 8)
        for path in files:
            with self.subTest(file=os.path.basename(path)):
                with open(path) as f:
                    expected = f.readline().removeprefix("# expect: ").rstrip("\n")
                # Run from the file's folder so the message names it as written.
                code, out, err = check_config(["--config", os.path.basename(path)], cwd=os.path.dirname(path))
                self.assertEqual(code, 2, err)
                self.assertEqual(err.strip(), "hello: " + expected)
                self.assertEqual(out, "")

    def test_missing_explicit_file_is_an_error(self):
        code, _, err = check_config(["--config", "/nonexistent/kiln.toml"])
        self.assertEqual(code, 2)
        self.assertIn("config file '/nonexistent/kiln.toml' not found", err)

    def test_bad_environment_variables_name_the_variable(self):
        # A KILN_ variable kiln does not know may be another tool's (a harness's
        # KILN_DIR): a warning naming it, not a refusal to start.
        code, _, err = check_config([], env={"KILN_WORKERZ": "1"})
        self.assertEqual(code, 0, err)
        self.assertIn("warning: environment: KILN_WORKERZ is not a kiln setting (ignored", err)
        code, _, err = check_config([], env={"KILN_TIMEOUTS_HEADER_MS": "soon"})
        self.assertEqual(code, 2)
        self.assertIn("environment: KILN_TIMEOUTS_HEADER_MS: expected an integer, got 'soon'", err)


class OneRulePerSetting(unittest.TestCase):
    def test_file_environment_and_flag_refuse_a_value_with_the_same_rule(self):
        rule = "must be from 1 to 1024, got 0"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kiln.toml")
            with open(path, "w") as f:
                f.write("threads = 0\n")
            code, _, err = check_config(["--config", path])
            self.assertEqual(code, 2)
            self.assertIn("key 'threads': " + rule, err)
        code, _, err = check_config([], env={"KILN_THREADS": "0"})
        self.assertEqual(code, 2)
        self.assertIn("KILN_THREADS: " + rule, err)
        code, _, err = check_config(["--threads", "0"])
        self.assertEqual(code, 2)
        self.assertIn("flag --threads: " + rule, err)

    def test_flags_for_choices_and_paths(self):
        code, _, err = check_config(["--mpm", "threads"])
        self.assertEqual(code, 2)
        self.assertIn('flag --mpm: expected "event", "hybrid" or "prefork"', err)
        code, _, err = check_config(["--metrics-path", "metrics"])
        self.assertEqual(code, 2)
        self.assertIn("a path must start with '/'", err)
        code, out, _ = check_config(["--mpm", "hybrid", "--pool-threads", "8", "--header-timeout", "1234"])
        self.assertEqual(code, 0)
        self.assertIn("mpm hybrid", out)
        self.assertIn("header 1234", out)


class StoresAndDatabases(unittest.TestCase):
    def test_a_redis_session_store_needs_its_url_and_bad_urls_stop_the_start(self):
        e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
        run = lambda args: subprocess.run([harness.BINARIES["hello"], "--port", "0", "--workers", "0", *args], env=e,
                                          capture_output=True, text=True, timeout=10)
        p = run(["--session-store", "redis"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('session.store = "redis" needs redis.url (--redis-url, KILN_REDIS_URL)', p.stderr)
        p = run(["--redis-url", "http://127.0.0.1:6379"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("flag --redis-url: bad Redis URL", p.stderr)
        p = run(["--database-url", "postgresql://[::1"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("flag --database-url: not a PostgreSQL connection string or URI", p.stderr)
        code, _, err = check_config([], env={"KILN_REDIS_URL": "redis://host:port"})
        self.assertEqual(code, 2)
        self.assertIn("KILN_REDIS_URL: bad Redis URL", err)
        p = run(["--topics-store", "redis"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('topics.store = "redis" needs redis.url (--redis-url, KILN_REDIS_URL)', p.stderr)
        p = run(["--topics-store", "cluster"])
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("flag --topics-store: expected \"node\" or \"redis\", got 'cluster'", p.stderr)


class Precedence(unittest.TestCase):
    def test_file_then_environment_then_flags(self):
        full = os.path.join(CONFIG_DIR, "good", "full.toml")
        code, out, _ = check_config(["--config", full])
        self.assertEqual(code, 0)
        self.assertIn("workers 2, threads 1", out)
        code, out, _ = check_config(["--config", full], env={"KILN_WORKERS": "3"})
        self.assertIn("workers 3,", out)
        code, out, _ = check_config(["--config", full, "--workers", "1"], env={"KILN_WORKERS": "3"})
        self.assertIn("workers 1,", out)

    def test_kiln_toml_in_the_working_directory_is_read_by_default(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "kiln.toml"), "w") as f:
                f.write("[timeouts]\nheader_ms = 1234\n")
            code, out, _ = check_config([], cwd=d)
            self.assertEqual(code, 0)
            self.assertIn("(kiln.toml)", out)
            self.assertIn("header 1234", out)


class ServesWhatTheFileSays(unittest.TestCase):
    def test_listen_address_and_workers_from_the_file(self):
        port = harness.free_port()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kiln.toml")
            with open(path, "w") as f:
                f.write('workers = 1\nthreads = 1\nlisten = "127.0.0.1:%d"\n' % port)
            proc = subprocess.Popen([harness.BINARIES["hello"], "--config", path], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                body = None
                for _ in range(100):
                    try:
                        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                        c.request("GET", "/plaintext")
                        body = c.getresponse().read()
                        c.close()
                        break
                    except OSError:
                        time.sleep(0.05)
                self.assertEqual(body, b"Hello, World!")
            finally:
                proc.terminate()
                _, err = proc.communicate(timeout=15)
            self.assertEqual(proc.returncode, 0, err)
            harness.assert_no_sanitizer_report(err)
            self.assertIn("with 1 worker of 1 thread", err)



class AppSettingsAndHooks(unittest.TestCase):
    """The app's own settings ([app], KILN_APP_*, --set) and its set-up hooks: once
    per node before the workers start, once in every worker."""

    def start(self, args, env, port):
        e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
        e.update(env)
        proc = subprocess.Popen([harness.BINARIES["server"], "--port", str(port), *args], env=e,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: proc.poll() is None and (proc.terminate(), proc.communicate(timeout=15)))
        return proc

    def get(self, port, path):
        for _ in range(100):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", path)
                body = c.getresponse().read()
                c.close()
                return body
            except OSError:
                time.sleep(0.05)
        self.fail("no answer on %d" % port)

    def test_settings_from_file_environment_and_flags(self):
        port = harness.free_port()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "kiln.toml")
            with open(path, "w") as f:
                f.write('[app]\ngreeting = "from the file"\ncolour = "blue"\n[app.db]\npath = "a.db"\n')
            self.start(["--workers", "0", "--config", path, "--set", "greeting=from a flag"],
                       {"KILN_APP_COLOUR": "green"}, port)
            self.assertEqual(self.get(port, "/setting?name=greeting"), b"from a flag")
            self.assertEqual(self.get(port, "/setting?name=colour"), b"green")
            self.assertEqual(self.get(port, "/setting?name=db.path"), b"a.db")
            self.assertEqual(self.get(port, "/setting?name=nothing"), b"(unset)")

    def test_node_hook_runs_once_and_worker_hook_in_every_worker(self):
        port = harness.free_port()
        with tempfile.TemporaryDirectory() as d:
            proc = self.start(["--workers", "2", "--threads", "1"], {"KILNTEST_HOOK_DIR": d}, port)
            self.get(port, "/plaintext")
            deadline = time.monotonic() + 10
            lines = []
            while time.monotonic() < deadline:
                with open(os.path.join(d, "hooks.log")) as f:
                    lines = f.read().splitlines()
                if len([l for l in lines if l.startswith("worker")]) >= 2:
                    break
                time.sleep(0.05)
            nodes = [l for l in lines if l.startswith("node")]
            workers = sorted(int(l.split()[1]) for l in lines if l.startswith("worker"))
            self.assertEqual(nodes, ["node %d workers=2" % proc.pid])
            self.assertEqual(workers, sorted(harness.child_pids(proc.pid)))

    def test_a_failing_node_hook_stops_the_start(self):
        with tempfile.TemporaryDirectory() as d:
            e = {k: v for k, v in os.environ.items() if not k.startswith("KILN_")}
            e.update({"KILNTEST_HOOK_DIR": d, "KILNTEST_HOOK_FAIL": "1"})
            p = subprocess.run([harness.BINARIES["server"], "--port", str(harness.free_port()), "--workers", "2"],
                               env=e, capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("node set-up failed: the database is not there", p.stderr)


if __name__ == "__main__":
    harness.main()
