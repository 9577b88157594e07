"""Application-level checkpoints (mpi-ext.h; docs/design.md, "Coordinated application
checkpoints"): MPIX_Checkpoint stores every rank's pheap backup in the job's snapshot,
ompi-restart starts the program again on another layout, and the callbacks of
MPIX_CR_register_callback run in order around application and transparent checkpoints.

  stencil          examples/pheap_stencil.c, 4 ranks, checkpointed by MPIX_Checkpoint,
                   killed, restarted with another mapping and BTL set: the same last line as
                   an uninterrupted run
  semi-blocking    MPIX_Checkpoint returns while the copy to storage is held, and the next
                   one waits for it; with snapc_base_blocking it returns committed
  crs pheap        the same program under --mca crs pheap, calling MPIX_Checkpoint every
                   step: only ompi-checkpoint's request makes one of them a checkpoint;
                   killed, restarted, the same last line
  callbacks        the order each rank records, across an application checkpoint, a
                   transparent one that continues, one with --term, its CRIU restart, and an
                   application checkpoint in the restored job
  bad input        a wrong rank count, a backup file missing from the snapshot, an
                   application checkpoint without --with-ft cr: one clear line, nothing left
  errors           MPIX_Checkpoint's errors through the communicator's error handler
  open heap        test/cr/pheap.c: a transparent checkpoint of ranks holding an open heap,
                   restarted after the first run changed the heap files
"""

import os
import re
import shutil
import subprocess

import pytest

import crjob
from conftest import INSTALL

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
LIB = os.path.join(INSTALL, "lib")

pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(LIB, "libcrmpi-pheap.so")),
    reason="libcrmpi-pheap was not built (configure found no dlmalloc)")

NP = 4
STEPS = ["-n", "60", "-c", "20"]
LAST_LINE = re.compile(r"^steps 60 checksum \S+$", re.M)


def compile_program(source, outdir):
    out = os.path.join(str(outdir), os.path.splitext(os.path.basename(source))[0])
    result = subprocess.run([crjob.tool("mpicc"), "-O2", "-Wall", "-Werror", source, "-o", out,
                             "-lcrmpi-pheap"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def stencil(tmp_path_factory):
    return compile_program(os.path.join(TOP, "examples", "pheap_stencil.c"),
                           tmp_path_factory.mktemp("mpix"))


@pytest.fixture(scope="module")
def callbacks(tmp_path_factory):
    return compile_program(os.path.join(HERE, "mpix_callbacks.c"),
                           tmp_path_factory.mktemp("mpix"))


def last_line(out):
    found = LAST_LINE.search(out)
    return found.group(0) if found else None


@pytest.fixture(scope="module")
def expected(stencil, tmp_path_factory):
    """The uninterrupted run's last line (no checkpoints, no C/R)."""
    files = tmp_path_factory.mktemp("whole")
    result = subprocess.run([crjob.tool("mpirun"), "-np", str(NP), stencil, "-n", "60", "-d",
                             str(files)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and last_line(result.stdout), result.stdout + result.stderr
    return last_line(result.stdout)


def stopped_job(crenv, stencil, files, mpirun_args=()):
    """A job that took application checkpoints at steps 20 and 40 and waits, after the
    second one is committed, to be killed; then killed. @return its snapshot."""
    job = crjob.CrJob(crenv, stencil, NP, ["--mca", "btl", "self,sm", *mpirun_args],
                      [*STEPS, "-s", "40", "-d", str(files)])
    follower = job.follow()
    assert follower.wait_for("out", lambda line: line == "stopped\n", timeout=120) is not None, \
        job.kill().report()
    handle = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    # MPIX_Checkpoint returned once every agent held its rank's backup; the copy to
    # storage and the commit end in the background.
    crjob.wait_committed(job, handle, 2)
    assert crjob.committed(handle)[-2:] == [1, 2], crjob.committed(handle)
    job.kill()
    crjob.assert_clean(job.jobid)
    return handle


def test_stencil_restarts_on_another_layout(stencil, expected, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    files = tmp_path / "files"
    files.mkdir()
    handle = stopped_job(crenv, stencil, files)

    info = crenv.info("--snapshot", handle, "--verify")
    assert info.returncode == 0, info.report("crmpi_info --snapshot")
    assert "pheap (application checkpoint)" in info.out, info.out
    for rank in range(NP):
        assert "pheap.backup = %s/stencil.%d.back" % (files, rank) in info.out, info.out

    # The killed job's files, and their directory, are gone (as on another node): the
    # restart brings the backups back, and the directory with them.
    shutil.rmtree(files)
    result = crenv.restart(handle, "-i", "--map-by", "node", "--oversubscribe", "--mca", "btl",
                           "self,tcp")
    assert result.returncode == 0, result.report("ompi-restart")
    assert "application checkpoints: the program starts again" in result.err, result.err
    assert "restarted from sequence 2 at step 40" in result.out, result.out
    assert last_line(result.out) == expected, result.report("ompi-restart")
    crjob.assert_clean(result.pid)


def test_checkpoint_returns_before_the_commit(stencil, expected, tmp_path):
    """MPIX_Checkpoint blocks only until every agent holds its rank's backup: with the
    copy to storage held (filem_copy_pause), the program goes on from its first checkpoint,
    and its second waits for the first one's end."""
    release = tmp_path / "release"
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "filem_copy_pause:1",
                                   "CRMPI_FAULT_RELEASE": str(release)})
    files = tmp_path / "files"
    files.mkdir()
    job = crjob.CrJob(crenv, stencil, NP, ["--mca", "btl", "self,sm"],
                      [*STEPS, "-s", "40", "-d", str(files)])
    follower = job.follow()
    handle = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    returned = follower.wait_for("out", lambda line: line == "checkpoint 1 at step 20\n",
                                 timeout=120)
    assert returned is not None, job.kill().report()
    assert crjob.committed(handle) == [], "committed while its copy was held"
    release.touch()
    assert follower.wait_for("out", lambda line: line == "stopped\n", timeout=120), \
        job.kill().report()
    crjob.wait_committed(job, handle, 2)
    assert crjob.committed(handle) == [1, 2], crjob.committed(handle)
    job.kill()
    crjob.assert_clean(job.jobid)

    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert "restarted from sequence 2 at step 40" in result.out, result.out
    assert last_line(result.out) == expected, result.report("ompi-restart")
    crjob.assert_clean(result.pid)


def test_blocking_checkpoint_returns_committed(stencil, tmp_path):
    """With snapc_base_blocking, MPIX_Checkpoint returns once its sequence is committed."""
    crenv = crjob.CrEnv(tmp_path)
    files = tmp_path / "files"
    files.mkdir()
    job = crjob.CrJob(crenv, stencil, NP, ["--mca", "btl", "self,sm", "--mca",
                                           "snapc_base_blocking", "1"],
                      [*STEPS, "-s", "40", "-d", str(files)])
    follower = job.follow()
    handle = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    returned = follower.wait_for("out", lambda line: line == "checkpoint 1 at step 20\n",
                                 timeout=120)
    assert returned is not None, job.kill().report()
    assert 1 in crjob.committed(handle), crjob.committed(handle)
    assert follower.wait_for("out", lambda line: line == "stopped\n", timeout=120), \
        job.kill().report()
    assert crjob.committed(handle) == [1, 2], crjob.committed(handle)
    job.kill()
    crjob.assert_clean(job.jobid)


def test_wrong_rank_count_refused(stencil, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    files = tmp_path / "files"
    files.mkdir()
    handle = stopped_job(crenv, stencil, files)
    seq_dir = os.path.join(handle, "2")
    result = crjob.run_tool([crjob.tool("mpirun"), "-np", "3", "--mca", "snapc_base_app_restart",
                             seq_dir, stencil, *STEPS, "-d", str(files)], crenv.env)
    assert result.returncode != 0, result.report()
    errors = [line for line in result.err.splitlines() if line.strip()]
    assert len(errors) == 1, result.err
    assert "has 4 ranks" in errors[0] and "-np 3" in errors[0], errors[0]
    crjob.assert_clean(result.pid)


def test_missing_backup(stencil, expected, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    files = tmp_path / "files"
    files.mkdir()
    handle = stopped_job(crenv, stencil, files)

    # Missing from the newest sequence: the restart falls back to the one before, saying so.
    os.unlink(os.path.join(handle, "2", "rank.2", "pheap", "backup"))
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert "rank.2/pheap/backup" in result.err and "sequence 1 instead" in result.err, \
        result.err
    assert "restarted from sequence 1 at step 20" in result.out, result.out
    assert last_line(result.out) == expected, result.report("ompi-restart")
    crjob.assert_clean(result.pid)

    # Missing from every sequence: one line saying so, nothing started.
    for seq in crjob.committed(handle):
        path = os.path.join(handle, str(seq), "rank.2", "pheap", "backup")
        if os.path.exists(path):
            os.unlink(path)
    result = crenv.restart(handle)
    assert result.returncode != 0, result.report("ompi-restart")
    errors = [line for line in result.err.splitlines() if "error" in line]
    assert len(errors) == 1 and "rank.2/pheap/backup" in result.err, result.err
    crjob.assert_clean(result.pid)


def test_crs_pheap_checkpoint_on_demand(stencil, tmp_path):
    whole = subprocess.run([crjob.tool("mpirun"), "-np", str(NP), stencil, "-n", "2000", "-d",
                            str(tmp_path)], capture_output=True, text=True, timeout=120)
    expected_2000 = re.search(r"^steps 2000 checksum \S+$", whole.stdout, re.M)
    assert whole.returncode == 0 and expected_2000, whole.stdout + whole.stderr

    crenv = crjob.CrEnv(tmp_path)
    files = tmp_path / "files"
    files.mkdir()
    job = crjob.CrJob(crenv, stencil, NP, ["--mca", "crs", "pheap", "--mca", "btl", "self,sm"],
                      ["-n", "2000", "-c", "1", "-s", "1", "-w", "2000", "-d", str(files)])
    follower = job.follow()
    assert follower.wait_for("out", lambda line: line == "running\n") is not None, \
        job.kill().report()
    ckpt = crenv.checkpoint(job.jobid, "-v")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint")
    assert "waiting for every rank's next MPIX_Checkpoint" in ckpt.out + ckpt.err, ckpt.report()
    handle = ckpt.out.strip().splitlines()[-1]
    assert crjob.committed(handle) == [1], crjob.committed(handle)
    # Until then, MPIX_Checkpoint took no checkpoint: the first one is ompi-checkpoint's.
    assert follower.wait_for("out", lambda line: line == "stopped\n") is not None, \
        job.kill().report()
    assert re.search(r"^checkpoint 1 at step \d+$", follower.text("out"), re.M), \
        follower.text("out")
    job.kill()
    crjob.assert_clean(job.jobid)

    result = crenv.restart(handle, "--map-by", "node", "--oversubscribe")
    assert result.returncode == 0, result.report("ompi-restart")
    assert re.search(r"^restarted from sequence 1 at step \d+$", result.out, re.M), result.out
    assert expected_2000.group(0) in result.out.splitlines(), result.report("ompi-restart")
    crjob.assert_clean(result.pid)


def test_unknown_crs_component(stencil, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    result = crjob.run_tool([crjob.tool("mpirun"), "--with-ft", "cr", "--mca", "crs", "pheaps",
                             "-np", "2", stencil], crenv.env)
    assert result.returncode != 0
    errors = [line for line in result.err.splitlines() if line.strip()]
    assert errors == ["mpirun: error: crs: no component 'pheaps' here (selection list "
                      "crs='pheaps'); the crs components are criu, pheap"], result.err
    crjob.assert_clean(result.pid)


def test_needs_with_ft_cr(stencil, tmp_path):
    result = subprocess.run([crjob.tool("mpirun"), "-np", "2", stencil, *STEPS, "-d",
                             str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "MPIX_Checkpoint: operation not supported: the job was not started with --with-ft " \
        "cr" in result.stderr, \
        result.stderr


@pytest.fixture(scope="module")
def errors(tmp_path_factory):
    return compile_program(os.path.join(HERE, "mpix_errors.c"), tmp_path_factory.mktemp("mpix"))


def test_errors_through_the_errhandler(errors, tmp_path):
    """With MPI_ERRORS_RETURN, MPIX_Checkpoint returns its error classes (mpix_errors.c
    checks them), and the job goes on to a checkpoint that works."""
    crenv = crjob.CrEnv(tmp_path, {"MPIX_DIR": str(tmp_path)})
    crenv.go()
    result = crjob.CrJob(crenv, errors, 2, ["--mca", "btl", "self,sm"]).finish()
    assert result.returncode == 0 and "errors ok" in result.out, result.report()


@pytest.fixture(scope="module")
def pheap_scenario(tmp_path_factory):
    return compile_program(os.path.join(TOP, "test", "cr", "pheap.c"),
                           tmp_path_factory.mktemp("mpix"))


def test_transparent_checkpoint_with_open_heap(pheap_scenario, tmp_path):
    """A rank holding an open heap is checkpointed transparently: CRIU dumps the heap file's
    lock, the dump keeps a copy of the file, and a restart after the first run changed the
    file finds the heap as it was at the checkpoint (test/cr/pheap.c checks it)."""
    heaps = tmp_path / "heaps"
    heaps.mkdir()
    crenv = crjob.CrEnv(tmp_path, {"PHEAP_DIR": str(heaps)})
    # The first checkpoint's copy of the heap files fails (each agent's first): CRIU
    # fails that dump, the checkpoint aborts with the reason, and the job goes on.
    job = crjob.CrJob(crenv, pheap_scenario, 2,
                      ["--mca", "btl", "self,sm", "--mca", "runtime_fault_inject",
                       "crs_criu_mapped_copy_fail:1"])
    job.ready()
    failed = crenv.checkpoint(job.jobid)
    assert failed.returncode != 0, failed.report("ompi-checkpoint")
    assert "cannot keep a copy of %s" % heaps in failed.err, failed.report("ompi-checkpoint")
    # The next one is taken at once: agents whose rank is still undoing the aborted one
    # hold its start until it has.
    ckpt = crenv.checkpoint(job.jobid)
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint")
    handle = ckpt.out.strip().splitlines()[-1]
    assert crjob.committed(handle) == [2], crjob.committed(handle)
    crenv.go()
    first = job.finish()
    assert first.returncode == 0 and crjob.ok_line(first.out), first.report()
    crjob.assert_clean(job.jobid)

    result = crenv.restart(handle, "--mca", "btl", "self,tcp")
    assert result.returncode == 0, result.report("ompi-restart")
    assert crjob.ok_line(result.out) == crjob.ok_line(first.out), result.report("ompi-restart")
    crjob.assert_clean(result.pid)


def read_logs(logdir, np):
    logs = []
    for rank in range(np):
        with open(os.path.join(logdir, "cb.%d" % rank)) as f:
            logs.append(f.read().splitlines())
    return logs


def test_callbacks_in_order(callbacks, tmp_path):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    crenv = crjob.CrEnv(tmp_path, {"CB_LOG_DIR": str(logdir)})
    np = 2
    job = crjob.CrJob(crenv, callbacks, np, ["--mca", "btl", "self,sm"])
    job.ready()
    handle = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    # Sequence 1 was the application checkpoint (its commit may end after the ranks went
    # on); 2 continues, 3 ends the job.
    crjob.wait_committed(job, handle, 1)
    for args in ((), ("--term",)):
        ckpt = crenv.checkpoint(job.jobid, *args)
        assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint")
    first = job.finish()
    assert first.returncode == 0, first.report()
    crjob.assert_clean(job.jobid)
    assert crjob.committed(handle)[-2:] == [2, 3], crjob.committed(handle)

    crenv.go()
    result = crenv.restart(handle)
    assert result.returncode == 0, result.report("ompi-restart")
    assert "callbacks done" in result.out, result.report("ompi-restart")
    crjob.assert_clean(result.pid)
    want = ["pre", "continue", "app 1",  # MPIX_Checkpoint
            "pre", "continue",  # ompi-checkpoint
            "pre",  # ompi-checkpoint --term: this process ends
            "restart",  # the same process, restored from sequence 3
            "pre", "continue", "app 1"]  # the restored job is a new job: its own sequences
    assert read_logs(logdir, np) == [want] * np
