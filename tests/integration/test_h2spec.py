"""h2spec, the HTTP/2 conformance suite (146 cases of RFC 7540/7541), against kiln's
test server twice: h2c with prior knowledge on a plain listener, and h2 negotiated by
ALPN on a TLS listener (--tls-self-signed). Every case must pass. The suite is built
by scripts/h2spec.sh (Go); a machine that cannot build it fails here, loudly."""
import os
import re
import subprocess
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
H2SPEC_SCRIPT = os.path.join(HERE, "..", "..", "scripts", "h2spec.sh")
CASES = 146


def h2spec_binary():
    r = subprocess.run(["bash", H2SPEC_SCRIPT], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError("cannot build h2spec:\n" + r.stderr)
    return r.stdout.strip()


class H2spec(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.h2spec = h2spec_binary()

    def run_suite(self, server_args, tls):
        server = harness.ServerProcess(harness.BINARIES["server"], server_args)
        self.addCleanup(harness.check_clean_stop, server)
        server.start()
        cmd = [self.h2spec, "-h", "127.0.0.1", "-p", str(server.port), "-o", "3"]
        if tls:
            cmd += ["-t", "-k"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        out = re.sub(r"\x1b\[[0-9;]*m", "", r.stdout)
        m = re.search(r"(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed", out)
        self.assertIsNotNone(m, "no h2spec summary:\n" + out[-4000:] + r.stderr[-2000:])
        total, passed, skipped, failed = map(int, m.groups())
        failures = out[out.find("Failures:"):] if "Failures:" in out else ""
        self.assertEqual((total, passed, skipped, failed), (CASES, CASES, 0, 0), failures[-6000:])

    def test_h2c_prior_knowledge(self):
        self.run_suite(("--workers", "0", "--threads", "1"), tls=False)

    def test_h2_over_tls_by_alpn(self):
        self.run_suite(("--workers", "0", "--threads", "1", "--tls-self-signed"), tls=True)


if __name__ == "__main__":
    harness.main()
