#!/usr/bin/env bash
# One application checkpointed three ways: mesh.c (a 2-D hydro-like stencil, MIB mebibytes
# of mesh per rank) takes CKPTS checkpoints, one every EVERY steps, with
#   hand   a hand-written checkpoint: each rank fwrite()s its step and mesh to a file,
#          fsyncs it, renames it into place, fsyncs the directory, then MPI_Barrier;
#   pheap  the persistent heap: the mesh is perm_malloc'ed and MPIX_Checkpoint backs the
#          heap up into the job's snapshot;
#   criu   no checkpoint code: this script runs ompi-checkpoint (a transparent CRIU
#          checkpoint) each time rank 0 says it passed a multiple of EVERY steps.
# Per way: the time the application was blocked per checkpoint (measured in the program,
# the longest rank, for hand and pheap; manifest.json's "blocked" for criu, whose "total"
# adds the copy into the snapshot that runs while the job goes on), the bytes on disk per
# checkpoint (the ranks' files for hand; the snapshot's sequence directory for pheap and
# criu), and the lines of checkpoint code the way adds to mesh.c (its "ckpt:<way>"
# regions, without blank or comment lines). Besides, ROUNDS pairs of runs without
# checkpoints, the mesh malloc'ed and perm_malloc'ed, give the allocator's overhead (steps
# per second, medians). Prints a markdown table, the ratios against the goals (pheap time
# within 10% of hand, pheap smaller than criu, allocator overhead under 5%), and draws
# pheap-ways.png with python3-matplotlib when it is installed.
#
# Usage: bench/pheap/run.sh [--prefix DIR] [--out DIR] [--scratch DIR] [--np N]
#                           [--mib "64 256"] [--every K] [--ckpts C] [--rounds R]
#
# Defaults: 2 ranks, 64 MiB per rank, a checkpoint every 5 steps, 5 checkpoints (the runs
# have (C + 1) * K steps), 3 rounds of the allocator runs. crmpi comes from --prefix
# (default <repo>/install, ./bootstrap.sh build). Checkpoint files, heaps and snapshots go
# to a new directory under --scratch (default /var/tmp), removed at the end; logs, the
# table (table.md), results.json and the plot go to --out (default
# bench/pheap/results-<date>-<time>/, git-ignored). Run as root on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix="$(cd "$here/../.." && pwd)/install"
out="$here/results-$(date +%Y%m%d-%H%M%S)"
scratch_parent=/var/tmp
np=2 mibs=64 every=5 ckpts=5 rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --scratch) scratch_parent=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --mib) mibs=$2; shift 2 ;;
        --every) every=$2; shift 2 ;;
        --ckpts) ckpts=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "pheap: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$prefix/bin/mpirun" ] || { echo "pheap: no crmpi in $prefix (./bootstrap.sh build)" >&2; exit 2; }
mkdir -p "$out"
"$prefix/bin/mpicc" -O2 "$here/mesh.c" -o "$out/mesh" -lcrmpi-pheap -lm
scratch=$(mktemp -d "$scratch_parent/crmpi-bench-pheap.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The lines each way adds: its regions of mesh.c, without blank lines and comments.
loc() {
    awk -v way="$1" '
        $0 ~ "/\\* ckpt:" way " \\*/" { inside = 1; next }
        inside && /\/\* end \*\// { inside = 0; next }
        inside && !/^[ \t]*$/ && !/^[ \t]*(\/\*.*\*\/|\/\/.*)[ \t]*$/ { n++ }
        END { print n + 0 }' "$here/mesh.c"
}

/usr/bin/python3 - "$prefix" "$out" "$scratch" "$np" "$mibs" "$every" "$ckpts" "$rounds" \
    "$(loc hand)" "$(loc pheap)" <<'EOF'
import json, os, re, shutil, statistics, subprocess, sys, time

prefix, out, scratch, np, mibs, every, ckpts, rounds, loc_hand, loc_pheap = sys.argv[1:]
np, every, ckpts, rounds = int(np), int(every), int(ckpts), int(rounds)
mibs = [int(m) for m in mibs.split()]
steps = (ckpts + 1) * every
bin_ = os.path.join(prefix, "bin")
exe = os.path.join(out, "mesh")
CKPT = re.compile(r"^ckpt (\d+) step (\d+) blocked ([0-9.]+)$", re.M)
END = re.compile(r"^steps (\d+) seconds ([0-9.]+) steps/s ([0-9.]+) .* checksum (\S+)$", re.M)


def disk_bytes(paths):
    """Bytes allocated on disk (du) for files and directories."""
    return int(subprocess.run(["du", "-s", "-c", "-B1"] + paths, capture_output=True,
                              text=True, check=True).stdout.splitlines()[-1].split()[0])


def mpirun(name, mesh_args, snap=None):
    """The command, its environment and the log file of one job."""
    env = dict(os.environ)
    mca = []
    if snap:
        env["CRMPI_MCA_snapc_base_global_snapshot_dir"] = snap
        mca = ["--mca", "snapc_base_keep", "0"]  # keep every sequence, to measure each
    cmd = [os.path.join(bin_, "mpirun"), "--with-ft", "cr", "-np", str(np),
           "--oversubscribe"] + mca + [exe] + mesh_args
    return cmd, env, os.path.join(out, name + ".log")


def run_sync(name, mesh_args, snap=None):
    cmd, env, log = mpirun(name, mesh_args, snap)
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    text = open(log).read()
    end = END.search(text)
    if rc != 0 or not end:
        sys.exit("pheap: %s failed (exit %d): see %s" % (name, rc, log))
    return text, end


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def sequences(snap):
    """(sequence directory, manifest) of every committed sequence, in order."""
    found = []
    for job in os.listdir(snap):
        top = os.path.join(snap, job)
        for seq in sorted((s for s in os.listdir(top) if s.isdigit()), key=int):
            found.append((os.path.join(top, seq),
                          json.load(open(os.path.join(top, seq, "manifest.json")))))
    return found


results = []
for mib in mibs:
    base = ["-m", str(mib), "-n", str(steps)]
    row = {"mib": mib, "np": np, "steps": steps, "every": every}

    # The allocator without checkpoints, malloc and perm_malloc alternating.
    rate = {"malloc": [], "perm": []}
    for r in range(rounds):
        for alloc in ("malloc", "perm"):
            work = fresh(os.path.join(scratch, "work"))
            _, end = run_sync("%d-alloc-%s.r%d" % (mib, alloc, r),
                              base + ["-a", alloc, "-d", work])
            rate[alloc].append(float(end.group(3)))
    row["steps_s"] = {k: statistics.median(v) for k, v in rate.items()}
    row["steps_s_all"] = rate

    # 1. hand-written.
    work = fresh(os.path.join(scratch, "work"))
    text, end = run_sync("%d-hand" % mib, base + ["-c", str(every), "-w", "hand", "-d", work])
    blocked = [float(m.group(3)) for m in CKPT.finditer(text)]
    files = [os.path.join(work, f) for f in os.listdir(work) if f.endswith(".ckpt")]
    row["hand"] = {"blocked": blocked, "bytes": disk_bytes(files), "checksum": end.group(4)}

    # 2. persistent heap: MPIX_Checkpoint into the job's snapshot.
    work = fresh(os.path.join(scratch, "work"))
    snap = fresh(os.path.join(scratch, "snap"))
    text, end = run_sync("%d-pheap" % mib, base + ["-c", str(every), "-w", "pheap", "-a", "perm",
                                                    "-d", work], snap)
    blocked = [float(m.group(3)) for m in CKPT.finditer(text)]
    seqs = sequences(snap)
    backups = [os.path.join(work, f) for f in os.listdir(work) if f.endswith(".back")]
    row["pheap"] = {"blocked": blocked, "bytes": statistics.median(disk_bytes([d]) for d, _ in seqs),
                    "manifest": [m["timings"] for _, m in seqs],
                    "local_backup_bytes": disk_bytes(backups), "checksum": end.group(4)}

    # 3. transparent: ompi-checkpoint while the job runs, at the same steps (or later).
    work = fresh(os.path.join(scratch, "work"))
    snap = fresh(os.path.join(scratch, "snap"))
    sync = fresh(os.path.join(scratch, "sync"))
    cmd, env, log = mpirun("%d-criu" % mib, base + ["-c", str(every), "-d", work, "-s", sync],
                           snap)
    ckpt_log = open(os.path.join(out, "%d-criu-checkpoint.log" % mib), "w")
    with open(log, "w") as f:
        job = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        for k in range(1, ckpts + 1):
            while not os.path.exists(os.path.join(sync, "at.%d" % k)):
                if job.poll() is not None:
                    sys.exit("pheap: %d MiB criu: the job ended early: see %s" % (mib, log))
                time.sleep(0.01)
            rc = subprocess.run([os.path.join(bin_, "ompi-checkpoint"), str(job.pid)],
                                stdout=ckpt_log, stderr=subprocess.STDOUT, env=env).returncode
            if rc != 0:
                job.kill()
                sys.exit("pheap: %d MiB criu: checkpoint %d failed: see %s" % (mib, k,
                                                                             ckpt_log.name))
        open(os.path.join(sync, "stop"), "w").close()
        rc = job.wait()
    end = END.search(open(log).read())
    if rc != 0 or not end:
        sys.exit("pheap: %d MiB criu: the job failed (exit %d): see %s" % (mib, rc, log))
    seqs = sequences(snap)
    row["criu"] = {"blocked": [m["timings"]["blocked"] for _, m in seqs],
                   "total": [m["timings"]["total"] for _, m in seqs],
                   "bytes": statistics.median(disk_bytes([d]) for d, _ in seqs),
                   "checksum": end.group(4)}
    shutil.rmtree(snap)
    results.append(row)

loc = {"hand": int(loc_hand), "pheap": int(loc_pheap), "criu": 0}
json.dump({"results": results, "loc": loc}, open(os.path.join(out, "results.json"), "w"),
          indent=2)

mean = statistics.mean
lines = ["mesh.c: %d ranks, %d steps, a checkpoint every %d steps (%d checkpoints); blocked: "
         "mean (min-max) over the checkpoints, the longest rank; MB: 10^6 bytes on disk per "
         "checkpoint, all ranks; steps/s: median of %d runs without checkpoints" %
         (np, steps, every, ckpts, rounds), "",
         "| MiB/rank | way | ckpts | blocked s | until committed s | MB/ckpt | "
         "steps/s (no ckpt) | app lines |", "|---|---|---|---|---|---|---|---|"]
names = {"hand": "hand-written (fwrite+fsync)", "pheap": "persistent heap (MPIX_Checkpoint)",
         "criu": "transparent (CRIU)"}
for row in results:
    for way in ("hand", "pheap", "criu"):
        w = row[way]
        b = w["blocked"]
        if "total" in w:
            total = "%.3f" % mean(w["total"])
        elif "manifest" in w:
            total = "%.3f" % mean(t["total"] for t in w["manifest"])
        else:
            total = "%.3f" % mean(b)
        alloc = "perm" if way == "pheap" else "malloc"
        lines.append("| %d | %s | %d | %.3f (%.3f-%.3f) | %s | %.1f | %.2f (%s) | %d |" % (
            row["mib"], names[way], len(b), mean(b), min(b), max(b), total, w["bytes"] / 1e6,
            row["steps_s"][alloc], "perm_malloc" if alloc == "perm" else "malloc", loc[way]))
lines += ["", "persistent heap, of the blocked time (in the program): the checkpoint's own "
          "blocking part (manifest.json's blocked: coordination and the dump, which links the "
          "backup into the snapshot's local storage) and the rest (backup() writing each "
          "rank's local backup file, the request to mpirun, and the wait for the previous "
          "checkpoint's end); the copy to storage and the commit run after MPIX_Checkpoint "
          "returned (manifest.json's background)", "",
          "| MiB/rank | blocked s | checkpoint's blocking part s | rest s | background s |",
          "|---|---|---|---|---|"]
for row in results:
    b, m = mean(row["pheap"]["blocked"]), row["pheap"]["manifest"]
    own = mean(t.get("blocked", 0.0) for t in m)
    lines.append("| %d | %.3f | %.3f | %.3f | %.3f |" % (
        row["mib"], b, own, b - own, mean(t.get("background", 0.0) for t in m)))
lines += ["", "| MiB/rank | pheap/hand time (goal <= 1.10) | pheap/criu blocked | "
          "pheap/criu size (goal < 1) | allocator overhead (goal < 5%) |", "|---|---|---|---|---|"]
for row in results:
    t = mean(row["pheap"]["blocked"]) / mean(row["hand"]["blocked"])
    tc = mean(row["pheap"]["blocked"]) / mean(row["criu"]["blocked"])
    s = row["pheap"]["bytes"] / row["criu"]["bytes"]
    o = 1 - row["steps_s"]["perm"] / row["steps_s"]["malloc"]
    lines.append("| %d | %.2f (%s) | %.2f | %.3f (%s) | %.1f%% (%s) |" % (
        row["mib"], t, "met" if t <= 1.10 else "missed", tc, s, "met" if s < 1 else "missed",
        100 * o, "met" if o < 0.05 else "missed"))
checks = [r["mib"] for r in results
          if len({r[w]["checksum"] for w in ("hand", "pheap", "criu")}) != 1]
lines += ["", "checksums: %s" % ("the three ways agree" if not checks else
                                 "DIFFER at %s MiB" % checks)]
open(os.path.join(out, "table.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(no plot: python3-matplotlib is not installed)")
    sys.exit(0)
fig, axes = plt.subplots(1, 3, figsize=(13, 4))
x = list(range(len(results)))
labels = ["%d MiB" % r["mib"] for r in results]
for i, way in enumerate(("hand", "pheap", "criu")):
    axes[0].bar([p + (i - 1) * 0.27 for p in x], [mean(r[way]["blocked"]) for r in results],
                0.27, label=names[way])
    axes[1].bar([p + (i - 1) * 0.27 for p in x], [r[way]["bytes"] / 1e6 for r in results], 0.27,
                label=names[way])
for i, alloc in enumerate(("malloc", "perm")):
    axes[2].bar([p + (i - 0.5) * 0.4 for p in x], [r["steps_s"][alloc] for r in results], 0.4,
                label="perm_malloc" if alloc == "perm" else "malloc")
for ax, title in zip(axes, ("blocked per checkpoint (s)", "on disk per checkpoint (MB)",
                            "steps/s without checkpoints")):
    ax.set_xticks(x)
    ax.set_xticklabels(labels)
    ax.set_xlabel("mesh per rank (%d ranks)" % np)
    ax.set_title(title)
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(out, "pheap-ways.png"))
print("plot: " + os.path.join(out, "pheap-ways.png"))
EOF
