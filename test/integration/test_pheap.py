"""libcrmpi-pheap as users get it from an installation: built with mpicc -lcrmpi-pheap (and
with a plain C compiler, since it needs no MPI), the example killed after a step and
restored, C++ through mpicxx, and MPI ranks each with a persistent heap of their own. Also
the layering check, which must not take <sys/param.h> for a header of the tree."""
import os
import signal
import subprocess
import sys

import pytest

from conftest import INSTALL

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
BIN = os.path.join(INSTALL, "bin")
LIB = os.path.join(INSTALL, "lib")

# configure builds libcrmpi-pheap only with dlmalloc's source (./bootstrap.sh deps fetches it).
needs_pheap = pytest.mark.skipif(not os.path.exists(os.path.join(LIB, "libcrmpi-pheap.so")),
                                 reason="libcrmpi-pheap was not built (configure found no dlmalloc)")


def run(cmd, cwd=None, timeout=120, check=True):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, "%s failed (%d):\n%s%s" % (
            " ".join(cmd), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


@needs_pheap
def test_library_needs_no_mpi(tmp_path):
    needed = run(["readelf", "-d", os.path.join(LIB, "libcrmpi-pheap.so")]).stdout
    libs = [line.split("[")[1].rstrip("]") for line in needed.splitlines() if "(NEEDED)" in line]
    assert libs == ["libc.so.6"], libs
    with open(os.path.join(INSTALL, "include", "crmpi", "pheap.h")) as f:
        assert "mpi.h" not in f.read()
    exported = run(["nm", "-D", "--defined-only", os.path.join(LIB, "libcrmpi-pheap.so")]).stdout
    names = sorted(line.split()[-1] for line in exported.splitlines() if " T " in line)
    assert names == sorted(["perm", "mopen", "mclose", "mflush", "bopen", "bclose", "backup",
                            "restore", "pheap_backup_file", "perm_malloc", "perm_calloc",
                            "perm_realloc", "perm_free", "perm_memalign"]), names
    # A plain C compiler, no MPI wrapper.
    program = str(tmp_path / "steps")
    run(["cc", "-O2", "-I" + os.path.join(INSTALL, "include"),
         os.path.join(TOP, "examples", "pheap_steps.c"), "-o", program, "-L" + LIB,
         "-Wl,-rpath," + LIB, "-lcrmpi-pheap"])
    assert run([program, "-n", "5", "-d", str(tmp_path)]).stdout.splitlines()[-1].startswith(
        "steps 5 sum ")


@needs_pheap
def test_example_killed_and_restored(tmp_path):
    program = str(tmp_path / "pheap_steps")
    run([os.path.join(BIN, "mpicc"), "-O2", "-Wall", "-Werror",
         os.path.join(TOP, "examples", "pheap_steps.c"), "-o", program, "-lcrmpi-pheap"])
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    whole.mkdir()
    broken.mkdir()
    expected = run([program, "-n", "30", "-d", str(whole)]).stdout.splitlines()[-1]
    killed = run([program, "-n", "30", "-k", "17", "-d", str(broken)], check=False)
    assert killed.returncode == -signal.SIGKILL, killed
    assert killed.stdout.splitlines()[-1].startswith("step 17:")
    resumed = run([program, "-r", "-n", "30", "-d", str(broken)]).stdout.splitlines()
    assert resumed[0] == "restored after step 17"
    assert resumed[1].startswith("step 18:")
    assert resumed[-1] == expected


CXX_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include <crmpi/pheap_allocator.hpp>

PERM std::vector<int, PERM_NS::allocator<int>> v;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? "r+" : "w+";
    if (perm(PERM_START, PERM_SIZE) || mopen("cxx.mmap", mode, 1 << 22) ||
        bopen("cxx.back", mode))
        return 1;
    if (argc > 1) {
        if (restore())
            return 1;
    } else {
        for (int i = 0; i < 1000; i++)
            v.push_back(i);
        if (backup())
            return 1;
    }
    long sum = 0;
    for (int x : v)
        sum += x;
    std::printf("sum %ld\n", sum);
    bclose();
    mclose();
    return 0;
}
"""


@needs_pheap
def test_cxx_through_mpicxx(tmp_path):
    source = tmp_path / "vec.cpp"
    source.write_text(CXX_PROGRAM)
    program = str(tmp_path / "vec")
    run([os.path.join(BIN, "mpicxx"), "-O2", "-Wall", "-Werror", str(source), "-o", program,
         "-lcrmpi-pheap"])
    assert run([program], cwd=tmp_path).stdout == "sum 499500\n"
    assert run([program, "-r"], cwd=tmp_path).stdout == "sum 499500\n"


PAPER_STYLE_CXX = r"""
#include <list>
#include <crmpi/pheap_allocator.hpp>
using namespace std;

class globals {
  public:
    globals() : steps(0) {}
    int steps;
};
PERM globals *home;
PERM list<int, PERM_NS::allocator<int> > plist;

int main()
{
    perm(PERM_START, PERM_SIZE);
    if (mopen("paper.mmap", "w+", 1 << 22) || bopen("paper.back", "w+"))
        return 1;
    home = PERM_NEW(globals);
    for (int i = 0; i < 5; i++) {
        plist.push_back(i);
        home->steps++;
        if (backup())
            return 2;
    }
    int *scratch = static_cast<int *>(perm_malloc(sizeof(int)));
    PERM_FREE(scratch);
    PERM_DELETE(home, globals);
    plist.clear();
    bclose();
    mclose();
    return 0;
}
"""


@needs_pheap
def test_paper_style_cxx_program_builds(tmp_path):
    """The names of the paper's C++ interface: PERM_NS::allocator, PERM_NEW, PERM_DELETE,
    PERM_FREE, a PERM container (which runs its destructor at exit, after mclose)."""
    source = tmp_path / "paper.cpp"
    source.write_text(PAPER_STYLE_CXX)
    program = str(tmp_path / "paper")
    run([os.path.join(BIN, "mpicxx"), "-Wall", "-Werror", str(source), "-o", program,
         "-lcrmpi-pheap"])
    run([program], cwd=tmp_path)


MPI_PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <crmpi/pheap.h>

PERM long *value;

int main(int argc, char **argv)
{
    char heap[64], back[64];
    int rank;
    long sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(heap, sizeof(heap), "rank%d.mmap", rank);
    snprintf(back, sizeof(back), "rank%d.back", rank);
    if (perm(PERM_START, PERM_SIZE) || mopen(heap, "w+", 1 << 20) || bopen(back, "w+"))
        MPI_Abort(MPI_COMM_WORLD, 1);
    value = perm_malloc(sizeof(*value));
    *value = 10 * (rank + 1);
    if (backup())
        MPI_Abort(MPI_COMM_WORLD, 2);
    *value = -1;
    value = NULL;
    if (restore())
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Allreduce(value, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("restored sum %ld\n", sum);
    bclose();
    mclose();
    MPI_Finalize();
    return 0;
}
"""


@needs_pheap
def test_mpi_ranks_each_with_a_heap(tmp_path):
    source = tmp_path / "ranks.c"
    source.write_text(MPI_PROGRAM)
    program = str(tmp_path / "ranks")
    run([os.path.join(BIN, "mpicc"), "-O2", "-Wall", "-Werror", str(source), "-o", program,
         "-lcrmpi-pheap"])
    out = run([os.path.join(BIN, "mpirun"), "-np", "3", program], cwd=tmp_path).stdout
    assert "restored sum 60" in out
    assert sorted(p.name for p in tmp_path.glob("rank*.back")) == [
        "rank0.back", "rank1.back", "rank2.back"]


def test_check_layers_resolves_directory_includes(tmp_path):
    """<sys/param.h> is the system's header, not runtime/param.h (dlmalloc
    includes it); a plain "param.h" still is the tree's."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(
        "<!-- layer table -->\n| layer | files | may include |\n|---|---|---|\n"
        "| lib | `lib/` | |\n| runtime | `runtime/` | |\n")
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "param.h").write_text("")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.c").write_text("#include <sys/param.h>\n")
    script = os.path.join(TOP, "test", "check-layers.py")
    ok = run([sys.executable, script, str(tmp_path)], check=False)
    assert ok.returncode == 0, ok.stdout
    (tmp_path / "lib" / "b.c").write_text('#include "param.h"\n')
    bad = run([sys.executable, script, str(tmp_path)], check=False)
    assert bad.returncode == 1 and "lib/b.c:1: lib includes param.h (runtime)" in bad.stdout

