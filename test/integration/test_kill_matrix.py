"""The kill matrix: each kind of process of a checkpointing job killed with SIGKILL in each
phase of a checkpoint (docs/design.md, "The checkpoint, phase by phase").

A 2-rank job (test/cr/unmatched.c: rendezvous sends waiting for their receives, so that
the drain moves data) takes a first checkpoint, which commits. Its second one is held in
the phase under test by a pause point (runtime/fault.h), armed for the second time the
point is reached and held until the test creates the release file; the test waits until
the point has fired (its "fault injected" line), kills the process, releases the hold, and
then checks, whatever the process was:

- the checkpoint in progress is either committed whole (it had reached its commit, and
  `ompi-checkpoint` says so) or not at all, and the committed snapshot verifies;
- the first checkpoint's files are untouched;
- a job that lost a rank, an agent or mpirun ends and leaves no process behind; a job that
  lost `ompi-checkpoint` or CRIU goes on and gives the uninterrupted result;
- the newest committed checkpoint restarts and gives the uninterrupted result.

`test/kill-matrix.sh` runs the matrix and prints it as a table (KILL_MATRIX_REPORT names the
file each case appends its outcome to).
"""

import json
import os
import signal
import subprocess
import time

import pytest

import crjob

PROGRAM = "unmatched"

NP = 2
# Phase -> the pause point that holds the second checkpoint in it, and how many times it
# fires: in each rank, for each rank's dump or copy (in its agent), or once (in mpirun).
# Each firing prints a "fault injected" line, and the test waits for all of them: a CRIU
# killed before its own dump reached the point would be killed mid-dump, its parasite
# still in the rank, which the rank does not survive.
PHASES = {
    "drain": ("snapc_drain_pause", NP),      # ranks: expected counts known, drain not done
    "suspend": ("snapc_suspend_pause", NP),  # ranks: transports released, READY not sent
    "dump": ("crs_criu_dump_pause", NP),     # agents: CRIU wrote the images, tasks frozen
    "copy": ("filem_copy_pause", NP),        # agents: ranks running again, copy not started
    "commit": ("snapc_commit_pause", 1),     # mpirun: every file durable, commit not written
}
VICTIMS = ("rank", "agent", "mpirun", "ompi-checkpoint", "criu")
CASES = [(phase, victim) for phase in PHASES for victim in VICTIMS
         if victim != "criu" or phase == "dump"]  # CRIU runs only during the dump
# Killing these ends the job; the others leave it running.
JOB_ENDS = ("rank", "agent", "mpirun")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return crjob.compile_scenario(PROGRAM, tmp_path_factory.mktemp("km-bin"))


@pytest.fixture(scope="module")
def expected(program, tmp_path_factory):
    crenv = crjob.CrEnv(tmp_path_factory.mktemp("km-base"))
    crenv.go()
    result = crjob.CrJob(crenv, program, NP).finish()
    assert result.returncode == 0 and crjob.ok_line(result.out), result.report()
    return crjob.ok_line(result.out)


def children_of(parents):
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % entry) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid in parents:
            found.append(int(entry))
    return found


def victim_pid(victim, job, tool):
    """The host pid of the process to kill."""
    if victim == "mpirun":
        return job.jobid
    if victim == "ompi-checkpoint":
        return tool.pid
    exe = {"rank": job.program, "agent": crjob.tool("crmpi-agent")}.get(victim)
    if exe:
        pids = crjob.processes_of(job.jobid, exe=exe)
    else:  # criu, a child of an agent
        agents = crjob.processes_of(job.jobid, exe=crjob.tool("crmpi-agent"))
        pids = [pid for pid in children_of(agents)
                if os.path.basename(os.readlink("/proc/%d/exe" % pid)) == "criu"]
    assert pids, "no %s process of job %d" % (victim, job.jobid)
    return pids[-1]


def no_process_runs(exe):
    """Wait until no process runs `exe`; the pids still running it, if any."""
    deadline = time.monotonic() + 20
    while True:
        left = []
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.readlink("/proc/%s/exe" % entry) == exe:
                    left.append(int(entry))
            except OSError:
                pass
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def files_of(tree, seq):
    return {path: stat for path, stat in tree.items() if path.startswith("%d/" % seq)}


def record(phase, victim, outcome):
    report = os.environ.get("KILL_MATRIX_REPORT")
    if report:
        with open(report, "a") as f:
            f.write(json.dumps(dict(phase=phase, victim=victim, **outcome)) + "\n")


@pytest.mark.parametrize("phase, victim", CASES, ids=["%s-%s" % c for c in CASES])
def test_kill(tmp_path, program, expected, phase, victim):
    point, fires = PHASES[phase]
    release = tmp_path / "release"
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "%s:2" % point,
                                   "CRMPI_FAULT_RELEASE": str(release)})
    job = crjob.CrJob(crenv, program, NP)
    follower = job.follow()
    job.ready()
    first = crenv.checkpoint(job.jobid)
    assert first.returncode == 0, first.report("first ompi-checkpoint")
    handle = first.out.strip().splitlines()[-1]
    tree = crjob.snapshot_tree(handle)

    tool = subprocess.Popen([crjob.tool("ompi-checkpoint"), str(job.jobid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=crenv.env)
    fired = -1
    for _ in range(fires):
        fired = follower.wait_for("err", lambda line: "fault injected: " + point in line,
                                  start=fired + 1, timeout=120)
        if fired is None:
            break
    if fired is None:
        tool.kill()
        job.kill()
        pytest.fail("the second checkpoint never reached %s:\n%s" % (point,
                                                                    job.result.report()))
    os.kill(victim_pid(victim, job, tool), signal.SIGKILL)
    release.touch()

    tool_out, tool_err = tool.communicate(timeout=120)
    if victim in JOB_ENDS:
        crenv.go()
        result = job.finish()
        assert result.returncode != 0, result.report("a job that lost its " + victim)
        deadline = time.monotonic() + 20  # agents see mpirun's end, then end their ranks
        while crjob.processes_of(job.jobid) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = crjob.processes_of(job.jobid)
        assert not left, "processes of the job left running: %s" % [
            (pid, os.readlink("/proc/%d/exe" % pid)) for pid in left]
        if victim != "mpirun":  # a killed mpirun's session directory: the next one sweeps it
            crjob.assert_clean(job.jobid)
    else:
        crenv.go()
        result = job.finish()
        assert result.returncode == 0, result.report("a job that lost its " + victim)
        assert crjob.ok_line(result.out) == expected, result.report()
        crjob.assert_clean(job.jobid)

    # The second checkpoint: committed whole, or not at all; said so either way.
    seqs = crjob.committed(handle)
    if victim != "ompi-checkpoint":
        if tool.returncode == 0:
            assert seqs == [1, 2], (seqs, tool_err)
        else:
            assert tool_err.strip(), "a failed checkpoint must say why"
    assert seqs in ([1], [1, 2]), seqs
    now = crjob.snapshot_tree(handle)
    assert files_of(now, 1) == files_of(tree, 1), "checkpoint 1 changed"
    verify = crenv.info("--snapshot", handle, "--verify")
    assert verify.returncode == 0 and "intact" in verify.out, verify.report("crmpi_info")

    # The newest committed checkpoint restarts and gives the uninterrupted result.
    env = {k: v for k, v in crenv.env.items() if k not in ("CRMPI_FAULT", "CRMPI_FAULT_RELEASE")}
    restarted = crjob.run_tool([crjob.tool("ompi-restart"), handle], env, timeout=180)
    assert restarted.returncode == 0, restarted.report("ompi-restart")
    assert crjob.ok_line(restarted.out) == expected, restarted.report("ompi-restart")
    left = no_process_runs(os.path.realpath(program))
    assert not left, "ranks left running after the restart: %s" % left
    record(phase, victim, dict(
        job="ended" if victim in JOB_ENDS else "went on",
        checkpoint="committed" if seqs == [1, 2] else "not committed",
        restart="seq %d ok" % seqs[-1]))
