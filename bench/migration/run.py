#!/usr/bin/env python3
"""A job migrated from layout to layout with checkpoint/restart (bench/migration).

ring.c (8 ranks, an 8 KiB message passed round the ring once per step, rank 0 timing each
step and keeping a running checksum of the message) runs under `mpirun --with-ft cr` on
simulated nodes (test/nodes/nodes.sh, prefix "bm", made and removed by the script). Every
STEPS steps the job is checkpointed with `ompi-checkpoint --term` and restarted with
`ompi-restart` on the next layout, with the transports given for it:

  1x8:sm       8 ranks on one node (btl self,sm)
  8x1:tcp      one rank on each of 8 nodes (self,tcp)
  4x2:sm+tcp   2 per node on 4 nodes (self,sm,tcp)
  2x4:sm+tcp   4 per node on 2 nodes
  8x1:ofi      one per node over libfabric's tcp;ofi_rxm (self,ofi)
  4x2:sm+ofi   2 per node, sm and ofi
  1x8:sm       back to one node (another one)
  2x4:sm+ucx   4 per node, sm and UCX over tcp (self,sm,ucx)
  8x1:ucx      one per node over UCX (self,ucx)

Before the migration each transport is tried in a short job without checkpoints; a leg whose
transport does not run here is left out, saying why in one line, and a restart that fails
is said in one line and the next leg restarts the same snapshot. Rank 0 appends each
step's latency to a data file that the restarts keep (crmpi cuts a file a rank writes back
to its size at the checkpoint); the script checks that the file holds every step once and
that every step's checksum, and the final one, equal those of an uninterrupted run of the
same job (any difference: exit status 1).

Writes migration.dat (step, configuration, latency in us), summary.txt (mean and median
latency per configuration, checkpoint and restart times) and, with python3-matplotlib,
migration.png (latency per step, the configuration changes marked).

Usage: bench/migration/run.py [--prefix DIR] [--out DIR] [--steps N] [--bytes N]
                              [--pause-us N] [--legs LIST]

--legs: comma-separated NODESxPERNODE:TRANSPORT, TRANSPORT one of sm, tcp, sm+tcp, ofi,
sm+ofi, ucx, sm+ucx (default: the nine above). crmpi comes from --prefix (default
<repo>/install). Results go to --out (default bench/migration/results-<date>-<time>/,
git-ignored). Needs root and Open MPI's mpirun (the ompi launcher); about two minutes.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
NODES_SH = os.path.join(TOP, "test", "nodes", "nodes.sh")
NODE_PREFIX = "bm"
NUM_NODES = 8
NP = 8
DEFAULT_LEGS = ("1x8:sm,8x1:tcp,4x2:sm+tcp,2x4:sm+tcp,8x1:ofi,4x2:sm+ofi,1x8:sm,2x4:sm+ucx,"
                "8x1:ucx")
# The MCA parameters of each transport; ofi and ucx are told to use the nodes' network.
TRANSPORTS = {
    "sm": ["--mca", "btl", "self,sm"],
    "tcp": ["--mca", "btl", "self,tcp"],
    "sm+tcp": ["--mca", "btl", "self,sm,tcp"],
    "ofi": ["--mca", "btl", "self,ofi", "--mca", "btl_ofi_provider", "tcp;ofi_rxm",
            "--mca", "btl_ofi_domain", "eth0"],
    "sm+ofi": ["--mca", "btl", "self,sm,ofi", "--mca", "btl_ofi_provider", "tcp;ofi_rxm",
               "--mca", "btl_ofi_domain", "eth0"],
    "ucx": ["--mca", "btl", "self,ucx", "--mca", "btl_ucx_tls", "tcp",
            "--mca", "btl_ucx_net_devices", "eth0"],
    "sm+ucx": ["--mca", "btl", "self,sm,ucx", "--mca", "btl_ucx_tls", "tcp",
               "--mca", "btl_ucx_net_devices", "eth0"],
}
HANG = 300  # seconds after which a job or command counts as hung


class Leg:
    """One layout: NODES nodes with PER_NODE ranks each, and its transports."""

    def __init__(self, spec, first_node):
        m = re.fullmatch(r"(\d+)x(\d+):([a-z+]+)", spec)
        if not m or m.group(3) not in TRANSPORTS:
            sys.exit("migration: bad leg %r (NODESxPERNODE:TRANSPORT, TRANSPORT one of %s)"
                     % (spec, ", ".join(TRANSPORTS)))
        self.spec = spec
        self.nodes, self.per_node = int(m.group(1)), int(m.group(2))
        self.transport = m.group(3)
        if self.nodes * self.per_node != NP or self.nodes > NUM_NODES:
            sys.exit("migration: leg %s does not place %d ranks on at most %d nodes"
                     % (spec, NP, NUM_NODES))
        # Each leg starts on the node after the previous leg's last: a move, not a reuse.
        self.hosts = ["%s%d" % (NODE_PREFIX, (first_node + i) % NUM_NODES + 1)
                      for i in range(self.nodes)]
        self.next_node = (first_node + self.nodes) % NUM_NODES

    def args(self):
        return ["-H", ",".join("%s:%d" % (h, self.per_node) for h in self.hosts)]


def run(cmd, env, timeout=HANG):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


def first_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0].strip() if lines else "(no output)"


def read_steps(path):
    """The data file's lines: [(step, latency_us, checksum)]."""
    rows = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    rows.append((int(parts[0]), float(parts[1]), parts[2]))
    except FileNotFoundError:
        pass
    return rows


def count_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def final_checksum(out):
    m = re.search(r"ring: (\d+) steps, \d+ ranks, \d+ bytes, checksum (\w+)", out)
    return m.group(2) if m else None


class Migration:
    def __init__(self, args):
        self.args = args
        bindir = os.path.join(args.prefix, "bin")
        self.tool = lambda name: os.path.join(bindir, name)
        self.env = dict(os.environ)
        self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(args.out,
                                                                              "snapshots"),
                        CRMPI_MCA_mpi_yield_when_idle="1")
        mca = run([NODES_SH, "ompi-mca", "--prefix", NODE_PREFIX], self.env).stdout.strip()
        self.launch = ["--allow-run-as-root", "--mca", "plm_ompi_args", mca]
        self.ring = os.path.join(args.out, "ring")
        self.log = open(os.path.join(args.out, "commands.log"), "w")

    def logged(self, what, result):
        self.log.write("== %s: exit %s\n%s%s\n" % (what, result.returncode, result.stdout,
                                                   result.stderr))
        self.log.flush()

    def job(self, leg, datafile, steps, pause_us, cr=True):
        """Start the ring on `leg`'s layout: a Popen whose pid is the jobid."""
        cmd = [self.tool("mpirun"), *self.launch, "-np", str(NP), *leg.args(),
               *TRANSPORTS[leg.transport]]
        cmd += ["--with-ft", "cr"] if cr else []
        cmd += [self.ring, str(steps), str(self.args.bytes), datafile, str(pause_us)]
        return subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def finish(self, what, proc):
        try:
            out, err = proc.communicate(timeout=HANG)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        self.logged(what, result)
        return result

    def probe(self, transport):
        """Whether a short ring over `transport` runs on two nodes: None, or why not."""
        per_node = NP if transport == "sm" else 4 if transport.startswith("sm+") else 1
        leg = Leg("%dx%d:%s" % (NP // per_node, per_node, transport), 0)
        datafile = os.path.join(self.args.out, "probe-%s.dat" % transport)
        result = self.finish("probe " + transport, self.job(leg, datafile, 4, 0, cr=False))
        if os.path.exists(datafile):
            os.unlink(datafile)
        if result.returncode == 0 and final_checksum(result.stdout):
            return None
        return first_line(result.stderr)

    def checkpoint(self, jobid):
        """ompi-checkpoint --term, retried while a restarted job is still starting: the
        handle and the seconds the successful call took, or (None, why)."""
        deadline = time.monotonic() + 120
        while True:
            start = time.monotonic()
            result = run([self.tool("ompi-checkpoint"), "--term", str(jobid)], self.env)
            took = time.monotonic() - start
            self.logged("ompi-checkpoint --term %d" % jobid, result)
            if result.returncode == 0:
                return result.stdout.strip().splitlines()[-1], took
            if not re.search(r"still (finishing|starting)|not finished MPI_Init|not a crmpi "
                             r"mpirun", result.stderr) or time.monotonic() > deadline:
                return None, first_line(result.stderr)
            time.sleep(0.2)

    def wait_for_step(self, proc, datafile, target):
        """Wait until the data file holds `target` steps; False when the job ended first."""
        while count_lines(datafile) < target:
            if proc.poll() is not None:
                return False
            time.sleep(0.02)
        return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="See the top of this file for what it does.")
    ap.add_argument("--prefix", default=os.path.join(TOP, "install"))
    ap.add_argument("--out", default=os.path.join(HERE, time.strftime("results-%Y%m%d-%H%M%S")))
    ap.add_argument("--steps", type=int, default=400, help="steps per leg (default 400)")
    ap.add_argument("--bytes", type=int, default=8192, help="message size (default 8192)")
    ap.add_argument("--pause-us", type=int, default=2000,
                    help="rank 0's pause between steps, microseconds (default 2000)")
    ap.add_argument("--legs", default=DEFAULT_LEGS,
                    help="comma-separated NODESxPERNODE:TRANSPORT (default %s)" % DEFAULT_LEGS)
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    if args.out == "/tmp" or args.out.startswith("/tmp/"):
        sys.exit("migration: --out must be on storage every node shares (each node has its own "
                 "/tmp)")
    if os.geteuid() != 0:
        sys.exit("migration: the simulated nodes and CRIU need root")
    if not os.access(os.path.join(args.prefix, "bin", "mpirun"), os.X_OK):
        sys.exit("migration: no crmpi in %s (./bootstrap.sh build)" % args.prefix)
    legs, first = [], 0
    for spec in args.legs.split(","):
        legs.append(Leg(spec, first))
        first = legs[-1].next_node
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([os.path.join(args.prefix, "bin", "mpicc"), "-O2",
                    os.path.join(HERE, "ring.c"), "-o", os.path.join(args.out, "ring")],
                   check=True)
    subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)
    up = subprocess.run([NODES_SH, "up", str(NUM_NODES), "--prefix", NODE_PREFIX],
                        capture_output=True, text=True)
    if up.returncode != 0:
        sys.exit("migration: cannot make the nodes: " + first_line(up.stderr + up.stdout))
    try:
        status = migrate(Migration(args), legs)
    finally:
        subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)
    sys.exit(status)


def migrate(mig, legs):
    args = mig.args
    # Which transports run here at all.
    broken = {}
    for transport in sorted({leg.transport for leg in legs}):
        why = mig.probe(transport)
        if why:
            broken[transport] = why
    runnable = []
    for i, leg in enumerate(legs, 1):
        if leg.transport in broken:
            print("migration: leg %d (%s) cannot run here, left out: %s"
                  % (i, leg.spec, broken[leg.transport]))
        else:
            runnable.append(leg)
    if not runnable:
        print("migration: no leg can run here")
        return 1
    total = args.steps * len(runnable)

    # The uninterrupted run: every step's checksum, and the final one.
    reference = os.path.join(args.out, "uninterrupted.dat")
    if os.path.exists(reference):
        os.unlink(reference)
    done = mig.finish("uninterrupted run", mig.job(runnable[0], reference, total, 0))
    expected = final_checksum(done.stdout)
    if done.returncode != 0 or not expected:
        print("migration: the uninterrupted run failed: " + first_line(done.stderr))
        return 1
    reference_rows = read_steps(reference)

    datafile = os.path.join(args.out, "ring.dat")
    if os.path.exists(datafile):
        os.unlink(datafile)
    shutil.rmtree(os.path.join(args.out, "snapshots"), ignore_errors=True)
    print("migration: %d ranks, %d bytes round a ring, %d steps per leg, %d legs"
          % (NP, args.bytes, args.steps, len(runnable)))
    proc = mig.job(runnable[0], datafile, total, args.pause_us)
    boundaries = [0]  # the first step of each leg that ran
    ran = [runnable[0]]
    times = [(None, None, None)]  # (restart s, checkpoint s, image bytes) of each leg that ran
    handle = None
    pending = runnable[1:]
    while True:
        leg = ran[-1]
        if not pending:
            result = mig.finish("last leg " + leg.spec, proc)
            got = final_checksum(result.stdout)
            break
        target = min(total, boundaries[-1] + args.steps)
        if not mig.wait_for_step(proc, datafile, target):
            result = mig.finish("leg " + leg.spec, proc)
            print("migration: the job on %s ended before step %d: %s"
                  % (leg.spec, target, first_line(result.stderr)))
            return 1
        new_handle, took = mig.checkpoint(proc.pid)
        result = mig.finish("leg " + leg.spec, proc)
        if new_handle is None:
            print("migration: the checkpoint of the job on %s failed: %s" % (leg.spec, took))
            return 1
        if handle and handle != new_handle:
            shutil.rmtree(handle, ignore_errors=True)  # the previous leg's snapshot
        handle = new_handle
        # mpirun: checkpoint 1 of job J committed in T s: ..., B bytes
        m = re.search(r"committed in [0-9.]+ s: .* (\d+) bytes", result.stderr)
        times[-1] = (times[-1][0], took, int(m.group(1)) if m else None)
        cut = count_lines(datafile)
        # Restart on the next leg whose restart works; a failed one is said and skipped.
        while pending:
            nxt = pending.pop(0)
            start = time.monotonic()
            proc = subprocess.Popen([mig.tool("ompi-restart"), *mig.launch, *nxt.args(),
                                     *TRANSPORTS[nxt.transport], handle],
                                    env=mig.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            if mig.wait_for_step(proc, datafile, cut + 1) or count_lines(datafile) > cut:
                ran.append(nxt)
                boundaries.append(cut)
                times.append((time.monotonic() - start, None, None))
                break
            result = mig.finish("restart on " + nxt.spec, proc)
            print("migration: the restart on %s failed, leg left out: %s"
                  % (nxt.spec, first_line(result.stderr)))
        else:
            print("migration: no restart worked after step %d" % cut)
            return 1

    rows = read_steps(datafile)
    status = check(rows, reference_rows, total, boundaries, ran, got, expected, result)
    report(args, rows, boundaries, ran, times, reference_rows)
    if status == 0:
        print("migration: ring state continuous across %d restarts: every step's checksum and "
              "the final one (%s) equal the uninterrupted run's" % (len(ran) - 1, expected))
    if handle:
        shutil.rmtree(handle, ignore_errors=True)
    return status


def check(rows, reference_rows, total, boundaries, ran, got, expected, result):
    """0 when the migrated run went through every step once with the uninterrupted run's
    checksums; else 1, saying where it first differs."""
    if result.returncode != 0 or got is None:
        print("migration: the last leg (%s) failed: %s" % (ran[-1].spec, first_line(result.stderr)))
        return 1
    steps = [r[0] for r in rows]
    if steps != list(range(total)):
        print("migration: the data file does not hold steps 0..%d once each (%d lines)"
              % (total - 1, len(rows)))
        return 1
    for (step, _, sums), (_, _, want) in zip(rows, reference_rows):
        if sums != want:
            leg = sum(1 for b in boundaries if b <= step) - 1
            print("migration: FAIL: step %d (leg %d, %s) has checksum %s, the uninterrupted run "
                  "%s" % (step, leg + 1, ran[leg].spec, sums, want))
            return 1
    if got != expected:
        print("migration: FAIL: final checksum %s, the uninterrupted run's %s" % (got, expected))
        return 1
    return 0


def report(args, rows, boundaries, ran, times, reference_rows):
    ends = boundaries[1:] + [len(rows)]
    with open(os.path.join(args.out, "migration.dat"), "w") as f:
        f.write("# step config latency_us\n")
        for k, leg in enumerate(ran):
            for step, lat, _ in rows[boundaries[k]:ends[k]]:
                f.write("%d %s %.1f\n" % (step, leg.spec, lat))
    lines = ["%d ranks, %d-byte message round the ring, rank 0's latency per step (us); "
             "uninterrupted on 1x8:sm: mean %.1f, median %.1f (no pause between steps)"
             % (NP, args.bytes, statistics.mean(r[1] for r in reference_rows),
                statistics.median(r[1] for r in reference_rows)), "",
             "%-3s %-11s %-14s %6s %9s %9s %7s %10s %7s %9s" % (
                 "leg", "config", "nodes", "steps", "mean-us", "median-us", "span-s",
                 "restart-s", "ckpt-s", "image-MB")]
    for k, leg in enumerate(ran):
        # A restarted leg's first step waits for the restart of every rank (the checkpoint
        # takes rank 0 between steps, when it leaves the library lock to the C/R thread).
        first = boundaries[k] + (1 if k else 0)
        lats = [r[1] for r in rows[first:ends[k]]] or [0.0]
        restart_s, ckpt_s, image = times[k]
        nodes = "%s..%s" % (leg.hosts[0], leg.hosts[-1]) if leg.nodes > 1 else leg.hosts[0]
        lines.append("%-3d %-11s %-14s %6d %9.1f %9.1f %7s %10s %7s %9s" % (
            k + 1, leg.spec, nodes, ends[k] - boundaries[k], statistics.mean(lats),
            statistics.median(lats), "%.2f" % (rows[boundaries[k]][1] / 1e6) if k else "-",
            "%.2f" % restart_s if restart_s else "-", "%.2f" % ckpt_s if ckpt_s else "-",
            "%.1f" % (image / 1e6) if image else "-"))
    lines += ["", "mean-us, median-us: the leg's steps but its first; span-s: the first step "
              "after the restore (it waits until every rank has rebuilt its transports); "
              "restart-s: ompi-restart until the job wrote a step; ckpt-s: ompi-checkpoint "
              "--term of the leg; image-MB: that checkpoint's images (mpirun's line)"]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("migration: no plot (python3-matplotlib is not installed: apt-get install "
              "python3-matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], ".", markersize=2)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("ring latency (us)")
    for k, leg in enumerate(ran):
        if k:
            ax.axvline(boundaries[k], color="red", linewidth=0.8)
        ax.text(boundaries[k] + 5, 0.97, leg.spec, transform=ax.get_xaxis_transform(),
                fontsize=7, va="top", rotation=90)
    ax.set_title("%d ranks, %d-byte ring, checkpoint/restart to a new layout at each red line"
                 % (NP, args.bytes), fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "migration.png"), dpi=120)
    print("migration: plot in %s" % os.path.join(args.out, "migration.png"))


if __name__ == "__main__":
    main()
