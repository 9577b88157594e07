"""Shared fixture of the integration tests that compile MPI programs and run them as jobs:
the `mpi` fixture says which MPI implementation they run against, compiles with its mpicc,
launches with its mpirun, and checks that a job left nothing behind.

P2P_IMPL chooses the implementation:
  crmpi (default)  the crmpi installed under CRMPI_INSTALL (./bootstrap.sh test sets it),
                   found as test_launch.py finds it;
  openmpi          Debian's Open MPI 4.1 (/usr/bin/mpicc, /usr/bin/mpirun). It validates
                   the test programs themselves: a test that fails there is a wrong test,
                   not a crmpi bug. BTL names are mapped to Open MPI's (sm -> vader), the
                   ob1 PML is forced (so that the BTL list is obeyed), and --oversubscribe
                   is passed (Open MPI refuses more ranks than cores without it).

test_launch.py keeps its own helpers: it is about crmpi's launcher only.

Cases marked `full` widen a matrix whose paths the other cases cover already (more rank
counts of the same transports): ./bootstrap.sh test leaves them out to keep CI within its
budget, ./bootstrap.sh test --full (CRMPI_TEST_FULL=1) runs them too.
"""

import os
import signal
import socket
import subprocess

import pytest

# A shell without job control starts its background commands with SIGINT ignored, and
# every process the suite starts would inherit that: a test that interrupts a tool (Ctrl-C
# to ompi-checkpoint) would then wait for it forever. The suite's children get the default
# action however the suite was started (a handled signal is reset to it by exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "full: part of the wider matrix that only "
                            "CRMPI_TEST_FULL=1 (./bootstrap.sh test --full) runs")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("CRMPI_TEST_FULL"):
        return
    left_out = [item for item in items if item.get_closest_marker("full")]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not item.get_closest_marker("full")]


HERE = os.path.dirname(os.path.abspath(__file__))
INSTALL = os.environ.get("CRMPI_INSTALL", os.path.join(HERE, "../../install"))
# The interface crmpi's ofi BTL uses in tests: libfabric's first one may be a bridge that
# other users of a shared machine delete and create again, which stalls TCP connections to
# its address for tens of seconds (retransmissions with backoff).
OFI_DOMAIN = "lo"
# The same for crmpi's ucx BTL (UCX's tcp); UCX's shared memory is not a network device.
UCX_NET_DEVICES = "lo"


def crmpi_btl_args(btls):
    """crmpi's --mca arguments for a BTL set. "ucx:TLS" in the list is the ucx BTL over UCX's
    transports TLS (btl_ucx_tls, which a restart takes too, unlike UCX_TLS): "self,ucx:tcp",
    "self,ucx:sm", "self,sm,ucx:tcp"; a ":place" suffix has ofi or ucx place large payloads
    (btl_ofi_recv_place, btl_ucx_recv_place): "self,ofi:place", "self,ucx:tcp:place". ofi
    and ucx keep to the loopback interface."""
    prefix = "^" if btls.startswith("^") else ""
    names = []
    extra = []
    for name in btls.lstrip("^").split(","):
        parts = name.split(":")
        name = parts[0]
        if parts[-1] == "place":
            extra += ["--mca", "btl_%s_recv_place" % name, "1"]
            parts.pop()
        if name == "ucx" and len(parts) > 1:
            extra += ["--mca", "btl_ucx_tls", parts[1]]
        names.append(name)
    args = ["--mca", "btl", prefix + ",".join(names)] + extra
    if "ofi" in names:
        args += ["--mca", "btl_ofi_domain", OFI_DOMAIN]
    if "ucx" in names:
        args += ["--mca", "btl_ucx_net_devices", UCX_NET_DEVICES]
    return args


def btl_names(btls):
    """The BTL components a set names ("self,ucx:tcp" -> ["self", "ucx"])."""
    return [name.split(":")[0] for name in btls.lstrip("^").split(",")]


class Job:
    """What a finished mpirun left: exit status, output, and its pid (crmpi's jobid)."""

    def __init__(self, returncode, out, err, pid, program):
        self.returncode = returncode
        self.out = out
        self.err = err
        self.pid = pid
        self.program = program

    def lines(self):
        return self.out.splitlines()

    def report(self, tail=60):
        """The end of both streams, for an assertion message."""
        out = "\n".join(self.out.splitlines()[-tail:])
        err = "\n".join(self.err.splitlines()[-tail:])
        return "exit status %d\n--- stdout (end) ---\n%s\n--- stderr (end) ---\n%s" % (
            self.returncode, out, err)


class MpiImpl:
    """One MPI implementation: how to compile, launch and check for leftovers."""

    def __init__(self, name):
        self.name = name
        if name == "crmpi":
            self.mpicc = os.path.join(INSTALL, "bin", "mpicc")
            self.mpirun = os.path.join(INSTALL, "bin", "mpirun")
            self.env = dict(os.environ)
        elif name == "openmpi":
            self.mpicc = "/usr/bin/mpicc"
            self.mpirun = "/usr/bin/mpirun"
            self.env = dict(os.environ)
            if os.getuid() == 0:
                self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        else:
            raise ValueError("P2P_IMPL=%s: expected crmpi or openmpi" % name)

    @property
    def is_crmpi(self):
        return self.name == "crmpi"

    def btl_list(self, btls):
        """crmpi's BTL selection list ("self,sm", "^sm") in this implementation's names."""
        if self.is_crmpi:
            return btls
        prefix = "^" if btls.startswith("^") else ""
        names = {"sm": "vader"}
        return prefix + ",".join(names.get(b, b) for b in btls.lstrip("^").split(","))

    def compile(self, source, out, flags=("-O2", "-Wall")):
        """Compile one C file into the program `out`; a failure shows the compiler's words."""
        result = subprocess.run([self.mpicc, *flags, source, "-o", out], capture_output=True,
                                text=True, env=self.env)
        assert result.returncode == 0, "%s failed to compile %s:\n%s%s" % (
            self.mpicc, source, result.stdout, result.stderr)
        return out

    def launch_args(self, np, btls=None, mca=()):
        """mpirun's arguments before the program: rank count, BTLs, other parameters."""
        args = ["-np", str(np)]
        if not self.is_crmpi:
            args = ["--oversubscribe"] + args + ["--mca", "pml", "ob1"]
        if btls is not None:
            args += crmpi_btl_args(btls) if self.is_crmpi else ["--mca", "btl",
                                                                 self.btl_list(btls)]
        for name, value in mca:
            args += ["--mca", name, value]
        return args

    def run(self, launch, program, program_args=(), timeout=180, env=None):
        """Run a job to completion. A job still running after `timeout` seconds is ended
        (SIGTERM to mpirun, which ends its ranks) and reported as hung. `env`: variables
        to add to the job's environment."""
        # The launcher's own timeout first, so that a hung job is ended by mpirun itself.
        cmd = [self.mpirun, "--timeout", str(timeout - 30)] + list(launch) + [program] + list(
            program_args)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(self.env, **(env or {})))
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
            pytest.fail("job hung: %s\n%s" % (" ".join(cmd), Job(-1, out, err, proc.pid,
                                                                 program).report()))
        return Job(proc.returncode, out, err, proc.pid, program)

    def leftovers(self, job):
        """What of `job` survives its mpirun: processes and session directory."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                if self.is_crmpi:
                    # Agents carry CRMPI_JOBID; ranks inherit it from them.
                    with open("/proc/%s/environ" % entry, "rb") as f:
                        mine = ("CRMPI_JOBID=%d" % job.pid).encode() in f.read().split(b"\0")
                else:
                    mine = os.readlink("/proc/%s/exe" % entry) == os.path.realpath(job.program)
            except OSError:
                continue
            if mine:
                found.append("process %s" % entry)
        tmp = os.environ.get("TMPDIR") or "/tmp"
        if self.is_crmpi:
            session = os.path.join(tmp, "crmpi-%d" % os.getuid(), str(job.pid))
        else:
            host = socket.gethostname().split(".")[0]
            session = os.path.join(tmp, "ompi.%s.%d" % (host, os.getuid()), "pid.%d" % job.pid)
        if os.path.exists(session):
            found.append("session directory " + session)
        return found

    def assert_clean(self, job):
        left = self.leftovers(job)
        assert not left, "job %d left behind: %s" % (job.pid, ", ".join(left))


@pytest.fixture(scope="session")
def mpi():
    """The MPI implementation under test (P2P_IMPL: crmpi, the default, or openmpi)."""
    impl = MpiImpl(os.environ.get("P2P_IMPL", "crmpi"))
    for tool in (impl.mpicc, impl.mpirun):
        if not os.access(tool, os.X_OK):
            pytest.fail("%s is not installed (P2P_IMPL=%s)" % (tool, impl.name))
    return impl

