"""Incremental checkpoints (crs_criu_incremental): after the first checkpoint of a job, each
rank's images hold the pages written since the previous one (userfaultfd write-protect in
the agent, CRIU's parent images), the manifest names each delta's parent, snapc_base_keep
keeps what a kept sequence depends on, and a restart reads the chain: its result equals an
uninterrupted run's. A damaged delta makes the restart fall back to an intact chain. The
same with the images compressed on their way to stable storage (filem_posix_compress).
"""

import json
import os

import pytest

import crjob

NAME, NP, BTLS = "inflight", 3, "self,sm"
INCREMENTAL = ["--mca", "btl", BTLS, "--mca", "crs_criu_incremental", "1",
               "--mca", "snapc_base_keep", "2"]


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


def test_chain_restart(program, expected, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP, INCREMENTAL)
    job.ready()
    checkpoints(crenv, job, 3)
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    handle = ckpt.out.strip().splitlines()[-1]
    assert job.finish().returncode == 0
    crjob.assert_clean(job.jobid)

    # The first checkpoint is full, each later one a delta of the one before; with
    # snapc_base_keep 2, sequences 1 and 2 stay because 3 and 4 need them.
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
    """crs_criu_incremental_chain 1: every second checkpoint is full, so keep=2 can drop
    the sequences no kept one needs."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP,
                      INCREMENTAL + ["--mca", "crs_criu_incremental_chain", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 5)
    # 1 full, 2 delta of 1, 3 full, 4 delta of 3, 5 full: keep 2 keeps 4 and 5, and 3 for 4.
    assert parents(handle, 4) == [3] * NP
    assert parents(handle, 5) == [0] * NP
    assert crjob.committed(handle) == [3, 4, 5]
    assert sorted(os.listdir(handle)) == ["3", "4", "5", "snapshot.json"]
    job.kill()


def test_compressed_chain(program, expected, tmp_path):
    """Incremental and compressed: the memory images are stored as .zst (each with the
    checksum of what it decompresses to), crmpi_info --snapshot says so, and the restart
    decompresses the whole chain."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, NP, INCREMENTAL + ["--mca", "filem_posix_compress", "on"])
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
