"""Helpers of the checkpoint/restart tests (test_cr.py, test_cr_faults.py): the scenario
programs of test/cr/ compiled with the installed mpicc, jobs started under
`mpirun --with-ft cr`, ompi-checkpoint and ompi-restart run against them.

A scenario program (test/cr/cr_common.h) creates CR_READY_DIR/ready.<rank> once its state
exists and waits until the file CR_GO exists; a CrJob starts one, waits for every rank's
ready file, lets the test checkpoint it, then creates the go file.
"""

import os
import re
import signal
import subprocess
import threading
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CR_DIR = os.path.abspath(os.path.join(HERE, "..", "cr"))
INSTALL = os.environ.get("CRMPI_INSTALL", os.path.join(HERE, "../../install"))
BIN = os.path.join(INSTALL, "bin")

OK_LINE = re.compile(r"^cr (\w+) np=(\d+) checksum=([0-9a-f]{16}): ok$", re.M)


def tool(name):
    return os.path.join(BIN, name)


def compile_scenario(name, outdir):
    src = os.path.join(CR_DIR, name + ".c")
    out = os.path.join(str(outdir), name)
    result = subprocess.run([tool("mpicc"), "-O2", "-Wall", src, "-o", out, "-lpthread"],
                            capture_output=True, text=True)
    assert result.returncode == 0, "mpicc failed on %s:\n%s%s" % (src, result.stdout,
                                                                  result.stderr)
    return out


def ok_line(out):
    """The program's result line, or None."""
    found = OK_LINE.search(out)
    return found.group(0) if found else None


class Finished:
    """A finished process: exit status and both streams."""

    def __init__(self, returncode, out, err, pid=None):
        self.returncode = returncode
        self.out = out
        self.err = err
        self.pid = pid

    def report(self, what="job"):
        return "%s: exit status %s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (
            what, self.returncode, self.out[-4000:], self.err[-6000:])


def run_tool(args, env, timeout=120):
    """Run ompi-checkpoint, ompi-restart or crmpi_info to completion."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail("%s hung (%d s):\n%s" % (" ".join(args), timeout,
                                              Finished(-1, out, err).report()))
    return Finished(proc.returncode, out, err, proc.pid)


class CrEnv:
    """A test's directories: snapshots, ready files, go file; the environment of its
    processes (the snapshot directory as CRMPI_MCA_snapc_base_global_snapshot_dir)."""

    def __init__(self, tmp_path, extra_env=None):
        self.snapdir = str(tmp_path / "snapshots")
        self.readydir = str(tmp_path / "ready")
        self.go_file = str(tmp_path / "go")
        os.makedirs(self.readydir, exist_ok=True)
        self.env = dict(os.environ)
        self.env.pop("CRMPI_FAULT", None)
        self.env.update(CRMPI_MCA_snapc_base_global_snapshot_dir=self.snapdir,
                        CR_READY_DIR=self.readydir, CR_GO=self.go_file)
        self.env.update(extra_env or {})

    def go(self):
        with open(self.go_file, "w"):
            pass

    def reset_ready(self):
        for name in os.listdir(self.readydir):
            os.unlink(os.path.join(self.readydir, name))

    def checkpoint(self, jobid, *args, timeout=120):
        return run_tool([tool("ompi-checkpoint"), *args, str(jobid)], self.env, timeout)

    def restart(self, handle, *args, timeout=180):
        return run_tool([tool("ompi-restart"), *args, handle], self.env, timeout)

    def info(self, *args, timeout=60):
        return run_tool([tool("crmpi_info"), *args], self.env, timeout)


class Follower:
    """A process's stdout and stderr read as they arrive, each line kept with the time
    (time.time()) it reached this test, so that a test can see output flowing while
    something else happens."""

    def __init__(self, proc):
        self.lines = {"out": [], "err": []}
        self.cond = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(stream, name), daemon=True)
                        for stream, name in ((proc.stdout, "out"), (proc.stderr, "err"))]
        for thread in self.threads:
            thread.start()

    def _read(self, stream, name):
        for line in stream:
            with self.cond:
                self.lines[name].append((time.time(), line))
                self.cond.notify_all()

    def wait_for(self, name, match, start=0, timeout=60):
        """Index of the first line of `name` ("out" or "err") from index `start` on for which
        match(line) is true, waiting for it; None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                lines = self.lines[name]
                for index in range(start, len(lines)):
                    if match(lines[index][1]):
                        return index
                start = max(start, len(lines))
                if not self.cond.wait(timeout=max(0, deadline - time.monotonic())):
                    return None

    def text(self, name):
        with self.cond:
            return "".join(line for _at, line in self.lines[name])

    def join(self, timeout=30):
        """Both streams once they ended: (out, err)."""
        for thread in self.threads:
            thread.join(timeout)
        return self.text("out"), self.text("err")


class CrJob:
    """One job under mpirun --with-ft cr, running in the background."""

    def __init__(self, crenv, program, np, mpirun_args=(), program_args=(), ft=True,
                 timeout=150, env=None):
        self.crenv = crenv
        self.np = np
        self.program = program
        crenv.reset_ready()
        cmd = [tool("mpirun"), "--timeout", str(timeout)]
        if ft:
            cmd += ["--with-ft", "cr"]
        cmd += ["-np", str(np), *mpirun_args, program, *program_args]
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env or crenv.env)
        self.jobid = self.proc.pid
        self.result = None
        self.follower = None

    def follow(self):
        """Read the job's output as it arrives (a Follower, returned); finish() uses it."""
        self.follower = Follower(self.proc)
        return self.follower

    def _collect(self, timeout):
        if self.follower is None:
            return self.proc.communicate(timeout=timeout)
        self.proc.wait(timeout=timeout)
        return self.follower.join()

    def ready(self, timeout=60):
        """Wait until every rank has created its ready file."""
        deadline = time.monotonic() + timeout
        want = {"ready.%d" % r for r in range(self.np)}
        while time.monotonic() < deadline:
            if want <= set(os.listdir(self.crenv.readydir)):
                return
            if self.proc.poll() is not None:
                self.finish()
                pytest.fail("the job ended before every rank was ready:\n" +
                            self.result.report())
            time.sleep(0.05)
        self.kill()
        pytest.fail("not every rank became ready within %d s:\n%s" % (timeout,
                                                                       self.result.report()))

    def running(self):
        return self.proc.poll() is None

    def finish(self, timeout=120):
        if self.result is None:
            try:
                out, err = self._collect(timeout)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                out, err = self._collect(60)
                self.result = Finished(-1, out, err, self.jobid)
                pytest.fail("job hung:\n" + self.result.report())
            self.result = Finished(self.proc.returncode, out, err, self.jobid)
        return self.result

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.finish(timeout=60)


def processes_of(jobid, exe=None):
    """Host pids of the processes carrying CRMPI_JOBID=jobid (agents, inits, ranks); only
    those running `exe` when given."""
    found = []
    key = ("CRMPI_JOBID=%d" % jobid).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as f:
                if key not in f.read().split(b"\0"):
                    continue
            if exe and os.readlink("/proc/%s/exe" % entry) != os.path.realpath(exe):
                continue
        except OSError:
            continue
        found.append(int(entry))
    return sorted(found)


def leftovers(jobid):
    found = ["process %d" % pid for pid in processes_of(jobid)]
    session = os.path.join(os.environ.get("TMPDIR") or "/tmp", "crmpi-%d" % os.getuid(),
                           str(jobid))
    if os.path.exists(session):
        found.append("session directory " + session)
    return found


def assert_clean(jobid):
    deadline = time.monotonic() + 10
    while leftovers(jobid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = leftovers(jobid)
    assert not left, "job %d left behind: %s" % (jobid, ", ".join(left))


def finish_clean(crenv, job):
    """Let a scenario job go on to its end: it must finish well and leave nothing behind."""
    crenv.go()
    result = job.finish()
    assert result.returncode == 0 and ok_line(result.out), result.report()
    assert_clean(job.jobid)
    return result


def snapshot_tree(jobdir):
    """{relative path: (size, mtime_ns)} of every file under a snapshot, to prove that a
    committed snapshot was not touched."""
    tree = {}
    for root, _dirs, files in os.walk(jobdir):
        for name in files:
            path = os.path.join(root, name)
            st = os.stat(path)
            tree[os.path.relpath(path, jobdir)] = (st.st_size, st.st_mtime_ns)
    return tree


def committed(jobdir):
    """The commit record's sequences, or []."""
    import json
    try:
        with open(os.path.join(jobdir, "snapshot.json")) as f:
            return json.load(f)["sequences"]
    except OSError:
        return []


def wait_committed(job, jobdir, count, deadline_s=150):
    """Wait until the commit record names checkpoint `count` (or the job ends)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        seqs = committed(jobdir)
        if seqs and seqs[-1] >= count:
            return seqs
        if not job.running():
            pytest.fail("the job ended before checkpoint %d:\n%s" % (count,
                                                                     job.finish().report()))
        time.sleep(0.1)
    job.kill()
    pytest.fail("checkpoint %d was not committed within %d s:\n%s" % (
        count, deadline_s, job.finish().report()))


def uninterrupted_line(program, np, mpirun_args, tmpdir):
    """The result line of an uninterrupted run of `program` (its go file made at once):
    what a checkpointed and restarted run must end with."""
    crenv = CrEnv(tmpdir)
    crenv.go()
    result = CrJob(crenv, program, np, mpirun_args).finish()
    line = ok_line(result.out)
    assert result.returncode == 0 and line, result.report("the uninterrupted run")
    return line
