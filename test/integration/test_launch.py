"""Integration tests of the launcher: real jobs under the installed mpirun.

Every test starts real ranks (each in its own pid namespace, under its own crmpi-agent)
and checks what a user sees: output, exit status, the one-line explanation, and that
nothing is left behind (no process of the job, no session directory).

The installed tree is given by CRMPI_INSTALL (./bootstrap.sh test sets it). No test has
a timing threshold: timeouts below only turn a hang into a failure.
"""

import os
import re
import signal
import subprocess
import time

import pytest

INSTALL = os.environ.get("CRMPI_INSTALL", os.path.join(os.path.dirname(__file__), "../../install"))
MPIRUN = os.path.join(INSTALL, "bin", "mpirun")
MPICC = os.path.join(INSTALL, "bin", "mpicc")
HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME_INC = os.path.join(HERE, "..", "..", "runtime")
HANG = 60  # seconds after which a job is considered hung


@pytest.fixture(scope="session")
def mpi_job(tmp_path_factory):
    """mpi_job.c compiled with the installed mpicc: an unmodified MPI program."""
    out = tmp_path_factory.mktemp("bin") / "mpi_job"
    subprocess.run([MPICC, "-O1", "-I", RUNTIME_INC, os.path.join(HERE, "mpi_job.c"),
                    "-o", str(out)], check=True)
    return str(out)


def session_root():
    base = os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, "crmpi-%d" % os.getuid())


def job_processes(jobid):
    """Pids of every process that belongs to job `jobid` (agents carry CRMPI_JOBID; ranks
    inherit it from them)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if ("CRMPI_JOBID=%d" % jobid).encode() in env:
            found.append(int(entry))
    return found


def shm_segments(jobid):
    """The sm BTL's shared-memory files of job `jobid` in /dev/shm."""
    return sorted(f for f in os.listdir("/dev/shm") if f.startswith("crmpi-%d-sm-" % jobid))


def assert_clean(jobid):
    """Nothing of the job survives mpirun."""
    assert job_processes(jobid) == [], "processes of job %d left behind" % jobid
    assert not os.path.exists(os.path.join(session_root(), str(jobid))), \
        "session directory of job %d left behind" % jobid


def run(args, **kwargs):
    """Run mpirun to completion; return (returncode, stdout, stderr, jobid)."""
    proc = subprocess.Popen([MPIRUN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)
    out, err = proc.communicate(timeout=HANG)
    return proc.returncode, out, err, proc.pid


def parse_info(out):
    ranks = {}
    for line in out.splitlines():
        if line.startswith("rank="):
            fields = dict(item.split("=", 1) for item in line.split())
            ranks[int(fields["rank"])] = fields
    return ranks


@pytest.mark.parametrize("np", [1, 2, 4])
def test_ranks_run_and_see_the_job(mpi_job, np):
    rc, out, err, jobid = run(["-np", str(np), mpi_job, "info"])
    assert rc == 0, err
    ranks = parse_info(out)
    assert sorted(ranks) == list(range(np))
    for info in ranks.values():
        assert info["size"] == str(np)
        assert info["wtime_ok"] == "1"
    assert_clean(jobid)


def test_each_rank_in_own_pid_namespace_with_unique_pid(mpi_job):
    rc, out, err, jobid = run(["-np", "4", mpi_job, "info"])
    assert rc == 0, err
    ranks = parse_info(out)
    namespaces = {info["ns"] for info in ranks.values()}
    assert len(namespaces) == 4, "ranks share a pid namespace: %s" % namespaces
    mine = os.readlink("/proc/self/ns/pid")
    assert mine not in namespaces
    pids = [int(info["pid"]) for info in ranks.values()]
    assert len(set(pids)) == 4, "rank pids are not unique on the node: %s" % pids
    assert all(pid > 2 for pid in pids), pids
    # The parent of each rank is its namespace's init.
    assert all(info["ppid"] == "1" for info in ranks.values())


def test_many_short_jobs_end_cleanly(mpi_job):
    """Each rank's exit report and its agent's death race to mpirun; every ordering must end
    in a clean exit (this once failed one job in a few dozen)."""
    for attempt in range(25):
        rc, out, err, jobid = run(["-np", "4", mpi_job, "info"])
        assert rc == 0, "attempt %d: %s" % (attempt, err)
        assert len(parse_info(out)) == 4


@pytest.mark.parametrize("mode, expected_rc", [(["abort", "1", "7"], 7),
                                               (["crash", "2"], 128 + signal.SIGSEGV)])
def test_failing_jobs_end_with_one_line_every_time(mpi_job, mode, expected_rc):
    """A failing rank races its peers' fence, the teardown signals and PMIx's bookkeeping;
    these once lost a SIGTERM sent while a rank was being created (the job then waited
    for the kill deadline and PMIx's server crashed on the killed agents), and let
    peers print errors of their own."""
    for attempt in range(15):
        rc, out, err, jobid = run(["-np", "4", mpi_job] + mode)
        lines = [line for line in err.splitlines() if line.strip()]
        assert rc == expected_rc and len(lines) == 1, "attempt %d (rc %d):\n%s" % (
            attempt, rc, err)
        assert_clean(jobid)


def test_examples_hello(mpi_job):
    hello = os.path.join(INSTALL, "libexec", "crmpi", "hello")
    rc, out, err, jobid = run(["-np", "3", hello])
    assert rc == 0, err
    for rank in range(3):
        assert re.search(r"\b%d\b.*\b3\b" % rank, out), out


def test_exit_code_of_first_failing_rank(mpi_job):
    rc, out, err, jobid = run(["-np", "4", mpi_job, "exit", "2", "5"])
    assert rc == 5
    assert "rank 2 exited with status 5" in err
    assert_clean(jobid)


def test_abort_ends_the_job(mpi_job):
    rc, out, err, jobid = run(["-np", "4", mpi_job, "abort", "1", "7"])
    assert rc == 7
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, "expected one line of explanation, got:\n" + err
    assert "rank 1" in lines[0] and "MPI_Abort" in lines[0]
    assert_clean(jobid)


def test_crash_is_reported_with_rank_and_signal(mpi_job):
    rc, out, err, jobid = run(["-np", "4", mpi_job, "crash", "3"])
    assert rc == 128 + signal.SIGSEGV
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, "expected one line of explanation, got:\n" + err
    assert "rank 3 was killed by signal 11" in lines[0]
    assert_clean(jobid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_is_forwarded_to_the_ranks(mpi_job, sig):
    proc = subprocess.Popen([MPIRUN, "-np", "2", mpi_job, "wait"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    ready = 0
    while ready < 2:
        line = proc.stdout.readline()
        assert line, "job ended before its ranks were ready"
        ready += "ready" in line
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 128 + sig
    for rank in range(2):
        assert "rank %d caught signal %d" % (rank, sig) in out
    assert "received" in err
    assert_clean(proc.pid)


def test_mpirun_killed_hard_takes_the_job_with_it(mpi_job):
    proc = subprocess.Popen([MPIRUN, "-np", "2", mpi_job, "wait"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for _ in range(2):
        assert "ready" in proc.stdout.readline()
    # Past MPI_Init every rank has mapped its peers' shared-memory segments, whose names
    # are then gone: a killed job leaves nothing in /dev/shm.
    assert shm_segments(proc.pid) == []
    proc.kill()
    proc.wait(timeout=HANG)
    deadline = time.monotonic() + HANG
    while job_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert job_processes(proc.pid) == []
    # mpirun had no chance to remove its session directory: the next mpirun does.
    left = os.path.join(session_root(), str(proc.pid))
    assert os.path.isdir(left)
    rc, out, err, jobid = run(["-np", "1", mpi_job])
    assert rc == 0, err
    assert not os.path.exists(left), "the session directory of a killed mpirun stays"


def test_segments_of_dead_jobs_removed(mpi_job):
    """Shared-memory segments a dead job left in /dev/shm (its mpirun killed before it could
    remove them) go at the next mpirun's start once nobody touched them for a minute; a
    fresh one stays (the jobid may be an mpirun's pid on another node whose ranks here are
    still mapping it), and so do those of a job whose mpirun is a live process."""
    with open("/proc/sys/kernel/pid_max") as f:
        dead = int(f.read()) + 1
    old, fresh, alive = ("/dev/shm/crmpi-%d-sm-0" % pid for pid in (dead, dead + 1, 1))
    for path in (old, fresh, alive):
        with open(path, "wb") as f:
            f.write(b"\0" * 4096)
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    os.utime(alive, (an_hour_ago, an_hour_ago))
    try:
        rc, out, err, jobid = run(["-np", "1", mpi_job])
        assert rc == 0, err
        assert not os.path.exists(old), "a dead job's stale segment stays"
        assert os.path.exists(fresh) and os.path.exists(alive)
    finally:
        for path in (old, fresh, alive):
            if os.path.exists(path):
                os.unlink(path)


def test_session_directory_of_an_earlier_mpirun_with_the_same_pid(mpi_job):
    """A killed mpirun's session directory, named after its pid, must not stop a later
    mpirun that gets the same pid (here: a shell that makes the directory, then becomes
    mpirun by exec)."""
    script = 'mkdir -p "$0/$$/ckpt/1" && exec "$@"'
    proc = subprocess.run(["sh", "-c", script, session_root(), MPIRUN, "-np", "2", mpi_job],
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert "File exists" not in proc.stderr, proc.stderr


def test_timeout(mpi_job):
    rc, out, err, jobid = run(["-np", "2", "--timeout", "1", mpi_job, "wait"])
    assert rc != 0
    assert "--timeout 1" in err
    assert_clean(jobid)


def test_modex_publish_fence_lookup(mpi_job):
    rc, out, err, jobid = run(["-np", "4", mpi_job, "modex"])
    assert rc == 0, err
    assert out.count("modex ok (4 peers)") == 4


def test_tag_output(mpi_job):
    rc, out, err, jobid = run(["-np", "2", "--tag-output", mpi_job, "info"])
    assert rc == 0, err
    for rank in range(2):
        assert re.search(r"^\[%d,%d\]<stdout>:rank=%d " % (jobid, rank, rank), out, re.M), out


def test_x_sets_environment(mpi_job):
    rc, out, err, jobid = run(["-np", "2", "-x", "FOO=bar", mpi_job, "info"])
    assert rc == 0, err
    assert all(info["env_FOO"] == "bar" for info in parse_info(out).values())


def test_report_pid(mpi_job):
    rc, out, err, jobid = run(["--report-pid", "-", "-np", "1", mpi_job, "info"])
    assert rc == 0, err
    assert "jobid %d\n" % jobid in out


def test_bind_to_core(mpi_job):
    ncores = len(os.sched_getaffinity(0))
    if ncores < 2:
        pytest.skip("needs two cores")
    rc, out, err, jobid = run(["-np", "2", "--bind-to", "core", mpi_job, "info"])
    assert rc == 0, err
    cpus = [info["cpus"] for info in parse_info(out).values()]
    assert all("," not in c and "-" not in c for c in cpus), cpus
    assert len(set(cpus)) == 2, cpus


def test_bind_to_core_refuses_more_ranks_than_cores(mpi_job):
    ncores = os.cpu_count()
    rc, out, err, jobid = run(["-np", str(ncores + 1), "--bind-to", "core", mpi_job, "info"])
    assert rc != 0
    assert "--oversubscribe" in err
    rc, out, err, jobid = run(["-np", str(ncores + 1), "--bind-to", "core", "--oversubscribe",
                               mpi_job, "info"])
    assert rc == 0, err


@pytest.mark.parametrize("args, message", [
    (["-np", "0", "prog"], "not a positive number of ranks"),
    (["-np", "-2", "prog"], "not a positive number of ranks"),
    (["--no-such-option", "prog"], "unknown option"),
    (["-np", "2", "no-such-program-anywhere"], "cannot find 'no-such-program-anywhere'"),
    (["-np", "2", "NOT_EXECUTABLE"], "cannot run 'NOT_EXECUTABLE'"),
    (["-np", "2", "--launcher", "local", "--host", "some-other-node", "true"],
     "is not this node"),
    # Another node implies the ompi launcher, which names a host it cannot resolve before
    # anything starts.
    (["-np", "2", "--host", "some-other-node", "true"], "'some-other-node' cannot be resolved"),
    (["--launcher", "elsewhere", "true"], "--launcher: unknown 'elsewhere'"),
    (["--map-by", "ppr:2:rack", "true"], "unknown object 'rack'"),
    (["-N", "2", "-np", "3", "--host", "localhost", "true"], "places at most 2 ranks"),
    (["-np", "3", "--host", "localhost:2", "true"], "only 2 slots"),
    (["--hostfile", "/no/such/hostfile", "true"], "cannot read /no/such/hostfile"),
    # A component that is not there is refused before anything starts, once, not warned
    # about by every rank.
    (["-np", "2", "--mca", "btl", "self,bogus", "true"],
     "btl: no component 'bogus' here (selection list btl='self,bogus'); the btl components "
     "are self, sm, "),
    (["-np", "2", "--mca", "coll", "fast", "true"], "coll: no component 'fast' here"),
    (["-np", "2", "--mca", "btl", "self,^sm", "true"], "mixes included and excluded"),
])
def test_bad_input_is_one_clear_line(args, message, tmp_path):
    if "NOT_EXECUTABLE" in args:
        plain = tmp_path / "plain-file"
        plain.write_text("not a program\n")
        plain.chmod(0o644)
        args = [str(plain) if a == "NOT_EXECUTABLE" else a for a in args]
        message = message.replace("NOT_EXECUTABLE", str(plain))
    rc, out, err, jobid = run(args)
    assert rc != 0
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], err
    assert_clean(jobid)


def test_unknown_mca_parameter_warns_but_runs(mpi_job):
    rc, out, err, jobid = run(["-np", "1", "--mca", "no_such_param", "1", mpi_job, "info"])
    assert rc == 0, err
    assert "no_such_param" in err


def test_help_and_version():
    out = subprocess.run([MPIRUN, "--help"], capture_output=True, text=True, check=True).stdout
    for option in ["-np", "--host", "--hostfile", "--map-by", "--bind-to", "-x", "--mca",
                   "--tag-output", "--with-ft", "--timeout", "--report-pid"]:
        assert option in out
    out = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True, check=True).stdout
    assert "crmpi" in out


def test_singleton_without_mpirun(mpi_job):
    out = subprocess.run([mpi_job, "info"], capture_output=True, text=True, timeout=HANG,
                         check=True).stdout
    ranks = parse_info(out)
    assert list(ranks) == [0] and ranks[0]["size"] == "1"
