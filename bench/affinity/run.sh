#!/usr/bin/env bash
# What restoring affinity and memory placement at restart is worth: triad.c (a STREAM-like
# triad per thread over arrays each thread first-touched, the threads pinned by the program
# to the CPUs of the rank's binding) is checkpointed with --term after some iterations and
# restarted, once with the placement restored (the default) and once with it switched off
# (crs_criu_affinity, crs_criu_numa_pages, crs_criu_numa_policy and crs_criu_numa_hugepages
# 0). For each: the per-iteration time before and after (median; 1st-ms: the first whole
# iteration after the restart), CPU migrations per iteration
# (nr_migrations of every thread, /proc/PID/task/TID/sched), the time the checkpoint spent
# recording the placement and the restart restoring it (crs_base_verbose 10), the whole
# checkpoint and restart, and the after/before ratio. Open MPI 4.1 has no checkpoint: its
# row is an uninterrupted run of the same program with the same binding, the yardstick of
# the per-iteration time. NUMA columns (the arrays' pages per node after the restart) are
# printed only on a machine with more than one NUMA node. Draws affinity.png with
# python3-matplotlib when it is installed.
#
# Usage: bench/affinity/run.sh [--prefix DIR] [--out DIR] [--np N] [--threads T]
#                              [--mib MIB_PER_THREAD] [--passes P] [--iters N]
#                              [--rounds R] [--map-by WHAT] [--bind-to WHAT] [--thp]
#
# --thp: the arrays ask for transparent huge pages (TRIAD_THP=1, MADV_HUGEPAGE), which CRIU
# restores as small pages and the restored rank makes huge again (crs_criu_numa_hugepages).
#
# Defaults: 1 rank of 2 threads, 48 MiB of arrays per thread, 4 triads per iteration, 20
# iterations before and after, 3 rounds (the variants alternate; medians are over every
# iteration of every round, costs the medians of the rounds), --map-by numa --bind-to numa (the rank on a node's CPUs and
# memory, its threads one per CPU). crmpi comes from --prefix (default <repo>/install).
# Raw logs go to --out (default bench/affinity/results-<date>-<time>/, git-ignored). Not a
# test: run it on purpose, as root, on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix="$(cd "$here/../.." && pwd)/install"
out="$here/results-$(date +%Y%m%d-%H%M%S)"
np=1
threads=2
mib=48
passes=4
iters=20
rounds=3
map_by=numa
bind_to=numa
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --mib) mib=$2; shift 2 ;;
        --passes) passes=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --map-by) map_by=$2; shift 2 ;;
        --bind-to) bind_to=$2; shift 2 ;;
        --thp) export TRIAD_THP=1; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "affinity: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$prefix/bin/mpirun" ] || { echo "affinity: no crmpi in $prefix" >&2; exit 2; }
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 -pthread "$here/triad.c" -o "$out/triad-crmpi"
if [ -x /usr/bin/mpicc ]; then
    /usr/bin/mpicc -O2 -pthread "$here/triad.c" -o "$out/triad-openmpi"
fi
exec /usr/bin/python3 - "$prefix" "$out" "$np" "$threads" "$mib" "$passes" "$iters" \
    "$rounds" "$map_by" "$bind_to" <<'EOF'
import glob, os, re, statistics, subprocess, sys, threading, time

prefix, out, np, threads, mib, passes, iters, rounds, map_by, bind_to = sys.argv[1:]
np, iters, rounds = int(np), int(iters), int(rounds)
bin_ = os.path.join(prefix, "bin")
ITER = re.compile(r"^iter (\d+) ms ([0-9.]+) migrations (\d+)$")
numa_nodes = len(glob.glob("/sys/devices/system/node/node[0-9]*"))


class Stream:
    """A process's stdout lines as they come, with the time each arrived."""
    def __init__(self, proc):
        self.lines, self.proc = [], proc
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def iterations(self):
        found = []
        for when, line in list(self.lines):
            m = ITER.match(line)
            if m:
                found.append((when, int(m.group(1)), float(m.group(2)), int(m.group(3))))
        return found

    def wait_iterations(self, count, what):
        while len(self.iterations()) < count:
            if self.proc.poll() is not None:
                self.thread.join()
                if len(self.iterations()) >= count:
                    break
                sys.exit("affinity: %s ended before %d iterations" % (what, count))
            time.sleep(0.05)


def migrations(samples):
    """Migrations per iteration (the counter is cumulative per process)."""
    return [b[3] - a[3] for a, b in zip(samples, samples[1:])]


def pages_per_node(pids):
    nodes = {}
    for pid in pids:
        try:
            for line in open("/proc/%d/numa_maps" % pid):
                if " anon=" not in line:
                    continue
                for node, count in re.findall(r"N(\d+)=(\d+)", line):
                    nodes[int(node)] = nodes.get(int(node), 0) + int(count)
        except OSError:
            pass
    return nodes


def triad_pids(jobid, exe):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/exe" % entry) != exe:
                continue
            env = open("/proc/%s/environ" % entry, "rb").read().split(b"\0")
        except OSError:
            continue
        if ("CRMPI_JOBID=%d" % jobid).encode() in env:
            found.append(int(entry))
    return found


def crmpi_run(name, restart_mca, round_):
    run = os.path.join(out, "%s.r%d" % (name, round_))
    os.makedirs(run, exist_ok=True)
    ready, stop = os.path.join(run, "ready"), os.path.join(run, "stop")
    exe = os.path.join(out, "triad-crmpi")
    env = dict(os.environ, CRMPI_MCA_snapc_base_global_snapshot_dir=os.path.join(run, "snap"))
    args = [str(mib), str(threads), str(passes), ready, stop]
    job = subprocess.Popen([os.path.join(bin_, "mpirun"), "--with-ft", "cr", "-np", str(np),
                            "--map-by", map_by, "--bind-to", bind_to, "--mca",
                            "crs_base_verbose", "10", exe] + args, stdout=subprocess.PIPE,
                           stderr=open(os.path.join(run, "job.err"), "w"), text=True, env=env)
    stream = Stream(job)
    while not os.path.exists(ready):
        if job.poll() is not None:
            sys.exit("affinity: %s: the job ended before it was ready" % name)
        time.sleep(0.05)
    stream.wait_iterations(iters, name)
    ckpt = subprocess.run([os.path.join(bin_, "ompi-checkpoint"), "--term", str(job.pid)],
                          capture_output=True, text=True, env=env)
    if ckpt.returncode != 0:
        sys.exit("affinity: %s: checkpoint failed: %s" % (name, ckpt.stderr))
    job.wait()
    stream.thread.join()
    before = stream.iterations()[-iters:]
    err = open(os.path.join(run, "job.err")).read()
    m = re.search(r"committed in ([0-9.]+) s", err)
    ckpt_s = float(m.group(1)) if m else float("nan")
    record = [float(x) for x in re.findall(r"placement of init \d+ recorded in ([0-9.]+) s", err)]
    handle = ckpt.stdout.strip().splitlines()[-1]

    start = time.monotonic()
    rst = subprocess.Popen([os.path.join(bin_, "ompi-restart"), "--mca", "crs_base_verbose",
                            "10"] + restart_mca + [handle], stdout=subprocess.PIPE,
                           stderr=open(os.path.join(run, "restart.err"), "w"), text=True,
                           env=env)
    rstream = Stream(rst)
    rstream.wait_iterations(1, name + " restart")
    restart_s = rstream.iterations()[0][0] - start
    rstream.wait_iterations(iters + 1, name + " restart")
    nodes = pages_per_node(triad_pids(job.pid, exe))
    open(stop, "w").close()
    rst.wait()
    rstream.thread.join()
    after = rstream.iterations()[1:iters + 1]  # the first one holds the restart itself
    rerr = open(os.path.join(run, "restart.err")).read()
    place = [float(x) for x in re.findall(r"pages of init \d+ placed in ([0-9.]+) s", rerr)]
    with open(os.path.join(run, "iterations.txt"), "w") as f:
        for label, rows in (("before", before), ("after", after)):
            for _, k, ms, mg in rows:
                f.write("%s %d %.3f %d\n" % (label, k, ms, mg))
    return {"name": name, "ckpt_s": ckpt_s, "record_s": max(record) if record else float("nan"),
            "restart_s": restart_s, "place_s": max(place) if place else float("nan"),
            "nodes": nodes, "before_ms": [r[2] for r in before],
            "after_ms": [r[2] for r in after], "before_migr": migrations(before),
            "after_migr": migrations(after)}


def openmpi_run(round_):
    exe = os.path.join(out, "triad-openmpi")
    if not os.path.exists(exe) or not os.path.exists("/usr/bin/mpirun"):
        return None
    run = os.path.join(out, "openmpi.r%d" % round_)
    os.makedirs(run, exist_ok=True)
    ready, stop = os.path.join(run, "ready"), os.path.join(run, "stop")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    job = subprocess.Popen(["/usr/bin/mpirun", "-np", str(np), "--map-by", map_by,
                            "--bind-to", bind_to, exe, str(mib), str(threads), str(passes),
                            ready, stop], stdout=subprocess.PIPE,
                           stderr=open(os.path.join(run, "job.err"), "w"), text=True, env=env)
    stream = Stream(job)
    stream.wait_iterations(2 * iters + 1, "openmpi")
    open(stop, "w").close()
    job.wait()
    stream.thread.join()
    rows = stream.iterations()[1:2 * iters + 1]
    return {"name": "openmpi", "before_ms": [r[2] for r in rows[:iters]],
            "after_ms": [r[2] for r in rows[iters:]], "before_migr": migrations(rows[:iters]),
            "after_migr": migrations(rows[iters:])}


OFF = ["--mca", "crs_criu_affinity", "0", "--mca", "crs_criu_numa_pages", "0", "--mca",
       "crs_criu_numa_policy", "0", "--mca", "crs_criu_numa_hugepages", "0"]
runs = {"restored": [], "not-restored": [], "openmpi": []}
for round_ in range(rounds):
    runs["restored"].append(crmpi_run("restored", [], round_))
    runs["not-restored"].append(crmpi_run("not-restored", OFF, round_))
    ompi_round = openmpi_run(round_)
    if ompi_round:
        runs["openmpi"].append(ompi_round)


def pooled(name, key):
    return [x for r in runs[name] for x in r[key]]


def median_of(name, key):
    values = [r[key] for r in runs[name] if r.get(key) == r.get(key)]  # drop NaN
    return statistics.median(values) if values else float("nan")


print("triad: %d rank(s) x %s threads, %s MiB per thread, %s triads per iteration, "
      "--map-by %s --bind-to %s, %d NUMA node(s); %d rounds of %d iterations before and "
      "after; ms and migrations: medians and means over every iteration of every round" %
      (np, threads, mib, passes, map_by, bind_to, numa_nodes, rounds, iters))
head = "%-13s %9s %9s %7s %9s %9s %8s %9s %10s %9s %9s" % (
    "run", "before-ms", "after-ms", "ratio", "migr/it-b", "migr/it-a", "ckpt-s", "record-ms",
    "restart-s", "place-ms", "1st-ms")
if numa_nodes > 1:
    head += "  pages-per-node-after"
print(head)
summary = {}
for name in ("restored", "not-restored", "openmpi"):
    if not runs[name]:
        continue
    before, after = statistics.median(pooled(name, "before_ms")), \
        statistics.median(pooled(name, "after_ms"))
    mb, ma = statistics.mean(pooled(name, "before_migr")), \
        statistics.mean(pooled(name, "after_migr"))
    summary[name] = (before, after)
    if name == "openmpi":
        print("%-13s %9.2f %9.2f %7.3f %9.2f %9.2f %8s %9s %10s %9s %9s" % (
            name, before, after, after / before, mb, ma, "-", "-", "-", "-", "-"))
        continue
    line = "%-13s %9.2f %9.2f %7.3f %9.2f %9.2f %8.3f %9.3f %10.3f %9.3f %9.1f" % (
        name, before, after, after / before, mb, ma, median_of(name, "ckpt_s"),
        median_of(name, "record_s") * 1e3, median_of(name, "restart_s"),
        median_of(name, "place_s") * 1e3,
        statistics.median(r["after_ms"][0] for r in runs[name]))
    if numa_nodes > 1:
        nodes = runs[name][-1]["nodes"]
        line += "  " + " ".join("N%d=%d" % kv for kv in sorted(nodes.items()))
    print(line)
print("after a restart, not restored : restored = %.3f" %
      (summary["not-restored"][1] / summary["restored"][1]))
if "openmpi" in summary:
    ompi_all = pooled("openmpi", "before_ms") + pooled("openmpi", "after_ms")
    print("crmpi restored, after : Open MPI uninterrupted = %.3f" %
          (summary["restored"][1] / statistics.median(ompi_all)))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(no plot: python3-matplotlib is not installed)")
    sys.exit(0)
fig, ax = plt.subplots(figsize=(8, 4.5))
for name in ("restored", "not-restored", "openmpi"):
    if not runs[name]:
        continue
    # Per iteration position, the median over the rounds.
    series = [statistics.median(col) for col in
              zip(*[r["before_ms"] + r["after_ms"] for r in runs[name]])]
    ax.plot(range(len(series)), series, marker=".", label=name)
ax.axvline(iters - 0.5, color="grey", linestyle="--")
ax.text(iters - 0.4, ax.get_ylim()[1] * 0.95, "checkpoint --term / restart", fontsize=8)
ax.set_xlabel("iteration (before | after the restart)")
ax.set_ylabel("ms per iteration (slowest rank; median of the rounds)")
ax.set_title("triad, %d rank(s) x %s threads, --bind-to %s" % (np, threads, bind_to))
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "affinity.png"), dpi=110)
print("plot: %s" % os.path.join(out, "affinity.png"))
EOF
