"""Self-test of the simulated nodes (nodes.sh and rsh beside this file): what a node has of
its own and what it shares, that Open MPI's mpirun runs a job across the nodes through the
rsh stand-in, and that down leaves nothing behind, also after a failed or killed run.

The tests use prefixes of their own, tn for the nodes most tests share and tk for nodes a
test makes and breaks, never the default n, so that nodes kept up for a demo are left alone.
They need root, and Open MPI's mpicc and mpirun for the job tests.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = os.path.join(HERE, "nodes.sh")
RSH = os.path.join(HERE, "rsh")
SHARED = "tn"   # the two nodes the module fixture keeps up
SCRATCH = "tk"  # nodes a test makes, breaks and removes itself
OMPI_MPICC = "/usr/bin/mpicc"
OMPI_MPIRUN = "/usr/bin/mpirun"
STATE_ROOT = "/run/crmpi-nodes"
LOCAL_ROOT = "/var/tmp/crmpi-nodes"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="the simulated nodes need root: they make network, UTS and mount namespaces")


def describe(result):
    return "%s: exit status %d\n--- stdout ---\n%s--- stderr ---\n%s" % (
        " ".join(result.args), result.returncode, result.stdout, result.stderr)


def nodes(*args, check=True, env=None, timeout=120):
    """Run nodes.sh; with check, a non-zero exit status fails the test."""
    result = subprocess.run([NODES, *args], capture_output=True, text=True, env=env,
                            timeout=timeout)
    if check:
        assert result.returncode == 0, describe(result)
    return result


def on(host, *cmd, check=True):
    """Run a command on a node."""
    return nodes("exec", host, *cmd, check=check)


def wait_for(condition, what, timeout=30):
    """Poll `condition` until it returns something true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("gave up waiting for " + what)
        time.sleep(0.05)


def ns_ids(host):
    """The namespaces of a node as /proc/PID/ns links read ("net:[4026532281]")."""
    return set(on(host, "readlink", "/proc/self/ns/net", "/proc/self/ns/uts",
                  "/proc/self/ns/mnt").stdout.split())


def holders(prefix):
    """The pids of the holder processes of a set of nodes, by their argv[0]."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                arg0 = f.read().split(b"\0")[0].decode()
        except (OSError, UnicodeDecodeError):
            continue
        if arg0.startswith("crmpi-node:%s:" % prefix):
            found.append(int(entry))
    return found


def holder_ns_ids(prefix):
    """The namespaces of whatever holders of a set are alive, and of its network namespaces."""
    ids = set()
    for pid in holders(prefix):
        for kind in ("net", "uts", "mnt"):
            try:
                ids.add(os.readlink("/proc/%d/ns/%s" % (pid, kind)))
            except OSError:
                pass
    for name in netns_names(prefix):
        try:
            ids.add("net:[%d]" % os.stat("/run/netns/" + name).st_ino)
        except OSError:
            pass
    return ids


def netns_names(prefix):
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return re.findall(r"^(%s\d+)\b" % prefix, out, re.M)


def processes_in(ids):
    """The processes in any of the namespaces `ids` (zombies have none left)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        for kind in ("net", "uts", "mnt"):
            try:
                if os.readlink("/proc/%s/ns/%s" % (entry, kind)) in ids:
                    found.add(int(entry))
            except OSError:
                pass
    return found


def left_behind(prefix, ids=frozenset()):
    """What exists of a set of nodes: namespaces, links, /etc/hosts lines, processes
    (holders, and any process in the namespaces `ids`), mounts and directories."""
    found = ["network namespace " + name for name in netns_names(prefix)]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    found += ["link " + name for name in
              re.findall(r"^\d+: (crv-%s\d+|crbr-%s)[@:]" % (prefix, prefix), links, re.M)]
    with open("/etc/hosts") as f:
        found += ["/etc/hosts line " + line.strip() for line in f
                  if re.search(r"\s# crmpi-nodes %s$" % prefix, line.rstrip("\n"))]
    found += ["process %d" % pid for pid in sorted(set(holders(prefix)) | processes_in(ids))]
    with open("/proc/self/mountinfo") as f:
        found += ["mount " + line.split()[4] for line in f
                  if re.search(r" /run/netns/%s\d+ " % prefix, line)]
    for path in (os.path.join(STATE_ROOT, prefix), os.path.join(LOCAL_ROOT, prefix)):
        if os.path.exists(path):
            found.append(path)
    return found


def subnet_of(prefix):
    """The node subnet of a set that is up ("10.213.0"), from status."""
    out = nodes("status", "--prefix", prefix).stdout
    return re.search(r"subnet (\d+\.\d+\.\d+)\.0/24", out).group(1)


def ompi_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


@pytest.fixture(scope="module")
def shared_dir():
    """A directory every node sees: not under /tmp, which each node has of its own."""
    path = tempfile.mkdtemp(prefix="crmpi-nodes-test.", dir="/var/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def up2(shared_dir):
    """Nodes tn1 and tn2, with node-local storage at <shared_dir>/local; down at the end,
    which must leave nothing."""
    nodes("down", "--prefix", SHARED, check=False)  # leftovers of a killed earlier run
    local = os.path.join(shared_dir, "local")
    nodes("up", "2", "--prefix", SHARED, "--local", local)
    ids = ns_ids(SHARED + "1") | ns_ids(SHARED + "2")
    yield local
    nodes("down", "--prefix", SHARED)
    assert not left_behind(SHARED, ids)
    assert not os.path.exists(local), "down left the --local directory it made"


@pytest.fixture
def scratch():
    """No nodes tk* before the test, and none after it."""
    nodes("down", "--prefix", SCRATCH, check=False)
    yield SCRATCH
    nodes("down", "--prefix", SCRATCH, check=False)


@pytest.fixture(scope="module")
def mpi_hosts(shared_dir):
    """mpi_hosts.c built with Open MPI's mpicc, where every node sees it."""
    if not (os.access(OMPI_MPICC, os.X_OK) and os.access(OMPI_MPIRUN, os.X_OK)):
        pytest.skip("Open MPI's mpicc and mpirun are not installed")
    program = os.path.join(shared_dir, "mpi_hosts")
    result = subprocess.run([OMPI_MPICC, "-O2", os.path.join(HERE, "mpi_hosts.c"), "-o",
                             program], capture_output=True, text=True)
    assert result.returncode == 0, describe(result)
    return program


def test_each_node_has_its_hostname(up2):
    for host in (SHARED + "1", SHARED + "2"):
        assert on(host, "hostname").stdout.strip() == host
        assert on(host, "cat", "/proc/sys/kernel/hostname").stdout.strip() == host
    assert socket.gethostname() not in (SHARED + "1", SHARED + "2")


def test_status_lists_the_nodes(up2):
    out = nodes("status", "--prefix", SHARED).stdout
    subnet = subnet_of(SHARED)
    assert re.search(r"^  %s1 %s\.1 up " % (SHARED, re.escape(subnet)), out, re.M), out
    assert re.search(r"^  %s2 %s\.2 up " % (SHARED, re.escape(subnet)), out, re.M), out
    mca = nodes("ompi-mca", "--prefix", SHARED).stdout.split()
    assert mca == ["--mca", "plm_rsh_agent", RSH, "--mca", "oob_tcp_if_include",
                   subnet + ".0/24", "--mca", "btl_tcp_if_include", subnet + ".0/24"]


@pytest.mark.parametrize("directory", ["/dev/shm", "/tmp"])
def test_shm_and_tmp_are_private_to_a_node(up2, directory):
    name = os.path.join(directory, "crmpi-nodes-test.%d" % os.getpid())
    n1, n2 = SHARED + "1", SHARED + "2"
    try:
        on(n1, "sh", "-c", "echo made on n1 >" + name)
        # A second command on n1 sees it: the node's mount namespace outlives the commands.
        assert on(n1, "cat", name).stdout == "made on n1\n"
        assert on(n2, "test", "-e", name, check=False).returncode == 1, "%s seen on n2" % name
        assert not os.path.exists(name), "%s seen in the root namespace" % name
    finally:
        on(n1, "rm", "-f", name, check=False)


def test_node_local_storage(up2):
    local = up2
    n1, n2 = SHARED + "1", SHARED + "2"
    on(n1, "sh", "-c", "echo n1 data >%s/f" % local)
    assert on(n1, "cat", local + "/f").stdout == "n1 data\n"
    assert on(n2, "ls", "-A", local).stdout == ""
    assert os.listdir(local) == []
    with open(os.path.join(LOCAL_ROOT, SHARED, n1, "f")) as f:
        assert f.read() == "n1 data\n"


def test_the_rest_of_the_file_system_is_shared(up2, shared_dir):
    path = os.path.join(shared_dir, "shared")
    on(SHARED + "1", "sh", "-c", "echo from n1 >" + path)
    assert on(SHARED + "2", "cat", path).stdout == "from n1\n"
    with open(path) as f:
        assert f.read() == "from n1\n"


SERVER = """
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
conn, peer = s.accept()
conn.sendall(("%s saw %s" % (socket.gethostname(), peer[0])).encode())
conn.close()
"""

CLIENT = """
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
print(s.recv(200).decode())
"""


def test_nodes_reach_each_other_over_the_subnet(up2):
    """n1 connects to n2 by name; n2 sees the connection come from n1's address."""
    n1, n2 = SHARED + "1", SHARED + "2"
    subnet = subnet_of(SHARED)
    server = subprocess.Popen([NODES, "exec", n2, sys.executable, "-c", SERVER, subnet + ".2"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        assert port.isdigit(), "the server on %s did not start" % n2
        reply = on(n1, sys.executable, "-c", CLIENT, n2, port).stdout.strip()
        assert reply == "%s saw %s.1" % (n2, subnet)
        server.wait(timeout=30)
    finally:
        server.kill()
        server.wait()
    # The root namespace reaches the nodes too, from its address on the bridge.
    server = subprocess.Popen([NODES, "exec", n1, sys.executable, "-c", SERVER, subnet + ".1"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        reply = subprocess.run([sys.executable, "-c", CLIENT, n1, port], capture_output=True,
                               text=True, timeout=60).stdout.strip()
        assert reply == "%s saw %s.254" % (n1, subnet)
    finally:
        server.kill()
        server.wait()


def check_job(result, n1, n2):
    """Four ranks, 0 and 1 on n1, 2 and 3 on n2, that all took part in one allreduce."""
    assert result.returncode == 0, describe(result)
    lines = sorted(re.findall(r"^rank (\d) of 4 on (\S+) sum (\d+)$", result.stdout, re.M))
    assert lines == [("0", n1, "6"), ("1", n1, "6"), ("2", n2, "6"), ("3", n2, "6")], \
        describe(result)


def test_openmpi_job_across_the_nodes(up2, mpi_hosts):
    n1, n2 = SHARED + "1", SHARED + "2"
    mca = nodes("ompi-mca", "--prefix", SHARED).stdout.split()
    result = subprocess.run([OMPI_MPIRUN, *mca, "-H", "%s:2,%s:2" % (n1, n2), mpi_hosts],
                            capture_output=True, text=True, env=ompi_env(), timeout=120)
    check_job(result, n1, n2)


@pytest.mark.parametrize("where", ["tree-spawn", "mpirun-on-a-node"])
def test_openmpi_rsh_from_a_node(up2, mpi_hosts, where):
    """The rsh stand-in also works when a node runs it: Open MPI's daemon on n1 starts the
    one on n2 (a tree of radix 1), or mpirun itself runs on n1."""
    n1, n2 = SHARED + "1", SHARED + "2"
    mca = nodes("ompi-mca", "--prefix", SHARED).stdout.split()
    cmd = [OMPI_MPIRUN, *mca, "-H", "%s:2,%s:2" % (n1, n2), mpi_hosts]
    if where == "tree-spawn":
        cmd[1:1] = ["--mca", "routed_radix", "1"]
    else:
        cmd = [NODES, "exec", n1, *cmd]
    result = subprocess.run(cmd, capture_output=True, text=True, env=ompi_env(), timeout=120)
    check_job(result, n1, n2)


def test_exec_and_rsh_on_a_node_that_is_not_up(up2):
    result = on(SHARED + "9", "true", check=False)
    assert result.returncode == 255
    assert "%s9: no such node is up" % SHARED in result.stderr
    result = subprocess.run([RSH, "-x", SHARED + "9", "true"], capture_output=True, text=True)
    assert result.returncode == 255
    result = subprocess.run([RSH, "-x", "-p", "22", SHARED + "2", "echo", "$(hostname)"],
                            capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, SHARED + "2\n"), describe(result)


def test_second_up_fails_and_leaves_the_nodes_up(up2):
    before = holders(SHARED)
    result = nodes("up", "2", "--prefix", SHARED, check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "nodes.sh: nodes %s1..%s2 are already up (nodes.sh down --prefix %s first)"
        % (SHARED, SHARED, SHARED)]
    assert holders(SHARED) == before
    nodes("status", "--prefix", SHARED)


def test_down_kills_what_runs_on_the_nodes(scratch):
    nodes("up", "2", "--prefix", scratch)
    ids = ns_ids(scratch + "1") | ns_ids(scratch + "2")
    for host in (scratch + "1", scratch + "2"):
        # Detached: it outlives this exec, as a daemon or an orphaned rank would.
        subprocess.run([NODES, "exec", host, "setsid", "-f", "sleep", "infinity"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    wait_for(lambda: len(processes_in(ids)) >= 4, "the sleeps on both nodes")
    nodes("down", "--prefix", scratch)
    assert left_behind(scratch, ids) == []


def test_up_refuses_a_checkout_under_tmp(scratch):
    """The nodes have /tmp of their own, so an rsh stand-in there is on no node: up says so
    in one line and makes nothing."""
    with tempfile.TemporaryDirectory(dir="/tmp") as checkout:
        for name in ("nodes.sh", "rsh"):
            shutil.copy(os.path.join(HERE, name), checkout)
        result = subprocess.run([os.path.join(checkout, "nodes.sh"), "up", "1", "--prefix",
                                 scratch], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, describe(result)
    assert result.stderr.splitlines() == [
        "nodes.sh: up: this checkout (%s) is under /tmp or /dev/shm, which every node has of "
        "its own, so the nodes cannot see it; use a checkout elsewhere (/var/tmp...)"
        % checkout], describe(result)
    assert left_behind(scratch) == []


def test_failed_up_leaves_nothing(scratch):
    env = dict(os.environ, CRMPI_NODES_FAULT="fail:%s2" % scratch)
    result = nodes("up", "2", "--prefix", scratch, env=env, check=False)
    assert result.returncode == 1
    assert "%s2 could not be set up: nodes.sh: %s2: failing on purpose" % (
        scratch, scratch) in result.stderr, describe(result)
    assert "what it had made is removed" in result.stderr
    assert left_behind(scratch) == []


def test_killed_up_is_cleaned_by_the_next_up_and_by_down(scratch):
    """An up killed half way (while node 2 is being set up) leaves a partial set; status
    says so, the next up removes it before it makes its own, and down removes that."""
    env = dict(os.environ, CRMPI_NODES_FAULT="hang:%s2" % scratch)
    up = subprocess.Popen([NODES, "up", "3", "--prefix", scratch], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True)
    # up has started the three holders and waits for the second, which never gets ready.
    wait_for(lambda: len(holders(scratch)) == 3, "the holders of %s1..%s3" % (scratch, scratch))
    os.killpg(up.pid, signal.SIGKILL)
    up.wait()
    ids = holder_ns_ids(scratch)
    assert left_behind(scratch, ids), "the killed up left nothing: was it killed too late?"
    status = nodes("status", "--prefix", scratch, check=False)
    assert status.returncode == 1
    assert re.search(r"^  %s2 \S+ DOWN " % scratch, status.stdout, re.M), status.stdout

    killed_holders = set(holders(scratch))
    nodes("up", "2", "--prefix", scratch)
    assert not killed_holders & set(holders(scratch)), "up kept holders of the killed run"
    # (Not the namespaces of the killed run: the kernel may give their numbers to new ones.)
    ids = ns_ids(scratch + "1") | ns_ids(scratch + "2")
    nodes("down", "--prefix", scratch)
    assert left_behind(scratch, ids) == []


# A test run: nodes, and processes on them, some in the run's process group, some detached
# from it as daemons are, one started through rsh from a node.
RUN = """
set -e
"$NODES" up 2 --prefix "$PREFIX" >/dev/null
"$NODES" exec "${PREFIX}1" sh -c 'echo data >/dev/shm/run; exec sleep infinity' &
"$NODES" exec "${PREFIX}2" setsid sh -c 'echo data >/dev/shm/run; exec sleep infinity' &
"$NODES" exec "${PREFIX}1" setsid "$RSH" "${PREFIX}2" sleep infinity &
echo started
wait
"""


def test_down_after_a_killed_run(scratch):
    """A test run SIGKILLed while its processes run on the nodes: down removes it all."""
    env = dict(os.environ, NODES=NODES, RSH=RSH, PREFIX=scratch)
    run = subprocess.Popen(["bash", "-c", RUN], env=env, stdout=subprocess.PIPE, text=True,
                           start_new_session=True)
    assert run.stdout.readline() == "started\n"
    ids = ns_ids(scratch + "1") | ns_ids(scratch + "2")
    wait_for(lambda: len(processes_in(ids)) >= 5, "the processes of the run on the nodes")
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    run.stdout.close()
    nodes("down", "--prefix", scratch)
    assert left_behind(scratch, ids) == []


def test_up_says_when_an_earlier_run_cannot_be_removed(scratch):
    """A network namespace of the prefix that ip netns del cannot remove (its file is
    mounted twice, so that the unlink after one unmount fails): one line, exit status 1."""
    name = scratch + "1"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["mount", "--bind", "/run/netns/" + name, "/run/netns/" + name], check=True)
    try:
        result = nodes("up", "2", "--prefix", scratch, check=False)
        assert result.returncode == 1
        assert result.stderr.splitlines() == [
            "nodes.sh: the nodes %s* of an earlier run cannot be removed: network namespaces %s"
            % (scratch, name)]
    finally:
        while name in netns_names(scratch):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
    assert left_behind(scratch) == []
