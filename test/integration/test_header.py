"""mpi.h, with mpi-ext.h for crmpi's extensions (MPIX_*), declares exactly what libmpi
defines: a program that compiles against crmpi links, and a call crmpi does not serve is
not in the header at all (a build system probing for MPI_Comm_spawn must find it missing,
not a symbol that only fails at run time). Prototypes are read from the installed mpi.h and
mpi-ext.h, symbols from libmpi.so. MPI-IO, when crmpi was built with ROMIO, is checked the
same way against the library that serves it: what mpi.h declares through crmpi-mpio.h and
ROMIO's mpio.h (read as the compiler sees them, ROMIO's conditional parts resolved) is
exactly what libcrmpi-io.so defines; without ROMIO, MPI_File_open is declared nowhere."""
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


def library_functions(name="libmpi.so"):
    lib = os.path.join(INSTALL, "lib", name)
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {m.group(1) for m in re.finditer(r"^[0-9a-f]+ [TW] (P?MPIX?_\w+)$", out, re.M)}


def has_mpio():
    return os.path.exists(os.path.join(INSTALL, "lib", "libcrmpi-io.so"))


def mpio_header_functions(tmp_path):
    """The prototypes of mpi.h's MPI-IO part, from the preprocessor's output: the lines
    its line markers attribute to crmpi-mpio.h or mpio.h."""
    src = tmp_path / "probe.c"
    src.write_text("#include <mpi.h>\n")
    out = subprocess.run([os.path.join(INSTALL, "bin", "mpicc"), "-E", str(src)],
                         capture_output=True, text=True, check=True).stdout
    found, current, chunk = set(), "", []
    for line in out.splitlines() + ['# 0 "<end>"']:
        marker = re.match(r'^# \d+ "([^"]*)"', line)
        if not marker:
            chunk.append(line)
            continue
        if os.path.basename(current) in ("crmpi-mpio.h", "mpio.h"):
            found |= set(PROTOTYPE_RE.findall("\n".join(chunk)))
        current, chunk = marker.group(1), []
    return found


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
    if call == "MPI_File_open" and has_mpio():
        return
    for lib in ("libcrmpi-io.so",) if has_mpio() else ():
        assert call not in library_functions(lib)


def test_mpio_declared_exactly_where_defined(tmp_path):
    if not has_mpio():
        pytest.skip("crmpi built without ROMIO: no MPI-IO")
    declared = mpio_header_functions(tmp_path)
    defined = library_functions("libcrmpi-io.so")
    assert "MPI_File_open" in declared and "PMPI_File_call_errhandler" in declared
    assert not sorted(declared - defined), "declared, not in libcrmpi-io: %s" % " ".join(
        sorted(declared - defined))
    assert not sorted(defined - declared), "in libcrmpi-io, not declared: %s" % " ".join(
        sorted(defined - declared))
    assert not (defined & library_functions()), "defined twice"


def test_mpicc_links_mpio_without_flags(tmp_path):
    if not has_mpio():
        pytest.skip("crmpi built without ROMIO: no MPI-IO")
    src = tmp_path / "io.c"
    src.write_text("#include <mpi.h>\nint main(void) { MPI_File fh = MPI_FILE_NULL;\n"
                   "return MPI_File_close(&fh) + MPI_MODE_RDONLY + MPI_SEEK_SET; }\n")
    for wrapper in ("mpicc", "mpicxx"):
        out = tmp_path / wrapper
        proc = subprocess.run([os.path.join(INSTALL, "bin", wrapper), "-x",
                               "c" if wrapper == "mpicc" else "c++", "-o", str(out), str(src)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    libs = subprocess.run(["pkg-config", "--libs", os.path.join(INSTALL, "lib", "pkgconfig",
                                                                "crmpi.pc")],
                          capture_output=True, text=True, check=True).stdout
    assert "-lcrmpi-io" in libs.split()


DATAREP_PROGRAM = r'''
#include <mpi.h>
#include <stdio.h>
static int extent(MPI_Datatype type, MPI_Aint *file_extent, void *state)
{
    MPI_Aint lb;
    (void)state;
    return MPI_Type_get_extent(type, &lb, file_extent);
}
int main(int argc, char **argv)
{
    int first, again, large;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    first = MPI_Register_datarep("crmpi_same", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                 extent, NULL);
    again = MPI_Register_datarep("crmpi_same", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                 extent, NULL);
    large = MPI_Register_datarep_c("crmpi_same_c", MPI_CONVERSION_FN_NULL_C,
                                   MPI_CONVERSION_FN_NULL_C, extent, NULL);
    MPI_Error_class(again, &again);
    printf("datarep %d %d %d\n", first == MPI_SUCCESS, again == MPI_ERR_DUP_DATAREP,
           large == MPI_SUCCESS);
    MPI_Finalize();
    return 0;
}
'''


def test_conversion_fn_null(tmp_path):
    """MPI_CONVERSION_FN_NULL and its _c form (MPI-4.0) register a data representation."""
    if not has_mpio():
        pytest.skip("crmpi built without ROMIO: no MPI-IO")
    src, exe = tmp_path / "datarep.c", tmp_path / "datarep"
    src.write_text(DATAREP_PROGRAM)
    subprocess.run([os.path.join(INSTALL, "bin", "mpicc"), "-Werror", "-o", str(exe), str(src)],
                   check=True)
    run = subprocess.run([os.path.join(INSTALL, "bin", "mpirun"), "-np", "1", str(exe)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "datarep 1 1 1" in run.stdout, (run.stdout, run.stderr)


def test_examples_compile_with_implicit_declarations_as_errors(tmp_path):
    mpicc = os.path.join(INSTALL, "bin", "mpicc")
    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    for name in ("hello.c", "ring.c"):
        out = tmp_path / name[:-2]
        proc = subprocess.run([mpicc, "-Werror=implicit-function-declaration", "-Wall", "-o",
                               str(out), os.path.join(examples, name)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
