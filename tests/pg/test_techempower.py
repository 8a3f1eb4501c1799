"""examples/techempower by the TechEmpower Framework Benchmarks' rules, against a real
PostgreSQL (run through tests/pg/pg_server.py with pg_stat_statements loaded):

- the suite's own checks (bench/lib/tfb_verify.py, the verifier every server in
  bench/techempower.sh must pass): headers, bodies, clamping, escaping, sort order;
- how many queries each test really sends, counted by PostgreSQL (pg_stat_statements):
  one per row for /db, /queries and /updates (no ANY() batching), one UPDATE for all
  of /updates' rows, one SELECT for /fortunes, none per request for /cached-queries;
- the schema is migrations applied at start: an empty database gets World's 10,000
  rows and Fortune's 12, a second start adds nothing;
- without a database URL the app refuses to start and says why.

    pg_server.py run -- python3 test_techempower.py --techempower build/bin/techempower
"""

import argparse
import os
import subprocess
import sys
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import harness  # noqa: E402

VERIFIER = os.path.join(ROOT, "bench", "lib", "tfb_verify.py")
BINARY = None
SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = $1"
SELECT_FORTUNES = "SELECT id, message FROM fortune"


psql = harness.psql
fresh_database = harness.fresh_pg_database


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
        return r.status, r.read()


class TechEmpower(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.url = fresh_database("tfb_rules")
        psql(cls.url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        cls.server = harness.ServerProcess(BINARY, ["--database-url", cls.url, "--workers", "1"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def calls(self, query_text):
        """How often PostgreSQL ran the statement with this text since the last reset."""
        n = psql(self.url, "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query = '%s'"
                 % query_text.replace("'", "''"))
        return int(n)

    def count(self, path, text):
        psql(self.url, "SELECT pg_stat_statements_reset()")
        status, _ = get(self.server.port, path)
        self.assertEqual(status, 200)
        return self.calls(text)

    def test_the_suites_checks_pass(self):
        r = subprocess.run([sys.executable, VERIFIER, "http://127.0.0.1:%d" % self.server.port],
                           env=dict(os.environ, DATABASE_URL=self.url), capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, "verifier failed:\n" + r.stdout + r.stderr)

    def test_schema_and_data_came_from_the_migrations(self):
        self.assertEqual(psql(self.url, "SELECT count(*) FROM world"), "10000")
        self.assertEqual(psql(self.url, "SELECT count(*) FROM world WHERE randomnumber BETWEEN 1 AND 10000"), "10000")
        self.assertEqual(psql(self.url, "SELECT count(*) FROM fortune"), "12")
        self.assertEqual(psql(self.url, "SELECT name FROM kiln_migrations ORDER BY version"), "world_and_fortune")

    def test_one_query_per_row(self):
        get(self.server.port, "/db")  # statements prepared; the counts below are steady state
        self.assertEqual(self.count("/db", SELECT_WORLD), 1)
        self.assertEqual(self.count("/queries?queries=20", SELECT_WORLD), 20)
        self.assertEqual(self.count("/queries?queries=700", SELECT_WORLD), 500)
        self.assertEqual(self.count("/queries?queries=zero", SELECT_WORLD), 1)
        self.assertEqual(self.count("/updates?queries=7", SELECT_WORLD), 7)

    def test_updates_write_every_row_in_one_statement(self):
        psql(self.url, "SELECT pg_stat_statements_reset()")
        status, _ = get(self.server.port, "/updates?queries=15")
        self.assertEqual(status, 200)
        updates = psql(self.url, "SELECT coalesce(sum(calls), 0), coalesce(sum(rows), 0) FROM pg_stat_statements "
                                 "WHERE query LIKE 'UPDATE world%'").split("|")
        self.assertEqual(int(updates[0]), 1)
        self.assertGreaterEqual(int(updates[1]), 13)  # 15 random ids; a repeat is one row
        self.assertLessEqual(int(updates[1]), 15)

    def test_fortunes_is_one_query_and_cached_queries_none(self):
        self.assertEqual(self.count("/fortunes", SELECT_FORTUNES), 1)
        # The cache is per loop thread (two here), filled by the first request on each:
        # twenty connections reach both loops (all but surely: 2^-19 that one is missed).
        for _ in range(20):
            get(self.server.port, "/cached-queries?count=5")
        psql(self.url, "SELECT pg_stat_statements_reset()")
        for _ in range(10):
            self.assertEqual(get(self.server.port, "/cached-queries?count=500")[0], 200)
        self.assertEqual(self.calls(SELECT_WORLD), 0)
        self.assertEqual(self.calls("SELECT id, randomnumber FROM world"), 0)


class Startup(unittest.TestCase):
    def test_a_second_start_applies_nothing_again(self):
        url = fresh_database("tfb_twice")
        for _ in range(2):
            server = harness.ServerProcess(BINARY, ["--database-url", url, "--workers", "1"]).start()
            try:
                self.assertEqual(get(server.port, "/db")[0], 200)
            finally:
                server.stop()
        self.assertEqual(psql(url, "SELECT count(*) FROM world"), "10000")
        self.assertEqual(psql(url, "SELECT count(*) FROM kiln_migrations"), "1")

    def test_without_a_database_it_refuses_to_start_and_says_why(self):
        env = {k: v for k, v in os.environ.items() if k != "KILN_DATABASE_URL"}
        r = subprocess.run([BINARY, "--port", str(harness.free_port())], env=env, capture_output=True, text=True,
                           timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--database-url", r.stdout + r.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--techempower", required=True)
    args, rest = parser.parse_known_args()
    BINARY = args.techempower
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    sys.exit(0 if program.result.wasSuccessful() and program.result.testsRun > 0 else 1)
