"""Periodic checkpoints: mpirun --with-ft cr --ckpt-interval DURATION (or auto --mtbf M).

Every test waits for states (a number of committed sequences in the commit record), never
for a time: the deadlines below only turn a hang into a failure. What is checked about time
is what does not depend on the machine's speed: a checkpoint never starts sooner than the
interval after the previous one ended, so two commits are at least the interval apart.
The job is test/cr/ticker.c, which runs until its go file exists and checks every message
it receives.
"""
import datetime
import json
import os
import subprocess
import time

import pytest

import crjob


@pytest.fixture(scope="module")
def ticker(tmp_path_factory):
    return crjob.compile_scenario("ticker", tmp_path_factory.mktemp("periodic-ticker"))


def created(jobdir, seq):
    """When sequence `seq` was committed (its manifest's creation time)."""
    with open(os.path.join(jobdir, str(seq), "manifest.json")) as f:
        stamp = json.load(f)["created"]
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def test_fixed_interval(tmp_path, ticker):
    """--ckpt-interval 2: checkpoints follow each other without any tool, at least 2 s
    apart; ompi-checkpoint -s says so; the job ends with its result; the commit record
    keeps snapc_base_keep sequences."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, ticker, 2, mpirun_args=["--ckpt-interval", "2"])
    job.ready()
    jobdir = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    status = crenv.checkpoint(job.jobid, "-s")
    assert "periodic checkpoints every 2.0 s" in status.out, status.report("ompi-checkpoint -s")
    crjob.wait_committed(job, jobdir, 3)
    assert created(jobdir, 3) - created(jobdir, 2) >= 2
    result = crjob.finish_clean(crenv, job)
    assert "periodic checkpoint 1 of job" in result.err, result.report()
    assert crjob.committed(jobdir)[-2:] == [crjob.committed(jobdir)[-1] - 1,
                                            crjob.committed(jobdir)[-1]]


def test_restart_keeps_the_period(tmp_path, ticker):
    """A job restarted from a periodic snapshot goes on checkpointing at its interval: the
    restarted job (another jobid) commits snapshots of its own."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, ticker, 2, mpirun_args=["--ckpt-interval", "1"])
    job.ready()
    jobdir = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    crjob.wait_committed(job, jobdir, 1)
    job.kill()
    restart = subprocess.Popen([crjob.tool("ompi-restart"), jobdir], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=crenv.env)
    deadline = time.monotonic() + 150
    theirs = []
    while not theirs and time.monotonic() < deadline and restart.poll() is None:
        theirs = [d for d in os.listdir(crenv.snapdir) if d.endswith(".ckpt") and
                  d != os.path.basename(jobdir) and crjob.committed(os.path.join(crenv.snapdir, d))]
        time.sleep(0.1)
    crenv.go()
    out, err = restart.communicate(timeout=120)
    assert theirs, "the restarted job took no periodic checkpoint:\n%s\n%s" % (out, err)
    assert restart.returncode == 0 and crjob.ok_line(out), "%s\n%s" % (out, err)


def test_automatic_interval(tmp_path, ticker):
    """--ckpt-interval auto --mtbf 20s: the interval is Daly's for the measured cost, and is
    shown as such."""
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, ticker, 2,
                      mpirun_args=["--ckpt-interval", "auto", "--mtbf", "20s",
                                   "--mca", "snapc_base_periodic_initial_cost", "1"])
    job.ready()
    jobdir = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    status = crenv.checkpoint(job.jobid, "-s")
    assert "Daly's interval for an MTBF of 20 s" in status.out, status.report("ompi-checkpoint -s")
    crjob.wait_committed(job, jobdir, 1)
    result = crjob.finish_clean(crenv, job)
    assert "periodic checkpoints: the next in" in result.err, result.report()


def test_manual_checkpoint_during_a_periodic_one_is_refused(tmp_path, ticker):
    """A checkpoint asked for by hand while a periodic one runs is refused with a message
    naming it, and the job goes on. The fault point snapc_dump_pause holds every dump until
    the test releases it, so the periodic checkpoint is still running when the request
    comes."""
    release = tmp_path / "release"
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "snapc_dump_pause",
                                   "CRMPI_FAULT_RELEASE": str(release)})
    job = crjob.CrJob(crenv, ticker, 2, mpirun_args=["--ckpt-interval", "1"])
    job.ready()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = crenv.checkpoint(job.jobid, "-s")
        if "dumping" in status.out or "suspending" in status.out:
            break
        time.sleep(0.05)
    result = crenv.checkpoint(job.jobid)
    assert result.returncode != 0, result.report("ompi-checkpoint")
    assert "periodic checkpoint" in result.err and "is in progress" in result.err, \
        result.report("ompi-checkpoint")
    release.touch()
    crjob.finish_clean(crenv, job)


@pytest.mark.parametrize("args, message", [
    (["--ckpt-interval", "5"], "--ckpt-interval needs --with-ft cr"),
    (["--with-ft", "cr", "--ckpt-interval", "auto"], "--ckpt-interval auto needs --mtbf"),
    (["--with-ft", "cr", "--ckpt-interval", "soon"], "is neither 'auto' nor a duration"),
    (["--with-ft", "cr", "--ckpt-interval", "-3"], "is neither 'auto' nor a duration"),
    (["--with-ft", "cr", "--mtbf", "1h"], "--mtbf is for --ckpt-interval auto"),
    (["--with-ft", "cr", "--ckpt-interval", "auto", "--mtbf", "0"], "--mtbf: '0' is not"),
])
def test_bad_options_are_one_clear_line(tmp_path, args, message):
    result = crjob.run_tool([crjob.tool("mpirun"), *args, "-np", "1", "true"], dict(os.environ))
    assert result.returncode != 0
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.report("mpirun")
