"""Communicators, groups, attributes, error handlers, info, topologies and
intercommunicators: the programs of test/comm/ at 1, 2, 3, 4 and 8 ranks (8 is more ranks
than this machine has cores; intercomm.c from 2).

Each program checks itself (test/comm/comm_common.h): a failed check prints
"FAIL <program>: rank R: <step>: <what>", every rank ends with
"done <program>: rank R: N checks, M failed", and the exit status is non-zero when a check
failed. A job must exit 0, print no FAIL line, print one done line per rank with 0 failed
and a positive number of checks, and leave nothing behind.

P2P_IMPL=openmpi runs them against Debian's Open MPI (conftest.py), to validate the
programs themselves: P2P_IMPL=openmpi /usr/bin/python3 -m pytest test/integration/test_comm.py
"""

import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
COMM_DIR = os.path.abspath(os.path.join(HERE, "..", "comm"))

PROGRAMS = ["split", "create", "attr_err", "topo", "threads", "intercomm"]
RANK_COUNTS = [1, 2, 3, 4, 8]
# An intercommunicator needs two groups: intercomm.c runs from 2 ranks.
MIN_RANKS = {"intercomm": 2}


@pytest.fixture(scope="session")
def comm_binaries(mpi, tmp_path_factory):
    """Each program compiled once with the implementation's mpicc, on first use."""
    outdir = tmp_path_factory.mktemp("comm-bin")
    built = {}

    def get(program):
        if program not in built:
            built[program] = mpi.compile(os.path.join(COMM_DIR, program + ".c"),
                                         str(outdir / program))
        return built[program]

    return get


def check_job(job, program, np):
    lines = job.lines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert job.returncode == 0 and not failures, job.report()
    done = {}
    for line in lines:
        m = re.match(r"^done %s: rank (\d+): (\d+) checks, (\d+) failed$" % program, line)
        if m:
            done[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    assert sorted(done) == list(range(np)), "done lines of ranks %s, expected 0..%d\n%s" % (
        sorted(done), np - 1, job.report())
    for rank, (checks, failed) in done.items():
        assert checks > 0 and failed == 0, "rank %d: %d checks, %d failed\n%s" % (
            rank, checks, failed, job.report())


@pytest.mark.parametrize("program, np", [(program, np) for program in PROGRAMS
                                         for np in RANK_COUNTS
                                         if np >= MIN_RANKS.get(program, 1)])
def test_comm_program(mpi, comm_binaries, program, np):
    job = mpi.run(mpi.launch_args(np), comm_binaries(program))
    check_job(job, program, np)
    mpi.assert_clean(job)


@pytest.mark.parametrize("btls", ["self,sm", "self,tcp"])
def test_comm_over_btls(mpi, comm_binaries, btls):
    """The library's own messages (context id agreement, split's exchange, neighbour
    collectives) go over every BTL like the application's."""
    for program in ("create", "topo", "intercomm"):
        job = mpi.run(mpi.launch_args(3, btls), comm_binaries(program))
        check_job(job, program, 3)
        mpi.assert_clean(job)
