"""Checkpoint/restart with bad input and faults (docs/design.md, "Tests"): each case must
give a clear message, the job must keep running where that is possible, and no committed
snapshot may be lost or damaged.

The job is test/cr/unmatched.c (rendezvous sends waiting for their receives) with 2 ranks,
or 4 where the rank count matters; after a failed checkpoint the test lets it go and
checks that it finishes with the same result as an uninterrupted run. The cases of the
copy to stable storage, which runs while the job runs, use test/cr/ticker.c instead (ranks
that print a line every 20 ms).

Fault points (runtime/fault.h) are armed through CRMPI_FAULT in mpirun's environment,
which its agents inherit (and their ranks, which reach no point of the agent), or, for a
point inside one rank, through CR_FAULT and CR_FAULT_RANK (test/cr/cr_common.h).
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

import crjob

PROGRAM = "unmatched"


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return crjob.compile_scenario(PROGRAM, tmp_path_factory.mktemp("crf-bin"))


@pytest.fixture(scope="module")
def expected(program, tmp_path_factory):
    """The uninterrupted run's result line, per rank count."""
    lines = {}

    def get(np):
        if np not in lines:
            crenv = crjob.CrEnv(tmp_path_factory.mktemp("crf-base"))
            crenv.go()
            result = crjob.CrJob(crenv, program, np).finish()
            assert result.returncode == 0 and crjob.ok_line(result.out), result.report()
            lines[np] = crjob.ok_line(result.out)
        return lines[np]

    return get


@pytest.fixture(scope="module")
def calibration(program, tmp_path_factory):
    """What one checkpoint of the 2-rank job writes: per rank, its files and its non-empty
    files (FileM's fault points count files), and the snapshot's bytes."""
    crenv = crjob.CrEnv(tmp_path_factory.mktemp("crf-cal"))
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    crenv.go()
    assert job.finish().returncode == 0, job.result.report()
    with open(os.path.join(handle, "1", "manifest.json")) as f:
        manifest = json.load(f)
    total = 0
    files, nonempty = [], []
    for rank_dir in sorted(os.listdir(os.path.join(handle, "1"))):
        if not rank_dir.startswith("rank."):
            continue
        sizes = []
        for root, _dirs, names in os.walk(os.path.join(handle, "1", rank_dir)):
            sizes += [os.path.getsize(os.path.join(root, n)) for n in names]
        files.append(len(sizes))
        nonempty.append(sum(1 for s in sizes if s > 0))
        total += sum(sizes)
    assert manifest and files
    return dict(files=max(files), nonempty=max(nonempty), bytes=total)


def ckpt_ok(crenv, job, *args):
    result = crenv.checkpoint(job.jobid, *args)
    assert result.returncode == 0, result.report("ompi-checkpoint")
    return result.out.strip().splitlines()[-1]


def ckpt_fails(crenv, job, *words):
    """A checkpoint that must fail with exit status 1 and an error naming `words`."""
    result = crenv.checkpoint(job.jobid)
    assert result.returncode == 1, result.report("ompi-checkpoint (should fail)")
    assert result.out.strip() == "", "no handle may be printed:\n" + result.report()
    for word in words:
        assert word in result.err, "the message should say %r:\n%s" % (word, result.report())
    return result


def finishes_ok(crenv, job, expected_line):
    crenv.go()
    result = job.finish()
    assert result.returncode == 0, result.report()
    assert crjob.ok_line(result.out) == expected_line, result.report()
    crjob.assert_clean(job.jobid)


def intact(crenv, handle, tree, seqs):
    """The committed snapshot is what it was: same commit record, same files, checksums
    verified, no partial sequence left behind."""
    assert crjob.committed(handle) == seqs, crjob.committed(handle)
    # An agent may still be finishing its copy into the aborted sequence; once it has
    # answered, mpirun removes what it wrote.
    deadline = time.monotonic() + 15
    while [d for d in os.listdir(handle) if d.endswith(".partial")]:
        assert time.monotonic() < deadline, "an aborted sequence stays: %s" % os.listdir(handle)
        time.sleep(0.1)
    now = crjob.snapshot_tree(handle)
    old_files = {k: v for k, v in tree.items() if k != "snapshot.json"}
    new_files = {k: v for k, v in now.items() if k != "snapshot.json"}
    assert new_files == old_files, "the committed snapshot changed: %s" % sorted(
        set(new_files.items()) ^ set(old_files.items()))[:10]
    verify = crenv.info("--snapshot", handle, "--verify")
    assert verify.returncode == 0 and "intact" in verify.out, verify.report("crmpi_info")


def held(tmp_path, spec, extra=None):
    """A fault environment whose pause points hold until the returned file is created."""
    release = tmp_path / "release"
    return dict(extra or {}, CRMPI_FAULT=spec, CRMPI_FAULT_RELEASE=str(release)), release


def checkpoint_until(crenv, job, words):
    """Start ompi-checkpoint -v and return it once a progress line of it says `words`."""
    tool = subprocess.Popen([crjob.tool("ompi-checkpoint"), "-v", str(job.jobid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=crenv.env)
    seen = []
    for line in tool.stderr:
        seen.append(line)
        if words in line:
            return tool
    out, err = tool.communicate(timeout=30)
    pytest.fail("the checkpoint never said %r:\n%s%s%s" % (words, "".join(seen), out, err))


def checkpoint_in_dump(crenv, job):
    """ompi-checkpoint -v, once it says the ranks are being dumped (with snapc_dump_pause
    armed and held(), the agents then hold the dump until the test releases it)."""
    return checkpoint_until(crenv, job, "dumping the ranks")


# ---- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("tool, args, words", [
    ("ompi-checkpoint", ["--mca", "snapc_base_timeout"], "--mca needs a name and a value"),
    ("ompi-checkpoint", ["--mca", "bad-name", "1", "1"], "not a parameter name"),
    ("ompi-checkpoint", ["--term", "--stop", "1"], "--term and --stop exclude each other"),
    ("ompi-checkpoint", ["--no-such-option", "1"], "unknown option"),
    ("ompi-ps", ["--mca", "runtime_session_dir_base"], "--mca needs a name and a value"),
    ("ompi-ps", ["--mca", "bad-name", "1"], "not a parameter name"),
    ("ompi-ps", ["--no-such-option"], "unknown argument"),
])
def test_bad_command_line(tmp_path, tool, args, words):
    result = crjob.run_tool([crjob.tool(tool), *args], crjob.CrEnv(tmp_path).env)
    assert result.returncode == 2 and words in result.err, result.report(tool)


def test_ompi_ps(tmp_path, program):
    """ompi-ps lists a running job: its ranks, C/R on, its state and snapshots; CKPTS counts
    committed checkpoints only (an aborted attempt, here a failed dump, once counted too)."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 2, ["--mca", "runtime_fault_inject", "snapc_dump_fail:2"])
    job.ready()
    handle = ckpt_ok(crenv, job)
    ckpt_fails(crenv, job, "aborted during the dump")
    listing = crjob.run_tool([crjob.tool("ompi-ps")], crenv.env)
    assert listing.returncode == 0, listing.report("ompi-ps")
    line = [ln for ln in listing.out.splitlines() if ln.split()[:1] == [str(job.jobid)]]
    assert len(line) == 1, listing.report("ompi-ps")
    assert line[0].split()[1:5] == ["2", "on", "idle", "1"], line
    assert "snapshots: %s seq 1" % handle in listing.out, listing.report("ompi-ps")
    crenv.go()
    assert job.finish().returncode == 0, job.result.report()
    listing = crjob.run_tool([crjob.tool("ompi-ps")], crenv.env)
    assert str(job.jobid) not in listing.out.split(), listing.report("ompi-ps")


def test_unknown_jobid(tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    # A pid that is surely not a process: above the kernel's pid_max.
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) + 1
    result = crenv.checkpoint(pid)
    assert result.returncode == 1, result.report()
    assert "no job %d" % pid in result.err, result.report()
    # A live process that is not an mpirun (this test's own pytest).
    result = crenv.checkpoint(os.getpid())
    assert result.returncode == 1 and "not a crmpi mpirun" in result.err, result.report()


def test_job_without_ft(tmp_path, program, expected):
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 2, ft=False)
    job.ready()
    ckpt_fails(crenv, job, "--with-ft cr")
    assert job.running()
    finishes_ok(crenv, job, expected(2))
    assert not os.path.exists(os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid))


def test_finished_job(tmp_path, program):
    crenv = crjob.CrEnv(tmp_path)
    crenv.go()
    job = crjob.CrJob(crenv, program, 2)
    assert job.finish().returncode == 0, job.result.report()
    result = crenv.checkpoint(job.jobid)
    assert result.returncode == 1 and "no job %d" % job.jobid in result.err, result.report()


def test_handle_does_not_exist(tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    missing = str(tmp_path / "4711.ckpt")
    result = crenv.restart(missing)
    assert result.returncode == 1 and "does not exist" in result.err, result.report()
    result = crenv.restart("4711")  # a bare jobid, looked up in the snapshot directory
    assert result.returncode == 1 and "does not exist" in result.err, result.report()


def test_incomplete_snapshot(tmp_path):
    """Only an abandoned <seq>.partial: nothing was committed."""
    crenv = crjob.CrEnv(tmp_path)
    handle = os.path.join(crenv.snapdir, "4711.ckpt")
    os.makedirs(os.path.join(handle, "1.partial", "rank.0"))
    result = crenv.restart(handle)
    assert result.returncode == 1 and "no committed snapshot" in result.err, result.report()


def test_wrong_rank_count(tmp_path, program):
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 4)
    job.ready()
    handle = ckpt_ok(crenv, job, "--term")
    assert job.finish().returncode == 0, job.result.report()
    result = crjob.run_tool([crjob.tool("mpirun"), "--restore", os.path.join(handle, "1"), "-np",
                             "3", program], crenv.env)
    assert result.returncode != 0, result.report("mpirun --restore -np 3")
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith(
        "the snapshot has 4 ranks and a restart keeps them all; -np 3 cannot take them"), \
        result.report()
    crjob.assert_clean(result.pid)


# ---- faults during a checkpoint ------------------------------------------------------------

def test_second_checkpoint_refused(tmp_path, program, expected):
    env, release = held(tmp_path, "snapc_dump_pause")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    first = checkpoint_in_dump(crenv, job)  # held in the dump
    second = crenv.checkpoint(job.jobid)
    release.touch()
    out, err = first.communicate(timeout=60)
    assert second.returncode == 1, second.report("second ompi-checkpoint")
    assert "in progress" in second.err and "one checkpoint at a time" in second.err, \
        second.report()
    assert first.returncode == 0, "first ompi-checkpoint:\n%s\n%s" % (out, err)
    assert crjob.committed(out.strip().splitlines()[-1]) == [1]
    finishes_ok(crenv, job, expected(2))


def test_checkpoint_interrupted(tmp_path, program, expected):
    """ompi-checkpoint killed with SIGINT during the dump: the checkpoint is aborted, the
    job goes on, the snapshot committed before is untouched."""
    env, release = held(tmp_path, "snapc_dump_pause:2")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    tool = checkpoint_in_dump(crenv, job)
    tool.send_signal(signal.SIGINT)
    out, err = tool.communicate(timeout=30)
    assert tool.returncode != 0 and out.strip() == "", (tool.returncode, out, err)
    # The agents finish their held dump, then see the abort.
    release.touch()
    assert job.running(), job.finish().report()
    intact(crenv, handle, tree, [1])
    # The next checkpoint is taken at once, with the next sequence number.
    assert ckpt_ok(crenv, job) == handle
    assert crjob.committed(handle) == [1, 3], crjob.committed(handle)
    finishes_ok(crenv, job, expected(2))
    assert "interrupted" in job.result.err, job.result.report()


def test_checkpoint_started_while_the_ranks_finish_an_abort(tmp_path, program, expected):
    """A checkpoint asked for while the ranks are still undoing an aborted one: each agent
    holds its start until its rank has finished the aborted checkpoint, and it commits.
    Checkpoint 2 is aborted (its tool interrupted) while the agents are held in its dump, and
    checkpoint 3 begins before they are released, so its start reaches every agent while its
    rank is still inside checkpoint 2. Each agent used to refuse it ("still finishing
    checkpoint 2"), which failed the user's ompi-checkpoint."""
    env, release = held(tmp_path, "snapc_dump_pause:2")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tool = checkpoint_in_dump(crenv, job)
    tool.send_signal(signal.SIGINT)
    tool.communicate(timeout=30)
    assert tool.returncode != 0
    third = checkpoint_until(crenv, job, "checkpoint 3 of job %d started" % job.jobid)
    release.touch()
    out, err = third.communicate(timeout=120)
    assert third.returncode == 0, out + err
    assert out.strip().splitlines()[-1] == handle
    assert crjob.committed(handle) == [1, 3], crjob.committed(handle)
    finishes_ok(crenv, job, expected(2))
    assert "interrupted" in job.result.err, job.result.report()


def test_rank_killed_during_checkpoint(tmp_path, program):
    """A rank killed (SIGKILL) while the agents dump: the checkpoint aborts with a message
    naming the rank, then mpirun ends the job as for any rank's death; the snapshot
    committed before is untouched."""
    env, release = held(tmp_path, "snapc_dump_pause:2")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    tool = checkpoint_in_dump(crenv, job)
    ranks = crjob.processes_of(job.jobid, exe=program)
    assert len(ranks) == 2, ranks
    os.kill(ranks[1], signal.SIGKILL)
    release.touch()
    out, err = tool.communicate(timeout=60)
    assert tool.returncode == 1, (out, err)
    assert "aborted during the dump" in err, err
    assert re.search(r"rank [01]: the rank ended during its dump", err), err
    assert "keeps running" not in err, "the message says the dead rank keeps running:\n" + err
    assert "job goes on" not in err and "mpirun ends the job" in err, \
        "the message must say that the job ends:\n" + err
    result = job.finish()
    assert result.returncode != 0, result.report()
    crjob.assert_clean(job.jobid)
    intact(crenv, handle, tree, [1])


def test_rank_dies_during_quiesce(tmp_path, program):
    """Fault point snapc_quiesce_crash in rank 1: it dies after sending its bookmarks."""
    crenv = crjob.CrEnv(tmp_path, {"CR_FAULT": "snapc_quiesce_crash:2", "CR_FAULT_RANK": "1"})
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    result = crenv.checkpoint(job.jobid)
    assert result.returncode == 1, result.report()
    assert "aborted during the" in result.err and "rank 1" in result.err, result.report()
    assert "job goes on" not in result.err and "mpirun ends the job" in result.err, \
        result.report("the message must say that the job ends")
    finished = job.finish()
    assert finished.returncode != 0, finished.report()
    assert "fault injected: snapc_quiesce_crash" in finished.err, finished.report()
    crjob.assert_clean(job.jobid)
    intact(crenv, handle, tree, [1])


def test_criu_missing(tmp_path, program, expected):
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 2, ["--mca", "crs_criu_binary", "/nonexistent"])
    job.ready()
    ckpt_fails(crenv, job, "aborted during the dump", "no checkpointer", "crs_criu_binary")
    assert job.running()
    finishes_ok(crenv, job, expected(2))
    assert "/nonexistent" in job.result.err, job.result.report()
    assert crjob.committed(os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)) == []


@pytest.mark.parametrize("arming", ["environment", "parameter"])
def test_dump_fails(tmp_path, program, expected, arming):
    """Fault point snapc_dump_fail (every agent, second checkpoint), armed by CRMPI_FAULT or
    by mpirun's --mca runtime_fault_inject (passed on to the agents)."""
    spec = "snapc_dump_fail:2"
    if arming == "environment":
        crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": spec})
        job = crjob.CrJob(crenv, program, 2)
    else:
        crenv = crjob.CrEnv(tmp_path)
        job = crjob.CrJob(crenv, program, 2, ["--mca", "runtime_fault_inject", spec])
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    ckpt_fails(crenv, job, "aborted during the dump", "snapc_dump_fail")
    intact(crenv, handle, tree, [1])
    finishes_ok(crenv, job, expected(2))
    assert not [d for d in os.listdir(handle) if d.endswith(".partial")]


@pytest.fixture
def small_tmpfs(tmp_path):
    """A directory on which the test mounts a tmpfs, unmounted afterwards."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    mounted = []

    def mount(nbytes):
        size = (nbytes + 4095) // 4096 * 4096
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % size, "tmpfs",
                                 str(mnt)], capture_output=True, text=True)
        if result.returncode != 0:
            pytest.skip("cannot mount a tmpfs (needs root): " + result.stderr.strip())
        mounted.append(str(mnt))
        return str(mnt)

    yield mount
    for path in mounted:
        subprocess.run(["umount", "-l", path])


def test_storage_full(tmp_path, program, expected, calibration, small_tmpfs):
    """The snapshot directory fills up during the second checkpoint: it fails saying so,
    the job goes on, the first snapshot stays committed and intact."""
    snapdir = small_tmpfs(int(calibration["bytes"] * 1.5))
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_MCA_snapc_base_global_snapshot_dir": snapdir})
    crenv.snapdir = snapdir
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    ckpt_fails(crenv, job, "aborted", "full")
    intact(crenv, handle, tree, [1])
    finishes_ok(crenv, job, expected(2))


@pytest.mark.parametrize("make_room", [False, True])
def test_room_for_two(tmp_path, program, expected, calibration, small_tmpfs, make_room):
    """Storage for two and a half checkpoints and snapc_base_keep 2: the third needs the
    room the first holds until the third commits. Without snapc_base_make_room mpirun says
    before it starts that it may not fit, and it fails; with it, the oldest sequence goes
    first and every checkpoint commits, the newest always kept."""
    snapdir = small_tmpfs(int(calibration["bytes"] * 2.5))
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_MCA_snapc_base_global_snapshot_dir": snapdir,
                                   "CRMPI_MCA_snapc_base_make_room": "1" if make_room else "0"})
    job = crjob.CrJob(crenv, program, 2)
    follower = job.follow()
    job.ready()
    handle = ckpt_ok(crenv, job)
    assert ckpt_ok(crenv, job) == handle
    if not make_room:
        ckpt_fails(crenv, job, "aborted", "full")
        assert follower.wait_for("err", lambda line: "checkpoint 3:" in line and
                                 "may not fit" in line, timeout=30) is not None, \
            follower.text("err")
        assert crjob.committed(handle) == [1, 2]
    else:
        for seq in (3, 4):
            assert ckpt_ok(crenv, job) == handle
            assert crjob.committed(handle) == [seq - 1, seq]
        assert "to make room" in follower.text("err"), follower.text("err")
    finishes_ok(crenv, job, expected(2))


def test_fault_filem_copy_enospc(tmp_path, program, expected, calibration):
    """filem_copy_enospc in every agent, at a file of the second checkpoint."""
    spec = "filem_copy_enospc:%d" % (calibration["files"] + 2)
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": spec})
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    ckpt_fails(crenv, job, "aborted", "the disk is full")
    intact(crenv, handle, tree, [1])
    finishes_ok(crenv, job, expected(2))


def damage_newest_and_restart(crenv, handle, expected_line):
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert "restarting from sequence 1 instead" in result.err, result.report()
    assert crjob.ok_line(result.out) == expected_line, result.report()
    crjob.assert_clean(result.pid)


def test_checksum_mismatch_falls_back(tmp_path, program, expected):
    """A byte of the newest sequence damaged by hand: ompi-restart says so and restarts
    from the previous sequence."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    ckpt_ok(crenv, job)
    handle = ckpt_ok(crenv, job, "--term")
    assert job.finish().returncode == 0
    pages = os.path.join(handle, "2", "rank.1", "criu", "pages-1.img")
    with open(pages, "r+b") as f:
        byte = f.read(1)
        f.seek(0)
        f.write(bytes([byte[0] ^ 0xFF]))
    crenv.go()
    damage_newest_and_restart(crenv, handle, expected(2))


def test_fault_filem_copy_corrupt(tmp_path, program, expected, calibration):
    """filem_copy_corrupt at a file of the second checkpoint: the checkpoint commits (the
    damage happens after the checksum), and restart verification catches it."""
    spec = "filem_copy_corrupt:%d" % (calibration["nonempty"] + 2)
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": spec})
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    ckpt_ok(crenv, job)
    handle = ckpt_ok(crenv, job, "--term")
    assert job.finish().returncode == 0, job.result.report()
    assert "fault injected: filem_copy_corrupt" in job.result.err, job.result.report()
    verify = crenv.info("--snapshot", handle, "--verify")
    assert "mismatch" in (verify.out + verify.err).lower() or verify.returncode != 0, \
        verify.report("crmpi_info --verify")
    crenv.go()
    damage_newest_and_restart(crenv, handle, expected(2))


def test_fault_snapc_commit_crash(tmp_path, program, expected):
    """mpirun dies in its second commit, after the new sequence's rename and before the
    commit record: the job ends (its mpirun is gone), the record still names sequence 1,
    and a restart uses it."""
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "snapc_commit_crash:2"})
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    result = crenv.checkpoint(job.jobid)
    assert result.returncode == 1, result.report()
    finished = job.finish()
    assert finished.returncode == 86, finished.report()  # CRMPI_FAULT_EXIT_STATUS
    # A crashed mpirun cannot remove its session directory (as after kill -9); its agents
    # and ranks must still be gone.
    deadline = time.monotonic() + 10
    while crjob.processes_of(job.jobid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not crjob.processes_of(job.jobid)
    shutil.rmtree(os.path.join(os.environ.get("TMPDIR") or "/tmp", "crmpi-%d" % os.getuid(),
                               str(job.jobid)), ignore_errors=True)
    assert crjob.committed(handle) == [1]
    verify = crenv.info("--snapshot", handle, "--verify")
    assert verify.returncode == 0, verify.report()
    del tree  # sequence 2 may exist beside it, uncommitted: the next commit removes it
    crenv.go()
    restarted = crenv.restart(handle)
    assert restarted.returncode == 0, restarted.report()
    assert crjob.ok_line(restarted.out) == expected(2), restarted.report()


@pytest.fixture(scope="module")
def phases(tmp_path_factory):
    return crjob.compile_scenario("phases", tmp_path_factory.mktemp("crf-phases"))


@pytest.mark.parametrize("where, words", [
    ("init", "has not finished MPI_Init"),
    ("finalize", "in MPI_Finalize"),
])
def test_checkpoint_outside_mpi(tmp_path, phases, where, words):
    """Ranks before the end of MPI_Init, or inside MPI_Finalize, cannot take part: the
    checkpoint is refused with the reason, and the job finishes normally."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, phases, 3, program_args=[where])
    if where == "init":
        deadline = time.monotonic() + 30
        while len([f for f in os.listdir(crenv.readydir) if f.startswith("ready.pre.")]) < 3:
            assert time.monotonic() < deadline and job.running(), "ranks not started"
            time.sleep(0.05)
    else:
        job.ready()
        time.sleep(0.3)  # ranks 1 and 2 enter MPI_Finalize
    ckpt_fails(crenv, job, "aborted during the bookmark exchange", words)
    assert job.running()
    crenv.go()
    result = job.finish()
    assert result.returncode == 0, result.report()
    assert "cr phases np=3 checksum=" in result.out and ": ok" in result.out, result.report()
    crjob.assert_clean(job.jobid)


def test_checkpoint_while_the_job_starts(tmp_path, program, expected):
    """A checkpoint asked for while the agents have not all connected to mpirun (fault
    point agent_hello_pause holds each before its hello until the test releases it, as a
    slow node would; a job restarted with ompi-restart is there while its ranks are restored)
    is refused at once, saying why. It used to send its first step to the agents that were
    there and wait for the others until snapc_base_timeout (120 s). (The hold once lasted
    3 s: on a loaded machine mpirun saw the request after the hellos, and the test failed.)"""
    release = str(tmp_path / "release")
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "agent_hello_pause:1",
                                   "CRMPI_FAULT_RELEASE": release})
    job = crjob.CrJob(crenv, program, 2)
    deadline = time.monotonic() + 30
    while True:
        # mpirun listens once its session directory exists; until then it is not there.
        result = crenv.checkpoint(job.jobid, timeout=30)
        if "is not a crmpi mpirun" not in result.err:
            break
        assert job.running() and time.monotonic() < deadline, job.finish().report()
        time.sleep(0.05)
    assert result.returncode == 1, result.report("ompi-checkpoint while the job starts")
    assert "is not ready (the job is still starting" in result.err, \
        result.report()
    with open(release, "w"):
        pass
    job.ready()
    ckpt_ok(crenv, job)
    finishes_ok(crenv, job, expected(2))


def test_restoring_agents_hold_their_place(tmp_path, program, expected):
    """While its agents restore their ranks (held there by fault point agent_restore_pause,
    as restores on a loaded node would be), a restarted job's mpirun already counts them as
    its agents: as many connections that never speak as mpirun keeps waiting (64) push only
    each other out, and the restart finishes with the uninterrupted result. A checkpoint asked
    for meanwhile is refused, saying why. Restoring agents used to say who they were only
    after their restore: the oldest silent connections were theirs, so a restart of more than
    64 ranks lost agents, and a restore that took over a minute lost its agent."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job, "--term")
    assert job.finish().returncode == 0, job.result.report()
    release = tmp_path / "release"
    env = dict(crenv.env, CRMPI_FAULT="agent_restore_pause:1",
               CRMPI_FAULT_RELEASE=str(release))
    proc = subprocess.Popen([crjob.tool("ompi-restart"), handle], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    follower = crjob.Follower(proc)
    silent = []
    try:
        at = 0
        for _ in range(2):  # both agents are held before their restore
            at = follower.wait_for("err", lambda line: "fault injected: agent_restore_pause"
                                   in line, at)
            assert at is not None, "an agent did not reach its restore"
            at += 1
        sock = os.path.join(os.environ.get("TMPDIR") or "/tmp", "crmpi-%d" % os.getuid(),
                            str(proc.pid), "hnp.sock")
        for _ in range(64):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(sock)
            silent.append(conn)
        refused = crenv.checkpoint(proc.pid)
        assert refused.returncode == 1 and "the job is still starting or being restarted" in \
            refused.err, refused.report("ompi-checkpoint during the restore")
        release.touch()
        crenv.go()
        proc.wait(timeout=120)
    finally:
        for conn in silent:
            conn.close()
        if proc.poll() is None:
            proc.kill()
    out, err = follower.join()
    assert proc.returncode == 0 and crjob.ok_line(out) == expected(2), \
        "ompi-restart: exit %s\n%s\n%s" % (proc.returncode, out, err)
    crjob.assert_clean(proc.pid)


def test_checkpoints_after_a_timeout(tmp_path, program, expected):
    """snapc_base_timeout 1 with the dumps held (snapc_dump_pause) until the test releases
    them: the first checkpoint is aborted by the timeout while the agents are still dumping;
    one asked for while they still are fails too, saying why; once they are released, a
    checkpoint succeeds (those asked for while the ranks finish the first may fail, saying
    why) and the job finishes. (The agents once marked a rank out of its checkpoint when it
    answered an older one, dropped the new one's steps, and the job hung with the rank
    holding the library lock.)"""
    release = tmp_path / "release"
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "snapc_dump_pause:1",
                                   "CRMPI_FAULT_RELEASE": str(release)})
    job = crjob.CrJob(crenv, program, 2, ["--mca", "snapc_base_timeout", "1"], timeout=120)
    job.ready()
    first = crenv.checkpoint(job.jobid)
    assert first.returncode == 1 and "snapc_base_timeout" in first.err, first.report()
    again = crenv.checkpoint(job.jobid)
    assert again.returncode == 1 and "aborted" in again.err, again.report("while held")
    release.touch()
    deadline = time.monotonic() + 60
    while True:
        last = crenv.checkpoint(job.jobid)
        if last.returncode == 0:
            break
        assert "aborted" in last.err, last.report()
        assert time.monotonic() < deadline, last.report("no checkpoint once the agents are free")
    assert job.running()
    finishes_ok(crenv, job, expected(2))


def test_term_checkpoint_fails(tmp_path, program, expected, calibration):
    """A --term checkpoint whose copy fails (filem_copy_enospc): the ranks were held
    stopped for the commit, and must go on instead; a later --term checkpoint works and the
    job restarts from it."""
    spec = "filem_copy_enospc:%d" % (calibration["files"] + 2)
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": spec})
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    tree = crjob.snapshot_tree(handle)
    failed = crenv.checkpoint(job.jobid, "--term")
    assert failed.returncode == 1 and "the disk is full" in failed.err, failed.report()
    time.sleep(0.5)
    assert job.running(), "a failed --term checkpoint ended the job:\n" + job.finish().report()
    intact(crenv, handle, tree, [1])
    # Each agent counts its own hits, and the abort may stop the other agent's copy before
    # its fault fired: it then fires once in the next checkpoint, and never again.
    last = crenv.checkpoint(job.jobid, "--term")
    if last.returncode != 0:
        assert "the disk is full" in last.err, last.report()
        assert job.running(), "a failed --term checkpoint ended the job:\n" + job.finish().report()
        last = crenv.checkpoint(job.jobid, "--term")
    assert last.returncode == 0, last.report("ompi-checkpoint")
    result = job.finish()
    assert result.returncode == 0 and crjob.ok_line(result.out) is None, result.report()
    seqs = crjob.committed(handle)
    assert seqs[0] == 1 and len(seqs) == 2 and seqs[1] >= 3, seqs
    crenv.go()
    del crenv.env["CRMPI_FAULT"]
    restarted = crenv.restart(handle)
    assert restarted.returncode == 0, restarted.report()
    assert crjob.ok_line(restarted.out) == expected(2), restarted.report()
    crjob.assert_clean(restarted.pid)


def test_restart_refused_clearly(tmp_path, program):
    """ompi-restart of a snapshot that cannot be used: the job's program gone from its path
    or replaced by another build, or every committed sequence damaged."""
    crenv = crjob.CrEnv(tmp_path)
    moved = str(tmp_path / "prog")
    shutil.copy(program, moved)
    job = crjob.CrJob(crenv, moved, 2)
    job.ready()
    ckpt_ok(crenv, job)
    handle = ckpt_ok(crenv, job, "--term")
    assert job.finish().returncode == 0, job.result.report()
    crenv.go()
    os.rename(moved, moved + ".away")
    result = crenv.restart(handle)
    assert result.returncode == 1 and "is not here" in result.err, result.report()
    # Another build of the program at the same path: refused before anything is launched,
    # naming the file (CRIU would refuse each rank's image only after the launch).
    other = subprocess.run([crjob.tool("mpicc"), "-O0", "-DCR_ANOTHER_BUILD",
                            os.path.join(crjob.CR_DIR, PROGRAM + ".c"), "-o", moved,
                            "-lpthread"], capture_output=True, text=True)
    assert other.returncode == 0, other.stderr
    result = crenv.restart(handle)
    assert result.returncode == 1, result.report()
    assert "%s is not the file the job ran" % moved in result.err, result.report()
    assert "build-id" in result.err and "crmpi-agent" not in result.err, result.report()
    os.rename(moved + ".away", moved)
    for seq in ("1", "2"):
        with open(os.path.join(handle, seq, "rank.0", "rank.json"), "a") as f:
            f.write(" ")
    result = crenv.restart(handle)
    assert result.returncode == 1, result.report()
    assert "restarting from sequence 1 instead" in result.err, result.report()
    assert "no older committed sequence" in result.err, result.report()
    assert crjob.ok_line(result.out) is None


# ---- the copy to stable storage, while the job runs ----------------------------------------

COPY_PAUSED = "fault injected: filem_copy_pause"


@pytest.fixture(scope="module")
def ticker(tmp_path_factory):
    return crjob.compile_scenario("ticker", tmp_path_factory.mktemp("crf-ticker"))


def tick_of(line):
    """(rank, tick, seconds) of a line of test/cr/ticker.c, or None."""
    parts = line.split()
    if len(parts) != 4 or parts[0] != "tick":
        return None
    return int(parts[1]), int(parts[2]), float(parts[3])


def ticks(out, rank=0):
    return [t[1] for t in map(tick_of, out.splitlines()) if t and t[0] == rank]


def checkpoint_in_copy(crenv, job, follower):
    """Start ompi-checkpoint; return it once an agent says its copy is held (filem_copy_pause
    armed with held(): until the test releases it), with the time (time.time()) that line
    reached us."""
    tool = subprocess.Popen([crjob.tool("ompi-checkpoint"), str(job.jobid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=crenv.env)
    index = follower.wait_for("err", lambda line: COPY_PAUSED in line)
    if index is None:
        tool.kill()
        out, err = tool.communicate()
        pytest.fail("no agent reached its copy:\n%s%s\n--- job ---\n%s" % (
            out, err, follower.text("err")))
    return tool, follower.lines["err"][index][0]


def tool_ok(tool):
    out, err = tool.communicate(timeout=120)
    assert tool.returncode == 0, "ompi-checkpoint:\n%s\n%s" % (out, err)
    return out.strip().splitlines()[-1]


def copy_thread_cpus(jobid):
    """Cpus_allowed_list of the agents' copy threads (named crmpi-copy) of job `jobid`."""
    found = []
    for pid in crjob.processes_of(jobid, crjob.tool("crmpi-agent")):
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                if open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip() != "crmpi-copy":
                    continue
                for line in open("/proc/%d/task/%s/status" % (pid, tid)):
                    if line.startswith("Cpus_allowed_list:"):
                        found.append(line.split()[1])
            except OSError:
                pass
    return found


@pytest.mark.parametrize("where", ["node", "rank"])
def test_copy_runs_off_the_rank_cpus(tmp_path, ticker, where):
    """The agent's background copy may use every CPU of the node (filem_copy_cpus node, the
    default), not only the core its rank is bound to; with filem_copy_cpus rank it stays
    there."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs to tell the rank's core from the node")
    env, release = held(tmp_path, "filem_copy_pause")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, ticker, 1, ["--bind-to", "core", "--mca", "filem_copy_cpus", where])
    follower = job.follow()
    job.ready()
    tool, _ = checkpoint_in_copy(crenv, job, follower)
    found = copy_thread_cpus(job.jobid)
    release.touch()
    tool_ok(tool)
    everything = "%d-%d" % (cpus[0], cpus[-1]) if cpus == list(range(cpus[0], cpus[-1] + 1)) \
        else ",".join(map(str, cpus))
    assert found == [everything if where == "node" else str(cpus[0])], found
    crenv.go()
    result = job.finish()
    assert result.returncode == 0 and crjob.ok_line(result.out), result.report()
    crjob.assert_clean(job.jobid)


def test_output_flows_during_copy(tmp_path, ticker):
    """While the agent copies its rank's images to stable storage (held by filem_copy_pause
    until the test releases it), the rank runs and what it prints must reach mpirun's stdout. Each line
    the rank printed after the copy began is followed, once it has arrived here, by a status
    query; mpirun must still say "storing" after some of them. (An agent that copied inside
    its event loop forwarded nothing until it had reported the copy, and mpirun leaves
    "storing" as soon as it has that report.) Then the snapshot commits, no line is lost, and
    a restart resumes the ticks where the checkpoint took them."""
    env, release = held(tmp_path, "filem_copy_pause")
    crenv = crjob.CrEnv(tmp_path, env)
    # One rank: with more, a rank whose agent had finished its copy could print while another
    # agent still copies, and mpirun would still say "storing" whatever the agents do.
    job = crjob.CrJob(crenv, ticker, 1)
    follower = job.follow()
    job.ready()
    tool, paused_at = checkpoint_in_copy(crenv, job, follower)
    during = 0
    index = 0
    while during < 5:
        index = follower.wait_for(
            "out", lambda line: tick_of(line) is not None and tick_of(line)[2] > paused_at,
            start=index)
        assert index is not None, "the rank printed nothing after its copy began:\n" + \
            follower.text("err")
        index += 1
        status = crenv.checkpoint(job.jobid, "-s")
        assert status.returncode == 0, status.report("ompi-checkpoint -s")
        if "storing" not in status.out:
            break
        during += 1
    release.touch()
    handle = tool_ok(tool)
    assert during >= 2, (
        "what the rank printed after its agent began the copy reached mpirun only when the copy "
        "was over (%d line(s) arrived while mpirun said storing)\n--- job's stderr ---\n%s" % (
            during, follower.text("err")))
    assert crjob.committed(handle) == [1]
    crenv.go()
    result = job.finish()
    assert result.returncode == 0 and crjob.ok_line(result.out), result.report()
    before = ticks(result.out)
    assert before == list(range(len(before))), "lines lost or repeated:\n" + result.report()
    crjob.assert_clean(job.jobid)
    restarted = crenv.restart(handle)
    assert restarted.returncode == 0 and crjob.ok_line(restarted.out), restarted.report()
    after = ticks(restarted.out)
    # The image was taken once the rank was ready (tick 10), before its last tick here.
    assert after and 10 < after[0] <= before[-1], (after[:3], before[-1])
    assert after == list(range(after[0], after[0] + len(after))), restarted.report()
    crjob.assert_clean(restarted.pid)


def test_unread_stdout_does_not_stop_mpirun(tmp_path):
    """Nobody reads mpirun's stdout while two ranks write 512 KiB each, more than every
    pipe on the way holds (test/cr/chatter.c): mpirun queues the output and still
    checkpoints the job. (Writing straight to its stdout, mpirun stopped in that write:
    the ranks never became ready, and a checkpoint would never have been answered.) At
    the end every line arrives, once, whole and in order."""
    chatter = crjob.compile_scenario("chatter", tmp_path)
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, chatter, 2, ["--tag-output"])  # whole lines, never mixed
    job.ready()
    ckpt = crenv.checkpoint(job.jobid)
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint") + job.kill().report("the job")
    crenv.go()
    result = job.finish()
    out = [line.split(">:", 1)[1] for line in result.out.splitlines()]  # the tags off
    assert result.returncode == 0 and crjob.ok_line("\n".join(out)), result.report()
    for rank in range(2):
        lines = [line for line in out if line.startswith("chatter %d " % rank)]
        assert [int(line.split()[2]) for line in lines] == list(range(8192)), \
            "rank %d's lines lost, repeated or reordered" % rank
        assert all(line.endswith("x") and len(line.split()) == 4 for line in lines)
    crjob.assert_clean(job.jobid)


def test_rank_ends_during_copy(tmp_path, ticker):
    """The ranks end (the go file appears) while their agents copy: each agent stays until
    its copy is reported, the snapshot commits, and the job then ends cleanly."""
    env, release = held(tmp_path, "filem_copy_pause")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, ticker, 2)
    follower = job.follow()
    job.ready()
    tool, _paused_at = checkpoint_in_copy(crenv, job, follower)
    crenv.go()
    ended = follower.wait_for("out", lambda line: crjob.OK_LINE.search(line) is not None)
    assert ended is not None, follower.text("err")
    ended_at = follower.lines["out"][ended][0]
    release.touch()
    handle = tool_ok(tool)
    assert ended_at < time.time()
    result = job.finish()
    assert result.returncode == 0, result.report()
    assert crjob.committed(handle) == [1]
    verify = crenv.info("--snapshot", handle, "--verify")
    assert verify.returncode == 0 and "intact" in verify.out, verify.report("crmpi_info")
    crjob.assert_clean(job.jobid)


def test_teardown_during_copy(tmp_path, ticker):
    """mpirun told to end (SIGTERM) while the agents copy: they leave without waiting for
    their copy (within plm_local_kill_grace), the sequence stays <seq>.partial and is never
    committed, and nothing is left running."""
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "filem_copy_pause"})
    job = crjob.CrJob(crenv, ticker, 2)
    follower = job.follow()
    job.ready()
    tool, _paused_at = checkpoint_in_copy(crenv, job, follower)
    job.proc.send_signal(signal.SIGTERM)
    result = job.finish()
    assert result.returncode != 0, result.report()
    assert "plm_local_kill_grace" not in result.err, result.report()
    out, err = tool.communicate(timeout=60)
    assert tool.returncode != 0 and out.strip() == "", (tool.returncode, out, err)
    jobdir = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    assert crjob.committed(jobdir) == []
    assert os.listdir(jobdir) == ["1.partial"], os.listdir(jobdir)
    crjob.assert_clean(job.jobid)


def test_abort_during_copy(tmp_path, ticker):
    """snapc_base_timeout 1 with the copy held (filem_copy_pause:1) until the test releases
    it: mpirun aborts the checkpoint while the agents copy. A checkpoint asked for meanwhile
    waits at the agents for the aborted copy to end, which here outlasts snapc_base_timeout:
    it is aborted in the bookmark exchange. The agents' node-local images go once their copy
    has ended; nothing of the aborted sequence stays; the next checkpoint commits and the job
    finishes."""
    env, release = held(tmp_path, "filem_copy_pause:1")
    crenv = crjob.CrEnv(tmp_path, env)
    job = crjob.CrJob(crenv, ticker, 2, ["--mca", "snapc_base_timeout", "1"], timeout=90)
    job.follow()
    job.ready()
    first = crenv.checkpoint(job.jobid)
    assert first.returncode == 1, first.report()
    assert "during the copy to stable storage" in first.err, first.report()
    assert "snapc_base_timeout" in first.err, first.report()
    held_copy = crenv.checkpoint(job.jobid)
    assert held_copy.returncode == 1 and "during the bookmark exchange" in held_copy.err and \
        "did not answer within snapc_base_timeout" in held_copy.err, held_copy.report()
    release.touch()
    # Held until the agents' copy has ended; on a loaded machine a dump may also miss the
    # one-second limit: ask again (the state waited for is a committed checkpoint).
    deadline = time.monotonic() + 120
    while True:
        result = crenv.checkpoint(job.jobid)
        if result.returncode == 0:
            break
        assert "did not answer within snapc_base_timeout" in result.err, result.report()
        assert time.monotonic() < deadline, result.report()
        time.sleep(0.5)
    handle = result.out.strip().splitlines()[-1]
    seqs = crjob.committed(handle)
    assert len(seqs) == 1 and seqs[0] >= 2, seqs
    deadline = time.monotonic() + 15
    while [d for d in os.listdir(handle) if d.endswith(".partial")]:
        assert time.monotonic() < deadline, "an aborted sequence stays: %s" % os.listdir(handle)
        time.sleep(0.1)
    session = os.path.join(os.environ.get("TMPDIR") or "/tmp", "crmpi-%d" % os.getuid(),
                           str(job.jobid))
    local = os.path.join(session, "ckpt", "1")
    assert not [d for d in os.listdir(local) if d.startswith("rank.")], os.listdir(local)
    assert job.running()
    crenv.go()
    finished = job.finish()
    assert finished.returncode == 0 and crjob.ok_line(finished.out), finished.report()
    crjob.assert_clean(job.jobid)


def outfile_checkpointed(tmp_path, env=None):
    """The outfile scenario on 2 ranks, each with an input file and an output file of its own
    in a directory of the test: checkpointed once, then run to its end. Returns the
    environment, the directory, the snapshot, the finished job and the output files' text."""
    outdir = tmp_path / "out"
    outdir.mkdir()
    (outdir / "in.1").write_text("input\n")
    program = crjob.compile_scenario("outfile", tmp_path)
    crenv = crjob.CrEnv(tmp_path, dict({"CR_OUT_DIR": str(outdir)}, **(env or {})))
    job = crjob.CrJob(crenv, program, 2)
    job.ready()
    handle = ckpt_ok(crenv, job)
    crenv.go()
    first = job.finish()
    assert first.returncode == 0 and crjob.ok_line(first.out), first.report()
    whole = {name: (outdir / name).read_text() for name in ("out.0", "out.1")}
    assert all(text.count("\n") == 6 for text in whole.values()), whole
    return crenv, outdir, handle, first, whole


def test_files_written_after_the_checkpoint(tmp_path):
    """Ranks appending to output files of their own go on writing after a checkpoint; the
    job restarted from it finds the files longer than they were then. The restart brings
    each back to its size at the checkpoint (saying so), and the files end as one
    uninterrupted run writes them. (CRIU refused such a restart: 'File ... has bad size'.)
    A file made shorter since cannot be brought back: the restart is refused, naming it."""
    crenv, outdir, handle, first, whole = outfile_checkpointed(tmp_path)

    restarted = crenv.restart(handle)
    assert restarted.returncode == 0, restarted.report("ompi-restart")
    assert crjob.ok_line(restarted.out) == crjob.ok_line(first.out), restarted.report()
    assert "cut back from" in restarted.err, restarted.report()
    assert {name: (outdir / name).read_text() for name in whole} == whole

    (outdir / "out.1").write_text("short\n")
    refused = crenv.restart(handle)
    assert refused.returncode != 0 and "out.1 has 6 bytes, fewer than" in refused.err, \
        refused.report("ompi-restart with a shortened file")
    (outdir / "out.1").write_text(whole["out.1"])

    # An input file changed since: CRIU refuses it (crmpi leaves input alone), and the
    # message names CRIU's log, which must outlive the failed job.
    (outdir / "in.1").write_text("input changed\n")
    failed = crenv.restart(handle)
    logs = re.findall(r"CRIU log: ([^)]+)\)", failed.err)
    assert failed.returncode != 0 and logs, failed.report("ompi-restart with a changed input")
    assert all(os.path.exists(log) for log in logs), failed.report()
    with open(logs[0]) as f:
        assert "in.1 has bad size" in f.read()
    for log in set(logs):
        os.unlink(log)


def test_files_written_kept_whole(tmp_path):
    """With crs_criu_file_content, each checkpoint keeps a copy of the files the ranks write:
    a restart after one was rewritten shorter and the other rewritten in place at the same
    size puts both back as they were (saying so), and they end as one uninterrupted run
    writes them."""
    crenv, outdir, handle, first, whole = outfile_checkpointed(
        tmp_path, {"CRMPI_MCA_crs_criu_file_content": "1"})
    # The checkpoint only copied the files: nothing was put back then.
    assert "put back" not in first.err, first.report()

    (outdir / "out.1").write_text("short\n")
    (outdir / "out.0").write_text("x" * len(whole["out.0"]))
    restarted = crenv.restart(handle)
    assert restarted.returncode == 0, restarted.report("ompi-restart")
    assert crjob.ok_line(restarted.out) == crjob.ok_line(first.out), restarted.report()
    assert restarted.err.count("put back as it was at the checkpoint") == 2, restarted.report()
    assert {name: (outdir / name).read_text() for name in whole} == whole
    crjob.assert_clean(restarted.pid)
