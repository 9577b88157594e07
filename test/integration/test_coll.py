"""Collective conformance: the programs of test/coll/ under mpirun.

collectives.c checks every collective (sizes 0, 1, small, around the sm eager limit, and
1 MiB with -l; every root; MPI_IN_PLACE; int, double and a vector type with gaps;
predefined, MINLOC/MAXLOC and user reductions, one of them not commutative), blocking and
non-blocking (-n, which also runs several non-blocking collectives at once, 200 in
flight, and some still pending when their communicator is freed); the blocking run also
checks that another thread's MPI calls proceed while a collective waits (the library lock
is dropped between progress turns). Each failed
check prints "FAIL rank R: ..."; rank 0 prints "ok NAME" per collective and a last
"ok collectives...: N checks" line when all passed.

The matrix: every collective at 1, 2, 3, 4, 5, 7 and 8 ranks (more ranks than cores:
oversubscribed); the large size at fewer counts; each forced algorithm of the tuned
component (coll_tuned_<coll>_algorithm) and the basic component at 4 and 5 ranks, on the
collective it concerns; tcp, ofi and ucx as well as shared memory.

cg.c, particles.c and stencil.c are application-like programs (Allreduce in a conjugate-gradient
solver, Alltoallv in a particle code, halo exchange on a Cartesian communicator in a 2-D
Jacobi stencil) that check themselves and print their results;
those must equal Open MPI's.

P2P_IMPL=openmpi runs the programs under Open MPI (conftest.py), to validate them.
"""

import os
import re
import shutil
import subprocess

import pytest

from conftest import MpiImpl

HERE = os.path.dirname(os.path.abspath(__file__))
COLL_DIR = os.path.abspath(os.path.join(HERE, "..", "coll"))

COLLECTIVES = ["barrier", "bcast", "reduce", "allreduce", "reduce_scatter_block",
               "reduce_scatter", "scan", "exscan", "gather", "gatherv", "scatter", "scatterv",
               "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"]

# (parameter, value, the collectives it changes): every algorithm of the tuned component.
FORCED = [
    ("coll_tuned_barrier_algorithm", "1", "barrier"),
    ("coll_tuned_barrier_algorithm", "2", "barrier"),
    ("coll_tuned_bcast_algorithm", "1", "bcast"),
    ("coll_tuned_bcast_algorithm", "2", "bcast"),
    ("coll_tuned_bcast_algorithm", "3", "bcast"),
    ("coll_tuned_reduce_algorithm", "1", "reduce"),
    ("coll_tuned_reduce_algorithm", "2", "reduce"),
    ("coll_tuned_allreduce_algorithm", "1", "allreduce"),
    ("coll_tuned_allreduce_algorithm", "2", "allreduce"),
    ("coll_tuned_allreduce_algorithm", "3", "allreduce"),
    ("coll_tuned_allreduce_algorithm", "4", "allreduce"),
    ("coll_tuned_allgather_algorithm", "1", "allgather"),
    ("coll_tuned_allgather_algorithm", "2", "allgather"),
    ("coll_tuned_allgather_algorithm", "3", "allgather"),
    ("coll_tuned_allgatherv_algorithm", "1", "allgatherv"),
    ("coll_tuned_allgatherv_algorithm", "2", "allgatherv"),
    ("coll_tuned_alltoall_algorithm", "1", "alltoall"),
    ("coll_tuned_alltoall_algorithm", "2", "alltoall"),
    ("coll_tuned_alltoall_algorithm", "3", "alltoall"),
    ("coll_tuned_alltoallv_algorithm", "1", "alltoallv"),
    ("coll_tuned_alltoallv_algorithm", "2", "alltoallv"),
    ("coll_tuned_reduce_scatter_algorithm", "1", "reduce_scatter"),
    ("coll_tuned_reduce_scatter_algorithm", "2", "reduce_scatter"),
    ("coll_tuned_scan_algorithm", "1", "scan"),
    ("coll_tuned_scan_algorithm", "2", "scan"),
    ("coll_tuned_exscan_algorithm", "1", "exscan"),
    ("coll_tuned_exscan_algorithm", "2", "exscan"),
]


@pytest.fixture(scope="session")
def coll_binaries(mpi, tmp_path_factory):
    """Each program compiled once with the implementation's mpicc, on first use."""
    outdir = tmp_path_factory.mktemp("coll-bin")
    built = {}

    def get(program, impl=None):
        impl = impl or mpi
        key = (impl.name, program)
        if key not in built:
            built[key] = impl.compile(os.path.join(COLL_DIR, program + ".c"),
                                      str(outdir / ("%s-%s" % (program, impl.name))))
        return built[key]

    return get


def check_collectives(job, names, summary):
    """Exit 0, no FAIL line, "ok NAME" for each collective run, and the summary line."""
    lines = job.lines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert job.returncode == 0 and not failures, job.report()
    missing = [name for name in names if ("ok " + name) not in lines]
    assert not missing, "no ok line for: %s\n%s" % (", ".join(missing), job.report())
    assert any(re.match(r"^ok %s: \d+ checks" % re.escape(summary), line) for line in lines), \
        job.report()


def cases():
    for np in [1, 2, 3, 4, 5, 7, 8]:
        yield pytest.param(np, [], id="np%d" % np)
        yield pytest.param(np, ["-n"], id="np%d-nonblocking" % np)
    for np in [2, 4, 5, 8]:
        yield pytest.param(np, ["-l"], id="np%d-large" % np)
    for np in [3, 8]:
        yield pytest.param(np, ["-n", "-l"], id="np%d-nonblocking-large" % np)


@pytest.mark.parametrize("np, args", [
    pytest.param(5, ["-c", "split"], id="np5-split"),
    pytest.param(6, ["-n", "-c", "split"], id="np6-split-nonblocking"),
    pytest.param(4, ["-c", "dup"], id="np4-dup"),
    pytest.param(3, ["-n", "-c", "dup"], id="np3-dup-nonblocking"),
])
def test_collectives_on_created_communicators(mpi, coll_binaries, np, args):
    """The same checks on communicators made by Comm_split (two halves at once, ranks
    reversed) and Comm_dup."""
    job = mpi.run(mpi.launch_args(np), coll_binaries("collectives"), args)
    names = COLLECTIVES + (["concurrent", "many_pending", "freed_pending"] if "-n" in args
                           else ["threads"])
    check_collectives(job, names, "collectives -n" if "-n" in args else "collectives")


@pytest.mark.parametrize("np, args", cases())
def test_collectives(mpi, coll_binaries, np, args):
    job = mpi.run(mpi.launch_args(np), coll_binaries("collectives"), args)
    names = COLLECTIVES + (["concurrent", "many_pending", "freed_pending"] if "-n" in args
                           else ["threads"])
    check_collectives(job, names, "collectives -n" if "-n" in args else "collectives")
    mpi.assert_clean(job)


@pytest.mark.parametrize("btls, np, args", [
    ("self,tcp", 3, []), ("self,tcp", 3, ["-n"]), ("self,tcp", 4, ["-l"]),
    ("self,sm", 4, ["-n", "-l"]),
    ("self,ofi", 3, ["-l"]), ("self,ofi", 4, ["-n"]), ("self,sm,ofi", 3, ["-n", "-l"]),
    ("self,ucx:tcp", 3, ["-l"]), ("self,ucx:sm", 4, ["-n"]), ("self,sm,ucx:tcp", 3, ["-n", "-l"])])
def test_collectives_btls(mpi, coll_binaries, btls, np, args):
    """Over each BTL set: the rendezvous sizes of tcp, sm, ofi and ucx differ. For ofi and
    ucx (ucx:TLS: over UCX's transports TLS), a subset of the matrix (blocking with 1 MiB,
    non-blocking, both beside sm): the collectives are point-to-point messages, which
    test_p2p.py runs over them."""
    if not mpi.is_crmpi and "ofi" in btls:
        pytest.skip("crmpi's ofi BTL; Open MPI reaches libfabric through its ofi MTL instead")
    if not mpi.is_crmpi and "ucx" in btls:
        pytest.skip("crmpi's ucx BTL; Open MPI reaches UCX through its ucx PML instead")
    job = mpi.run(mpi.launch_args(np, btls), coll_binaries("collectives"), args)
    names = COLLECTIVES + (["concurrent"] if "-n" in args else [])
    check_collectives(job, names, "collectives -n" if "-n" in args else "collectives")
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [4, 5])
@pytest.mark.parametrize("param, value, only", FORCED,
                         ids=["%s=%s" % (p.replace("coll_tuned_", ""), v) for p, v, _ in FORCED])
def test_forced_algorithm(mpi, coll_binaries, param, value, only, np):
    """Each algorithm of the tuned component, forced, on its collective: blocking at every
    size with 1 MiB, then non-blocking."""
    if not mpi.is_crmpi:
        pytest.skip("crmpi's coll_tuned parameters")
    for args in (["-l"], ["-n"]):
        job = mpi.run(mpi.launch_args(np, mca=[(param, value)]), coll_binaries("collectives"),
                      args + ["-o", only])
        names = [name for name in COLLECTIVES if only in name]
        check_collectives(job, names, "collectives -n" if "-n" in args else "collectives")
        mpi.assert_clean(job)


@pytest.mark.parametrize("np, args", [(3, ["-l"]), (4, ["-n"]), (7, [])])
def test_basic_component(mpi, coll_binaries, np, args):
    """--mca coll basic: every collective through the basic component."""
    if not mpi.is_crmpi:
        pytest.skip("crmpi's coll parameter")
    job = mpi.run(mpi.launch_args(np, mca=[("coll", "basic")]), coll_binaries("collectives"),
                  args)
    names = COLLECTIVES + (["concurrent"] if "-n" in args else [])
    check_collectives(job, names, "collectives -n" if "-n" in args else "collectives")
    mpi.assert_clean(job)


def test_unknown_component_fails_cleanly(mpi, coll_binaries):
    """--mca coll NAME with an unknown NAME: mpirun refuses it in one line before anything
    starts; a program run without mpirun (a singleton) is told by MPI_Init and exits."""
    if not mpi.is_crmpi:
        pytest.skip("crmpi's coll parameter")
    job = mpi.run(mpi.launch_args(2, mca=[("coll", "nosuch")]), coll_binaries("collectives"),
                  timeout=90)
    assert job.returncode != 0, job.report()
    lines = [line for line in job.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "coll: no component 'nosuch' here" in lines[0], job.report()
    mpi.assert_clean(job)
    alone = subprocess.run([coll_binaries("collectives")], capture_output=True, text=True,
                           timeout=90, env=dict(os.environ, CRMPI_MCA_coll="nosuch"))
    assert alone.returncode != 0, alone.stderr
    assert "cannot set up collective communication" in alone.stderr, alone.stderr


def test_info_lists_coll_parameters(mpi):
    """crmpi_info lists the coll framework, its components and the forcing parameters."""
    if not mpi.is_crmpi:
        pytest.skip("crmpi_info")
    import subprocess
    info = os.path.join(os.path.dirname(mpi.mpicc), "crmpi_info")
    out = subprocess.run([info, "--param", "coll", "all"], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stderr
    for param, _, _ in FORCED:
        assert param in out.stdout, "%s not listed:\n%s" % (param, out.stdout)


def app_output(job):
    """The result lines of an application-like program (those starting with its name)."""
    return [line for line in job.lines() if re.match(r"^(cg|particles|stencil): ", line)]


@pytest.mark.parametrize("program, args", [("cg", []), ("particles", []), ("stencil", [])])
@pytest.mark.parametrize("np", [1, 3, 4, 8])
def test_application_same_as_openmpi(mpi, coll_binaries, program, args, np):
    """The program checks itself under the implementation under test, and prints the same
    result lines as under Open MPI 4.1."""
    job = mpi.run(mpi.launch_args(np), coll_binaries(program), args)
    assert job.returncode == 0 and not [l for l in job.lines() if l.startswith("FAIL")], \
        job.report()
    mine = app_output(job)
    assert len(mine) == 2, job.report()
    mpi.assert_clean(job)
    openmpi = MpiImpl("openmpi")
    if not os.access(openmpi.mpirun, os.X_OK):
        pytest.skip("Open MPI is not installed")
    ref = openmpi.run(openmpi.launch_args(np), coll_binaries(program, openmpi), args)
    assert ref.returncode == 0, ref.report()
    assert mine == app_output(ref), "results differ from Open MPI's:\n%s\n--- Open MPI:\n%s" % (
        "\n".join(mine), "\n".join(app_output(ref)))


@pytest.mark.parametrize("param, value", [("coll_tuned_allreduce_algorithm", v)
                                          for v in ("1", "2", "3", "4")] +
                         [("coll_tuned_alltoallv_algorithm", "2"), ("coll", "basic")])
def test_applications_with_forced_algorithms(mpi, coll_binaries, param, value):
    """The applications' answers do not depend on the algorithm (5 ranks: not a power of
    two, so the folds of recursive doubling and Rabenseifner run)."""
    if not mpi.is_crmpi:
        pytest.skip("crmpi's coll parameters")
    results = {}
    for program in ("cg", "particles", "stencil"):
        base = mpi.run(mpi.launch_args(5), coll_binaries(program))
        forced = mpi.run(mpi.launch_args(5, mca=[(param, value)]), coll_binaries(program))
        assert base.returncode == 0 and forced.returncode == 0, forced.report()
        results[program] = (app_output(base), app_output(forced))
        assert results[program][0] == results[program][1], forced.report()


LOC_PAIRS = os.path.join(COLL_DIR, "loc_pairs.c")


@pytest.mark.parametrize("np", [3, 5])
@pytest.mark.parametrize("component", ["tuned", "basic"])
def test_loc_pairs_under_valgrind(mpi, tmp_path, np, component):
    """MINLOC/MAXLOC on MPI_DOUBLE_INT and MPI_LONG_DOUBLE_INT through every reduction,
    each rank under valgrind: the kernels wrote a whole pair, padding included, past the
    data-sized temporary buffers of the reductions on 3 or more ranks (heap corruption,
    "free(): invalid pointer"). Valgrind's error exit status fails the job; only invalid
    accesses count (--undef-value-errors=no: Open MPI writes uninitialised padding to its
    sockets, which is not what this test is about)."""
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    binary = mpi.compile(LOC_PAIRS, str(tmp_path / "loc_pairs"), flags=("-O1", "-g", "-Wall"))
    mca = [("coll", component)] if mpi.is_crmpi else []
    job = mpi.run(mpi.launch_args(np, mca=mca),
                  "valgrind", ["-q", "--error-exitcode=99", "--undef-value-errors=no", binary])
    lines = job.lines()
    assert job.returncode == 0, job.report()
    assert not [line for line in lines if line.startswith("FAIL")], job.report()
    done = [line for line in lines if re.match(r"^done loc_pairs: rank \d+: \d+ checks, 0 failed$",
                                               line)]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [1, 2, 3, 4, 5])
def test_neighbor_collectives(mpi, coll_binaries, np):
    """The five neighbourhood collectives, blocking, non-blocking and (where mpi.h has
    MPI-4.0's calls) persistent, on a ring, a periodic grid, a grid with a periodic
    dimension of one process, a line with MPI_PROC_NULL ends and a distributed graph
    (test/coll/neighbor.c)."""
    job = mpi.run(mpi.launch_args(np), coll_binaries("neighbor"))
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done neighbor: rank \d+: \d+ checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [2, 3, 4])
def test_nonblocking_and_blocking_in_either_order(mpi, coll_binaries, np):
    """A non-blocking collective started before a blocking one on some ranks and after it
    on others, as ROMIO's non-blocking collective I/O does from its poll functions: each
    gets its own data (test/coll/nb_order.c)."""
    job = mpi.run(mpi.launch_args(np), coll_binaries("nb_order"))
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done nb_order: rank \d+: 200 checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [1, 2, 3, 5])
def test_persistent_collectives(mpi, coll_binaries, np):
    """MPI-4.0's persistent collectives: made once, started three times with new data,
    several at once with MPI_Startall, between non-persistent ones, freed while running
    (test/coll/persistent.c; under an MPI without them the program checks nothing)."""
    job = mpi.run(mpi.launch_args(np), coll_binaries("persistent"))
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done persistent: rank \d+: \d+ checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    if mpi.is_crmpi:
        assert all(not l.startswith("done persistent: rank 0: 0 checks") for l in done), \
            job.report()
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [1, 2, 3, 4])
def test_large_count_collectives(mpi, coll_binaries, np):
    """Every collective's MPI-4.0 large-count ("_c") form, blocking, non-blocking and
    persistent, gives what its int form gives; displacements past INT_MAX put the blocks
    there; counts past INT_MAX are accepted (test/coll/large_count.c)."""
    job = mpi.run(mpi.launch_args(np), coll_binaries("large_count"))
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done large_count: rank \d+: \d+ checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    if mpi.is_crmpi:
        assert all(not l.startswith("done large_count: rank 0: 0 checks") for l in done), \
            job.report()
    mpi.assert_clean(job)
