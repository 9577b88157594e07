#!/usr/bin/env python3
"""Multi-level, semi-blocking checkpoints against blocking ones (bench/multilevel).

A job of ml_app.c (MIB mebibytes per rank, a fixed number of steps that rewrite all of it)
runs to its end once without checkpoints, then once in each mode below with periodic
checkpoints at Daly's interval for an assumed MTBF (mpirun --ckpt-interval auto --mtbf):

  blocking       the ranks stay suspended until each checkpoint is committed in the
                 snapshot directory (snapc_base_blocking), as a blocking scheme does
  semi-blocking  the ranks go on once dumped; the copy to the snapshot directory runs
                 meanwhile (crmpi's default)
  multilevel     semi-blocking, the images kept on the node (filem_levels local) and
                 copied to the snapshot directory every 4th checkpoint (global:4)
  partner        with --nodes: multilevel, and each checkpoint also sent to the next node
                 (filem_levels local,partner,global:4)

Per mode: checkpoints taken, the mean time the application was blocked per checkpoint,
the mean background copy per level, and the run's overhead against the run without
checkpoints run just before it (base-s: a busy machine drifts; each run's checksum must
equal the uninterrupted one). Then the time to
restart a job of cr_mem.c (bench/cr-breakdown) from the local level and from the global
one (and, with --nodes, from the partner level: the second node lost). Prints the tables
and writes summary.txt (and multilevel.png with python3-matplotlib).

With --nodes N (2 or more) the job runs on N simulated nodes (test/nodes/nodes.sh, prefix
"ml", made and removed by the script; root and Open MPI's mpirun needed), NP/N ranks each,
every node with its own /tmp where the local and partner levels are.

Usage: bench/multilevel/run.py [--prefix DIR] [--out DIR] [--np N] [--mib MIB]
                               [--seconds S] [--mtbf S] [--nodes N] [--global-rate R]
                               [--repeat N] [--bind-to WHAT]

crmpi comes from --prefix (default <repo>/install). Results go to --out (default
bench/multilevel/results-<date>-<time>/, git-ignored). Run as root on a quiet machine; with
the defaults it takes about five minutes.
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

MODES = [
    ("blocking", {"filem_levels": "global", "snapc_base_blocking": "1"}),
    ("semi-blocking", {"filem_levels": "global"}),
    ("multilevel", {"filem_levels": "local,global:4"}),
]
PARTNER_MODE = ("partner", {"filem_levels": "local,partner,global:4"})
NODES_SH = os.path.join(TOP, "test", "nodes", "nodes.sh")
NODE_PREFIX = "ml"


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, **kw)


def app_result(out):
    m = re.search(r"ml_app: (\d+) steps in ([0-9.]+) s, checksum (\w+)", out)
    if not m:
        raise SystemExit("multilevel: ml_app printed no result:\n" + out)
    return float(m.group(2)), m.group(3)


def manifests(snapdir):
    found = []
    for path in glob.glob(os.path.join(snapdir, "*.ckpt", "*", "manifest.json")):
        with open(path) as f:
            found.append(json.load(f))
    return sorted(found, key=lambda m: m["seq"])


def mean(values):
    return statistics.mean(values) if values else 0.0


class Nodes:
    """This node alone, or simulated nodes: the hosts of the job, and their own storage."""

    def __init__(self, count, np):
        self.count = count
        self.hosts = ["%s%d" % (NODE_PREFIX, i) for i in range(1, count + 1)]
        self.args = []
        if count < 2:
            return
        if np % count:
            sys.exit("multilevel: --np %d is not a multiple of --nodes %d" % (np, count))
        subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)
        up = run([NODES_SH, "up", str(count), "--prefix", NODE_PREFIX])
        if up.returncode != 0:
            sys.exit("multilevel: cannot make the nodes:\n" + up.stderr)
        mca = run([NODES_SH, "ompi-mca", "--prefix", NODE_PREFIX]).stdout.strip()
        self.args = ["--mca", "plm_ompi_args", mca,
                     "-H", ",".join("%s:%d" % (h, np // count) for h in self.hosts)]

    def wipe(self, host=None):
        """Remove what the local and partner levels keep on one node, or on every node."""
        for h in [host] if host else self.hosts if self.count > 1 else []:
            subprocess.run([NODES_SH, "exec", h, "rm", "-rf", "/tmp/crmpi-%d" % os.getuid()],
                           capture_output=True)

    def down(self):
        if self.count > 1:
            subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)


def measure_mode(args, nodes, mpirun, app, steps, checksum, name, params):
    """One round of a mode: an uninterrupted run just before it (a busy machine drifts),
    then the run with periodic checkpoints; its figures."""
    pair_s, _ = app_result(run(mpirun + ["--with-ft", "cr", app, str(args.mib),
                                         str(steps)]).stdout)
    work = os.path.join(args.out, name)
    shutil.rmtree(work, ignore_errors=True)
    env = dict(os.environ)
    env.update({"CRMPI_MCA_" + k: v for k, v in params.items()})
    env.update(CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(work, "global"),
               CRMPI_MCA_snapc_base_keep="0",
               CRMPI_MCA_filem_global_max_rate=args.global_rate)
    if nodes.count < 2:  # on simulated nodes, each node's own /tmp
        env["CRMPI_MCA_filem_local_dir"] = os.path.join(work, "local")
    done = run(mpirun + ["--with-ft", "cr", "--ckpt-interval", "auto", "--mtbf",
                         "%ds" % args.mtbf, app, str(args.mib), str(steps)], env=env)
    run_s, sums = app_result(done.stdout)
    if sums != checksum:
        sys.exit("multilevel: %s gave checksum %s, the uninterrupted run %s"
                 % (name, sums, checksum))
    ms = manifests(os.path.join(work, "global"))
    timings = [m["timings"] for m in ms]
    row = {"mode": name, "ckpts": len(ms), "run": run_s, "base": pair_s,
           "overhead": (run_s - pair_s) / pair_s}
    for key, phase in (("blocked", "blocked"), ("dump", "dump"), ("local", "copy_local"),
                       ("partner", "copy_partner"), ("global", "copy_global")):
        row[key] = mean([t[phase] for t in timings if phase in t])
    shutil.rmtree(work, ignore_errors=True)
    nodes.wipe()
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", default=os.path.join(TOP, "install"))
    ap.add_argument("--out", default=os.path.join(HERE, time.strftime("results-%Y%m%d-%H%M%S")))
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--mib", type=int, default=128)
    ap.add_argument("--seconds", type=float, default=40.0, help="the uninterrupted run's length")
    ap.add_argument("--mtbf", type=float, default=120.0, help="assumed MTBF for Daly's interval")
    ap.add_argument("--nodes", type=int, default=0, help="simulated nodes to run on (0: this one)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of every mode, each against its own base run; the tables give "
                         "each figure's median over the rounds")
    ap.add_argument("--bind-to", default=None,
                    help="mpirun --bind-to for the ranks (core: each rank on a core of its own, "
                         "the agents' background copies on the node's other cores, as on a "
                         "node with spare cores)")
    ap.add_argument("--global-rate", default="0",
                    help="filem_global_max_rate: each rank's copy to the global level at most "
                         "this many bytes/s (k, m, g suffixes; 0: no cap), as a shared file "
                         "system slower than the nodes' own storage gives")
    args = ap.parse_args()
    nodes = Nodes(args.nodes, args.np)
    try:
        measure(args, nodes)
    finally:
        nodes.down()


def measure(args, nodes):
    bindir = os.path.join(args.prefix, "bin")
    if not os.access(os.path.join(bindir, "mpirun"), os.X_OK):
        sys.exit("multilevel: no crmpi in %s (./bootstrap.sh build)" % args.prefix)
    os.makedirs(args.out, exist_ok=True)
    app = os.path.join(args.out, "ml_app")
    mem = os.path.join(args.out, "cr_mem")
    for src, exe in ((os.path.join(HERE, "ml_app.c"), app),
                     (os.path.join(TOP, "bench", "cr-breakdown", "cr_mem.c"), mem)):
        subprocess.run([os.path.join(bindir, "mpicc"), "-O2", src, "-o", exe], check=True)
    mpirun = [os.path.join(bindir, "mpirun"), "--allow-run-as-root", "-np", str(args.np)]
    mpirun += nodes.args
    if args.bind_to:
        mpirun += ["--bind-to", args.bind_to]
    modes = MODES + ([PARTNER_MODE] if nodes.count > 1 else [])

    # Calibrate the step count for the uninterrupted run's length.
    seconds, _ = app_result(run(mpirun + [app, str(args.mib), "10"]).stdout)
    steps = max(10, int(args.seconds / (seconds / 10)))
    where = "on %d nodes" % nodes.count if nodes.count > 1 else "on this node"
    if args.global_rate != "0":
        where += ", global level capped at %s/s" % args.global_rate
    if args.bind_to:
        where += ", bound to %s" % args.bind_to
    print("multilevel: %d ranks x %d MiB %s, %d steps (about %.0f s), MTBF %.0f s"
          % (args.np, args.mib, where, steps, args.seconds, args.mtbf))
    base = run(mpirun + ["--with-ft", "cr", app, str(args.mib), str(steps)])
    base_s, checksum = app_result(base.stdout)

    samples = {name: [] for name, _ in modes}
    for _ in range(args.repeat):
        for name, params in modes:
            samples[name].append(measure_mode(args, nodes, mpirun, app, steps, checksum, name,
                                              params))
    # Each figure's median over the rounds: a busy machine moves single runs by 10-30%.
    rows = [dict({key: statistics.median(r[key] for r in samples[name])
                  for key in samples[name][0] if key != "mode"}, mode=name)
            for name, _ in modes]

    lines = ["%d ranks x %d MiB %s, %d steps, uninterrupted %.2f s, MTBF %.0f s (Daly's "
             "interval)%s" % (args.np, args.mib, where, steps, base_s, args.mtbf,
                              ", medians of %d rounds" % args.repeat if args.repeat > 1 else ""),
             "",
             "%-14s %5s %10s %8s %12s %14s %13s %8s %8s %9s" % (
                 "mode", "ckpts", "blocked-s", "dump-s", "copy-local-s", "copy-partner-s",
                 "copy-global-s", "run-s", "base-s", "overhead")]
    for r in rows:
        lines.append("%-14s %5.0f %10.3f %8.3f %12.3f %14.3f %13.3f %8.2f %8.2f %8.1f%%"
                     % (r["mode"], r["ckpts"], r["blocked"], r["dump"], r["local"], r["partner"],
                        r["global"], r["run"], r["base"], 100 * r["overhead"]))
    by = {r["mode"]: r for r in rows}
    if by["semi-blocking"]["blocked"] > 0:
        lines.append("")
        lines.append("blocked time, blocking / semi-blocking: %.2fx; multilevel's blocked time / "
                     "its dump: %.2fx; overhead, multilevel / blocking: %.2f"
                     % (by["blocking"]["blocked"] / by["semi-blocking"]["blocked"],
                        by["multilevel"]["blocked"] / max(by["multilevel"]["dump"], 1e-9),
                        by["multilevel"]["overhead"] / by["blocking"]["overhead"]
                        if by["blocking"]["overhead"] > 0 else float("nan")))

    # Restart from each level: a cr_mem job checkpointed with --term, then restarted twice.
    work = os.path.join(args.out, "restart")
    shutil.rmtree(work, ignore_errors=True)
    ready = os.path.join(work, "ready")
    os.makedirs(ready)
    env = dict(os.environ)
    env.update(CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(work, "global"),
               CRMPI_MCA_filem_levels="local,partner,global" if nodes.count > 1
               else "local,global")
    if nodes.count < 2:
        env["CRMPI_MCA_filem_local_dir"] = os.path.join(work, "local")
    job = subprocess.Popen(mpirun + ["--with-ft", "cr", mem, str(args.mib), ready], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while len(os.listdir(ready)) < args.np:
        if job.poll() is not None:
            sys.exit("multilevel: cr_mem ended early:\n" + job.stderr.read())
        time.sleep(0.05)
    ckpt = run([os.path.join(bindir, "ompi-checkpoint"), "--term", str(job.pid)], env=env)
    job.wait()
    if ckpt.returncode != 0:
        sys.exit("multilevel: ompi-checkpoint failed:\n" + ckpt.stderr)
    handle = ckpt.stdout.strip().splitlines()[-1]
    open(os.path.join(ready, "stop"), "w").close()
    lines += ["", "restart of %d ranks x %d MiB (cr_mem: restore, check every byte, exit)"
              % (args.np, args.mib)]
    levels = ["local", "partner", "global"] if nodes.count > 1 else ["local", "global"]
    for level in levels:
        hosts = nodes.args
        if level == "partner":
            # The second node is lost: its ranks restart on the first, from their partner
            # copies there (the first node's partner is the second).
            nodes.wipe(nodes.hosts[1])
            hosts = nodes.args[:3] + ["-H", "%s:%d" % (nodes.hosts[0], args.np)]
        elif level == "global":
            nodes.wipe()
            shutil.rmtree(os.path.join(work, "local"), ignore_errors=True)
        start = time.monotonic()
        res = run([os.path.join(bindir, "ompi-restart"), "--allow-run-as-root", *hosts, handle],
                  env=env)
        took = time.monotonic() - start
        if res.returncode != 0:
            sys.exit("multilevel: ompi-restart from the %s level failed:\n%s" % (level, res.stderr))
        if level == "partner" and "read from its partner copy" not in res.stderr:
            sys.exit("multilevel: the restart did not read the partner copies:\n" + res.stderr)
        lines.append("  from the %-7s level: %.2f s" % (level, took))
    shutil.rmtree(work, ignore_errors=True)

    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.bar([r["mode"] for r in rows], [r["blocked"] for r in rows], label="blocked per checkpoint")
    ax.set_ylabel("seconds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "multilevel.png"))


if __name__ == "__main__":
    main()
