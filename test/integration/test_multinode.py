"""Jobs across nodes: crmpi's mpirun on simulated nodes (test/nodes/nodes.sh), the agents
started through Open MPI's mpirun and its daemons (plm component ompi, plm/plm.h).

  - point-to-point and collective programs (test/p2p, test/coll) on 2 and 4 nodes, each
    peer reached through sm on its node and tcp across (the BML's choice, shown by
    btl_base_verbose);
  - a 2-node job checkpointed (going on, then --term) and restarted on 4 nodes and on 1,
    and a 1-node snapshot restarted on 4 nodes and, checkpointed there, back on 1; after a
    restart the peers that became local use sm and those that became remote tcp;
  - application checkpoints (MPIX_Checkpoint) of a 2-node job whose backups are in each
    node's own /tmp, restarted on 4 nodes;
  - the partner level: copies on the next node, a lost node's ranks restarted from them,
    and each node's copies of the sequences the commit record dropped removed at the commit;
  - Open MPI's placement options (-N, --map-by ppr, --display-map, --report-bindings);
  - a node lost during a checkpoint: the checkpoint aborts, the committed snapshot stays
    and restarts on the nodes that are left;
  - the bad inputs: a host that cannot be resolved or reached, too few slots, Open MPI's
    mpirun missing, crmpi's mpirun killed: one line from mpirun, and nothing of the job
    left on any node (no process in a node's namespaces but its holder, nothing in its /tmp
    or /dev/shm).

The nodes use the prefix "mn" (never "n", which demos use, nor test_nodes.py's). They need
root, and Open MPI's mpirun. Every wait waits for a state; timeouts only turn a hang into a
failure. Run: CRMPI_INSTALL=$PWD/install /usr/bin/python3 -m pytest -q
test/integration/test_multinode.py
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

import crjob

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
NODES_SH = os.path.join(ROOT, "test", "nodes", "nodes.sh")
RSH = os.path.join(ROOT, "test", "nodes", "rsh")
PREFIX = "mn"
NUM_NODES = 4
HOSTS = ["%s%d" % (PREFIX, i) for i in range(1, NUM_NODES + 1)]
OMPI_MPIRUN = "/usr/bin/mpirun"
HANG = 240  # seconds after which a job is considered hung


def ompi_usable():
    try:
        out = subprocess.run([OMPI_MPIRUN, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the simulated nodes need root (network, UTS "
                       "and mount namespaces), and so do crmpi's checkpoints"),
    pytest.mark.skipif(not ompi_usable(), reason="Open MPI's mpirun (%s) is not installed: "
                       "the ompi launcher starts the agents through it" % OMPI_MPIRUN),
]


def nodes(*args, check=True):
    result = subprocess.run([NODES_SH, *args], capture_output=True, text=True, timeout=180)
    if check:
        assert result.returncode == 0, "nodes.sh %s: %s%s" % (" ".join(args), result.stdout,
                                                              result.stderr)
    return result


def wait_for(condition, what, timeout=60):
    """Poll `condition` until it returns something true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("gave up waiting for " + what)
        time.sleep(0.05)


class Cluster:
    """The simulated nodes and what the tests share: a directory every node sees, the
    environment of crmpi's commands, the namespaces of the nodes."""

    def __init__(self, subnet, shared):
        self.subnet = subnet
        self.shared = shared
        self.env = dict(os.environ)
        self.env.pop("CRMPI_FAULT", None)
        # Open MPI's mpirun reads its own parameters from the environment crmpi's mpirun
        # passes on: the rsh stand-in, and the nodes' subnet for its daemons' traffic.
        self.env.update(OMPI_MCA_plm_rsh_agent=RSH,
                        OMPI_MCA_oob_tcp_if_include="%s.0/24" % subnet,
                        CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(shared, "snap"))
        self.holders = {}
        self.netns = set()
        for host in HOSTS:
            pid = int(open("/run/crmpi-nodes/%s/%s.pid" % (PREFIX, host)).read())
            self.holders[host] = pid
            self.netns.add(os.readlink("/proc/%d/ns/net" % pid))

    def node_processes(self):
        """Every process in a node's network namespace but the holders: Open MPI's daemons,
        agents, ranks, rsh."""
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in self.holders.values():
                continue
            try:
                if os.readlink("/proc/%s/ns/net" % entry) not in self.netns:
                    continue
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            found.append("%s (%s)" % (entry, cmd[:100]))
        return found

    def daemon_command_lines(self):
        """The command line of each of Open MPI's daemons on the nodes, as a list of words."""
        found = []
        for entry in os.listdir("/proc"):
            try:
                if (not entry.isdigit() or os.readlink("/proc/%s/ns/net" % entry) not in
                        self.netns or os.path.basename(os.readlink("/proc/%s/exe" % entry)) !=
                        "orted"):
                    continue
                found.append(command_line(entry))
            except OSError:
                continue
        return found

    def node_files(self):
        """What is in a node's /tmp and /dev/shm, every file and directory by its path.

        Open MPI's per-user directory there (ompi.HOST.UID), once empty, is not the job's:
        every Open MPI job of the user on the node shares it, and a daemon that ends by
        losing its mpirun (crmpi's mpirun killed) removes its job's directory inside it but
        not always the directory itself."""
        found = []
        for host in HOSTS:
            out = nodes("exec", host, "find", "/tmp", "/dev/shm", "-mindepth", "1",
                        "!", "(", "-path", "/tmp/ompi.%s.%d" % (host, os.getuid()),
                        "-empty", ")").stdout
            found += ["%s:%s" % (host, path) for path in out.split()]
        return found

    def remove_node_files(self):
        for host in HOSTS:
            nodes("exec", host, "sh", "-c", "rm -rf /tmp/* /tmp/.[!.]* /dev/shm/*", check=False)

    def assert_clean(self, jobid=None, keep=None):
        """Nothing of a job on any node (and, given its jobid, on this one); files under
        the nodes' directory `keep` are not counted (and stay)."""
        def clean():
            left = self.node_processes()
            if jobid:
                left += ["process %d" % pid for pid in crjob.processes_of(jobid)]
            return not left
        deadline = time.monotonic() + 30
        while not clean() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = self.node_processes() + (crjob.leftovers(jobid) if jobid else [])
        assert not left, "left behind: %s" % ", ".join(left)
        files = [path for path in self.node_files()
                 if not keep or not path.split(":", 1)[1].startswith(keep)]
        # Removed before failing, so that the next test reports only what it leaves itself.
        if files:
            self.remove_node_files()
        assert not files, "left on the nodes: %s" % files


@pytest.fixture(scope="module")
def cluster():
    nodes("down", "--prefix", PREFIX, check=False)  # what a killed earlier run left
    shared = tempfile.mkdtemp(prefix="crmpi-multinode.", dir="/var/tmp")
    up = nodes("up", str(NUM_NODES), "--prefix", PREFIX)
    subnet = re.search(r"on (\d+\.\d+\.\d+)\.0/24", up.stdout).group(1)
    yield Cluster(subnet, shared)
    down = nodes("down", "--prefix", PREFIX, check=False)
    shutil.rmtree(shared, ignore_errors=True)
    assert down.returncode == 0, "the nodes could not be removed: " + down.stderr


@pytest.fixture(scope="module")
def programs(cluster):
    """The test programs, built with the installed mpicc where every node sees them."""
    built = {}

    def get(path):
        if path not in built:
            out = os.path.join(cluster.shared, path.replace("/", "-"))
            result = subprocess.run([crjob.tool("mpicc"), "-O2", os.path.join(ROOT, "test",
                                                                               path + ".c"),
                                     "-o", out, "-lpthread"], capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
            built[path] = out
        return built[path]

    return get


def mpirun(cluster, args, timeout=HANG):
    """crmpi's mpirun to completion: a crjob.Finished."""
    proc = subprocess.Popen([crjob.tool("mpirun"), "--timeout", str(timeout - 30), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cluster.env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        pytest.fail("job hung: %s\n%s" % (args, crjob.Finished(-1, out, err).report()))
    return crjob.Finished(proc.returncode, out, err, proc.pid)


BML_LINE = re.compile(r"bml: rank (\d+) -> rank (\d+) through (\w+)")


def check_paths(result, node_of_rank):
    """Every rank reached itself through self, the ranks of its node through sm and the
    others through tcp (btl_base_verbose 20's lines), each pair said exactly once."""
    seen = {}
    for line in result.err.splitlines():
        found = BML_LINE.search(line)
        if found:
            pair = (int(found.group(1)), int(found.group(2)))
            assert pair not in seen, "rank %d -> rank %d said twice" % pair
            seen[pair] = found.group(3)
    np = len(node_of_rank)
    assert len(seen) == np * np, "only %d of %d pairs said:\n%s" % (len(seen), np * np,
                                                                   result.report())
    for (rank, peer), btl in seen.items():
        want = ("self" if rank == peer else
                "sm" if node_of_rank[rank] == node_of_rank[peer] else "tcp")
        assert btl == want, "rank %d -> rank %d through %s, not %s" % (rank, peer, btl, want)


JOBS = [
    # (program and its arguments, mpirun's placement, the node of each rank, the line that
    # says it passed). The collectives' non-blocking run (-n) leaves out their "threads"
    # subtest, which counts another thread's calls during a wait and needs a core of its
    # own: four busy ranks on two cores do not give it one.
    (["p2p/sizes"], ["-H", "mn1:2,mn2:2"], [0, 0, 1, 1], r"^summary: \d+ ok, 0 failed"),
    (["p2p/ordering"], ["-N", "1", "-H", ",".join(HOSTS)], [0, 1, 2, 3],
     r"^summary: \d+ ok, 0 failed"),
    (["coll/collectives", "-n"], ["--map-by", "node", "-np", "4", "-H", "mn1:2,mn2:2"],
     [0, 1, 0, 1], r"^ok collectives.*: \d+ checks on rank 0, 4 ranks"),
    (["coll/stencil"], ["-N", "1", "-H", ",".join(HOSTS)], [0, 1, 2, 3],
     r"^stencil: 32x32 grid on 2x2 ranks, \d+ iterations, residual below 1e-6: yes"),
]


@pytest.mark.parametrize("program, placement, node_of_rank, passed", JOBS,
                         ids=["%s-%dnodes" % (j[0][0].split("/")[1], len(set(j[2])))
                              for j in JOBS])
def test_job_across_nodes(cluster, programs, program, placement, node_of_rank, passed):
    result = mpirun(cluster, [*placement, "--mca", "btl_base_verbose", "20",
                              programs(program[0]), *program[1:]])
    assert result.returncode == 0, result.report()
    assert "FAIL" not in result.out, result.report()
    assert re.search(passed, result.out, re.M), result.report()
    check_paths(result, node_of_rank)
    cluster.assert_clean(result.pid)


def test_placement_options(cluster, programs):
    """Open MPI's spellings: -N 2 on two hosts, bound to a core each, the map shown."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("binding two ranks per node to a core each needs two cores")
    result = mpirun(cluster, ["-N", "2", "-H", "mn1,mn2", "--bind-to", "core", "--display-map",
                              "--report-bindings", "--allow-run-as-root",
                              programs("p2p/ordering")])
    assert result.returncode == 0, result.report()
    assert re.search(r"Data for node: mn1\s+Num slots: \d+\s+Max slots: 0\s+Num procs: 2",
                     result.out), result.report()
    assert "Process rank: 3 Bound: socket" in result.out, result.report()
    for rank, host in enumerate(["mn1", "mn1", "mn2", "mn2"]):
        assert re.search(r"^\[%s\] MCW rank %d bound to socket \d+\[core \d+" % (host, rank),
                         result.err, re.M), result.report()
    cluster.assert_clean(result.pid)


class Timings:
    """Wall times of checkpoints and restarts, printed at the end (pytest -s shows them)."""
    lines = []


@pytest.fixture(scope="module", autouse=True)
def timings():
    yield Timings
    if Timings.lines:
        print("\n" + "\n".join(Timings.lines))


def timed(what, function, *args):
    start = time.monotonic()
    result = function(*args)
    Timings.lines.append("%-60s %.2f s" % (what, time.monotonic() - start))
    return result


@pytest.fixture
def crenv(cluster, tmp_path):
    """crjob's environment, with its ready and go files where every node sees them."""
    base = tempfile.mkdtemp(prefix="cr.", dir=cluster.shared)
    env = crjob.CrEnv(__import__("pathlib").Path(base), extra_env={
        k: v for k, v in cluster.env.items() if k.startswith("OMPI_MCA_")})
    return env


def baseline(crenv, program, np):
    """The result line of an uninterrupted run (on this node: it does not depend on the
    layout)."""
    crenv.go()
    job = crjob.CrJob(crenv, program, np)
    result = job.finish()
    line = crjob.ok_line(result.out)
    assert result.returncode == 0 and line, result.report("uninterrupted run")
    os.unlink(crenv.go_file)
    return line


def checkpoint(crenv, jobid, *args):
    result = crenv.checkpoint(jobid, *args)
    assert result.returncode == 0, result.report("ompi-checkpoint " + " ".join(args))
    return result.out.strip().splitlines()[-1]


def restart(cluster, crenv, handle, *args):
    """ompi-restart in the background (its ranks wait for the go file): a Popen."""
    return subprocess.Popen([crjob.tool("ompi-restart"), *args, "--mca", "btl_base_verbose",
                             "20", handle], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=crenv.env)


def finish(proc):
    out, err = proc.communicate(timeout=HANG)
    return crjob.Finished(proc.returncode, out, err, proc.pid)


def checkpoint_restarted(crenv, proc, *args):
    """Checkpoint a restarted job (ompi-restart's `proc`, which becomes its mpirun): refused
    until its mpirun listens, and while its ranks finish their restart (it says so), taken
    once they have."""
    deadline = time.monotonic() + 60
    while True:
        result = crenv.checkpoint(proc.pid, *args)
        if result.returncode == 0:
            return result.out.strip().splitlines()[-1]
        assert proc.poll() is None, finish(proc).report("the restarted job")
        assert ("still finishing" in result.err or "not finished MPI_Init" in result.err or
                "is not a crmpi mpirun" in result.err or "is still starting" in result.err), \
            result.report("ompi-checkpoint of the restarted job")
        assert time.monotonic() < deadline, result.report()
        time.sleep(0.1)


def test_checkpoint_two_nodes_restart_on_four_and_one(cluster, programs, crenv):
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 4)
    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:2,mn2:2"])
    job.ready()
    handle = timed("checkpoint, 2 nodes x 2 ranks (job goes on)", checkpoint, crenv, job.jobid)
    assert job.running(), "the job ended after a checkpoint without --term"
    timed("checkpoint --term, 2 nodes x 2 ranks", checkpoint, crenv, job.jobid, "--term")
    first = job.finish()
    assert first.returncode == 0 and crjob.ok_line(first.out) is None, first.report()
    cluster.assert_clean(job.jobid)
    assert crjob.committed(handle) == [1, 2], crjob.committed(handle)

    crenv.go()
    hostfile = os.path.join(crenv.readydir, "..", "hostfile")
    with open(hostfile, "w") as f:
        f.write("# four nodes, a slot each\n" + "".join("%s slots=1\n" % h for h in HOSTS))
    four = timed("restart of it on 4 nodes x 1 rank", lambda: finish(
        restart(cluster, crenv, handle, "--hostfile", hostfile)))
    assert four.returncode == 0 and crjob.ok_line(four.out) == expected, four.report("restart")
    check_paths(four, [0, 1, 2, 3])
    cluster.assert_clean(four.pid)
    one = timed("restart of it on 1 node x 4 ranks", lambda: finish(
        restart(cluster, crenv, handle, "-H", "mn3:4")))
    assert one.returncode == 0 and crjob.ok_line(one.out) == expected, one.report("restart")
    check_paths(one, [0, 0, 0, 0])
    cluster.assert_clean(one.pid)


def node_lost(cluster, host):
    """Node `host` crashes: its link to the others goes silent first (no end of file or reset
    reaches them, as from a node that lost power), then every process on it dies."""
    subprocess.run(["ip", "link", "set", "crv-" + host, "down"], check=True)
    netns = os.readlink("/proc/%d/ns/net" % cluster.holders[host])
    for entry in os.listdir("/proc"):
        try:
            if (entry.isdigit() and int(entry) != cluster.holders[host] and
                    os.readlink("/proc/%s/ns/net" % entry) == netns):
                os.kill(int(entry), signal.SIGKILL)
        except OSError:
            pass


def test_node_lost_during_a_checkpoint(cluster, programs, crenv):
    """A node lost while a checkpoint runs (every agent held before its dump, fault point
    snapc_dump_pause, then node mn2 silent and its processes gone): the checkpoint aborts and
    ompi-checkpoint says so, the job ends with an error, nothing is left on the other nodes,
    the committed first checkpoint is all the snapshot holds, and it restarts on the nodes
    that are left with the uninterrupted result."""
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 4)
    release = os.path.join(cluster.shared, "release-node-lost")
    env = dict(crenv.env, CRMPI_FAULT="snapc_dump_pause:2", CRMPI_FAULT_RELEASE=release)
    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:2,mn2:2", "--mca", "snapc_base_timeout",
                                          "10"], env=env, timeout=HANG)
    follower = job.follow()
    job.ready()
    handle = checkpoint(crenv, job.jobid)
    second = subprocess.Popen([crjob.tool("ompi-checkpoint"), str(job.jobid)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=crenv.env)
    at = 0
    for _ in range(4):  # every agent holds its rank, suspended, before the dump
        at = follower.wait_for("err", lambda line: "fault injected: snapc_dump_pause" in line,
                               at, timeout=HANG)
        assert at is not None, "the agents did not all reach their dump"
        at += 1
    try:
        node_lost(cluster, "mn2")
        open(release, "w").close()
        out, err = second.communicate(timeout=HANG)
        assert second.returncode == 1 and "aborted" in err and not out.strip(), \
            "ompi-checkpoint: exit %d\n%s%s" % (second.returncode, out, err)
        result = job.finish(timeout=HANG)
        assert result.returncode != 0, result.report("the job, after losing mn2")
    finally:
        subprocess.run(["ip", "link", "set", "crv-mn2", "up"], check=False)
        os.unlink(release)
    assert crjob.committed(handle) == [1], crjob.committed(handle)
    assert not os.path.exists(os.path.join(handle, "2")), os.listdir(handle)
    # mn2's own files stay with it (the node is gone); the others keep nothing of the job.
    nodes("exec", "mn2", "sh", "-c", "rm -rf /tmp/* /tmp/.[!.]* /dev/shm/*", check=False)
    cluster.assert_clean(job.jobid)

    crenv.go()
    left = finish(restart(cluster, crenv, handle, "-H", "mn1:2,mn3:2"))
    assert left.returncode == 0 and crjob.ok_line(left.out) == expected, left.report("restart")
    check_paths(left, [0, 0, 1, 1])
    cluster.assert_clean(left.pid)


def test_one_node_snapshot_to_four_nodes_and_back(cluster, programs, crenv):
    """A 1-node job's snapshot restarted on 4 nodes; checkpointed there and restarted on 1."""
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 4)
    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:4"])
    job.ready()
    handle = timed("checkpoint --term, 1 node x 4 ranks", checkpoint, crenv, job.jobid,
                   "--term")
    assert job.finish().returncode == 0
    cluster.assert_clean(job.jobid)

    # On 4 nodes, waiting for the go file: checkpointed there in turn.
    spread = restart(cluster, crenv, handle, "-N", "1", "-H", ",".join(HOSTS))
    second = timed("checkpoint --term, 4 nodes x 1 rank (a restarted job)",
                   checkpoint_restarted, crenv, spread, "--term")
    result = finish(spread)
    assert result.returncode == 0 and crjob.ok_line(result.out) is None, result.report()
    check_paths(result, [0, 1, 2, 3])
    cluster.assert_clean(spread.pid)
    assert second != handle  # the restarted job has a jobid, and a snapshot, of its own

    crenv.go()
    back = finish(restart(cluster, crenv, second, "-H", "mn2:4"))
    assert back.returncode == 0 and crjob.ok_line(back.out) == expected, back.report()
    check_paths(back, [0, 0, 0, 0])
    cluster.assert_clean(back.pid)


BAD_INPUTS = [
    # (mpirun's arguments before the program, what its one line says)
    (["-H", "mn1:2,mn9:2"], "host 'mn9' cannot be resolved"),
    (["-H", "mn1:2,ADDRESS:2"], "Open MPI's mpirun ended with exit status"),
    (["--hostfile", "HOSTFILE", "-np", "3"], "only 2 slots"),
    (["-N", "3", "-H", "mn1:2,mn2:2"], "puts 3 ranks on host mn1, which has 2 slots"),
    (["--mca", "plm_ompi_mpirun", "/no/such/mpirun", "-H", "mn1,mn2"],
     "Open MPI's mpirun /no/such/mpirun cannot be run"),
    (["--launcher", "local", "-H", "mn1"], "is not this node"),
]


@pytest.mark.parametrize("args, message", BAD_INPUTS,
                         ids=["unknown-host", "unreachable-host", "too-few-slots",
                              "too-few-slots-ppr", "no-open-mpi", "local-launcher"])
def test_bad_input_is_one_line_and_leaves_nothing(cluster, programs, args, message):
    # An address of the nodes' subnet that no node has: it resolves, and no daemon starts.
    hostfile = os.path.join(cluster.shared, "two-slots")
    with open(hostfile, "w") as f:
        f.write("mn1 slots=1\nmn2 slots=1\n")
    args = [a.replace("ADDRESS", cluster.subnet + ".77").replace("HOSTFILE", hostfile)
            for a in args]
    result = mpirun(cluster, [*args, programs("p2p/ordering")])
    assert result.returncode != 0, result.report()
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.report()
    if "unreachable" in message or "ended with" in message:
        assert "before the agents on " in lines[0] and ".77" in lines[0], lines[0]
    cluster.assert_clean(result.pid)


def test_mpirun_killed_leaves_nothing_on_the_nodes(cluster, programs, crenv):
    """SIGKILL to crmpi's mpirun: its agents lose their connection and end their ranks,
    Open MPI's mpirun dies with it and its daemons with their lifeline."""
    job = crjob.CrJob(crenv, programs("cr/inflight"), 4, ["-H", "mn1:2,mn2:2"], ft=False)
    job.ready()
    assert len(crjob.processes_of(job.jobid)) >= 8  # agents, inits, ranks
    # The daemons fork from one thread: with several, a child of Open MPI 4.1's orted could
    # hang on a lock before its exec (a launch of 128 ranks on 4 nodes lost 10 agents).
    daemons = cluster.daemon_command_lines()
    assert len(daemons) == 2 and all(
        "odls_base_max_threads" in d and d[d.index("odls_base_max_threads") + 1] == "1"
        for d in daemons), daemons
    # A daemon that loses its mpirun writes towards it while it ends, its own SIGPIPE handler
    # removed: killed there, it would leave its job's directory behind. Open MPI's mpirun
    # starts them through crmpi-orted, which ignores SIGPIPE for them.
    launcher = command_line(children(job.jobid)[0])
    assert launcher[launcher.index("orte_launch_agent") + 1] == \
        crjob.tool("crmpi-orted") + " orted", launcher
    status = subprocess.run([crjob.tool("crmpi-orted"), "cat", "/proc/self/status"],
                            stdout=subprocess.PIPE, text=True, check=True).stdout
    ignored = int(re.search(r"^SigIgn:\s*(\S+)", status, re.M).group(1), 16)
    assert ignored & 1 << (signal.SIGPIPE - 1), status
    job.proc.send_signal(signal.SIGKILL)
    job.finish()
    wait_for(lambda: not cluster.node_processes() and not crjob.processes_of(job.jobid),
             "every process of the job to end", timeout=60)
    # mpirun's own session directory stays, as the README says of a SIGKILLed mpirun; the
    # next mpirun removes it.
    shutil.rmtree(os.path.join(os.environ.get("TMPDIR") or "/tmp", "crmpi-%d" % os.getuid(),
                               str(job.jobid)), ignore_errors=True)
    cluster.assert_clean(job.jobid)


def command_line(pid):
    """Process `pid`'s command line, as a list of words."""
    with open("/proc/%s/cmdline" % pid, "rb") as f:
        return f.read().decode(errors="replace").rstrip("\0").split("\0")


def children(pid):
    """The pids of process `pid`'s children."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % entry) as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except OSError:
            continue
    return found


def migrate(crenv, jobid, *args):
    """ompi-migrate in the background: a Popen."""
    return subprocess.Popen([crjob.tool("ompi-migrate"), *args, str(jobid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=crenv.env)


def test_migrate(cluster, programs, crenv):
    """ompi-migrate --off mn2 --onto mn3: the job is checkpointed, restarted with mn2's
    ranks on mn3, the old job ended once the new one runs; the new job finishes alike."""
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 4)
    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:2,mn2:2"])
    job.ready()
    mover = migrate(crenv, job.jobid, "--off", "mn2", "--onto", "mn3", "--mca",
                    "btl_base_verbose", "20")
    # The old job ends once the new one runs; the new one waits for the go file.
    old = job.finish()
    assert old.returncode == 128 + signal.SIGTERM, old.report("the migrated job")
    assert crjob.ok_line(old.out) is None, old.report()
    crenv.go()
    moved = finish(mover)
    assert moved.returncode == 0 and crjob.ok_line(moved.out) == expected, \
        moved.report("ompi-migrate")
    assert re.search(r"job %d \(mn1:2,mn2:2\) now runs as job \d+ on mn1:2,mn3:2" % job.jobid,
                     moved.err), moved.report()
    check_paths(moved, [0, 0, 1, 1])
    cluster.assert_clean(job.jobid)
    cluster.assert_clean(moved.pid)


MIGRATE_FAILURES = [
    # (ompi-migrate's options, what it says, whether the job was stopped and resumed)
    (["--off", "mn2", "--onto", "ADDRESS"], "the restart on mn1:2,ADDRESS:2 failed", True),
    (["--off", "mn2", "--onto", "mn3", "--timeout", "1", "--mca", "runtime_fault_inject",
      "agent_hello_pause:1"], "did not run within --timeout", True),
    (["--off", "mn4", "--onto", "mn3"], "--off mn4: job JOBID has no rank there", False),
    (["--off", "mn2", "--onto", "mn9"], "--onto mn9: the host cannot be resolved", False),
]


@pytest.mark.parametrize("args, message, resumed", MIGRATE_FAILURES,
                         ids=["restart-fails", "restart-too-slow", "host-not-in-job",
                              "unknown-host"])
def test_migrate_failure_leaves_the_job_where_it_was(cluster, programs, crenv, args, message,
                                                     resumed):
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 4)
    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:2,mn2:2"])
    job.ready()
    address = cluster.subnet + ".77"  # in the nodes' subnet; no node has it
    args = [a.replace("ADDRESS", address) for a in args]
    message = message.replace("ADDRESS", address).replace("JOBID", str(job.jobid))
    result = finish(migrate(crenv, job.jobid, *args))
    assert result.returncode == 1, result.report("ompi-migrate")
    last = result.err.strip().splitlines()[-1]
    assert message in last, result.report()
    if resumed:
        assert "job %d is resumed where it was" % job.jobid in last, result.report()
    else:
        assert "nothing was changed" in last and "checkpoint" not in result.err, result.report()
    assert job.running(), job.finish().report()
    crenv.go()
    done = job.finish()
    assert done.returncode == 0 and crjob.ok_line(done.out) == expected, done.report()
    cluster.assert_clean(job.jobid)


def test_migrate_refuses_a_job_without_checkpoints(cluster, programs, crenv):
    job = crjob.CrJob(crenv, programs("cr/inflight"), 2, ["-H", "mn1:2"], ft=False)
    job.ready()
    result = finish(migrate(crenv, job.jobid, "--off", "mn1", "--onto", "mn2"))
    assert result.returncode == 1 and "runs without --with-ft cr" in result.err, result.report()
    crenv.go()
    assert job.finish().returncode == 0
    cluster.assert_clean(job.jobid)
    bad = finish(migrate(crenv, job.jobid, "--off", "mn1"))
    assert bad.returncode == 2 and "as many of each" in bad.err, bad.report()


def test_application_checkpoints_across_nodes(cluster, crenv):
    """examples/pheap_stencil.c on 2 nodes x 2 ranks, its backups in each node's own /tmp,
    checkpointed by MPIX_Checkpoint, killed, and restarted on 4 nodes x 1 rank: each agent
    puts its rank's backup back on its node; the same result as an uninterrupted run."""
    program = os.path.join(cluster.shared, "pheap_stencil")
    built = subprocess.run([crjob.tool("mpicc"), "-O2", os.path.join(ROOT, "examples",
                                                                     "pheap_stencil.c"),
                            "-o", program, "-lcrmpi-pheap"], capture_output=True, text=True)
    if built.returncode != 0 and "crmpi-pheap" in built.stderr:
        pytest.skip("libcrmpi-pheap was not built")
    assert built.returncode == 0, built.stderr
    files = "/tmp/mpix-stencil"  # on each node its own
    whole = subprocess.run([crjob.tool("mpirun"), "-np", "4", program, "-n", "60", "-d",
                            tempfile.mkdtemp(dir=cluster.shared)], capture_output=True,
                           text=True, timeout=HANG)
    expected = [line for line in whole.stdout.splitlines() if line.startswith("steps 60 ")]
    assert whole.returncode == 0 and expected, whole.stdout + whole.stderr

    job = crjob.CrJob(crenv, program, 4, ["-H", "mn1:2,mn2:2"],
                      ["-n", "60", "-c", "20", "-s", "40", "-d", files])
    follower = job.follow()
    assert follower.wait_for("out", lambda line: line == "stopped\n", timeout=HANG) \
        is not None, job.kill().report()
    handle = os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid)
    crjob.wait_committed(job, handle, 2)  # MPIX_Checkpoint returned before the commit
    assert crjob.committed(handle) == [1, 2], crjob.committed(handle)
    job.kill()
    for host in HOSTS:
        nodes("exec", host, "rm", "-rf", files, check=False)
    cluster.assert_clean(job.jobid)

    hostfile = os.path.join(crenv.readydir, "..", "hostfile")
    with open(hostfile, "w") as f:
        f.write("".join("%s slots=1\n" % h for h in HOSTS))
    four = finish(restart(cluster, crenv, handle, "--hostfile", hostfile))
    assert four.returncode == 0, four.report("restart")
    assert "restarted from sequence 2 at step 40" in four.out, four.report("restart")
    assert expected[0] in four.out.splitlines(), four.report("restart")
    for host in HOSTS:
        nodes("exec", host, "rm", "-rf", files, check=False)
    cluster.assert_clean(four.pid)


def node_local_copy(host, jobid, seq, rank):
    """A rank's copy of sequence `seq` in `host`'s own storage (filem_local_dir's default)."""
    return "/tmp/crmpi-%d/local/%d.ckpt/%d/rank.%d" % (os.getuid(), jobid, seq, rank)


def node_has(host, path):
    return nodes("exec", host, "test", "-e", path, check=False).returncode == 0


def test_partner_level_survives_a_lost_node(cluster, programs, crenv):
    """filem_levels local,partner,global:3 on 3 nodes x 1 rank: each checkpoint stays on the
    rank's node and goes to the next node (mn1 -> mn2 -> mn3 -> mn1), the first also to the
    global level. The third one's partner copies fail (injected): it is committed locally
    only, with a warning, and the second stays as the newest partner sequence. mn2 is then
    lost (its own storage wiped): the third cannot restart without it, and says where rank
    1's copy was; the second restarts on mn3 and mn1, each rank placed where its copy is
    (rank 1 on mn3, from its partner copy), with the uninterrupted result. The first, with rank 1's partner copy damaged, restarts
    from the global level."""
    program = programs("cr/inflight")
    expected = baseline(crenv, program, 3)
    levels = ["--mca", "filem_levels", "local,partner,global:3"]
    crenv.env["CRMPI_FAULT"] = "filem_partner_copy_fail:3"
    job = crjob.CrJob(crenv, program, 3, ["-H", "mn1:1,mn2:1,mn3:1", *levels])
    job.ready()
    handle = checkpoint(crenv, job.jobid)
    checkpoint(crenv, job.jobid)
    third = crenv.checkpoint(job.jobid)
    assert third.returncode == 0, third.report("ompi-checkpoint, the partner copies failing")
    assert "warning: checkpoint 3 is not stored at the partner level" in third.err, \
        third.report()
    job.kill()
    del crenv.env["CRMPI_FAULT"]
    record = json.load(open(os.path.join(handle, "snapshot.json")))
    assert record["sequences"] == [1, 2, 3], record
    assert {seq: sorted(held) for seq, held in record["levels"].items()} == {
        "1": ["global", "local", "partner"], "2": ["local", "partner"], "3": ["local"]}, record
    manifest = json.load(open(os.path.join(handle, "2", "manifest.json")))
    partners = {entry["rank"]: (entry["host"], entry["partner"]) for entry in manifest["ranks"]}
    assert partners == {0: ("mn1", "mn2"), 1: ("mn2", "mn3"), 2: ("mn3", "mn1")}, partners
    for rank, (host, partner) in partners.items():
        for seq in (1, 2):
            copy = node_local_copy(host, job.jobid, seq, rank)
            assert node_has(host, copy) and node_has(partner, copy), (rank, seq)

    # mn2 is lost: its own storage goes, and the job restarts without it.
    nodes("exec", "mn2", "rm", "-rf", "/tmp/crmpi-%d" % os.getuid())
    crenv.go()
    newest = finish(restart(cluster, crenv, handle, "-H", "mn3:2,mn1:1"))
    assert newest.returncode != 0, newest.report("restart of sequence 3 without mn2")
    assert "cannot restore rank 1: sequence 3 is held only on the nodes' own storage (mn2)" \
        in newest.err, newest.report()
    cluster.assert_clean(newest.pid, keep="/tmp/crmpi-%d" % os.getuid())
    # By slot, mn3 first would take ranks 0 and 1; each goes where its copy is instead.
    lost = finish(restart(cluster, crenv, handle, "--seq", "2", "-H", "mn3:2,mn1:1"))
    assert lost.returncode == 0 and crjob.ok_line(lost.out) == expected, lost.report("restart")
    assert "rank 1 placed on mn3, which holds its partner copy (it ran on mn2)" in lost.err, \
        lost.report()
    check_paths(lost, [0, 1, 1])
    assert "rank 1: sequence 2 read from its partner copy" in lost.err, lost.report()
    assert lost.err.count("read from the local level") == 2, lost.report()

    # Rank 1's partner copy of sequence 1 damaged: it is read from the global level.
    pages = nodes("exec", "mn3", "sh", "-c", "ls %s/criu/pages-*.img" % node_local_copy(
        "mn3", job.jobid, 1, 1)).stdout.split()[0]
    nodes("exec", "mn3", "sh", "-c", "printf '\\377\\377\\377\\377' | dd of=%s bs=1 seek=0 "
          "conv=notrunc status=none" % pages)
    damaged = finish(restart(cluster, crenv, handle, "--seq", "1", "-H", "mn1:1,mn3:2"))
    assert damaged.returncode == 0 and crjob.ok_line(damaged.out) == expected, \
        damaged.report("restart --seq 1")
    assert "rank 1: sequence 1 is damaged (see above) on this node's own storage; reading " \
        "the global level" in damaged.err, damaged.report()
    # What is left is one node: the restart goes on there, its checkpoints without the
    # partner level; rank 2's copy of sequence 1 is mn1's partner copy.
    one = finish(restart(cluster, crenv, handle, "--seq", "1", "-H", "mn1:3"))
    assert one.returncode == 0 and crjob.ok_line(one.out) == expected, one.report("on mn1")
    assert "this restart runs on one node, so its checkpoints have no partner level" in \
        one.err, one.report()
    assert "rank 2: sequence 1 read from its partner copy" in one.err, one.report()
    # The nodes' own storage keeps the copies after the job (filem_local_dir is the user's).
    for host in ("mn1", "mn3"):
        nodes("exec", host, "rm", "-rf", "/tmp/crmpi-%d" % os.getuid())
    cluster.assert_clean(damaged.pid)


def test_partner_copies_pruned_at_commit(cluster, programs, crenv):
    """filem_levels local,partner with snapc_base_keep 1 on 2 nodes x 1 rank: once the third
    checkpoint is committed, each node holds sequence 3 only (its own rank's copy and its
    partner's), though no checkpoint follows."""
    program = programs("cr/inflight")
    job = crjob.CrJob(crenv, program, 2, ["-H", "mn1:1,mn2:1", "--mca", "filem_levels",
                                          "local,partner", "--mca", "snapc_base_keep", "1"])
    job.ready()
    for _ in range(3):
        handle = checkpoint(crenv, job.jobid)
    assert crjob.wait_committed(job, handle, 3) == [3]
    base = "/tmp/crmpi-%d/local/%d.ckpt" % (os.getuid(), job.jobid)

    def held(host, path):
        return sorted(nodes("exec", host, "ls", path, check=False).stdout.split())

    # The prune follows the commit; the deadline only turns a miss into a failure.
    deadline = time.monotonic() + 30
    while (any(held(host, base) != ["3"] for host in ("mn1", "mn2")) and
           time.monotonic() < deadline):
        time.sleep(0.1)
    copies = {host: (held(host, base), held(host, base + "/3")) for host in ("mn1", "mn2")}
    running = job.running()
    job.kill()
    for host in ("mn1", "mn2"):
        nodes("exec", host, "rm", "-rf", "/tmp/crmpi-%d" % os.getuid())
    assert running, job.result.report()
    assert copies == {host: (["3"], ["rank.0", "rank.1"]) for host in ("mn1", "mn2")}, copies
    cluster.assert_clean(job.jobid)
