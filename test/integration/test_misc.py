"""The rest a typical program calls, between ranks: test/misc/misc.c at 1, 2 and 3 ranks,
and at 2 ranks over each BTL set. Alloc_mem buffers carry messages, a datatype rebuilt from
MPI_Type_get_contents receives what the original sent, MPI_T and MPI_Pcontrol answer; under
an implementation with MPI-IO a file is written and read back (crmpi has none: its mpi.h
declares no MPI_File call, so the program leaves that part out).

The program checks itself with test/comm/comm_common.h's harness: no FAIL line, one
"done misc: rank R: N checks, 0 failed" line per rank, exit status 0.
P2P_IMPL=openmpi runs it against Open MPI without crmpi's own answers (--crmpi), which
validates the rest of its checks.
"""

import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "misc", "misc.c"))


@pytest.fixture(scope="module")
def misc_binary(mpi, tmp_path_factory):
    return mpi.compile(SOURCE, str(tmp_path_factory.mktemp("misc-bin") / "misc"))


def run_misc(mpi, binary, tmp_path, np, btls=None):
    args = [str(tmp_path)] + (["--crmpi"] if mpi.is_crmpi else [])
    job = mpi.run(mpi.launch_args(np, btls), binary, args)
    lines = job.lines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert job.returncode == 0 and not failures, job.report()
    done = {}
    for line in lines:
        m = re.match(r"^done misc: rank (\d+): (\d+) checks, (\d+) failed$", line)
        if m:
            done[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    assert sorted(done) == list(range(np)), job.report()
    assert all(checks > 0 and failed == 0 for checks, failed in done.values()), job.report()
    mpi.assert_clean(job)


@pytest.mark.parametrize("np", [1, 2, 3])
def test_misc(mpi, misc_binary, tmp_path, np):
    run_misc(mpi, misc_binary, tmp_path, np)


@pytest.mark.parametrize("btls", ["self,sm", "self,tcp"])
def test_misc_over_btls(mpi, misc_binary, tmp_path, btls):
    run_misc(mpi, misc_binary, tmp_path, 2, btls)


SELF_ATTRS = os.path.abspath(os.path.join(HERE, "..", "misc", "self_attrs.c"))


@pytest.mark.parametrize("np", [1, 2])
def test_finalize_deletes_self_attributes(mpi, tmp_path, np):
    """MPI_Finalize calls the delete callbacks of MPI_COMM_SELF's attributes first, last set
    first, with MPI still usable (MPI-3.1 section 8.7.1); they were never called."""
    binary = mpi.compile(SELF_ATTRS, str(tmp_path / "self_attrs"))
    job = mpi.run(mpi.launch_args(np), binary, [])
    lines = job.lines()
    assert job.returncode == 0, job.report()
    assert lines.count("deleted 3, mpi usable 1, order 3 2 1") == np, job.report()
    assert lines.count("done") == np, job.report()
    mpi.assert_clean(job)


FATAL_UNNAMED = os.path.abspath(os.path.join(HERE, "..", "misc", "fatal_unnamed.c"))


def test_fatal_error_names_an_unnamed_communicator(mpi, tmp_path):
    """The fatal error's line names the communicator even when the program never named it
    (it printed "the error handler of  is MPI_ERRORS_ARE_FATAL")."""
    if not mpi.is_crmpi:
        pytest.skip("the wording is crmpi's")
    binary = mpi.compile(FATAL_UNNAMED, str(tmp_path / "fatal_unnamed"))
    job = mpi.run(mpi.launch_args(2), binary, [])
    assert job.returncode != 0, job.report()
    assert "the error handler of an unnamed communicator of 2 ranks" in job.err, job.report()
    assert "the error handler of  is" not in job.err, job.report()
    mpi.assert_clean(job)


MPICALLS = os.path.abspath(os.path.join(HERE, "..", "misc", "mpicalls.c"))


@pytest.fixture(scope="module")
def mpicalls_binary(mpi, tmp_path_factory):
    return mpi.compile(MPICALLS, str(tmp_path_factory.mktemp("mpicalls-bin") / "mpicalls"))


@pytest.mark.parametrize("np", [1, 2, 3, 4])
def test_mpicalls(mpi, mpicalls_binary, np):
    """darray pieces gathered with every rank's type, external32 between ranks, generalized
    requests, handle conversion, Fortran types, MPI-1's Type_struct with MPI_UB, datatype
    attributes and, where mpi.h has MPI-4.0's MPI_COMM_TYPE_HW_GUIDED, MPI_Isendrecv(_replace),
    MPI_Comm_idup_with_info and the split by hardware resource (test/misc/mpicalls.c)."""
    args = ["--crmpi"] if mpi.is_crmpi else []
    job = mpi.run(mpi.launch_args(np), mpicalls_binary, args)
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done mpicalls: rank \d+: \d+ checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)


SESSIONS = os.path.abspath(os.path.join(HERE, "..", "misc", "sessions.c"))


@pytest.mark.parametrize("np, world", [(1, False), (3, False), (2, True), (4, True)])
def test_sessions(mpi, tmp_path, np, world):
    """MPI-4.0 sessions, with no MPI_Init or outliving MPI_Finalize, and the info calls
    before MPI is initialized (test/misc/sessions.c)."""
    if not mpi.is_crmpi:
        pytest.skip("Open MPI 4.1 has no sessions")
    binary = mpi.compile(SESSIONS, str(tmp_path / "sessions"))
    job = mpi.run(mpi.launch_args(np), binary, ["--world"] if world else [])
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [l for l in lines if re.match(r"^done sessions: rank \d+: \d+ checks, 0 failed$", l)]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)


LARGE_COUNT_TYPES = os.path.abspath(os.path.join(HERE, "..", "misc", "large_count_types.c"))


@pytest.mark.parametrize("np", [1, 2, 3])
def test_large_count_types(mpi, tmp_path, np):
    """MPI-4.0's large-count "_c" constructors against their int forms, their records through
    MPI_Type_get_envelope_c/get_contents_c (values beyond INT_MAX; the int calls then fail
    with MPI_ERR_TYPE), MPI_Pack_c and the other pack calls, MPI_Op_create_c's reduction in
    MPI_Reduce_local, MPI_Reduce and MPI_Allreduce, and MPI_Buffer_attach_c/detach_c around
    MPI_Bsend, and a ROMIO file view made by MPI_Type_vector_c (test/misc/large_count_types.c)."""
    if not mpi.is_crmpi:
        pytest.skip("Open MPI 4.1 has no large-count calls")
    binary = mpi.compile(LARGE_COUNT_TYPES, str(tmp_path / "large_count_types"))
    job = mpi.run(mpi.launch_args(np), binary, [str(tmp_path)])
    lines = job.lines()
    assert job.returncode == 0 and not [l for l in lines if l.startswith("FAIL")], job.report()
    done = [
        l for l in lines if re.match(r"^done large_count_types: rank \d+: \d+ checks, 0 failed$", l)
    ]
    assert len(done) == np, job.report()
    mpi.assert_clean(job)
