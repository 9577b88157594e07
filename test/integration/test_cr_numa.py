"""Memory placement across a checkpoint (docs/design.md, "Memory placement"): test/cr/numa.c
gives memory areas policies of their own on node 0 (MPOL_BIND, MPOL_INTERLEAVE,
MPOL_PREFERRED), is checkpointed with --term and restarted, and reports each area's policy
(get_mempolicy) and the node of its pages (move_pages) after the restart. Its main thread
(MPOL_LOCAL) and a pinned thread (MPOL_BIND) have policies of their own, which they report too.

CRIU restores no policy: without the restart's re-application every area reports the default
policy (what crs_criu_numa_policy 0 shows). The machine may have a single NUMA node: a
restart on a machine without the recorded node is made by rewriting the record of a
snapshot as a 2-node checkpoint would have written it (the rank on node 1), with the
snapshot's checksums brought up to date.
"""

import glob
import hashlib
import json
import os
import re

import pytest

import crjob

NP = 2
AREA_LINE = re.compile(r"numa rank (\d+) (\w+): policy (\d+) nodes 0x([0-9a-f]+), (\d+)/(\d+) "
                       r"pages on node 0")
THREAD_LINE = re.compile(r"numa rank (\d+) thread (\w+): policy (-?\d+) nodes 0x([0-9a-f]+)")
HUGE_LINE = re.compile(r"numa rank (\d+) huge: before (-?\d+) kB, now (-?\d+) kB")
# MPOL_* of linux/mempolicy.h.
MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL = 0, 1, 2, 3, 4
# The threads' own policies the program sets: (mode, nodes).
THREADS = {"main": (MPOL_LOCAL, 0), "pinned": (MPOL_BIND, 1)}
RECORDED = {"bind": MPOL_BIND, "interleave": MPOL_INTERLEAVE, "preferred": MPOL_PREFERRED,
            "default": MPOL_DEFAULT}


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return crjob.compile_scenario("numa", tmp_path_factory.mktemp("numa"))


def areas(out):
    """{(rank, area): (policy, nodes, pages on node 0, pages)} from the program's lines."""
    found = {}
    for m in AREA_LINE.finditer(out):
        found[(int(m.group(1)), m.group(2))] = (int(m.group(3)), int(m.group(4), 16),
                                               int(m.group(5)), int(m.group(6)))
    return found


def thread_policies(out):
    """{(rank, thread): (policy, nodes)} from the program's lines."""
    return {(int(m.group(1)), m.group(2)): (int(m.group(3)), int(m.group(4), 16))
            for m in THREAD_LINE.finditer(out)}


def huge_pages(out):
    """{rank: (kB in huge pages at setup, kB now)} of the program's huge area."""
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3))) for m in HUGE_LINE.finditer(out)}


def thp_available():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


def checkpointed(crenv, program, mpirun_args=()):
    """A snapshot of the program with its areas set up; the job ended by --term."""
    job = crjob.CrJob(crenv, program, NP, list(mpirun_args))
    job.ready()
    ckpt = crenv.checkpoint(job.jobid, "--term")
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint --term")
    first = job.finish()
    assert first.returncode == 0, first.report()
    crenv.go()
    return ckpt.out.strip().splitlines()[-1]


def restarted(crenv, handle, *args):
    result = crenv.restart(handle, *args)
    assert result.returncode == 0, result.report("ompi-restart " + " ".join(args))
    assert crjob.ok_line(result.out), result.report()
    crjob.assert_clean(result.pid)
    return result


def assert_policies_kept(result):
    found = areas(result.out)
    assert len(found) == NP * len(RECORDED), result.report()
    for (rank, name), (policy, nodes, on_node0, pages) in found.items():
        assert policy == RECORDED[name], (rank, name, result.report())
        assert nodes == (0 if name == "default" else 1), (rank, name, result.report())
        assert on_node0 == pages, (rank, name, result.report())
    threads = thread_policies(result.out)
    assert threads == {(r, name): policy for r in range(NP) for name, policy in THREADS.items()}, \
        result.report()
    # The area that was in transparent huge pages is again (CRIU restores small pages).
    huge = huge_pages(result.out)
    assert len(huge) == NP, result.report()
    if thp_available():
        assert all(before > 0 and now == before for before, now in huge.values()), \
            result.report()


def test_policies_kept_same_layout(program, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program)
    meta = open(glob.glob(os.path.join(handle, "1", "rank.0", "criu", "crs-criu.meta"))[0]).read()
    assert re.search(r"^numanode 0 0 1$", meta, re.M), meta
    for policy in ("bind:0", "interleave:0", "prefer:0"):
        assert re.search(r"^vma \d+ [0-9a-f]+ [0-9a-f]+ %s N0=64$" % policy, meta, re.M), meta
    # The main thread's own policy shows through every area without one, and is recorded as
    # the thread's, not as theirs.
    assert not re.search(r"^vma .* local ", meta, re.M), meta
    for policy in ("local", "bind:0"):
        assert re.search(r"^thread \d+ \d+ \S+ \S+ %s$" % policy, meta, re.M), meta
    result = restarted(crenv, handle, "--mca", "crs_base_verbose", "10")
    assert_policies_kept(result)
    # The pages were put back (they were on node 0 already: nothing to move).
    assert re.search(r"pages of init \d+ placed in [0-9.]+ s: 0 moved back", result.err), \
        result.report()


@pytest.mark.parametrize("map_by, bind_to", [("core", "core"), ("numa", "numa"),
                                             ("socket", "core")])
def test_policies_kept_other_binding(program, tmp_path, map_by, bind_to):
    if bind_to == "core" and (os.cpu_count() or 1) < NP:
        pytest.skip("binding %d ranks to a core each needs %d cores" % (NP, NP))
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program)
    result = restarted(crenv, handle, "--map-by", map_by, "--bind-to", bind_to)
    assert_policies_kept(result)


PINNED = re.compile(r"numa rank (\d+) pinned thread: cpus (\S+)")


def pinned(out):
    return {int(m.group(1)): m.group(2) for m in PINNED.finditer(out)}


def test_pinned_thread_switch_off(program, tmp_path):
    """A thread the program pinned to the first CPU of an unbound rank keeps that CPU after a
    restart; with crs_criu_affinity 0 it gets the restorer's mask (every CPU here)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs to tell a pinned thread from an unpinned one")
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program)
    result = restarted(crenv, handle)
    assert pinned(result.out) == {r: str(cpus[0]) for r in range(NP)}, result.report()
    result = restarted(crenv, handle, "--mca", "crs_criu_affinity", "0")
    found = pinned(result.out)
    assert len(found) == NP and all(c != str(cpus[0]) for c in found.values()), result.report()


def test_switch_off(program, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program)
    result = restarted(crenv, handle, "--mca", "crs_criu_numa_policy", "0", "--mca",
                       "crs_criu_numa_pages", "0", "--mca", "crs_base_verbose", "10")
    found = areas(result.out)
    assert len(found) == NP * len(RECORDED), result.report()
    assert all(policy == MPOL_DEFAULT for policy, _, _, _ in found.values()), result.report()
    # The threads keep the policy of the agent that restored them.
    threads = thread_policies(result.out)
    assert len(threads) == NP * len(THREADS), result.report()
    assert all(policy == (MPOL_DEFAULT, 0) for policy in threads.values()), result.report()
    assert "pages of init" not in result.err, result.report()
    # Nothing makes the huge area huge pages again. (CRIU restores it in small pages: the
    # program then reports 0 kB until khugepaged, which runs when it will, gets to it.)
    result = restarted(crenv, handle, "--info", "--mca", "crs_criu_numa_hugepages", "0")
    assert len(re.findall(r"; 0 ranges made huge pages again", result.err)) == NP, \
        result.report()

    # Nothing recorded at checkpoint: nothing to restore either.
    crenv = crjob.CrEnv(tmp_path / "unrecorded")
    handle = checkpointed(crenv, program, ["--mca", "crs_criu_numa", "0"])
    meta = open(os.path.join(handle, "1", "rank.0", "criu", "crs-criu.meta")).read()
    assert "numanode" not in meta and "\nvma " not in meta, meta
    result = restarted(crenv, handle)
    assert all(policy == MPOL_DEFAULT for policy, _, _, _ in areas(result.out).values()), \
        result.report()


def rewrite_rank_file(handle, seq, rank, rel, edit):
    """Change a file of a committed snapshot and update the checksums that cover it."""
    seq_dir = os.path.join(handle, str(seq))
    path = os.path.join(seq_dir, "rank.%d" % rank, rel)
    with open(path) as f:
        text = edit(f.read())
    with open(path, "w") as f:
        f.write(text)
    data = text.encode()
    manifest_path = os.path.join(seq_dir, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    for entry in manifest["ranks"][rank]["files"]:
        if entry["path"] == rel:
            entry["size"] = len(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
    with open(manifest_path, "rb") as f:
        manifest_sha = hashlib.sha256(f.read()).hexdigest()
    commit_path = os.path.join(handle, "snapshot.json")
    with open(commit_path) as f:
        commit = json.load(f)
    commit["manifest_sha256"][str(seq)] = manifest_sha
    with open(commit_path, "w") as f:
        json.dump(commit, f, indent=2)


def as_if_on_node1(meta):
    """The record a 2-node machine would have written with the rank bound to node 1."""
    meta = re.sub(r"^numanode 0 0 1$", "numanode 0 0 0\nnumanode 1 1 1", meta, flags=re.M)
    meta = re.sub(r"^(vma .* (?:bind|interleave|prefer)):0 N0=", r"\1:1 N1=", meta, flags=re.M)
    meta = re.sub(r"^(thread .* bind):0$", r"\1:1", meta, flags=re.M)
    return meta


def test_missing_node_mapped(program, tmp_path):
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program)
    for rank in range(NP):
        rewrite_rank_file(handle, 1, rank, "criu/crs-criu.meta", as_if_on_node1)
    meta = open(os.path.join(handle, "1", "rank.0", "criu", "crs-criu.meta")).read()
    assert "bind:1 N1=64" in meta and re.search(r"^thread .* bind:1$", meta, re.M), meta
    # crmpi_info --snapshot shows the record and what this machine makes of it.
    info = crenv.info("--snapshot", handle)
    assert info.returncode == 0, info.report()
    assert "NUMA nodes at checkpoint: L#0 (OS 0) L#1 (OS 1, bound)" in info.out, info.report()
    assert re.search(r"pid \d+ [0-9a-f]+-[0-9a-f]+ bind:1, pages: N1=64", info.out), info.report()
    assert re.search(r"onto this machine, bound to CPUs [0-9,-]+: L#0 \(OS 0\) -> L#0 \(OS 0\), "
                     r"L#1 \(OS 1\) -> L#0 \(OS 0\)", info.out), info.report()
    result = restarted(crenv, handle, "--info")
    said = re.findall(r"NUMA node L#1 \(OS 1\) of the checkpoint is not on this machine: its "
                      r"memory and policies go to node L#0 \(OS 0\)", result.err)
    assert len(said) == NP, result.report()
    # --info: each agent's line of what it did (both threads had a policy of their own, which
    # the agent's is not; three areas had theirs).
    placed = re.findall(r"placement: CPUs (\S+) at the checkpoint -> (\S+) here \(thread masks "
                        r"restored\); NUMA nodes \(OS\) 0->0,1->0; \d+ pages moved back; 3 areas "
                        r"and 2 threads given their memory policy; %d ranges made huge pages "
                        r"again" % (1 if thp_available() else 0), result.err)
    assert len(placed) == NP and all(old == new for old, new in placed), result.report()
    # Node 1's policies now name node 0, the same node of the rank's binding.
    assert_policies_kept(result)


def test_checkpoint_on_synthetic_machine(program, tmp_path):
    """crs_criu_topology stands in for a 2-node machine at checkpoint: the record names both
    nodes, and a restart on a one-node machine maps node 1 onto node 0 and says so (the
    restart gives the parameter again: a snapshot's own parameters apply to its restarts)."""
    crenv = crjob.CrEnv(tmp_path)
    handle = checkpointed(crenv, program, ["--mca", "crs_criu_topology",
                                           "synthetic:numa:2 core:1 pu:1"])
    meta = open(os.path.join(handle, "1", "rank.0", "criu", "crs-criu.meta")).read()
    assert re.search(r"^numanode 0 0 1$", meta, re.M) and \
        re.search(r"^numanode 1 1 1$", meta, re.M), meta
    result = restarted(crenv, handle, "--mca", "crs_criu_topology", "synthetic:numa:1 core:2 pu:1")
    assert result.err.count("NUMA node L#1 (OS 1) of the checkpoint is not on this machine") \
        == NP, result.report()
    assert_policies_kept(result)


def test_parameters_listed(tmp_path):
    result = crjob.CrEnv(tmp_path).info("--param", "crs", "criu")
    assert result.returncode == 0, result.report()
    for name in ("crs_criu_affinity", "crs_criu_numa", "crs_criu_numa_pages",
                 "crs_criu_numa_policy", "crs_criu_topology"):
        assert name in result.out, result.report()
