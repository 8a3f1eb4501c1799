"""Extracts the examples of docs/*.md so the build compiles them (tests/docs).

  python3 extract.py DOCS_DIR OUT_DIR

Every ```cpp block becomes OUT_DIR/cpp/<page>_<n>.cpp, a translation unit of its own
(so every block is a complete file: its includes, its main). Every ```html block whose
first line is a kiln comment naming a file, <%# views/x/y.html %>, becomes
OUT_DIR/views/x/y.html for kilnc, so C++ blocks can render it. Other blocks (sh, toml,
text, c++ fragments) are prose. A file is rewritten only when its text changed, so
an unchanged page recompiles nothing. Prints nothing; exits 1 on a malformed block."""
import os
import re
import sys

FENCE = re.compile(r"^```(\w[\w+-]*)?\s*$")
VIEW_NAME = re.compile(r"^<%#\s*views/([\w/.-]+\.html)\s*%>\s*$")


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


def blocks(path):
    lang, start, lines = None, 0, []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = FENCE.match(line.rstrip("\n"))
            if lang is None and m and m.group(1):
                lang, start, lines = m.group(1), number, []
            elif lang is not None and line.rstrip("\n") == "```":
                yield lang, start, "".join(lines)
                lang = None
            elif lang is not None:
                lines.append(line)
    if lang is not None:
        sys.exit("%s:%d: unclosed ``` block" % (path, start))


def main():
    docs, out = sys.argv[1], sys.argv[2]
    wanted = set()
    for page in sorted(os.listdir(docs)):
        if not page.endswith(".md"):
            continue
        stem = page[:-3].replace("-", "_")
        n = 0
        for lang, line, text in blocks(os.path.join(docs, page)):
            if lang == "cpp":
                n += 1
                target = os.path.join(out, "cpp", "%s_%d.cpp" % (stem, n))
                write_if_changed(target, '#line %d "%s"\n%s' % (line + 1, os.path.join(docs, page), text))
                wanted.add(target)
            elif lang == "html":
                first = text.split("\n", 1)[0]
                m = VIEW_NAME.match(first)
                if m:
                    target = os.path.join(out, "views", m.group(1))
                    write_if_changed(target, text)
                    wanted.add(target)
    for sub in ("cpp", "views"):  # examples removed from the pages go too
        for root, _dirs, files in os.walk(os.path.join(out, sub)):
            for name in files:
                if os.path.join(root, name) not in wanted:
                    os.unlink(os.path.join(root, name))


if __name__ == "__main__":
    main()
