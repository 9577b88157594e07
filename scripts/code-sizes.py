#!/usr/bin/env python3
"""The largest C files and functions of crmpi's core (tests, benchmarks and examples left out).

    scripts/code-sizes.py [--files N] [--functions N] [SOURCE_DIR]

A function is counted from its opening brace in column 0 to its closing brace in column 0
(the layout clang-format gives this tree), with the name taken from the lines before it.
"""
import argparse
import os
import re

SKIP = {".git", "build", "install", "deps", "config", "test", "bench", "examples"}
NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")


def sources(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(root, f), top)


def functions(lines):
    start = None
    for i, line in enumerate(lines):
        if line.startswith("{") and start is None:
            # The declaration starts at the last line before the brace that starts in
            # column 0; the function's name is the identifier before its first '('.
            j = i - 1
            while j > 0 and (not lines[j] or lines[j][0].isspace()):
                j -= 1
            head = " ".join(lines[j:i]).replace("__attribute__", "")
            names = NAME_RE.findall(head)
            if names and not head.rstrip().endswith(("=", ";")):
                start = (i, names[0])
        elif line.startswith("}") and start is not None:
            yield start[1], start[0] + 1, i - start[0] + 1
            start = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--functions", type=int, default=15)
    ap.add_argument("top", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    file_sizes, funcs = [], []
    for path in sources(args.top):
        with open(os.path.join(args.top, path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        file_sizes.append((len(lines), path))
        funcs += [(n, f"{path}:{line} {name}") for name, line, n in functions(lines)]
    print(f"{'lines':>6}  largest files")
    for n, path in sorted(file_sizes, reverse=True)[: args.files]:
        print(f"{n:6}  {path}")
    print(f"{'lines':>6}  largest functions")
    for n, where in sorted(funcs, reverse=True)[: args.functions]:
        print(f"{n:6}  {where}")


if __name__ == "__main__":
    main()
