"""Compiles each case in a directory on its own and checks that it builds or fails as
its first line says: `// expect: ok`, or `// expect: error REGEX` (the compiler's
message must match REGEX, so a case that fails for some other reason, a typo or a
missing header, fails the test instead of passing it).

usage: check.py CXX INCLUDE_DIR CASES_DIR"""

import os
import re
import subprocess
import sys


def main():
    cxx, include, cases = sys.argv[1:4]
    failures = 0
    names = sorted(n for n in os.listdir(cases) if n.endswith(".cpp"))
    if not names:
        print("no cases in %s" % cases)
        return 1
    for name in names:
        path = os.path.join(cases, name)
        with open(path) as f:
            first = f.readline().strip()
        m = re.fullmatch(r"// expect: (ok|error (.+))", first)
        if not m:
            print("%s: its first line must be `// expect: ok` or `// expect: error REGEX`" % name)
            failures += 1
            continue
        p = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I", include, path],
                           capture_output=True, text=True, timeout=300)
        if m.group(1) == "ok":
            ok = p.returncode == 0
            why = "did not compile:\n" + p.stderr
        else:
            ok = p.returncode != 0 and re.search(m.group(2), p.stderr) is not None
            why = ("compiled" if p.returncode == 0 else "failed without matching %r:\n%s" % (m.group(2), p.stderr))
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            print(why[:4000])
            failures += 1
    print("%d of %d cases as expected" % (len(names) - failures, len(names)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
