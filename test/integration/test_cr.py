"""Checkpoint/restart scenarios (DESIGN section 8, in the style of CRIU's zdtm): each program
of test/cr/ builds a state, is checkpointed while the state exists, and checks itself
afterwards; its result line (with a checksum of everything received) must equal the line of
an uninterrupted run of the same program at the same rank count.

Flavours:
  continue      ompi-checkpoint, the job goes on
  restart       ompi-checkpoint --term, then ompi-restart (same layout, same BTLs)
  other_btl     --term under one BTL set, ompi-restart --mca btl with the other
                (self,sm <-> self,tcp)
  cycles        three checkpoint/continue cycles, then --term and ompi-restart
  twice         ompi-restart twice from the same snapshot handle

Every scenario runs in continue and restart; the other flavours on a subset (the file has
to stay within a few minutes on a 2-core machine).
"""

import os

import pytest

import crjob

# The descriptors: name -> rank count, BTLs of the checkpointed run, and the seconds to let
# the ranks settle after they are ready (a rank that signals readiness and then enters a
# blocking call needs a moment to be inside it).
SCENARIOS = {
    "inflight": dict(np=4, btls="self,sm", settle=0.0),
    "unmatched": dict(np=3, btls="self,tcp", settle=0.0),
    "wildcard": dict(np=4, btls="self,sm", settle=0.0),
    "probe": dict(np=2, btls="self,sm", settle=0.0),
    "persistent": dict(np=3, btls="self,tcp", settle=0.0),
    "blocked": dict(np=4, btls="self,sm", settle=0.3),
    "collective": dict(np=3, btls="self,sm", settle=0.3),
    "threads": dict(np=2, btls="self,sm", settle=0.2),
}
OTHER_BTL = {"self,sm": "self,tcp", "self,tcp": "self,sm"}

FLAVOURS = [(name, "continue") for name in SCENARIOS]
FLAVOURS += [(name, "restart") for name in SCENARIOS]
FLAVOURS += [(name, "other_btl") for name in ("inflight", "unmatched", "probe", "threads")]
FLAVOURS += [(name, "cycles") for name in ("wildcard", "persistent", "blocked")]
FLAVOURS += [("unmatched", "twice")]


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
            job = crjob.CrJob(crenv, programs(name), np, ["--mca", "btl", btls])
            result = job.finish()
            line = crjob.ok_line(result.out)
            assert result.returncode == 0 and line, result.report("uninterrupted run")
            lines[key] = line
        return lines[key]

    return get


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


@pytest.mark.parametrize("name, flavour", FLAVOURS, ids=["%s-%s" % f for f in FLAVOURS])
def test_scenario(programs, baselines, tmp_path, name, flavour):
    desc = SCENARIOS[name]
    np, btls = desc["np"], desc["btls"]
    expected = baselines(name, np, btls)
    crenv = crjob.CrEnv(tmp_path)
    job = crjob.CrJob(crenv, programs(name), np, ["--mca", "btl", btls])
    job.ready()
    if desc["settle"]:
        import time
        time.sleep(desc["settle"])

    if flavour == "continue":
        checkpoint_ok(crenv, job)
        assert job.running(), "the job ended after a checkpoint without --term"
        crenv.go()
        result = job.finish()
        assert result.returncode == 0, result.report()
        assert crjob.ok_line(result.out) == expected, result.report()
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

    crenv.go()
    restart_args = []
    if flavour == "other_btl":
        restart_args = ["--mca", "btl", OTHER_BTL[btls]]
    runs = 2 if flavour == "twice" else 1
    for _ in range(runs):
        result = restart_ok(crenv, handle, *restart_args)
        assert crjob.ok_line(result.out) == expected, result.report("ompi-restart")
