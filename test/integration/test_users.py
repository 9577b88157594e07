"""Ordinary users: a user who is not root runs a job, checkpoints it, lists it and restarts
it (the ranks live in the node's pid namespace and CRIU runs with CAP_CHECKPOINT_RESTORE
from its installed copy, docs/design.md "Ordinary users"); another ordinary user can neither
list, checkpoint nor restart it. The users are made by the test, which needs root for that.
"""

import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time

import pytest

import crjob

OWNER, OTHER = "crmpi-user1", "crmpi-user2"


def user_cmd(user, home, args, extra_env=None):
    """`args` run as `user` with a plain environment (runuser: no password, no pam
    session); HOME is the test's directory of that user."""
    env = ["HOME=" + home, "PATH=%s:/usr/bin:/bin" % crjob.BIN, "LANG=C.UTF-8"]
    env += ["%s=%s" % item for item in (extra_env or {}).items()]
    return ["runuser", "-u", user, "--", "env", "-i", *env, *args]


def run_as(user, home, args, extra_env=None, timeout=120):
    result = subprocess.run(user_cmd(user, home, args, extra_env), capture_output=True,
                            text=True, timeout=timeout, cwd=home)
    return crjob.Finished(result.returncode, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def users():
    """The two users and a private directory of each: {name: directory}."""
    if os.geteuid() != 0:
        pytest.skip("the test makes ordinary users, which needs root")
    homes = {}
    for name in (OWNER, OTHER):
        try:
            pwd.getpwnam(name)
        except KeyError:
            made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name],
                                  capture_output=True, text=True)
            assert made.returncode == 0, "useradd %s: %s" % (name, made.stderr)
        entry = pwd.getpwnam(name)
        home = tempfile.mkdtemp(prefix="crmpi-%s-" % name)
        os.chown(home, entry.pw_uid, entry.pw_gid)
        os.chmod(home, 0o700)
        homes[name] = home
    reach = run_as(OWNER, homes[OWNER], ["test", "-x", crjob.tool("mpirun")])
    if reach.returncode != 0:
        for home in homes.values():
            shutil.rmtree(home, ignore_errors=True)
        pytest.skip("the installed crmpi (%s) is not reachable by other users" % crjob.BIN)
    yield homes
    for name, home in homes.items():
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def user_processes(user):
    found = subprocess.run(["pgrep", "-u", user, "-l"], capture_output=True, text=True)
    return found.stdout.strip()


def start_job(home, program, extra_args=()):
    """mpirun --with-ft cr of `program` as OWNER, with the scenario's ready and go files."""
    env = {"CR_READY_DIR": os.path.join(home, "ready"), "CR_GO": os.path.join(home, "go"),
           "CRMPI_MCA_snapc_base_global_snapshot_dir": os.path.join(home, "snapshots")}
    shutil.rmtree(env["CR_READY_DIR"], ignore_errors=True)
    if os.path.exists(env["CR_GO"]):
        os.unlink(env["CR_GO"])
    os.makedirs(env["CR_READY_DIR"])
    shutil.chown(env["CR_READY_DIR"], OWNER)
    proc = subprocess.Popen(user_cmd(OWNER, home, [crjob.tool("mpirun"), "--with-ft", "cr",
                                                   "--timeout", "300", "-np", "2", "--mca",
                                                   "btl", "self,sm", *extra_args, program], env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=home)
    return proc, env


def wait_ready(proc, env, np=2):
    want = {"ready.%d" % r for r in range(np)}
    while not want <= set(os.listdir(env["CR_READY_DIR"])):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail("the job ended before its ranks were ready:\n" +
                        crjob.Finished(proc.returncode, out, err).report())
        time.sleep(0.05)


def finish(proc):
    out, err = proc.communicate(timeout=300)
    return crjob.Finished(proc.returncode, out, err)


def jobid_of(home):
    """The job OWNER's ompi-ps lists (one running)."""
    listed = run_as(OWNER, home, [crjob.tool("ompi-ps")])
    assert listed.returncode == 0, listed.report("ompi-ps")
    ids = re.findall(r"^(\d+)\s+2\s", listed.out, re.M)
    assert len(ids) == 1, listed.report("ompi-ps: one job of 2 ranks expected")
    return int(ids[0])


@pytest.fixture(scope="module")
def program(users):
    """The unmatched scenario (rendezvous sends in flight), built by OWNER's mpicc."""
    home = users[OWNER]
    out = os.path.join(home, "unmatched")
    built = run_as(OWNER, home, [crjob.tool("mpicc"), "-O2",
                                 os.path.join(crjob.CR_DIR, "unmatched.c"), "-o", out])
    assert built.returncode == 0, built.report("mpicc as an ordinary user")
    return out


def test_ordinary_user_checkpoints_and_restarts(users, program):
    """OWNER runs a job under --with-ft cr, sees it in ompi-ps, checkpoints it with --term and
    restarts it; the ranks ran as OWNER; OTHER cannot list, checkpoint or restart it, and
    nothing of the job is left running."""
    home, other_home = users[OWNER], users[OTHER]
    proc, env = start_job(home, program)
    wait_ready(proc, env)
    jobid = jobid_of(home)
    ranks = subprocess.run(["pgrep", "-u", OWNER, "-x", "unmatched"], capture_output=True,
                           text=True).stdout.split()
    assert len(ranks) == 2, "the ranks do not run as %s: %s" % (OWNER, user_processes(OWNER))

    seen = run_as(OTHER, other_home, [crjob.tool("ompi-ps")])
    assert seen.returncode == 0 and str(jobid) not in seen.out, seen.report("ompi-ps as another")
    refused = run_as(OTHER, other_home, [crjob.tool("ompi-checkpoint"), str(jobid)])
    assert refused.returncode != 0 and len(refused.err.strip().splitlines()) == 1, \
        refused.report("ompi-checkpoint of another user's job")

    ckpt = run_as(OWNER, home, [crjob.tool("ompi-checkpoint"), "--term", str(jobid)], env)
    assert ckpt.returncode == 0, ckpt.report("ompi-checkpoint as an ordinary user") + \
        finish(proc).report()
    ended = finish(proc)
    assert ended.returncode == 0, ended.report()
    handle = ckpt.out.strip().splitlines()[-1]
    assert os.path.isdir(handle), ckpt.report()

    stolen = run_as(OTHER, other_home, [crjob.tool("ompi-restart"), handle])
    assert stolen.returncode != 0 and len(stolen.err.strip().splitlines()) == 1, \
        stolen.report("ompi-restart of another user's snapshot")

    with open(env["CR_GO"], "w"):
        pass
    restarted = run_as(OWNER, home, [crjob.tool("ompi-restart"), handle], env, timeout=300)
    assert restarted.returncode == 0 and crjob.ok_line(restarted.out), \
        restarted.report("ompi-restart as an ordinary user")
    assert not user_processes(OWNER), "left running: " + user_processes(OWNER)


def criu_found_by_configure():
    info = subprocess.run([crjob.tool("crmpi_info")], capture_output=True, text=True)
    found = re.search(r"^\s*CRIU binary: (\S+)$", info.stdout, re.M)
    if not found or not os.path.isabs(found.group(1)):
        pytest.skip("crmpi was configured without CRIU")
    return found.group(1)


def test_criu_without_the_capability(users, program):
    """A criu program without CAP_CHECKPOINT_RESTORE (configure's, which make install copies
    and gives the capability to): an ordinary user's checkpoint is refused saying what an
    administrator must do, and the job goes on to its end."""
    home = users[OWNER]
    criu = criu_found_by_configure()
    proc, env = start_job(home, program, ["--mca", "crs_criu_binary", criu])
    wait_ready(proc, env)
    ckpt = run_as(OWNER, home, [crjob.tool("ompi-checkpoint"), str(jobid_of(home))], env)
    assert ckpt.returncode != 0 and "lacks CAP_CHECKPOINT_RESTORE" in ckpt.err and \
        "setcap cap_checkpoint_restore+ep" in ckpt.err, ckpt.report()
    with open(env["CR_GO"], "w"):
        pass
    ended = finish(proc)
    assert ended.returncode == 0 and crjob.ok_line(ended.out), ended.report()


@pytest.mark.parametrize("planted", ["other_user", "open_mode"])
def test_session_directory_planted(users, program, planted):
    """The directory that holds OWNER's session directories made beforehand by another user,
    or left open to every user: mpirun, ompi-ps and ompi-checkpoint refuse it in one line
    (another user could otherwise put their own control socket where the tools look)."""
    home = users[OWNER]
    tmpdir = os.path.join(home, "tmp")
    parent = os.path.join(tmpdir, "crmpi-%d" % pwd.getpwnam(OWNER).pw_uid)
    shutil.rmtree(tmpdir, ignore_errors=True)
    os.makedirs(parent)
    shutil.chown(tmpdir, OWNER)
    shutil.chown(parent, OTHER if planted == "other_user" else OWNER)
    os.chmod(parent, 0o777)
    env = {"TMPDIR": tmpdir}
    words = "another user's" if planted == "other_user" else "open to other users"
    try:
        for args in ([crjob.tool("mpirun"), "-np", "2", program], [crjob.tool("ompi-ps")],
                     [crjob.tool("ompi-checkpoint"), "1"]):
            result = run_as(OWNER, home, args, env)
            assert result.returncode != 0 and words in result.err and \
                len(result.err.strip().splitlines()) == 1, result.report(args[0])
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    assert not user_processes(OWNER), "left running: " + user_processes(OWNER)
