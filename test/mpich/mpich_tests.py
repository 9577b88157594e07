#!/usr/bin/env python3
"""Build and run MPICH's test suite (test/mpi) against one MPI implementation.

Run by test/mpich/run.sh, which fetches and configures the suite first; see its help for
the options. This script reads the configured tree's testlists, builds the selected
programs with the tree's own Makefiles (one `make` per program, so that each build log
says why a program did not build), runs each testlist entry with the implementation's
mpirun, judges it as MPICH's runtests does, compares the verdict with the expected
failures, writes a results file and prints a table per directory.

A test's id is its directory and program (`pt2pt/sendrecv2`); the k-th entry (k >= 2) of
the same program in one directory is `pt2pt/sendrecv2#k`. Entries that differ only in
MPICH's own MPIR_CVAR_* settings run once: other implementations ignore those variables.

Verdicts (MPICH's runtests rules, test/mpi/runtests.in):
  pass      exit status 0, a "No Errors" line, and no output besides it and "Test Passed"
            (stdout and stderr together); with resultTest=TestErrFatal, TestStatus or
            TestStatusNoErrors, a non-zero exit status (and "No Errors" for the last)
  fail      anything else; `build` when the program did not build, `timeout` when the
            job was still running after its time limit (a hang, not a slow run: the
            limit is the testlist's timeLimit, MPICH's default 180 s, times --timeout-factor)
  skip      strict=false (MPICH extensions; MPICH's own runtests skips them for any other
            MPI) and mpix=true entries, and mem=GB above this machine's memory

Exit status: 0 when every verdict is the expected one, 1 when a test failed unexpectedly
or passed while expected to fail, 2 for usage errors.
"""

import argparse
import collections
import concurrent.futures
import fnmatch
import os
import re
import signal
import subprocess
import sys
import time

MPICH_DEFAULT_TIME_LIMIT = 180  # runtests.in's $defaultTimeLimit
# Grace after the time limit for mpirun to end the job itself before it is killed.
KILL_GRACE = 20


class Entry:
    """One testlist line."""

    def __init__(self, topdir, reldir, program, np, opts, line):
        self.topdir = topdir  # first path component: the row of the table
        self.reldir = reldir  # directory of the program, relative to the tree
        self.program = program
        self.np = np
        self.args = opts.get("arg", [])
        self.envs = opts.get("env", [])
        self.time_limit = int(opts.get("timeLimit", [MPICH_DEFAULT_TIME_LIMIT])[-1])
        self.result_test = opts.get("resultTest", [""])[-1]
        self.strict = opts.get("strict", [""])[-1].lower()
        self.mpix = opts.get("mpix", [""])[-1].lower()
        self.mem = float(opts.get("mem", ["0"])[-1])
        self.line = line
        self.id = ""

    def variant_key(self):
        """What makes two entries different tests for an implementation other than MPICH."""
        envs = tuple(e for e in self.envs if not e.startswith("MPIR_CVAR_"))
        return (self.np, tuple(self.args), envs, self.result_test)


def parse_testlists(tree, srcdir, reldir, names, out):
    """Every entry of reldir's testlists (recursing into listed directories): configure
    writes those made from a testlist.in into the tree, the others stay in the source."""
    seen = collections.defaultdict(list)  # program -> variant keys already listed
    counts = collections.Counter()
    for name in names:
        path = os.path.join(tree, reldir, name)
        if not os.path.isfile(path):
            path = os.path.join(srcdir, reldir, name)
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if not line or line.startswith("!") or line.startswith("@"):
                    continue
                words = line.split()
                program = words[0]
                if os.path.isdir(os.path.join(tree, reldir, program)):
                    parse_testlists(tree, srcdir, os.path.join(reldir, program), ["testlist"],
                                    out)
                    continue
                np = int(words[1]) if len(words) > 1 else 1
                opts = collections.defaultdict(list)
                for word in words[2:]:
                    key, _, value = word.partition("=")
                    opts[key].append(value)
                entry = Entry(reldir.split("/")[0], reldir, program, np, opts, line)
                if entry.variant_key() in seen[program]:
                    continue
                seen[program].append(entry.variant_key())
                counts[program] += 1
                entry.id = "%s/%s" % (reldir, program)
                if counts[program] > 1:
                    entry.id += "#%d" % counts[program]
                out.append(entry)


class Expectations:
    """The expected-failures file: `ID-PATTERN IMPLS REASON...` per line.

    IMPLS is crmpi, openmpi or crmpi,openmpi; ID-PATTERN is a test id or a shell pattern
    (`rma/*`); a pattern without '#' matches every entry of its program. A REASON that starts
    with "slow:" names a test that may pass or reach its time limit, depending on the
    machine: either is expected, any other failure is not.
    """

    def __init__(self, path, impl):
        self.rules = []
        self.used = set()
        with open(path) as f:
            for number, raw in enumerate(f, 1):
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                parts = line.split(None, 2)
                if len(parts) < 3:
                    sys.exit("%s:%d: expected 'ID IMPLS REASON'" % (path, number))
                pattern, impls, reason = parts
                if impl in impls.split(","):
                    self.rules.append((pattern, reason, number))

    def reason(self, test_id):
        base = test_id.split("#", 1)[0]
        for pattern, reason, number in self.rules:
            if fnmatch.fnmatchcase(test_id, pattern) or (
                    "#" not in pattern and fnmatch.fnmatchcase(base, pattern)):
                self.used.add(number)
                return reason
        return None


def judge(entry, returncode, output):
    """MPICH runtests' verdict on one run: (passed, why-not)."""
    lines = output.splitlines()
    if entry.result_test in ("TestErrFatal", "TestStatus"):
        return (returncode != 0, "exit status 0, expected non-zero")
    no_errors = any(re.match(r"^\s*No [Ee]rrors\s*$", l) for l in lines)
    if entry.result_test == "TestStatusNoErrors":
        if returncode == 0:
            return (False, "exit status 0, expected non-zero")
        return (no_errors, "no 'No Errors' line")
    unexpected = [l for l in lines
                  if not re.match(r"^\s*(No [Ee]rrors|Test Passed)\s*$", l)]
    if returncode != 0:
        return (False, "exit status %d" % returncode)
    if not no_errors:
        return (False, "no 'No Errors' line")
    if unexpected:
        return (False, "unexpected output: %s" % unexpected[0].strip()[:120])
    return (True, "")


class Impl:
    def __init__(self, name, prefix):
        self.name = name
        if name == "crmpi":
            self.mpirun = [os.path.join(prefix, "bin", "mpirun")]
        else:
            # As root Open MPI wants --allow-run-as-root; more ranks than cores need
            # --oversubscribe (crmpi allows both without asking). Its ofi BTL is left out:
            # on one node it is not Open MPI's best path, and its one-sided component
            # aborts on it here (the libfabric providers have no atomics: fi_fetch_atomic
            # returns -FI_ENOSYS), which failed most of rma.
            self.mpirun = ["/usr/bin/mpirun.openmpi", "--allow-run-as-root", "--oversubscribe",
                           "--mca", "btl", "^openib,ofi"]

    def command(self, entry, timeout):
        return self.mpirun + ["--timeout", str(timeout), "-np", str(entry.np),
                              "./" + entry.program] + entry.args


def build(tree, entries, jobs, logdir):
    """Build each entry's program; returns {reldir/program: log path or None when built}."""
    for helper in ("util", "dtpools"):
        log = os.path.join(logdir, "build-%s.log" % helper)
        with open(log, "w") as f:
            rc = subprocess.call(["make", "-C", os.path.join(tree, helper)], stdout=f,
                                 stderr=subprocess.STDOUT)
        if rc != 0:
            sys.exit("mpich: the suite's %s did not build (%s)" % (helper, log))
    targets = sorted({(e.reldir, e.program) for e in entries})

    def make_one(target):
        reldir, program = target
        log = os.path.join(logdir, "build", reldir, program + ".log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as f:
            rc = subprocess.call(["make", "-C", os.path.join(tree, reldir), program],
                                 stdout=f, stderr=subprocess.STDOUT)
        built = rc == 0 and os.access(os.path.join(tree, reldir, program), os.X_OK)
        return target, (None if built else log)

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return {"%s/%s" % t: log for t, log in pool.map(make_one, targets)}


def build_error(log):
    """The first compiler or linker error of a build log, shortened."""
    with open(log, errors="replace") as f:
        text = f.read()
    m = re.search(r"undefined reference to `([^']+)'", text)
    if m:
        return "undefined: %s" % m.group(1)
    m = re.search(r"error: (.*)", text)
    if m:
        return m.group(1).strip()[:120]
    return "make failed"


def run_one(impl, tree, entry, timeout_factor, logdir):
    """Run one entry; returns (verdict, detail, seconds)."""
    timeout = int(entry.time_limit * timeout_factor + 0.5)
    env = dict(os.environ)
    for setting in entry.envs:
        key, _, value = setting.partition("=")
        env[key] = value
    cwd = os.path.join(tree, entry.reldir)
    started = time.monotonic()
    proc = subprocess.Popen(impl.command(entry, timeout), cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout + KILL_GRACE)
    except subprocess.TimeoutExpired:
        # mpirun's own --timeout did not end it: end its process group.
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    except BaseException:
        # Interrupted (SIGINT, SIGTERM): mpirun, in its own session, ends its job.
        proc.terminate()
        proc.wait()
        raise
    seconds = time.monotonic() - started
    output = output.decode(errors="replace")
    # A job mpirun ended at its --timeout hung, except where the test hangs on purpose
    # (init/timeout: the launcher must end it with a non-zero status).
    if seconds >= timeout and entry.result_test not in ("TestErrFatal", "TestStatus"):
        timed_out = True
    log = os.path.join(logdir, "run", entry.id.replace("#", ".") + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        f.write("$ cd %s && %s\n" % (cwd, " ".join(impl.command(entry, timeout))))
        f.write(output)
        f.write("\n[exit status %d after %.1f s]\n" % (proc.returncode, seconds))
    if timed_out:
        return "timeout", "still running after %d s" % timeout, seconds
    passed, why = judge(entry, proc.returncode, output)
    return ("pass" if passed else "fail"), why, seconds


def main():
    # SIGTERM unwinds like SIGINT, so that the running job is ended too.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True, help="the configured test/mpi build tree")
    parser.add_argument("--srcdir", required=True, help="the suite's source (test/mpi)")
    parser.add_argument("--impl", required=True, choices=["crmpi", "openmpi"])
    parser.add_argument("--prefix", help="crmpi's install prefix")
    parser.add_argument("--dirs", required=True, help="comma-separated top directories")
    parser.add_argument("--only", help="a file of test ids (the quick subset)")
    parser.add_argument("--tests", nargs="*", default=[], help="test id patterns")
    parser.add_argument("--expected", required=True, help="the expected-failures file")
    parser.add_argument("--results", required=True, help="the results file to write")
    parser.add_argument("--logs", required=True, help="directory of build and run logs")
    parser.add_argument("--jobs", type=int, default=2, help="parallel builds")
    parser.add_argument("--timeout-factor", type=float, default=1.0)
    args = parser.parse_args()

    entries = []
    for topdir in args.dirs.split(","):
        if os.path.isdir(os.path.join(args.tree, topdir)):
            parse_testlists(args.tree, args.srcdir, topdir, ["testlist", "testlist.dtp"],
                            entries)
    if args.only:
        with open(args.only) as f:
            # A comment starts with '#' after a blank (ids hold '#' too).
            wanted = [re.sub(r"(^|\s)#.*", "", l).split() for l in f]
        wanted = {w[0] for w in wanted if w}
        unknown = wanted - {e.id for e in entries}
        if unknown:
            sys.exit("mpich: %s names tests the suite does not have: %s"
                     % (args.only, " ".join(sorted(unknown))))
        entries = [e for e in entries if e.id in wanted]
    if args.tests:
        entries = [e for e in entries
                   if any(fnmatch.fnmatchcase(e.id, p) for p in args.tests)]
    if not entries:
        sys.exit("mpich: no test selected")

    expect = Expectations(args.expected, args.impl)
    impl = Impl(args.impl, args.prefix)
    os.makedirs(args.logs, exist_ok=True)
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30

    to_build = [e for e in entries if e.strict != "false" and e.mpix != "true"]
    print("mpich: building %d programs (%s)" % (len({(e.reldir, e.program) for e in to_build}),
                                               args.impl), flush=True)
    build_logs = build(args.tree, to_build, args.jobs, args.logs)

    rows = collections.OrderedDict()
    unexpected = []
    results = open(args.results, "w")
    results.write("# MPICH test suite under %s: outcome, verdict, id, time, testlist line\n"
                  % args.impl)
    started = time.monotonic()
    for entry in entries:
        row = rows.setdefault(entry.topdir, collections.Counter())
        row["tests"] += 1
        if entry.strict == "false" or entry.mpix == "true":
            verdict, detail, seconds = "skip", "MPICH extension (%s)" % (
                "strict=false" if entry.strict == "false" else "mpix"), 0.0
        elif entry.mem > mem_gb:
            verdict, detail, seconds = "skip", "needs %.1f GB" % entry.mem, 0.0
        elif build_logs.get("%s/%s" % (entry.reldir, entry.program)):
            log = build_logs["%s/%s" % (entry.reldir, entry.program)]
            verdict, detail, seconds = "build", build_error(log), 0.0
        else:
            verdict, detail, seconds = run_one(impl, args.tree, entry, args.timeout_factor,
                                               args.logs)
        reason = expect.reason(entry.id)
        # "slow:" entries depend on the machine's speed and load: passing is no surprise,
        # and their time limit is the only failure expected of them.
        slow = reason is not None and reason.startswith("slow:")
        if verdict == "skip":
            row["skipped"] += 1
            outcome = "skip"
        elif verdict == "pass":
            row["passed"] += 1
            outcome = "XPASS" if reason and not slow else "ok"
        else:
            row["failed"] += 1
            expected = reason is not None and (not slow or verdict == "timeout")
            if expected:
                row["xfail"] += 1
            outcome = "xfail" if expected else "FAIL"
        if outcome in ("XPASS", "FAIL"):
            row["unexpected"] += 1
            unexpected.append((entry, outcome, verdict, detail))
            print("mpich: %s %s: %s%s" % (outcome, entry.id, verdict,
                                          (" (" + detail + ")") if detail else ""), flush=True)
        results.write("%-6s %-8s %-40s %6.1fs  np=%-3d %s%s\n" % (
            outcome, verdict, entry.id, seconds, entry.np, entry.line,
            ("  -- " + detail) if detail else ""))
        results.flush()
    elapsed = time.monotonic() - started
    results.close()

    total = collections.Counter()
    print("\n%s: MPICH test suite, %d tests in %.0f s (builds excluded)" % (
        args.impl, len(entries), elapsed))
    header = ("directory", "tests", "passed", "failed", "xfail", "skipped", "unexpected")
    print("%-10s %6s %7s %7s %6s %8s %11s" % header)
    for topdir, row in rows.items():
        total.update(row)
        print("%-10s %6d %7d %7d %6d %8d %11d" % (topdir, row["tests"], row["passed"],
              row["failed"], row["xfail"], row["skipped"], row["unexpected"]))
    print("%-10s %6d %7d %7d %6d %8d %11d" % ("total", total["tests"], total["passed"],
          total["failed"], total["xfail"], total["skipped"], total["unexpected"]))
    for entry, outcome, verdict, detail in unexpected:
        print("  %s %s: %s %s" % (outcome, entry.id, verdict, detail))
    print("results: %s" % args.results)
    # The line test/run-all.sh counts: expected failures and skips count as skipped.
    print("mpich: %d passed, %d failed, %d skipped" % (
        total["passed"] - sum(1 for _, o, _, _ in unexpected if o == "XPASS"),
        len(unexpected), total["skipped"] + total["xfail"]))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
