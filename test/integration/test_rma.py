"""One-sided communication conformance: test/rma/rma.c over every BTL at 1-4 ranks.

The program is a table of subtests in the harness of the point-to-point suite
(test/p2p/p2p_common.h: "ok NAME" per subtest, a summary line); the subtests it must report
are read from its P2P_TEST lines, as test_p2p.py does. It runs with --mca btl self (one
rank), and with self,sm / self,tcp / self,ofi at 2, 3 and 4 ranks; each job must exit 0,
say ok for every subtest it has ranks for, print no FAIL line and leave nothing behind.

P2P_IMPL=openmpi runs the same against Debian's Open MPI, to validate the program:
P2P_IMPL=openmpi /usr/bin/python3 -m pytest test/integration/test_rma.py
Open MPI 4.1.4 runs it over vader only (its osc components need a BTL with RDMA, which
tcp is not, and make no window on one process over self), gets the logical accumulate
ops wrong (OPENMPI_KNOWN_BUGS) and fails now and then on windows over split
communicators (OPENMPI_FLAKY).
"""

import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RMA_SOURCE = os.path.abspath(os.path.join(HERE, "..", "rma", "rma.c"))

BTL_COMBINATIONS = ["self,sm", "self,tcp", "self,ofi"]
RANK_COUNTS = [2, 3, 4]

OPENMPI_KNOWN_BUGS = {
    "accumulate_logical":
        "MPI_Accumulate with MPI_LAND, MPI_LOR or MPI_LXOR on MPI_INT leaves the target "
        "unchanged under osc rdma over vader (Open MPI 4.1.4)",
}
# Left out of the Open MPI runs too, but failing only now and then (so not run alone).
OPENMPI_FLAKY = {
    "split_window":
        "windows made at once over the two halves of a split communicator (one context id) "
        "share osc rdma's shared-memory segment name: one MPI_Win_create fails with "
        "MPI_ERR_WIN about one run in two (Open MPI 4.1.4)",
}


def subtests():
    """[(name, min_ranks)] from the P2P_TEST lines of rma.c."""
    with open(RMA_SOURCE) as f:
        text = f.read()
    found = [(m.group(1), int(m.group(2)))
             for m in re.finditer(r"^\s*P2P_TEST\((\w+),\s*(\d+)\),", text, re.M)]
    assert found, "no P2P_TEST lines in rma.c"
    return found


@pytest.fixture(scope="module")
def rma_binary(mpi, tmp_path_factory):
    return mpi.compile(RMA_SOURCE, str(tmp_path_factory.mktemp("rma-bin") / "rma"))


def check_rma_job(job, np, excluded):
    """Exit 0, no FAIL line, ok (or skip, below min_ranks) for every subtest, a summary."""
    lines = job.lines()
    failures = [line for line in lines if line.startswith("FAIL")]
    assert job.returncode == 0 and not failures, job.report()
    missing, expected_ok, expected_skip = [], 0, 0
    for name, min_ranks in subtests():
        if name in excluded:
            continue
        if np >= min_ranks:
            expected_ok += 1
            if lines.count("ok " + name) != 1:
                missing.append("ok " + name)
        else:
            expected_skip += 1
            if not any(line.startswith("skip %s:" % name) for line in lines):
                missing.append("skip " + name)
    assert not missing, "missing: %s\n%s" % (", ".join(missing), job.report())
    assert "summary: %d ok, 0 failed, %d skipped" % (expected_ok, expected_skip) in lines, \
        job.report()


def cases():
    yield pytest.param("self", 1, id="self-np1")
    for btls in BTL_COMBINATIONS:
        for np in RANK_COUNTS:
            yield pytest.param(btls, np, id="%s-np%d" % (btls, np))


@pytest.mark.parametrize("btls, np", cases())
def test_rma(mpi, rma_binary, btls, np):
    if not mpi.is_crmpi:
        if np == 1:
            pytest.skip("Open MPI 4.1.4 makes no window on one process over btl self "
                        "(MPI_Win_create: MPI_ERR_WIN)")
        if btls != "self,sm":
            pytest.skip("Open MPI 4.1.4's osc components need a BTL with RDMA (vader)")
    excluded = set() if mpi.is_crmpi else set(OPENMPI_KNOWN_BUGS) | set(OPENMPI_FLAKY)
    job = mpi.run(mpi.launch_args(np, btls), rma_binary, ["^" + name for name in sorted(excluded)])
    check_rma_job(job, np, excluded)
    mpi.assert_clean(job)


if os.environ.get("P2P_IMPL") == "openmpi":
    @pytest.mark.parametrize("name", sorted(OPENMPI_KNOWN_BUGS))
    def test_openmpi_known_bugs(mpi, rma_binary, name):
        """Subtests left out of the Open MPI runs fail there, run alone; if one passes,
        Open MPI was fixed and its exclusion can go."""
        job = mpi.run(mpi.launch_args(2, "self,sm"), rma_binary, [name], timeout=90)
        if job.returncode == 0 and ("ok " + name) in job.lines():
            pytest.fail("%s now passes under Open MPI: drop it from OPENMPI_KNOWN_BUGS" % name)
        pytest.xfail(OPENMPI_KNOWN_BUGS[name])
