"""mpi.h, with mpi-ext.h for crmpi's extensions (MPIX_*), declares exactly what libmpi
defines: a program that compiles against crmpi links, and a call crmpi does not serve is
not in the header at all (a build system probing for MPI_File_open or MPI_Comm_spawn must
find it missing, not a symbol that only fails at run time). Prototypes are read from the
installed mpi.h and mpi-ext.h, symbols from libmpi.so."""
import os
import re
import subprocess

import pytest

from conftest import INSTALL

# A prototype: a return type at the start of a line, then the function's name and "(".
PROTOTYPE_RE = re.compile(r"^(?!typedef|#)[A-Za-z_][\w \*]*?\b(P?MPIX?_\w+)\s*\(", re.M)


def header_functions():
    found = set()
    for name in ("mpi.h", "mpi-ext.h"):
        path = os.path.join(INSTALL, "include", name)
        if not os.path.exists(path):
            pytest.skip("no %s in %s" % (name, INSTALL))
        with open(path) as f:
            found |= set(PROTOTYPE_RE.findall(f.read()))
    return found


def library_functions():
    lib = os.path.join(INSTALL, "lib", "libmpi.so")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {m.group(1) for m in re.finditer(r"^[0-9a-f]+ [TW] (P?MPIX?_\w+)$", out, re.M)}


def test_every_declared_call_is_defined():
    missing = sorted(header_functions() - library_functions())
    assert not missing, "declared in mpi.h, not in libmpi: %s" % " ".join(missing)


def test_every_defined_call_is_declared():
    undeclared = sorted(library_functions() - header_functions())
    assert not undeclared, "in libmpi, not declared in mpi.h: %s" % " ".join(undeclared)


def test_each_call_has_its_profiling_name():
    names = header_functions()
    lone = sorted(n for n in names if n.startswith("MPI_") and "P" + n not in names)
    assert not lone, "no PMPI_ twin: %s" % " ".join(lone)


@pytest.mark.parametrize("call", ["MPI_File_open", "MPI_Comm_spawn"])
def test_calls_not_served_are_absent(call):
    assert call not in header_functions()
    assert call not in library_functions()


def test_examples_compile_with_implicit_declarations_as_errors(tmp_path):
    mpicc = os.path.join(INSTALL, "bin", "mpicc")
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    for name in ("hello.c", "ring.c"):
        out = tmp_path / name[:-2]
        proc = subprocess.run([mpicc, "-Werror=implicit-function-declaration", "-Wall", "-o",
                               str(out), os.path.join(examples, name)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
