#!/usr/bin/env python3
"""Check every #include of crmpi against the layer table of docs/design.md.

    test/check-layers.py [SOURCE_DIR]

The table ("Layers inside a rank, and the include rule") gives, per layer, the files it
owns and the layers (or single headers, names ending in .h) it may include. A file belongs
to the layer whose `files` entry matches it most specifically (a file path beats a folder,
a longer folder beats a shorter one). An #include is resolved by the header's file name
against the headers of the tree (the build puts every folder on the include path); an
#include with a directory (<sys/param.h>, <crmpi/pheap.h>) only names tree headers whose
path ends with it. Headers not in the tree (system, PMIx, CRIU, ...) are not judged. Test programs
(`*/test/`, `test/`, `bench/`, `examples/`) are not checked.

Prints one line per violation ("pml/pml_ob1.h:28: pml includes mpi_internal.h (mpi)")
and a summary; exits 1 when there is any violation or the table cannot be read.
"""
import os
import re
import sys

SKIP_DIRS = {".git", "build", "install", "deps", "config", "autom4te.cache"}
# Other build and install trees beside the sources (build-asan/, build-fuzz/, build-mpich/,
# install-asan/: .gitignore's build-*/ and install-*/), whose config.h is not crmpi's code.
SKIP_PREFIXES = ("build-", "install-")
UNCHECKED = ("test/", "bench/", "examples/")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)


def read_table(design_path):
    """{layer: (files, allowed)} from the table after the layer-table marker."""
    with open(design_path, encoding="utf-8") as f:
        text = f.read()
    marker = text.find("<!-- layer table")
    if marker < 0:
        raise ValueError(f"{design_path}: no '<!-- layer table' marker")
    layers = {}
    for line in text[marker:].splitlines()[1:]:
        if not line.startswith("|"):
            if layers:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("layer", "") or set(cells[0]) <= set("-"):
            continue
        name, files, allowed = cells
        files = [f.strip().strip("`") for f in files.split(",") if f.strip()]
        allowed = [a.strip().strip("`") for a in allowed.split(",") if a.strip()]
        layers[name] = (files, allowed)
    if not layers:
        raise ValueError(f"{design_path}: the layer table is empty")
    for name, (_, allowed) in layers.items():
        for a in allowed:
            if not a.endswith(".h") and a not in layers:
                raise ValueError(f"{design_path}: layer {name} may include unknown layer {a}")
    return layers


def layer_of(path, layers):
    """The layer owning `path` (relative, with /), or None."""
    best, best_len = None, -1
    for name, (files, _) in layers.items():
        for entry in files:
            if entry.endswith("/"):
                if path.startswith(entry) and len(entry) > best_len:
                    best, best_len = name, len(entry)
            elif path == entry and len(entry) + 1000 > best_len:
                best, best_len = name, len(entry) + 1000
    return best


def source_files(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not d.startswith((".",) + SKIP_PREFIXES))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(root, f), top).replace(os.sep, "/")


def is_unchecked(path):
    return path.startswith(UNCHECKED) or "/test/" in path


def check(top):
    layers = read_table(os.path.join(top, "docs", "design.md"))
    files = list(source_files(top))
    headers = {}
    for path in files:
        if path.endswith(".h"):
            headers.setdefault(os.path.basename(path), []).append(path)
    violations = []
    checked = 0
    for path in files:
        if is_unchecked(path):
            continue
        me = layer_of(path, layers)
        if me is None:
            violations.append(f"{path}: belongs to no layer of docs/design.md")
            continue
        checked += 1
        allowed = layers[me][1]
        with open(os.path.join(top, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in INCLUDE_RE.finditer(text):
            included = match.group(1)
            name = os.path.basename(included)
            owners = [h for h in headers.get(name, []) if not is_unchecked(h) and
                      (included == name or h.endswith("/" + included))]
            if not owners:
                continue
            # The compiler finds a quoted header beside the includer first.
            here = [h for h in owners if os.path.dirname(h) == os.path.dirname(path)]
            target = layer_of((here or owners)[0], layers)
            if target == me or name in allowed or target in allowed:
                continue
            line = text.count("\n", 0, match.start()) + 1
            violations.append(f"{path}:{line}: {me} includes {name} ({target})")
    return checked, violations


def main():
    top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), ".."))
    try:
        checked, violations = check(top)
    except (OSError, ValueError) as e:
        print(f"check-layers: {e}")
        return 1
    for v in violations:
        print(v)
    print(f"check-layers: {checked} files, {len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
