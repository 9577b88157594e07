#!/usr/bin/env python3
"""check-symbols.py: the naming rule of crmpi's symbols, checked on a build's object files.

    test/check-symbols.py BUILD_DIR

Two checks, each printing one line per violation:

1. Across folders. A global symbol defined in one source folder and referenced from another
   must start with crmpi_, MPI_, PMPI_, MPIX_ or PMPIX_ (the extensions of mpi-ext.h): a
   framework's interface is crmpi_<fw>_*, and a
   component's internals (<fw>_<component>_*) never leave their folder. Every object file
   under BUILD_DIR (libtool's .libs/*.o included) is read with `nm`; an object belongs to
   the folder of its source, which is its directory in the build tree (automake builds
   objects beside their sources' paths), so a component's subfolder (btl-adapters/tcp) is
   a folder of its own. A test/ folder counts as the folder above it (unit tests may call
   their folder's internals); a definition in a test file satisfies only references from
   test files, so a test's stand-in never hides a real violation.
   A reference that the referencing folder defines itself is not checked, nor one that no
   object defines (the C library, PMIx, CRIU...), nor one from a program that only uses
   installed libraries' public interfaces as users do (examples/, bench/: libcrmpi-pheap's
   interface is the memory-mapped checkpointing paper's names, not crmpi_*). ROMIO's
   objects (BUILD_DIR/romio/, built from its source at make time) are not crmpi's code and
   keep ROMIO's names (ADIO_*, ADIOI_*, MPIO_*); they are not read.

2. The libraries' exports. `nm -D --defined-only` of BUILD_DIR/.libs/libmpi.so, and of
   libcrmpi-io.so (MPI-IO, ROMIO) when it was built, may show only MPI_*, PMPI_*, MPIX_*,
   PMPIX_* and crmpi_* symbols.

Output: "symbol  defined in FOLDER  used in FOLDER  (files)" per violation of check 1,
"symbol  exported by libmpi.so" per violation of check 2, then a count. Exit status 0 when
there is none, 1 when there are violations, 2 when the build cannot be read.
"""

import collections
import os
import subprocess
import sys

ALLOWED_PREFIXES = ("crmpi_", "MPI_", "PMPI_", "MPIX_", "PMPIX_")
# Folders of programs that use only the installed libraries' public interfaces.
USER_PROGRAMS = ("examples", "bench")
# Build folders of other projects' code (ROMIO, configured and built by make).
FOREIGN = ("romio",)


def folder_of(rel_dir):
    """(folder, is_test) of an object file's directory, relative to the build dir."""
    parts = [p for p in rel_dir.split("/") if p and p != ".libs"]
    is_test = "test" in parts[1:]
    if is_test:
        parts = parts[: parts.index("test", 1)]
    return ("/".join(parts) or "."), is_test


def source_of(rel_path):
    """The source file an object was compiled from, as far as its name tells.

    automake names an object of a target with its own flags "<target>-<source>.o"; target
    names are canonicalized to [A-Za-z0-9_], so the first '-' ends the prefix.
    """
    directory, name = os.path.split(rel_path)
    directory = "/".join(p for p in directory.split("/") if p != ".libs")
    stem = name[:-2]
    if "-" in stem:
        stem = stem.split("-", 1)[1]
    return os.path.join(directory, stem + ".c")


def object_files(build_dir):
    found = []
    for root, dirs, files in os.walk(build_dir):
        dirs[:] = [d for d in dirs if d not in (".git", "autom4te.cache")
                   and not (root == build_dir and d in FOREIGN)]
        for name in files:
            if name.endswith(".o"):
                found.append(os.path.relpath(os.path.join(root, name), build_dir))
    return sorted(found)


def read_symbols(build_dir, objects):
    """{object: (defined globals, undefined references)}, with nm over every object."""
    table = {obj: (set(), set()) for obj in objects}
    batch = 200
    for start in range(0, len(objects), batch):
        chunk = objects[start : start + batch]
        out = subprocess.run(
            ["nm", "-A", "-g"] + chunk,
            cwd=build_dir,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for line in out.splitlines():
            # "path.o:0000000000000000 T name" or "path.o:                 U name"
            obj, sep, rest = line.partition(":")
            if not sep or obj not in table:
                continue
            fields = rest.split()
            if len(fields) == 3:
                kind, name = fields[1], fields[2]
                if kind == "U":
                    table[obj][1].add(name)
                else:
                    table[obj][0].add(name)
            elif len(fields) == 2:
                # no address: undefined (U) or weak undefined (w, v)
                table[obj][1].add(fields[1])
    return table


def allowed(name):
    return name.startswith(ALLOWED_PREFIXES)


def check_folders(build_dir):
    objects = object_files(build_dir)
    if not objects:
        print("check-symbols: no object files under %s (build it first)" % build_dir)
        sys.exit(2)
    table = read_symbols(build_dir, objects)
    definers = collections.defaultdict(set)  # symbol -> {(folder, is_test)}
    for obj, (defined, _) in table.items():
        place = folder_of(os.path.dirname(obj))
        for name in defined:
            definers[name].add(place)

    found = collections.defaultdict(set)  # (symbol, def folder, use folder) -> sources
    for obj, (_, undefined) in table.items():
        use_folder, use_is_test = folder_of(os.path.dirname(obj))
        if use_folder.split("/")[0] in USER_PROGRAMS:
            continue
        for name in undefined:
            places = definers.get(name)
            if not places or allowed(name):
                continue
            if any(f == use_folder and (use_is_test or not t) for f, t in places):
                continue
            others = {f for f, t in places if f != use_folder and not t}
            others = others or {f for f, t in places if f != use_folder}
            for def_folder in others:
                found[(name, def_folder, use_folder)].add(source_of(obj))
    return found


def check_exports(build_dir):
    """[(symbol, library)] of the exports that break the rule."""
    lib = os.path.join(build_dir, ".libs", "libmpi.so")
    if not os.path.exists(lib):
        print("check-symbols: %s is missing (build it first)" % lib)
        sys.exit(2)
    libs = [lib]
    io_lib = os.path.join(build_dir, ".libs", "libcrmpi-io.so")
    if os.path.exists(io_lib):
        libs.append(io_lib)
    bad = set()
    for path in libs:
        out = subprocess.run(
            ["nm", "-D", "--defined-only", path], check=True, capture_output=True, text=True
        ).stdout
        for line in out.splitlines():
            fields = line.split()
            if fields and not allowed(fields[-1]):
                bad.add((fields[-1], os.path.basename(path)))
    return sorted(bad)


def main(argv):
    if len(argv) != 2:
        print("usage: check-symbols.py BUILD_DIR", file=sys.stderr)
        return 2
    build_dir = argv[1]
    found = check_folders(build_dir)
    exported = check_exports(build_dir)
    for (name, def_folder, use_folder), sources in sorted(
        found.items(), key=lambda item: (item[0][2], item[0][1], item[0][0])
    ):
        print(
            "%s  defined in %s  used in %s  (%s)"
            % (name, def_folder, use_folder, ", ".join(sorted(sources)))
        )
    for name, lib in exported:
        print("%s  exported by %s" % (name, lib))
    total = len(found) + len(exported)
    if total:
        print(
            "check-symbols: %d violation(s): %d across folders, %d exported by a library"
            % (total, len(found), len(exported))
        )
        return 1
    print("check-symbols: every cross-folder symbol and every export of libmpi.so (and libcrmpi-io.so) is crmpi_/MPI_/PMPI_/MPIX_/PMPIX_")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
