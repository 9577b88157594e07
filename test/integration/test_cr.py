"""Checkpoint/restart scenarios (docs/design.md, "Tests", in the style of CRIU's zdtm): each program
of test/cr/ builds a state, is checkpointed while the state exists, and checks itself
afterwards; its result line (with a checksum of everything received) must equal the line of
an uninterrupted run of the same program at the same rank count.

Flavours:
  continue      ompi-checkpoint, the job goes on
  restart       ompi-checkpoint --term, then ompi-restart (same layout, same BTLs)
  other_btl     --term under one BTL set, ompi-restart --mca btl with the other
                (self,sm <-> self,tcp)
test_fabric_btl: a checkpoint continued over self,ofi, then restarted over self,sm,tcp; and
a snapshot of self,sm,tcp restarted over self,ofi; the same with ofi and ucx placing large
payloads, with ucx over UCX's tcp and its shared memory, and a ucx snapshot moved from UCX's
shared memory to its tcp.
  cycles        three checkpoint/continue cycles, then --term and ompi-restart
  twice         ompi-restart twice from the same snapshot handle
  other_layout  started unbound, restarted with --map-by core --bind-to core: the restored
                ranks run bound to one core each
  concurrent    a checkpoint, then two ompi-restart of it at once while the checkpointed
                job still runs: three copies of the job, each must finish alike
  stop          ompi-checkpoint --stop: every thread of every rank stopped, further
                checkpoints refused; ompi-restart of the snapshot while the job is stopped
                (a migration), then kill -CONT resumes the stopped job; both finish alike

Every scenario runs in continue and restart; the other flavours on a subset (the file has
to stay within a few minutes on a 2-core machine).
"""

import json
import os
import time

import pytest

import crjob
from conftest import btl_names, crmpi_btl_args

# The descriptors: name -> rank count, BTLs of the checkpointed run, the seconds to let the
# ranks settle after they are ready (a rank that signals readiness and then enters a
# blocking call needs a moment to be inside it), and whether the checkpoint must find
# messages to move (rank.json's drain statistics: messages drained or rendezvous bytes
# pulled), which shows that it landed while the state existed.
SCENARIOS = {
    "inflight": dict(np=(2, 4), btls="self,sm", settle=0.0, moves=True),
    "unmatched": dict(np=(3, 4), btls="self,tcp", settle=0.0, moves=True),
    "wildcard": dict(np=(2, 4), btls="self,sm", settle=0.0, moves=False),
    "probe": dict(np=(2, 3), btls="self,sm", settle=0.0, moves=True),
    "persistent": dict(np=(2, 3), btls="self,tcp", settle=0.0, moves=False),
    "blocked": dict(np=(3, 4), btls="self,sm", settle=0.3, moves=False),
    "collective": dict(np=(2, 3), btls="self,sm,tcp", settle=0.3, moves=True),
    "threads": dict(np=(2, 3), btls="self,sm", settle=0.0, moves=True),
    "corners": dict(np=(2, 3), btls="self,tcp", settle=0.0, moves=True),
    "storm": dict(np=(3, 4), btls="self,sm", settle=0.0, moves=False),
    "intercomm": dict(np=(2, 4), btls="self,sm", settle=0.3, moves=True),
    "rma_fence": dict(np=(2, 4), btls="self,sm", settle=0.0, moves=True),
    "rma_lock": dict(np=(2, 3), btls="self,tcp", settle=0.3, moves=False),
    "rma_pscw": dict(np=(2, 3), btls="self,sm,tcp", settle=0.3, moves=True),
    "mpiio": dict(np=(2, 3), btls="self,sm", settle=0.0, moves=False, mpio=True),
    "sessions": dict(np=(2, 3), btls="self,sm", settle=0.0, moves=True),
}
OTHER_BTL = {"self,sm": "self,tcp", "self,tcp": "self,sm", "self,sm,tcp": "self,tcp"}


def btl_args(btls):
    """mpirun's or ompi-restart's arguments for a BTL set (ofi and ucx on the loopback
    interface, as conftest.OFI_DOMAIN says why; "ucx:TLS" as conftest.crmpi_btl_args)."""
    return crmpi_btl_args(btls)

# (scenario, flavour, np): continue and restart at both rank counts, the other flavours at
# the first.
FLAVOURS = []
for _name, _desc in SCENARIOS.items():
    FLAVOURS += [(_name, "continue", np) for np in _desc["np"]]
    FLAVOURS += [(_name, "restart", np) for np in _desc["np"]]
    FLAVOURS += [(_name, "other_btl", _desc["np"][0]), (_name, "cycles", _desc["np"][0])]
FLAVOURS += [("unmatched", "twice", 3), ("probe", "twice", 2), ("corners", "concurrent", 3)]
FLAVOURS += [("probe", "other_layout", 2), ("threads", "other_layout", 2)]
FLAVOURS += [("mpiio", "other_layout", 2), ("mpiio", "twice", 2)]
FLAVOURS += [("inflight", "stop", 2), ("threads", "stop", 2)]
FLAVOURS = [pytest.param(*f, id="%s-%s-np%d" % f) for f in FLAVOURS]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("cr-bin")
    built = {}

    def get(name):
        if name not in built:
            built[name] = crjob.compile_scenario(name, outdir)
        return built[name]

    return get


@pytest.fixture(scope="module")
def baselines(programs, tmp_path_factory):
    """The result line of an uninterrupted run, per (scenario, np, btls), under
    --with-ft cr (the go file exists from the start)."""
    lines = {}

    def get(name, np, btls):
        key = (name, np, btls)
        if key not in lines:
            crenv = crjob.CrEnv(tmp_path_factory.mktemp("cr-base"))
            crenv.go()
            job = crjob.CrJob(crenv, programs(name), np, btl_args(btls))
            result = job.finish()
            line = crjob.ok_line(result.out)
            assert result.returncode == 0 and line, result.report("uninterrupted run")
            lines[key] = line
        return lines[key]

    return get


def drain_stats(handle, seq):
    """Each rank's CRCP drain figures of sequence `seq` (rank.json)."""
    import json
    stats = []
    seq_dir = os.path.join(handle, str(seq))
    for rank_dir in sorted(d for d in os.listdir(seq_dir) if d.startswith("rank.")):
        with open(os.path.join(seq_dir, rank_dir, "rank.json")) as f:
            stats.append(json.load(f)["crcp"]["drain"])
    return stats


def checkpoint_ok(crenv, job, *args):
    ckpt = crenv.checkpoint(job.jobid, *args)
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint " + " ".join(args))
    handle = ckpt.out.strip().splitlines()[-1]
    assert handle == os.path.join(crenv.snapdir, "%d.ckpt" % job.jobid), ckpt.report()
    return handle


def restart_ok(crenv, handle, *args):
    result = crenv.restart(handle, *args)
    assert result.returncode == 0, result.report("ompi-restart " + " ".join(args))
    crjob.assert_clean(result.pid)
    return result


@pytest.mark.parametrize("name, flavour, np", FLAVOURS)
def test_scenario(programs, baselines, tmp_path, name, flavour, np):
    desc = SCENARIOS[name]
    btls = desc["btls"]
    if desc.get("mpio") and not os.path.exists(os.path.join(crjob.INSTALL, "lib",
                                                            "libcrmpi-io.so")):
        pytest.skip("crmpi built without ROMIO: no MPI-IO")
    expected = baselines(name, np, btls)
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, programs(name), np, ["--mca", "btl", btls])
    job.ready()
    if desc["settle"]:
        time.sleep(desc["settle"])

    if flavour == "continue":
        handle = checkpoint_ok(crenv, job)
        drain = drain_stats(handle, 1)
        print("%s: drain statistics per rank %s" % (name, drain))
        if desc.get("moves"):
            # The checkpoint landed while messages were on their way: the drain moved some.
            assert sum(d["messages_drained"] + d["bytes_pulled"] for d in drain) > 0, drain
        assert job.running(), "the job ended after a checkpoint without --term"
        crenv.go()
        result = job.finish()
        assert result.returncode == 0, result.report()
        assert crjob.ok_line(result.out) == expected, result.report()
        crjob.assert_clean(job.jobid)
        return

    if flavour == "stop":
        check_stop(crenv, job, programs(name), expected)
        return

    if flavour == "concurrent":
        import subprocess
        handle = checkpoint_ok(crenv, job)
        restarts = [subprocess.Popen([crjob.tool("ompi-restart"), handle],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=crenv.env) for _ in range(2)]
        time.sleep(2)  # the restored ranks wait for the go file, like the original ones
        crenv.go()
        for proc in restarts:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0 and crjob.ok_line(out) == expected, (out, err)
            crjob.assert_clean(proc.pid)
        result = job.finish()
        assert result.returncode == 0 and crjob.ok_line(result.out) == expected, \
            result.report()
        crjob.assert_clean(job.jobid)
        return

    cycles = 3 if flavour == "cycles" else 0
    for _ in range(cycles):
        checkpoint_ok(crenv, job)
        assert job.running(), "the job ended after a checkpoint without --term"
    handle = checkpoint_ok(crenv, job, "--term")
    first = job.finish()
    assert first.returncode == 0, first.report("the job after ompi-checkpoint --term")
    assert crjob.ok_line(first.out) is None, "the job went on after --term:\n" + first.report()
    crjob.assert_clean(job.jobid)
    assert crjob.committed(handle)[-1] == cycles + 1, crjob.committed(handle)

    if flavour == "other_layout":
        import subprocess
        if (os.cpu_count() or 1) < np:
            pytest.skip("binding %d ranks to a core each needs %d cores" % (np, np))
        proc = subprocess.Popen([crjob.tool("ompi-restart"), "--map-by", "core", "--bind-to",
                                 "core", handle], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=crenv.env)
        # The restored ranks wait for the go file; their environment is the image's, so
        # they carry the checkpointed job's CRMPI_JOBID.
        deadline = time.monotonic() + 60
        while len(crjob.processes_of(job.jobid, exe=programs(name))) < np:
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        cpus = []
        for pid in crjob.processes_of(job.jobid, exe=programs(name)):
            with open("/proc/%d/status" % pid) as f:
                cpus += [line.split()[1] for line in f if line.startswith("Cpus_allowed_list")]
        crenv.go()
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0 and crjob.ok_line(out) == expected, (out, err)
        assert len(cpus) == np and len(set(cpus)) == np and all(c.isdigit() for c in cpus), \
            "restored ranks are not bound to a core each: %s" % cpus
        crjob.assert_clean(proc.pid)
        return

    crenv.go()
    restart_args = []
    if flavour == "other_btl":
        restart_args = ["--mca", "btl", OTHER_BTL[btls]]
    runs = 2 if flavour == "twice" else 1
    for _ in range(runs):
        result = restart_ok(crenv, handle, *restart_args)
        assert crjob.ok_line(result.out) == expected, result.report("ompi-restart")


# Snapshots taken over a fabric BTL and restarted over the node's own BTLs, and the
# reverse: (scenario, rank count, BTLs of the checkpointed run, BTLs of the restart).
# ucx:TLS is ucx over UCX's transports TLS (conftest.crmpi_btl_args). A restored rank runs
# UCX without its shared memory (btl_ucx.h, "Restarted ranks"): the restart onto self,ucx
# (UCX's choice) goes over UCX's tcp; the last move continues over UCX's shared memory and
# restarts over its tcp, which a restart takes from btl_ucx_tls (its environment is the
# image's).
FABRIC_MOVES = [
    ("unmatched", 3, "self,ofi", "self,sm,tcp"),
    ("collective", 2, "self,sm,tcp", "self,ofi"),
    ("unmatched", 3, "self,ucx:tcp", "self,sm,tcp"),
    ("collective", 2, "self,sm,tcp", "self,ucx"),
    ("inflight", 2, "self,ucx:sm", "self,ucx:tcp"),
    ("rma_fence", 2, "self,ofi", "self,sm,tcp"),
    ("unmatched", 3, "self,ofi:place", "self,sm,tcp"),
    ("inflight", 2, "self,sm,tcp", "self,ofi:place"),
    ("unmatched", 3, "self,ucx:tcp:place", "self,sm,tcp"),
    ("inflight", 2, "self,sm,tcp", "self,ucx:tcp:place"),
]


@pytest.mark.parametrize("name, np, btls, restart_btls", FABRIC_MOVES,
                         ids=["%s-np%d-%s-to-%s" % f for f in FABRIC_MOVES])
def test_fabric_btl(programs, baselines, tmp_path, name, np, btls, restart_btls):
    """A checkpoint the job continues from (its fabric module is released before the dump and
    rebuilt after it, in the same processes), then a --term checkpoint restarted with the
    other BTL set: both runs end with the uninterrupted run's result."""
    expected = baselines(name, np, btls)
    assert expected == baselines(name, np, restart_btls), "the BTLs changed the result"
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, programs(name), np, btl_args(btls))
    job.ready()
    if SCENARIOS[name]["settle"]:
        time.sleep(SCENARIOS[name]["settle"])
    checkpoint_ok(crenv, job)
    assert job.running(), "the job ended after a checkpoint without --term"
    handle = checkpoint_ok(crenv, job, "--term")
    first = job.finish()
    assert first.returncode == 0, first.report("the job after ompi-checkpoint --term")
    crjob.assert_clean(job.jobid)
    assert crjob.committed(handle)[-1] == 2, crjob.committed(handle)
    crenv.go()
    result = restart_ok(crenv, handle, *btl_args(restart_btls))
    assert crjob.ok_line(result.out) == expected, result.report("ompi-restart")


def test_restart_onto_ucx_shared_memory_refused(programs, baselines, tmp_path):
    """A snapshot restarted with btl_ucx_tls=sm: UCX's shared memory cannot connect restored
    ranks (btl_ucx.h, "Restarted ranks"), so the restart fails with a line that says why and
    what to use instead, and leaves nothing running; the snapshot then restarts over
    btl_ucx_tls=tcp with the uninterrupted run's result."""
    name, np = "inflight", 2
    expected = baselines(name, np, "self,sm")
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, programs(name), np, btl_args("self,sm"))
    job.ready()
    handle = checkpoint_ok(crenv, job, "--term")
    assert job.finish().returncode == 0
    crjob.assert_clean(job.jobid)
    crenv.go()
    refused = crenv.restart(handle, *btl_args("self,ucx:sm"))
    assert refused.returncode != 0, refused.report("ompi-restart over ucx:sm")
    assert "names only UCX's shared-memory transports" in refused.err and \
        "btl_ucx_tls=tcp" in refused.err, refused.report("ompi-restart over ucx:sm")
    crjob.assert_clean(refused.pid)
    result = restart_ok(crenv, handle, *btl_args("self,ucx:tcp"))
    assert crjob.ok_line(result.out) == expected, result.report("ompi-restart")


def thread_states(pids):
    """The scheduler state letter of every thread of these processes."""
    states = []
    for pid in pids:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
    return states


def check_stop(crenv, job, program, expected):
    import signal
    ranks = crjob.processes_of(job.jobid, exe=program)
    assert len(ranks) == job.np, ranks
    handle = checkpoint_ok(crenv, job, "--stop")
    states = thread_states(ranks)
    assert states and set(states) == {"T"}, "not every rank thread is stopped: %s" % states
    status = crenv.checkpoint(job.jobid, "--status")
    assert status.returncode == 0 and "stopped (after checkpoint 1;" in status.out, \
        status.report("ompi-checkpoint --status")
    refused = crenv.checkpoint(job.jobid)
    assert refused.returncode == 1 and "kill -CONT %d" % job.jobid in refused.err, \
        refused.report("ompi-checkpoint of a stopped job")
    assert crjob.committed(handle) == [1], crjob.committed(handle)
    crenv.go()
    # The snapshot restarts while the job it came from is stopped.
    result = restart_ok(crenv, handle)
    assert crjob.ok_line(result.out) == expected, result.report("ompi-restart")
    assert job.running() and set(thread_states(ranks)) == {"T"}, \
        "the stopped job moved before SIGCONT"
    os.kill(job.jobid, signal.SIGCONT)
    result = job.finish()
    assert result.returncode == 0, result.report()
    assert crjob.ok_line(result.out) == expected, result.report()
    assert "resumed" in result.err, result.report()
    crjob.assert_clean(job.jobid)


def rank_resources(pid):
    """What a rank process holds: {fd: target}, thread names, and the mappings of files in
    /dev/shm, of deleted files, or of sockets."""
    fds = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            fds[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            pass
    tasks = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            tasks.append(f.read().strip())
    with open("/proc/%d/maps" % pid) as f:
        maps = [line.split(None, 5)[-1].strip() for line in f if len(line.split()) >= 6]
    shared = sorted({m for m in maps if m.startswith("/dev/shm") or "(deleted)" in m or
                     m.startswith("socket:")})
    return fds, tasks, shared


def maps_library(pid, name):
    """Does the process map a file whose name contains `name`?"""
    with open("/proc/%d/maps" % pid) as f:
        return any(name in line for line in f)


@pytest.mark.parametrize("btls", ["self,sm,tcp", "self,ofi"])
def test_images_do_not_grow_with_checkpoints(programs, baselines, tmp_path, btls):
    """Three checkpoints of a job that goes on: each releases the transports and builds them
    again, and what a release freed must not stay in the rank as resident heap that CRIU
    dumps. libfabric's buffers, freed at the first release, raised glibc's mmap threshold,
    so the rebuilt ones came from the heap and stayed resident once freed: the second and
    third images of a self,ofi rank were 90 and 120 MB larger than the first (4 MB), and
    grew on, until the release trimmed the heap (inc.c). What stays after the trim, about
    17 MB a rank from the third checkpoint on and no more later, is heap the trim cannot
    give back (pages still partly in use); the bound leaves room for it."""
    name, np = "unmatched", 2
    expected = baselines(name, np, btls)
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, programs(name), np, btl_args(btls))
    job.ready()
    sizes = []
    for seq in (1, 2, 3):
        result = crenv.checkpoint(job.jobid)
        assert result.returncode == 0, result.report("checkpoint %d" % seq)
        handle = result.out.strip().splitlines()[-1]
        with open(os.path.join(handle, str(seq), "manifest.json")) as f:
            sizes.append(json.load(f)["bytes"])
    assert max(sizes[1:]) < sizes[0] + np * (32 << 20), "image bytes of checkpoints 1-3: %s" % sizes
    crenv.go()
    result = job.finish()
    assert result.returncode == 0 and crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(job.jobid)


@pytest.mark.parametrize("btls", ["self,sm", "self,tcp", "self,sm,tcp", "self,ofi",
                                  "self,sm,ofi", "self,ucx:tcp", "self,ucx:sm",
                                  "self,sm,ucx:tcp"])
def test_suspended_rank_holds_nothing_else(programs, baselines, tmp_path, btls):
    """docs/design.md, "The checkpoint, phase by phase", step 3: after pre-checkpoint a rank
    holds only its stdio, the control socket to its agent (fd 3) and two threads (main and the C/R thread). The fault
    point snapc_dump_pause holds the agents before the dump, while every rank is suspended,
    until the test has read /proc of each rank. Before the checkpoint the same
    reading must show the BTLs' resources (the check is not vacuous)."""
    name, np = "unmatched", 2
    expected = baselines(name, np, btls)
    release = tmp_path / "release"
    crenv = crjob.CrEnv(tmp_path, {"CRMPI_FAULT": "snapc_dump_pause",
                                   "CRMPI_FAULT_RELEASE": str(release)})
    job = crjob.CrJob(crenv, programs(name), np, btl_args(btls))
    job.ready()
    ranks = crjob.processes_of(job.jobid, exe=programs(name))
    assert len(ranks) == np, ranks
    before = {pid: rank_resources(pid) for pid in ranks}
    for pid, (fds, tasks, shared) in before.items():
        if "sm" in btl_names(btls):
            assert shared, "sm's segments are not visible in /proc/%d/maps" % pid
        if "tcp" in btl_names(btls):
            assert len([t for t in fds.values() if t.startswith("socket:")]) > 1, fds
        if "ucx" in btl_names(btls):
            # Named in the list, ucx is open even where sm serves every peer: its worker
            # holds sockets or segments, an epoll fd and UCX's async thread.
            assert len(fds) > 5 and len(tasks) > 2, (fds, tasks)
            assert maps_library(pid, "libucp"), "libucp is not mapped in rank %d" % pid
        if "ucx:sm" in btls.split(","):
            # UCX's posix and sysv segments: /dev/shm/ucx_shm_posix_* and /SYSV* (deleted).
            assert shared, "UCX's segments are not visible in /proc/%d/maps" % pid
        if "ofi" in btl_names(btls):
            # Named in the list, ofi is open even where sm serves every peer: its provider
            # (tcp;ofi_rxm) listens, and libfabric is loaded.
            assert len([t for t in fds.values() if t.startswith("socket:")]) > 1, fds
            assert maps_library(pid, "libfabric"), "libfabric is not mapped in rank %d" % pid

    import subprocess
    tool = subprocess.Popen([crjob.tool("ompi-checkpoint"), "-v", str(job.jobid)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=crenv.env)
    seen = []
    for line in tool.stderr:
        seen.append(line)
        if "dumping the ranks" in line:
            break
    assert seen and "dumping the ranks" in seen[-1], "".join(seen)
    problems = []
    for pid in ranks:
        fds, tasks, shared = rank_resources(pid)
        stdio_ok = all(fds.get(fd, "").startswith(("pipe:", "/dev/null")) for fd in (0, 1, 2))
        if sorted(fds) != [0, 1, 2, 3] or not stdio_ok or not fds[3].startswith("socket:"):
            problems.append("rank pid %d holds fds %s" % (pid, fds))
        if fds.get(3) != before[pid][0].get(3):
            problems.append("rank pid %d: fd 3 is not the control socket it had" % pid)
        if len(tasks) != 2:
            problems.append("rank pid %d has threads %s (main and C/R expected)" % (pid, tasks))
        if shared:
            problems.append("rank pid %d maps %s" % (pid, shared))
        if maps_library(pid, "libfabric"):
            problems.append("rank pid %d still maps libfabric" % pid)
    release.touch()
    out, err = tool.communicate(timeout=60)
    assert tool.returncode == 0, "".join(seen) + err
    assert not problems, "\n".join(problems)
    crenv.go()
    result = job.finish()
    assert result.returncode == 0 and crjob.ok_line(result.out) == expected, result.report()
    crjob.assert_clean(job.jobid)
