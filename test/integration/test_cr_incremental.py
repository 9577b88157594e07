"""Incremental checkpoints (crs_criu_incremental): after the first checkpoint of a job, each
rank's images hold the pages written since the previous one (userfaultfd write-protect in
the agent, CRIU's parent images), the manifest names each delta's parent, snapc_base_keep
keeps what a kept sequence depends on, and a restart reads the chain: its result equals an
uninterrupted run's. A damaged delta makes the restart fall back to an intact chain. The
same with the images compressed on their way to stable storage (filem_posix_compress).
Chains are compacted without a full dump: the agents store a delta flattened with its chain
into a full image (after crs_criu_incremental_chain deltas, and when the chain's start
would leave the keep newest), so that the disk holds at most 2 * keep - 1 sequences.
"""

import json
import os

import pytest

import crjob

NAME, NP, BTLS = "inflight", 3, "self,sm"
INCREMENTAL = ["--mca", "btl", BTLS, "--mca", "crs_criu_incremental", "1"]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return crjob.compile_scenario(NAME, tmp_path_factory.mktemp("cr-bin"))


@pytest.fixture(scope="module")
def expected(program, tmp_path_factory):
    return crjob.uninterrupted_line(program, NP, ["--mca", "btl", BTLS],
                                    tmp_path_factory.mktemp("cr-base"))


def manifest(handle, seq):
    with open(os.path.join(handle, str(seq), "manifest.json")) as f:
        return json.load(f)


def parents(handle, seq):
    return [rank.get("parent", 0) for rank in manifest(handle, seq)["ranks"]]


def image_bytes(handle, seq):
    return sum(rank["bytes"] for rank in manifest(handle, seq)["ranks"])


def checkpoints(crenv, job, count):
    handle = None
    for _ in range(count):
        ckpt = crenv.checkpoint(job.jobid)
        if ckpt.returncode != 0:
            pytest.fail(ckpt.report("ompi-checkpoint") + job.kill().report("the job"))
        handle = ckpt.out.strip().splitlines()[-1]
    return handle


def keep(count):
    return ["--mca", "snapc_base_keep", str(count)]


def rank_info(handle, seq, rank):
    with open(os.path.join(handle, str(seq), "rank.%d" % rank, "rank.json")) as f:
        return json.load(f)


def test_chain_restart(program, expected, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP, INCREMENTAL + keep(0))
    job.ready()
    checkpoints(crenv, job, 3)
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    handle = ckpt.out.strip().splitlines()[-1]
    assert job.finish().returncode == 0
    crjob.assert_clean(job.jobid)

    # The first checkpoint is full, each later one a delta of the one before (every
    # sequence kept: no chain is compacted before crs_criu_incremental_chain deltas).
    assert parents(handle, 1) == [0] * NP
    for seq in (2, 3, 4):
        assert parents(handle, seq) == [seq - 1] * NP, manifest(handle, seq)
        assert image_bytes(handle, seq) < image_bytes(handle, 1) / 2, \
            (seq, image_bytes(handle, seq), image_bytes(handle, 1))
    assert crjob.committed(handle) == [1, 2, 3, 4]

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(result.pid)

    # The first sequence of the chain (full) restarts too.
    result = crenv.restart(handle, "--seq", "1")
    assert result.returncode == 0, result.report("ompi-restart --seq 1")
    assert crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(result.pid)

    # A damaged delta: the restart of the newest sequence (which needs it) falls back to
    # sequence 2, whose chain is intact, and says which file was damaged.
    rank_dir = os.path.join(handle, "3", "rank.1", "criu")
    pages = sorted(f for f in os.listdir(rank_dir) if f.startswith("pages-"))
    with open(os.path.join(rank_dir, pages[0]), "r+b") as f:
        f.write(b"\xff" * 8)
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart, a delta damaged")
    assert "restarting from sequence 2 instead" in result.err, result.report()
    assert crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(result.pid)


def test_chain_length_and_keep(program, tmp_path):
    """crs_criu_incremental_chain 1: every second checkpoint is stored flattened (a full
    image), though dumped as a delta, so keep=2 can drop the sequences no kept one needs."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP,
                      INCREMENTAL + keep(2) + ["--mca", "crs_criu_incremental_chain", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 5)
    # 1 full, 2 delta of 1, 3 flattened, 4 delta of 3, 5 flattened: keep 2 keeps 4 and 5,
    # and 3 for 4.
    assert parents(handle, 4) == [3] * NP
    assert parents(handle, 5) == [0] * NP
    assert crjob.committed(handle) == [3, 4, 5]
    assert sorted(os.listdir(handle)) == ["3", "4", "5", "snapshot.json"]
    check_flattened(handle, 5, 4)
    job.kill()


def check_flattened(handle, seq, parent):
    """Sequence `seq` was dumped as a delta of `parent` and stored flattened: its rank.json
    says so, and the dump wrote a small part of what the stored image holds."""
    page = os.sysconf("SC_PAGESIZE")
    for rank, entry in enumerate(manifest(handle, seq)["ranks"]):
        crs = rank_info(handle, seq, rank)["crs"]
        assert crs.get("flattened_from") == parent and crs["parent"] == 0, crs
        assert crs["pages_written"] * page < entry["bytes"] / 2, (crs, entry["bytes"])


def test_keep_compacts_the_chain(program, expected, tmp_path):
    """keep=3 and the default chain length: every dump after the first is a delta, and the
    chain is compacted when its start would leave the 3 newest: 1 full, 2 and 3 deltas,
    4 flattened, 5 and 6 deltas, 7 flattened; the disk never holds more than 5 sequences
    (after 5: 3 and the chain it needs, down to 1). The newest (flattened) and the one
    before (a chain down to the flattened 4) restart with the uninterrupted result."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP, INCREMENTAL + keep(3))
    job.ready()
    for seq in range(1, 7):
        handle = checkpoints(crenv, job, 1)
        assert len(crjob.committed(handle)) <= 5, crjob.committed(handle)
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    assert job.finish().returncode == 0
    crjob.assert_clean(job.jobid)
    assert crjob.committed(handle) == [4, 5, 6, 7]
    assert [parents(handle, seq) for seq in (4, 5, 6, 7)] == \
        [[0] * NP, [4] * NP, [5] * NP, [0] * NP]
    check_flattened(handle, 4, 3)
    check_flattened(handle, 7, 6)

    crenv.go()
    for args in ([], ["--seq", "6"]):
        result = crenv.restart(handle, *args)
        assert result.returncode == 0, result.report("ompi-restart %s" % args)
        assert crjob.ok_line(result.out) == expected, result.report()
        crjob.assert_clean(result.pid)


def test_flatten_failure_keeps_the_delta(program, expected, tmp_path):
    """A flatten that fails (fault point snapc_flatten_fail, as with a parent stored
    compressed) leaves the delta stored as it is, with a warning, and the chain with it;
    the next checkpoint is flattened, and the chain goes once no kept sequence needs it."""
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "snapc_flatten_fail:1"})
    job = crjob.CrJob(crenv, program, NP, INCREMENTAL + keep(2))
    job.ready()
    handle = checkpoints(crenv, job, 3)
    assert parents(handle, 3) == [2] * NP, manifest(handle, 3)
    assert crjob.committed(handle) == [1, 2, 3]
    checkpoints(crenv, job, 1)
    assert parents(handle, 4) == [0] * NP
    check_flattened(handle, 4, 3)
    assert crjob.committed(handle) == [1, 2, 3, 4]  # 3, kept, still needs 2 and 1
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    result = job.finish()
    assert result.returncode == 0, result.report()
    assert "stays a delta of checkpoint 2: flattening it failed (fault injected: " \
        "snapc_flatten_fail)" in result.err, result.report()
    assert parents(handle, 5) == [4] * NP
    assert crjob.committed(handle) == [4, 5]

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(result.pid)


def test_compressed_chain(program, expected, tmp_path):
    """Incremental and compressed: the memory images are stored as .zst (each with the
    checksum of what it decompresses to), crmpi_info --snapshot says so, and the restart
    decompresses the whole chain."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP,
                      INCREMENTAL + keep(2) + ["--mca", "filem_posix_compress", "on"])
    job.ready()
    checkpoints(crenv, job, 1)
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    handle = ckpt.out.strip().splitlines()[-1]
    assert job.finish().returncode == 0
    for seq in (1, 2):
        for rank in manifest(handle, seq)["ranks"]:
            zst = [f for f in rank["files"] if f["path"].endswith(".img.zst")]
            assert zst and all(f["raw_size"] > f["size"] for f in zst), rank["files"]
    assert parents(handle, 2) == [1] * NP
    info = crenv.info("--snapshot", handle)
    assert "before compression" in info.out and "a delta of sequence 1" in info.out, info.report()

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(result.pid)
