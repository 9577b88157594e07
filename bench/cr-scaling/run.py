#!/usr/bin/env python3
"""How a checkpoint's phases grow with the rank count (bench/cr-scaling).

An idle job (idle.c: each rank talks to its ring neighbours and joins a barrier once,
then sleeps, polling for a stop file) of 8, 32, 64 and 128 ranks runs on 4 simulated
nodes (test/nodes/nodes.sh, prefix "bs", made and removed by the script), oversubscribed
(--oversubscribe, mpi_yield_when_idle 1; btl self,sm,tcp). For each rank count:

  1. a checkpoint, the job going on: the phases the global coordinator (mpirun) timed, as
     its manifest records them (bookmarks, drain, suspend, dump, continue, filem: the copy
     to the snapshot directory; blocked: what the application lost; total), and the wall
     time of ompi-checkpoint; mpirun's own CPU time during it (/proc/<pid>/stat) and
     how busy the machine's CPUs were (/proc/stat): the coordinator's share of the work;
  2. a second checkpoint with mpirun traced (strace): the control messages it sent to and
     read from the agents, counted by type from their headers (runtime/ctl.h), per rank;
  3. a checkpoint with --term, then ompi-restart on the same nodes with the stop file
     already there: the restart's wall time, until every rank has restored, finished and
     the job is gone.

Then the same job size (--compare, default 32 ranks) on one node, for the checkpoint and
restart time against 4 nodes. Prints the tables, a fit of each phase to a*N^b (b above 1:
faster than linear in the rank count) with the ratio t(largest N)/t(smallest N), writes
summary.txt and, with python3-matplotlib, cr-scaling.png.

Usage: bench/cr-scaling/run.py [--prefix DIR] [--out DIR] [--np "8 32 64 128"]
                               [--nodes 4] [--compare N] [--no-strace]

crmpi comes from --prefix (default <repo>/install). Raw logs, manifests and strace output go
to --out (default bench/cr-scaling/results-<date>-<time>/, git-ignored). Needs root, strace
(for the message counts) and Open MPI's mpirun (the ompi launcher); about 20 minutes on 2
cores, most of it at 128 ranks.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
NODES_SH = os.path.join(TOP, "test", "nodes", "nodes.sh")
NODE_PREFIX = "bs"
PHASES = ["bookmarks", "drain", "suspend", "dump", "continue", "filem", "blocked", "total"]
CTL_MAGIC = 0x43524D50
# Control message types mpirun exchanges with the agents during a checkpoint (runtime/ctl.h).
CTL_TYPES = {64: "BEGIN", 65: "BOOKMARKS", 66: "EXPECT", 67: "DRAINED", 68: "SUSPEND",
             69: "READY", 70: "DUMP", 71: "DUMPED", 72: "CONTINUE", 73: "CONTINUED",
             74: "ABORT", 75: "STORE", 76: "STORED", 96: "TOOL_CKPT", 97: "TOOL_PROGRESS",
             98: "TOOL_STATUS", 8: "REPLY"}
HANG = 900


def first_line(text):
    """The first error line of a command's output, else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "error:" in line]
    return (errors or lines or ["(no output)"])[0]


class Runner:
    def __init__(self, args):
        self.args = args
        self.bindir = os.path.join(args.prefix, "bin")
        self.env = dict(os.environ)
        self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(args.out,
                                                                              "snapshots"),
                        CRMPI_MCA_snapc_base_keep="0", CRMPI_MCA_mpi_yield_when_idle="1",
                        CRMPI_MCA_snapc_base_timeout="600")
        mca = subprocess.run([NODES_SH, "ompi-mca", "--prefix", NODE_PREFIX],
                             capture_output=True, text=True).stdout.strip()
        self.launch = ["--allow-run-as-root", "--oversubscribe", "--mca", "plm_ompi_args", mca,
                       "--mca", "btl", "self,sm,tcp"]
        self.idle = os.path.join(args.out, "idle")

    def tool(self, name):
        return os.path.join(self.bindir, name)

    def run(self, cmd, log):
        with open(log, "w") as f:
            return subprocess.run(cmd, env=self.env, stdout=subprocess.PIPE, stderr=f,
                                  text=True, timeout=HANG)

    def measure(self, np, nodes, strace):
        """One job of `np` ranks on `nodes` nodes: a dict of what was measured."""
        work = os.path.join(self.args.out, "np%d-%dnodes" % (np, nodes))
        shutil.rmtree(work, ignore_errors=True)
        ready = os.path.join(work, "ready")
        os.makedirs(ready)
        per_node = np // nodes
        hosts = ["-H", ",".join("%s%d:%d" % (NODE_PREFIX, i, per_node)
                                for i in range(1, nodes + 1))]
        row = {"np": np, "nodes": nodes}
        start = time.monotonic()
        with open(os.path.join(work, "job.log"), "w") as joblog:
            job = subprocess.Popen([self.tool("mpirun"), *self.launch, "-np", str(np), *hosts,
                                    "--with-ft", "cr", self.idle, ready, "200"], env=self.env,
                                   stdout=joblog, stderr=subprocess.STDOUT, text=True)
            while len([n for n in os.listdir(ready) if n.startswith("ready.")]) < np:
                if job.poll() is not None or time.monotonic() - start > 60 + 2 * np:
                    waiting = sorted(set(range(np)) - {int(n.split(".")[1]) for n in
                                                       os.listdir(ready) if n.startswith("ready.")})
                    job.send_signal(signal.SIGINT)
                    try:
                        job.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        job.kill()
                    if job.returncode not in (None, -signal.SIGINT, 128 + signal.SIGINT):
                        return dict(row, error="the job of %d ranks ended before every rank was "
                                    "ready (see %s)" % (np, joblog.name))
                    return dict(row, error="the job of %d ranks did not start: ranks %s not ready "
                                "after %d s (see %s)" % (np, ",".join(map(str, waiting)),
                                                         60 + 2 * np, joblog.name))
                time.sleep(0.2)
            row["start_s"] = time.monotonic() - start

            t = time.monotonic()
            cpu0, busy0 = cpu_seconds(job.pid), machine_busy()
            ck = self.run([self.tool("ompi-checkpoint"), "-v", str(job.pid)],
                          os.path.join(work, "ckpt1.err"))
            row["ckpt_s"] = time.monotonic() - t
            row["mpirun_cpu_s"] = cpu_seconds(job.pid) - cpu0
            busy1 = machine_busy()
            row["machine_busy"] = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1e-9)
            if ck.returncode != 0:
                return self.fail(row, job, ready, "checkpoint 1", work, "ckpt1.err")
            handle = ck.stdout.strip().splitlines()[-1]
            row.update(self.timings(handle, 1))

            if strace:
                trace = os.path.join(work, "mpirun.strace")
                tracer = subprocess.Popen(["strace", "-p", str(job.pid), "-xx", "-s", "32",
                                           "-e", "trace=read,write,sendto,recvfrom", "-o",
                                           trace], stderr=subprocess.DEVNULL)
                time.sleep(1.0)  # strace attached
                ck = self.run([self.tool("ompi-checkpoint"), str(job.pid)],
                              os.path.join(work, "ckpt2.err"))
                time.sleep(0.5)
                tracer.terminate()
                tracer.wait()
                if ck.returncode != 0:
                    return self.fail(row, job, ready, "checkpoint 2 (traced)", work, "ckpt2.err")
                row["messages"] = count_messages(trace)

            t = time.monotonic()
            ck = self.run([self.tool("ompi-checkpoint"), "--term", str(job.pid)],
                          os.path.join(work, "ckpt-term.err"))
            row["ckpt_term_s"] = time.monotonic() - t
            if ck.returncode != 0:
                return self.fail(row, job, ready, "checkpoint --term", work, "ckpt-term.err")
            job.wait(timeout=HANG)
        open(os.path.join(ready, "stop"), "w").close()
        t = time.monotonic()
        res = self.run([self.tool("ompi-restart"), *self.launch, *hosts, handle],
                       os.path.join(work, "restart.err"))
        row["restart_s"] = time.monotonic() - t
        if res.returncode != 0 or "idle: %d ranks done" % np not in res.stdout:
            row["error"] = "the restart failed: %s" % first_line(
                open(os.path.join(work, "restart.err")).read())
        shutil.rmtree(handle, ignore_errors=True)
        return row

    def fail(self, row, job, ready, what, work, log):
        open(os.path.join(ready, "stop"), "w").close()
        try:
            job.wait(timeout=120)
        except subprocess.TimeoutExpired:
            job.kill()
        row["error"] = "%s failed: %s" % (what, first_line(open(os.path.join(work, log)).read()))
        return row

    def timings(self, handle, seq):
        path = os.path.join(handle, str(seq), "manifest.json")
        with open(path) as f:
            manifest = json.load(f)
        shutil.copy(path, os.path.join(self.args.out, "manifest-%s-%d.json"
                                       % (os.path.basename(handle), seq)))
        return {phase: manifest["timings"].get(phase, 0.0) for phase in PHASES}


def cpu_seconds(pid):
    """User and system CPU seconds process `pid` has used (/proc/<pid>/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy():
    """(busy, total) jiffies of every CPU of the machine so far (/proc/stat)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks) - idle, sum(ticks)


def count_messages(trace):
    """Control messages in an strace of mpirun: {"sent": {type: n}, "read": {type: n}}.

    A message goes out in one send (header and payload together when small: runtime/ctl.c),
    and comes in as a read of its 20-byte header, then one of its payload; a header is
    recognised by its magic."""
    counts = {"sent": {}, "read": {}}
    pattern = re.compile(r'^(?:\d+ +)?(read|write|sendto|recvfrom)\((\d+), "((?:\\x[0-9a-f]{2})*)')
    with open(trace) as f:
        for line in f:
            m = pattern.match(line)
            if not m:
                continue
            data = bytes.fromhex(m.group(3).replace("\\x", ""))
            if len(data) < 8:
                continue
            magic, _version, kind = struct.unpack("<IHH", data[:8])
            if magic != CTL_MAGIC:
                continue
            way = "read" if m.group(1) in ("read", "recvfrom") else "sent"
            name = CTL_TYPES.get(kind, str(kind))
            counts[way][name] = counts[way].get(name, 0) + 1
    return counts


def fit(points):
    """Least squares of log t = log a + b log N: b, or None with fewer than 2 usable points."""
    pts = [(math.log(n), math.log(t)) for n, t in points if t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="See the top of this file for what it does.")
    ap.add_argument("--prefix", default=os.path.join(TOP, "install"))
    ap.add_argument("--out", default=os.path.join(HERE, time.strftime("results-%Y%m%d-%H%M%S")))
    ap.add_argument("--np", default="8 32 64 128", help="rank counts (default \"8 32 64 128\")")
    ap.add_argument("--nodes", type=int, default=4, help="simulated nodes (default 4)")
    ap.add_argument("--compare", type=int, default=32,
                    help="rank count run on one node too (default 32; 0: none)")
    ap.add_argument("--no-strace", action="store_true", help="do not count control messages")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    if args.out == "/tmp" or args.out.startswith("/tmp/"):
        sys.exit("cr-scaling: --out must be on storage every node shares (each node has its own "
                 "/tmp)")
    nps = [int(n) for n in args.np.split()]
    if os.geteuid() != 0:
        sys.exit("cr-scaling: the simulated nodes and CRIU need root")
    if not os.access(os.path.join(args.prefix, "bin", "mpirun"), os.X_OK):
        sys.exit("cr-scaling: no crmpi in %s (./bootstrap.sh build)" % args.prefix)
    if any(n % args.nodes for n in nps + ([args.compare] if args.compare else [])):
        sys.exit("cr-scaling: every rank count must be a multiple of --nodes %d" % args.nodes)
    strace = not args.no_strace and shutil.which("strace") is not None
    if not strace and not args.no_strace:
        print("cr-scaling: strace is not installed: no message counts")
    os.makedirs(args.out, exist_ok=True)
    subprocess.run([os.path.join(args.prefix, "bin", "mpicc"), "-O2",
                    os.path.join(HERE, "idle.c"), "-o", os.path.join(args.out, "idle")],
                   check=True)
    subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)
    up = subprocess.run([NODES_SH, "up", str(args.nodes), "--prefix", NODE_PREFIX],
                        capture_output=True, text=True)
    if up.returncode != 0:
        sys.exit("cr-scaling: cannot make the nodes: " + first_line(up.stderr + up.stdout))
    try:
        runner = Runner(args)
        rows = []
        for np in nps:
            print("cr-scaling: %d ranks on %d nodes ..." % (np, args.nodes), flush=True)
            rows.append(runner.measure(np, args.nodes, strace))
            if "error" in rows[-1]:
                print("cr-scaling: %d ranks: %s" % (np, rows[-1]["error"]))
        compare = []
        if args.compare:
            print("cr-scaling: %d ranks on 1 node ..." % args.compare, flush=True)
            one = runner.measure(args.compare, 1, False)
            if "error" in one:
                print("cr-scaling: %d ranks on 1 node: %s" % (args.compare, one["error"]))
            four = [r for r in rows if r["np"] == args.compare]
            compare = (four or [runner.measure(args.compare, args.nodes, False)]) + [one]
    finally:
        subprocess.run([NODES_SH, "down", "--prefix", NODE_PREFIX], capture_output=True)
    report(args, rows, compare, strace)


def report(args, rows, compare, strace):
    ok = [r for r in rows if "bookmarks" in r]
    lines = ["idle job on %d simulated nodes (btl self,sm,tcp; oversubscribed, "
             "mpi_yield_when_idle 1); seconds, as the manifest records them" % args.nodes, "",
             "%5s %8s " % ("ranks", "start-s") + " ".join("%9s" % p for p in PHASES) +
             " %8s %9s %10s" % ("ckpt-s", "ckpt-t-s", "restart-s")]
    for r in rows:
        if "bookmarks" not in r:
            lines.append("%5d  %s" % (r["np"], r.get("error", "?")))
            continue
        lines.append("%5d %8.2f " % (r["np"], r["start_s"]) +
                     " ".join("%9.3f" % r[p] for p in PHASES) +
                     " %8.2f %9s %10s" % (r["ckpt_s"],
                                          "%.2f" % r["ckpt_term_s"] if "ckpt_term_s" in r else "-",
                                          "%.2f" % r["restart_s"] if "restart_s" in r else "-"))
        if "error" in r:
            lines.append("      (%s)" % r["error"])
    lines += ["", "ckpt-s: ompi-checkpoint -v (the job goes on); ckpt-t-s: ompi-checkpoint "
              "--term; restart-s: ompi-restart, the ranks ending right after their restore"]
    if ok:
        lines += ["", "the coordinator's own work during checkpoint 1: mpirun's CPU time, its "
                  "share of the coordination phases (bookmarks + drain + suspend + continue) "
                  "and of the whole checkpoint, and how busy the machine's CPUs were",
                  "%5s %12s %14s %12s %13s" % ("ranks", "mpirun-cpu-s", "of-coord-phases",
                                               "of-ckpt", "machine-busy")]
        for r in ok:
            coord = r["bookmarks"] + r["drain"] + r["suspend"] + r["continue"]
            lines.append("%5d %12.3f %13.1f%% %11.1f%% %12.0f%%" % (
                r["np"], r["mpirun_cpu_s"], 100 * r["mpirun_cpu_s"] / max(coord, 1e-9),
                100 * r["mpirun_cpu_s"] / max(r["ckpt_s"], 1e-9), 100 * r["machine_busy"]))

    if len(ok) >= 2:
        lo, hi = ok[0], ok[-1]
        lines += ["", "growth from %d to %d ranks (%.0fx): t(%d)/t(%d) and the exponent b of "
                  "a least-squares fit t = a*N^b (b > 1: faster than linear)"
                  % (lo["np"], hi["np"], hi["np"] / lo["np"], hi["np"], lo["np"]),
                  "%-10s %9s %9s %7s %6s  %s" % ("phase", "t-lo-s", "t-hi-s", "ratio", "b",
                                                 "verdict")]
        for p in PHASES + ["mpirun_cpu_s"]:
            b = fit([(r["np"], r[p]) for r in ok])
            ratio = hi[p] / lo[p] if lo[p] > 0 else float("nan")
            verdict = ("-" if b is None else "faster than linear" if b > 1.15 else
                       "about linear" if b >= 0.85 else "sublinear")
            lines.append("%-10s %9.3f %9.3f %7.1f %6s  %s" % (
                "mpirun-cpu" if p == "mpirun_cpu_s" else p, lo[p], hi[p], ratio,
                "%.2f" % b if b is not None else "-", verdict))

    if strace and any("messages" in r for r in ok):
        kinds = []
        for r in ok:
            for way in ("sent", "read"):
                for k in r.get("messages", {}).get(way, {}):
                    if (way, k) not in kinds:
                        kinds.append((way, k))
        order = {name: i for i, name in enumerate(CTL_TYPES.values())}
        kinds.sort(key=lambda wk: (wk[0] != "sent", order.get(wk[1], 99)))
        lines += ["", "control messages of mpirun in one checkpoint (strace of mpirun: sent to "
                  "the agents and the tool, headers read from them)",
                  "%-22s" % "message" + "".join("%8d" % r["np"] for r in ok)]
        for way, k in kinds:
            lines.append("%-22s" % ("%s %s" % (way, k)) +
                         "".join("%8d" % r.get("messages", {}).get(way, {}).get(k, 0) for r in ok))
        totals = [sum(sum(r.get("messages", {}).get(w, {}).values()) for w in ("sent", "read"))
                  for r in ok]
        lines.append("%-22s" % "total" + "".join("%8d" % t for t in totals))
        lines.append("%-22s" % "per rank" + "".join("%8.1f" % (t / r["np"])
                                                    for t, r in zip(totals, ok)))

    if len(compare) == 2 and all("bookmarks" in c for c in compare):
        lines += ["", "%d ranks on %d nodes against 1 node (seconds)" % (
            compare[0]["np"], compare[0]["nodes"]),
            "%-6s %8s %8s %8s %9s %8s %8s %10s" % ("nodes", "drain", "suspend", "dump",
                                                   "continue", "total", "ckpt-t-s",
                                                   "restart-s")]
        for c in compare:
            lines.append("%-6d %8.3f %8.3f %8.3f %9.3f %8.3f %8s %10s" % (
                c["nodes"], c["bookmarks"] + c["drain"], c["suspend"], c["dump"], c["continue"],
                c["total"], "%.2f" % c["ckpt_term_s"] if "ckpt_term_s" in c else "-",
                "%.2f" % c["restart_s"] if "restart_s" in c else "-"))

    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "rows.json"), "w") as f:
        json.dump({"scaling": rows, "compare": compare}, f, indent=1)
    plot(args, ok)


def plot(args, ok):
    if not ok:
        return
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("cr-scaling: no plot (python3-matplotlib is not installed: apt-get install "
              "python3-matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    nps = [r["np"] for r in ok]
    for p in PHASES:
        ax.plot(nps, [max(r[p], 1e-4) for r in ok], "o-", label=p)
    ref = ok[0]["total"]
    ax.plot(nps, [ref * n / nps[0] for n in nps], "k:", label="linear from total(%d)" % nps[0])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(nps)
    ax.set_xticklabels([str(n) for n in nps])
    ax.set_xlabel("ranks (on %d simulated nodes, 2 cores)" % args.nodes)
    ax.set_ylabel("seconds")
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("checkpoint phases of an idle job", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "cr-scaling.png"), dpi=120)
    print("cr-scaling: plot in %s" % os.path.join(args.out, "cr-scaling.png"))


if __name__ == "__main__":
    main()
