"""Storage levels (filem_levels): each checkpoint's images stay on the node's own storage
(the local level, filem_local_dir) and go to the global snapshot directory every Nth
checkpoint; the commit record and each manifest say which levels hold a sequence; a
restart reads each rank's images from the local level when they are there and intact,
else from the global one; a sequence whose global copy failed is committed at the local
level only, and the previous global one stays.
"""

import json
import os
import time

import pytest

import crjob

NAME, NP, BTLS = "inflight", 3, "self,sm"


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return crjob.compile_scenario(NAME, tmp_path_factory.mktemp("cr-bin"))


@pytest.fixture(scope="module")
def expected(program, tmp_path_factory):
    return crjob.uninterrupted_line(program, NP, ["--mca", "btl", BTLS],
                                    tmp_path_factory.mktemp("cr-base"))


def levels_env(tmp_path, levels):
    local = str(tmp_path / "local")
    return crjob.CrEnv(tmp_path, {"CRMPI_MCA_filem_levels": levels,
                                  "CRMPI_MCA_filem_local_dir": local}), local


def record(handle):
    with open(os.path.join(handle, "snapshot.json")) as f:
        return json.load(f)


def manifest(handle, seq):
    with open(os.path.join(handle, str(seq), "manifest.json")) as f:
        return json.load(f)


def local_ranks(local, handle, seq):
    seq_dir = os.path.join(local, os.path.basename(handle), str(seq))
    return sorted(os.listdir(seq_dir)) if os.path.isdir(seq_dir) else []


def checkpoints(crenv, job, count, *args):
    handle = None
    for _ in range(count):
        ckpt = crenv.checkpoint(job.jobid, *args)
        if ckpt.returncode != 0:
            pytest.fail(ckpt.report("ompi-checkpoint") + job.kill().report("the job"))
        handle = ckpt.out.strip().splitlines()[-1]
    return handle


def test_local_every_time_global_every_third(program, expected, tmp_path):
    crenv, local = levels_env(tmp_path, "local,global:3")
    job = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS, "--mca", "snapc_base_keep", "2"])
    job.ready()
    handle = checkpoints(crenv, job, 3)
    # 1: local and global (the first goes everywhere); 2, 3: local only.
    rec = record(handle)
    assert rec["levels"] == {"1": ["local", "global"], "2": ["local"], "3": ["local"]}, rec
    assert rec["sequences"] == [1, 2, 3]  # keep 2, and the newest held globally
    assert manifest(handle, 3)["levels"] == ["local"]
    assert sorted(os.listdir(os.path.join(handle, "3"))) == ["manifest.json"]
    assert local_ranks(local, handle, 3) == ["rank.%d" % r for r in range(NP)]
    # Each rank's copy to each level is timed, and the application's blocked time recorded.
    timings = manifest(handle, 1)["timings"]
    assert {"blocked", "copy_local", "copy_global"} <= set(timings), timings
    info = crenv.info("--snapshot", handle, "--verify")
    assert info.returncode == 0, info.report()
    assert "Levels" in info.out and "copied to local" in info.out, info.report()

    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    assert job.finish().returncode == 0
    crjob.assert_clean(job.jobid)
    # 4 goes everywhere again; 1 and 2 go (keep 2, and 4 is now the newest global one).
    rec = record(handle)
    assert rec["sequences"] == [3, 4] and rec["levels"]["4"] == ["local", "global"], rec
    assert not os.path.exists(os.path.join(handle, "1"))

    # The restart reads every rank from the local level.
    crenv.go()
    result = crenv.restart(handle, "--info")
    assert result.returncode == 0, result.report("ompi-restart")
    assert "from sequence 4 of %s (held at the local,global levels)" % handle in result.err, \
        result.report()
    assert crjob.ok_line(result.out) == expected, result.report()
    assert result.err.count("read from the local level") == NP, result.report()
    crjob.assert_clean(result.pid)

    # A rank's local copy damaged: that rank is read from the global level instead.
    criu = os.path.join(local, os.path.basename(handle), "4", "rank.1", "criu")
    pages = sorted(f for f in os.listdir(criu) if f.startswith("pages-"))
    with open(os.path.join(criu, pages[0]), "r+b") as f:
        f.write(b"\xff" * 8)
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart, a local copy damaged")
    assert crjob.ok_line(result.out) == expected, result.report()
    assert "rank 1: sequence 4 is damaged (see above) on this node's own storage" in result.err, result.report()
    assert result.err.count("read from the local level") == NP - 1, result.report()
    crjob.assert_clean(result.pid)

    # Sequence 3 is held only locally: damaged there, ompi-restart says so and refuses it.
    criu = os.path.join(local, os.path.basename(handle), "3", "rank.0", "criu")
    pages = sorted(f for f in os.listdir(criu) if f.startswith("pages-"))
    with open(os.path.join(criu, pages[0]), "r+b") as f:
        f.write(b"\xff" * 8)
    result = crenv.restart(handle, "--seq", "3")
    assert result.returncode != 0, result.report("ompi-restart --seq 3")
    assert "held only on the nodes' own storage" in result.err, result.report()


def test_local_copies_pruned_at_commit(program, expected, tmp_path):
    """snapc_base_keep 1 with the local level: once the third checkpoint is committed, each
    node's own storage holds the rank directories of sequence 3 only, though no checkpoint
    follows (the agents remove the others at the commit, not at their next copy)."""
    crenv, local = levels_env(tmp_path, "local,global")
    job = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS, "--mca", "snapc_base_keep", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 3)
    assert crjob.wait_committed(job, handle, 3) == [3]
    job_local = os.path.join(local, os.path.basename(handle))
    # The prune follows the commit; wait for it (the deadline only turns a miss into a failure).
    deadline = time.monotonic() + 30
    while sorted(os.listdir(job_local)) != ["3"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sorted(os.listdir(job_local)) == ["3"], os.listdir(job_local)
    assert local_ranks(local, handle, 3) == ["rank.%d" % r for r in range(NP)]
    assert job.running()
    assert crjob.ok_line(crjob.finish_clean(crenv, job).out) == expected
    assert sorted(os.listdir(job_local)) == ["3"], os.listdir(job_local)


def test_global_copy_fails(program, expected, tmp_path):
    """The global copy of sequence 2 fails (a full disk, injected): 2 is committed at the
    local level only, 1 stays the newest global sequence, and 2 restarts from the local
    level."""
    crenv, local = levels_env(tmp_path, "local,global")
    crenv.env["CRMPI_FAULT"] = "filem_global_copy_fail:2"
    job = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS, "--mca", "snapc_base_keep", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 1)
    ckpt = crenv.checkpoint(job.jobid)
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint, the global copy failing")
    assert "warning: checkpoint 2 is not stored at the global level" in ckpt.err, ckpt.report()
    rec = record(handle)
    assert rec["sequences"] == [1, 2] and rec["levels"]["2"] == ["local"], rec
    assert sorted(os.listdir(os.path.join(handle, "2"))) == ["manifest.json"]
    job.kill()
    crjob.assert_clean(job.jobid)

    crenv.env.pop("CRMPI_FAULT")
    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    assert result.err.count("read from the local level") == NP, result.report()
    crjob.assert_clean(result.pid)


def test_bad_levels_refused(program, tmp_path):
    for value, why in (("partner", "the partner level"), ("local,local", "named twice"),
                       ("global:0", "not an interval"), ("disk", "not a level")):
        crenv, _ = levels_env(tmp_path, value)
        crenv.go()
        result = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS]).finish()
        assert result.returncode != 0, result.report(value)
        lines = [line for line in result.err.splitlines() if "filem_levels" in line]
        assert len(lines) == 1 and why in lines[0], result.report(value)


def test_blocking_checkpoint(program, expected, tmp_path):
    """snapc_base_blocking: the ranks stay suspended until the commit, so the time the
    application was blocked covers the copies too; the job then goes on to the
    uninterrupted result, and checkpoints again."""
    crenv, _ = levels_env(tmp_path, "local,global")
    job = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS,
                                           "--mca", "snapc_base_blocking", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 2)
    for seq in (1, 2):
        timings = manifest(handle, seq)["timings"]
        assert timings["blocked"] >= timings["copy_local"] + timings["copy_global"], timings
        assert timings["blocked"] >= timings["filem"], timings
    assert crjob.ok_line(crjob.finish_clean(crenv, job).out) == expected


def incremental_three_times(program, tmp_path, keep):
    """A job with incremental dumps, the local level every time and the global one every
    fourth, `keep` sequences kept: checkpointed three times, then killed."""
    crenv, local = levels_env(tmp_path, "local,global:4")
    job = crjob.CrJob(crenv, program, NP, ["--mca", "btl", BTLS, "--mca", "snapc_base_keep",
                                           str(keep), "--mca", "crs_criu_incremental", "1"])
    job.ready()
    handle = checkpoints(crenv, job, 3)
    job.kill()
    crjob.assert_clean(job.jobid)
    return crenv, local, handle


def test_incremental_dumps_into_the_local_level(program, expected, tmp_path):
    """Incremental checkpoints with the local level: each dump goes straight into the node's
    own storage (no copy there), the deltas name their parents, and sequence 3, held
    locally only, restarts through its chain of local copies to the uninterrupted result;
    no unfinished copy is left behind."""
    crenv, local, handle = incremental_three_times(program, tmp_path, 3)
    rec = record(handle)
    assert rec["levels"] == {"1": ["local", "global"], "2": ["local"], "3": ["local"]}, rec
    assert [rank.get("parent", 0) for rank in manifest(handle, 3)["ranks"]] == [2] * NP
    for seq in (1, 2, 3):
        assert local_ranks(local, handle, seq) == ["rank.%d" % r for r in range(NP)], seq

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    # Each rank's chain, 3 then its parents 2 and 1, from the local level.
    for seq in (1, 2, 3):
        assert result.err.count("sequence %d read from the local level" % seq) == NP, \
            result.report()
    assert not any(name.endswith(".partial") for seq in (1, 2, 3)
                   for name in local_ranks(local, handle, seq)), os.listdir(local)
    crjob.assert_clean(result.pid)


def test_flattened_into_the_local_level(program, expected, tmp_path):
    """A delta stored flattened (keep 2: the chain's start would leave the 2 newest) where
    the dump went straight into the local level: the node's copy of sequence 3 is a full
    image, its manifest names no parent, and it restarts from the local level alone."""
    crenv, local, handle = incremental_three_times(program, tmp_path, 2)
    assert record(handle)["levels"]["3"] == ["local"], record(handle)
    assert [rank.get("parent", 0) for rank in manifest(handle, 2)["ranks"]] == [1] * NP
    assert [rank.get("parent", 0) for rank in manifest(handle, 3)["ranks"]] == [0] * NP
    seq_dir = os.path.join(local, os.path.basename(handle), "3")
    for rank in range(NP):
        with open(os.path.join(seq_dir, "rank.%d" % rank, "rank.json")) as f:
            assert json.load(f)["crs"].get("flattened_from") == 2
        assert not any(name.startswith("criu.") for name in
                       os.listdir(os.path.join(seq_dir, "rank.%d" % rank)))

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == expected, result.report()
    assert result.err.count("sequence 3 read from the local level") == NP, result.report()
    assert "sequence 2 read" not in result.err and "sequence 1 read" not in result.err, \
        result.report()
    crjob.assert_clean(result.pid)
