"""The names programs and build systems look for an MPI by: mpicxx and mpic++ (C++ against
the C bindings), mpiexec (mpirun), pkg-config's crmpi (and ompi, ompi-c, mpi), CMake's
FindMPI and Autoconf's AX_MPI with crmpi's bin directory first in PATH. Each builds a
program that then runs as a crmpi job. The projects are in test/wrappers/."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import INSTALL

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECTS = os.path.abspath(os.path.join(HERE, "..", "wrappers"))
EXAMPLES = os.path.abspath(os.path.join(HERE, "..", "..", "examples"))
INSTALL = os.path.abspath(INSTALL)
BIN = os.path.join(INSTALL, "bin")


def env_first_in_path():
    env = dict(os.environ)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["PKG_CONFIG_PATH"] = os.path.join(INSTALL, "lib", "pkgconfig")
    return env


def run(cmd, cwd=None, timeout=300):
    proc = subprocess.run(cmd, cwd=cwd, env=env_first_in_path(), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, "%s failed (%d):\n%s%s" % (" ".join(cmd), proc.returncode,
                                                           proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def run_job(launcher, np, program):
    out = run([os.path.join(BIN, launcher), "-np", str(np), program], timeout=120)
    return out.splitlines()


@pytest.mark.parametrize("wrapper", ["mpicxx", "mpic++"])
def test_cxx_wrapper_builds_a_cxx_program(tmp_path, wrapper):
    program = str(tmp_path / "hello_cxx")
    run([os.path.join(BIN, wrapper), "-O2", "-Wall", "-Werror", "-o", program,
         os.path.join(PROJECTS, "hello.cpp")])
    assert "sum 6 of 4 ranks" in run_job("mpirun", 4, program)
    assert run([os.path.join(BIN, wrapper), "-showme:command"]).strip() != run(
        [os.path.join(BIN, "mpicc"), "-showme:command"]).strip()


def test_mpiexec_is_mpirun(tmp_path):
    program = str(tmp_path / "hello")
    run([os.path.join(BIN, "mpicc"), "-o", program, os.path.join(EXAMPLES, "hello.c")])
    lines = run_job("mpiexec", 3, program)
    assert len([line for line in lines if line.startswith("Hello, world: rank")]) == 3, lines


@pytest.mark.parametrize("name", ["crmpi", "ompi", "ompi-c", "mpi"])
def test_pkg_config(tmp_path, name):
    if not shutil.which("pkg-config"):
        pytest.skip("no pkg-config")
    flags = run(["pkg-config", "--cflags", "--libs", name]).split()
    assert "-I" + os.path.join(INSTALL, "include") in [os.path.normpath(f) if not
                                                        f.startswith("-I") else
                                                        "-I" + os.path.normpath(f[2:])
                                                        for f in flags], flags
    program = str(tmp_path / "hello")
    run(["cc", os.path.join(EXAMPLES, "hello.c"), "-o", program] + flags)
    assert len([line for line in run_job("mpirun", 2, program)
                if line.startswith("Hello, world: rank")]) == 2


def test_cmake_findmpi_finds_crmpi(tmp_path):
    if not shutil.which("cmake"):
        pytest.skip("no cmake")
    build = tmp_path / "build"
    build.mkdir()
    out = run(["cmake", "-S", PROJECTS, "-B", str(build)])
    checks = dict(re.findall(r"crmpi-check (\w+) (.*)", out))
    assert os.path.realpath(os.path.join(INSTALL, "include")) in [
        os.path.realpath(d) for d in checks["include"].split(";")], out
    assert os.path.realpath(checks["libraries"].split(";")[0]).startswith(
        os.path.realpath(os.path.join(INSTALL, "lib"))), out
    assert os.path.realpath(checks["mpiexec"]) == os.path.realpath(os.path.join(BIN, "mpirun")), out
    assert checks["version"] == "3.1", out
    run(["cmake", "--build", str(build), "-j", "2"])
    assert any(line.startswith("Hello, world: rank") for line in
               run_job("mpiexec", 2, str(build / "hello_c")))
    assert "sum 1 of 2 ranks" in run_job("mpiexec", 2, str(build / "hello_cxx"))


def test_autoconf_ax_mpi_finds_crmpi(tmp_path):
    if not shutil.which("autoreconf") or not os.path.exists("/usr/share/aclocal/ax_mpi.m4"):
        pytest.skip("no autoconf or autoconf-archive")
    shutil.copy(os.path.join(PROJECTS, "configure.ac"), tmp_path / "configure.ac")
    run(["autoreconf", "-i"], cwd=str(tmp_path))
    out = run(["./configure"], cwd=str(tmp_path))
    assert "crmpi-check MPICC=mpicc" in out, out
    assert "checking for MPI_Init... yes" in out, out
