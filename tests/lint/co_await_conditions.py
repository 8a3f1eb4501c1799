#!/usr/bin/env python3
"""Finds `co_await` in the condition of an if, while or switch. GCC 12.2 (Debian 12's
compiler) miscompiles some such coroutines: a reduced one, on a textbook task type,
`if (co_await inner()) co_return 1; co_return 0;`, never runs its body when resumed;
in kiln, one died on SIGILL when the awaited call threw. clang 14 compiles both right.
A declaration as the condition (`if (auto v = co_await f())`), an init-statement
(`if (auto v = co_await f(); v)`) and a variable compile right:

    bool ok = co_await f();
    if (ok) ...

Usage: co_await_conditions.py ROOT [DIR...]: each place, and exit status 1 if any.
       co_await_conditions.py --self-test"""

import os
import re
import sys

KEYWORD = re.compile(r"\b(if|while|switch|for)\s*(constexpr\s*)?\(")
# A declaration as the condition: a type (auto, a name, a template-id), then a name,
# then = (not ==) or {.
DECLARATION = re.compile(r"^\s*(?:const\s+)?(?:auto|[A-Za-z_][\w:]*(?:<[^;()=]*>)?)(?:\s*[&*]+\s*|\s+)\w+\s*(?:=(?!=)|\{)")
EXTENSIONS = (".cpp", ".hpp", ".h", ".cc", ".md", ".html", ".tmpl", ".in")


def strip_comments_and_strings(text):
    """The text with comments and string/char literals blanked (lengths kept, so
    offsets still give line numbers)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and 0 < i < n - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(c)  # a digit separator (1'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def conditions(code):
    """(offset, condition text) of each if/while/switch in code, and of each for's
    middle clause."""
    for m in KEYWORD.finditer(code):
        start = m.end()
        depth, i = 1, start
        while i < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
        inside = code[start:i - 1]
        # if (init; condition): the init-statement is a statement of its own.
        cuts, depth = [], 0
        for k, ch in enumerate(inside):
            depth += {"(": 1, ")": -1, "{": 1, "}": -1, "[": 1, "]": -1}.get(ch, 0)
            if ch == ";" and depth == 0:
                cuts.append(k)
        if m.group(1) == "for":  # for (init; condition; step); a range-for has none
            if len(cuts) == 2:
                yield m.start(), inside[cuts[0] + 1:cuts[1]]
            continue
        yield m.start(), inside[cuts[-1] + 1 if cuts else 0:]


def scan(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    code = strip_comments_and_strings(text) if not path.endswith(".md") else text
    found = []
    for offset, cond in conditions(code):
        if "co_await" not in cond or DECLARATION.match(cond):
            continue
        line = code.count("\n", 0, offset) + 1
        found.append((line, " ".join(cond.split())))
    return found


def self_test():
    import tempfile
    cases = {
        "if (co_await f()) co_return 1;": True,
        "if (!co_await f()) {": True,
        "while (co_await s.next()) {}": True,
        "switch (co_await kind()) {": True,
        "if (x && (co_await f()).ok()) {": True,
        "if (ready && n == co_await f()) {}": True,
        "if (a * b == co_await f()) {}": True,
        "for (; co_await s.next();) {}": True,
        "if (n == 1'000 && co_await f()) {}": True,
        "if (n < 1'000) {\n co_await g();\n}\nbool x = co_await h();": False,
        "for (auto& t : co_await all()) {}": False,
        "for (int i = 0; i < n; ++i) co_await f(i);": False,
        "if (const std::optional<int> v = co_await f()) {}": False,
        "if (auto v = co_await f()) use(*v);": False,
        "if (auto v = co_await f(); v) use(*v);": False,
        "while (auto m = co_await s.next()) {}": False,
        "if (ready) co_await f();": False,
        "bool ok = co_await f(); if (ok) {}": False,
        "// if (co_await f()) in a comment": False,
        'log("if (co_await f())");': False,
    }
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for code, bad in cases.items():
            path = os.path.join(d, "t.cpp")
            with open(path, "w") as f:
                f.write(code + "\n")
            if bool(scan(path)) != bad:
                print("self-test: %r should %sbe found" % (code, "" if bad else "not "))
                failed += 1
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1]
    dirs = sys.argv[2:] or ["src", "include", "examples", "tools", "docs", "bench"]
    bad = 0
    for d in dirs:
        for here, subdirs, files in os.walk(os.path.join(root, d)):
            subdirs.sort()
            for name in sorted(files):
                if not name.endswith(EXTENSIONS):
                    continue
                path = os.path.join(here, name)
                for line, cond in scan(path):
                    print("%s:%d: co_await in a condition (GCC 12 miscompiles some): (%s)"
                          % (os.path.relpath(path, root), line, cond))
                    bad += 1
    if bad:
        print("%d place(s): await into a variable first (see this script's docstring)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
