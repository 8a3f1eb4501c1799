"""SECURITY.md names, for each line of its tables, the tests that prove it. This check
keeps those names true: every name in backticks in a table's last column must exist.
A `file.py` is a file under tests/; a path (with a /) exists from the repository's
root; any other name (a test binary, a class, a test function, a fuzz target;
`Prefix*` for several) must appear as a word in some file under tests/. In `a::b::c`,
when `a` is a test file (`x.py`) or a test binary with a source of its name
(`x_test` and `x_test.cpp`), `b` and `c` must be words of that file.

usage: check_security.py REPO_ROOT"""

import os
import re
import sys


def main():
    root = sys.argv[1]
    tests = os.path.join(root, "tests")
    files, words, words_of = set(), set(), {}
    for dirpath, dirnames, filenames in os.walk(tests):
        dirnames[:] = [d for d in dirnames if d not in ("corpus", "__pycache__")]
        for name in filenames:
            files.add(name)
            try:
                with open(os.path.join(dirpath, name), errors="replace") as f:
                    found = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f.read()))
            except OSError:
                continue
            words |= found
            words_of.setdefault(name, set()).update(found)
    words.update(os.path.splitext(n)[0] for n in files)

    def exists(part, within=None):
        pool = words if within is None else within
        if "/" in part:
            return os.path.exists(os.path.join(root, part))
        if part.endswith(".py"):
            return part in files
        if part.endswith("*"):
            return any(w.startswith(part[:-1]) for w in pool)
        return part in pool

    def scope(first):
        """The words the rest of `first::...` must be found in: its file's, if it names one."""
        if first.endswith(".py"):
            return words_of.get(first)
        return words_of.get(first + ".cpp")

    missing, checked, rows = [], 0, 0
    with open(os.path.join(root, "SECURITY.md")) as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("|") or line.startswith("| ---") or line.startswith("| threat"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3:
                continue  # the defaults table: settings, not tests
            rows += 1
            names = re.findall(r"`([^`]+)`", cells[-1])
            if not names:
                missing.append("line %d: no test named" % n)
            for name in names:
                parts = name.split("::")
                within = scope(parts[0]) if len(parts) > 1 else None
                for i, part in enumerate(parts):
                    checked += 1
                    if not exists(part, within if i > 0 else None):
                        missing.append("line %d: %s (in `%s`)" % (n, part, name))
    for m in missing:
        print("SECURITY.md " + m)
    print("%d names in %d rows checked, %d missing" % (checked, rows, len(missing)))
    return 1 if missing or rows == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
