#!/usr/bin/env bash
# Incremental checkpoints against full ones (crs_criu_incremental): a job of inc_mem.c
# (MIB mebibytes per rank) rewrites PERCENT of its pages between checkpoints, and is
# checkpointed after each of CKPTS steps, three times: with full checkpoints, with
# incremental ones (every sequence kept, one chain), and compacted (incremental with
# snapc_base_keep 2: every second checkpoint is dumped as a delta and stored flattened with
# its chain into a full image, and older sequences go). Per checkpoint: bytes written to
# the snapshot, the time the application was blocked, the dump, the copy in the background
# (manifest.json's timings, which include a flatten), and the ranks' rewrite time of the
# step before it (what the write-protect tracking costs the application). Then each job is
# restarted from its last checkpoint (through its chain) and checks every byte of its
# memory. First, tracker_cost.c
# compares the two ways of tracking writes of the paper, write-bit and dirty-bit, alone.
#
# Usage: bench/incremental/run.sh [--prefix DIR] [--out DIR] [--np N] [--mib MIB]
#                                  [--percent "1 10 50 100"] [--ckpts N]
#
# crmpi comes from --prefix (default <repo>/install, ./bootstrap.sh build). Results go to
# --out (default bench/incremental/results-<date>-<time>/, git-ignored): summary.txt, the
# table, and incremental.png when python3-matplotlib is installed. Run as root on a quiet
# machine; the defaults take a few minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix="$(cd "$here/../.." && pwd)/install"
out="$here/results-$(date +%Y%m%d-%H%M%S)"
np=2 mib=256 percents="1 10 50 100" ckpts=4
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --np) np=$2; shift 2 ;;
        --mib) mib=$2; shift 2 ;;
        --percent) percents=$2; shift 2 ;;
        --ckpts) ckpts=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "incremental: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
bin="$prefix/bin"
[ -x "$bin/mpirun" ] || { echo "incremental: no crmpi in $prefix (./bootstrap.sh build)" >&2; exit 2; }
mkdir -p "$out"
"$bin/mpicc" -O2 "$here/inc_mem.c" -o "$out/inc_mem"
# The trackers alone, write-bit against dirty-bit (tracker_cost.c), before the jobs.
cc -O2 -I"$here/../../runtime" "$here/tracker_cost.c" -o "$out/tracker_cost"
for pct in $percents; do "$out/tracker_cost" "$mib" "$pct" 5; done | tee "$out/trackers.txt"
table="$out/table.txt"
printf '%-11s %4s %4s %10s %9s %8s %8s %8s %11s\n' mode pct ckpt MB blocked-s dump-s copy-s \
    step-ms restart-s | tee "$table"

# wait_files DIR PATTERN COUNT JOB: until COUNT files match, or the job ended.
wait_files() {
    while [ "$(find "$1" -maxdepth 1 -name "$2" | wc -l)" -lt "$3" ]; do
        kill -0 "$4" 2>/dev/null || { echo "incremental: the job ended early" >&2; return 1; }
        sleep 0.05
    done
}

for pct in $percents; do
    for mode in full incremental compacted; do
        run="$out/$mode-$pct"
        rm -rf "$run"
        mkdir -p "$run/sync"
        snapdir="$run/snapshots"
        incremental=$([ "$mode" = full ] && echo 0 || echo 1)
        keep=$([ "$mode" = compacted ] && echo 2 || echo 0)
        "$bin/mpirun" --with-ft cr -np "$np" --oversubscribe --report-pid "$run/jobid" \
            --mca crs_criu_incremental "$incremental" --mca crs_criu_incremental_chain 100 \
            --mca snapc_base_keep "$keep" --mca snapc_base_global_snapshot_dir "$snapdir" \
            "$out/inc_mem" "$mib" "$pct" "$run/sync" >"$run/job.log" 2>&1 &
        job=$!
        for k in $(seq 1 "$ckpts"); do
            touch "$run/sync/go.$k"
            wait_files "$run/sync" "done.$k.*" "$np" "$job"
            "$bin/ompi-checkpoint" --mca snapc_base_global_snapshot_dir "$snapdir" \
                "$(cat "$run/jobid")" >"$run/handle" 2>>"$run/ckpt.err" ||
                { cat "$run/ckpt.err" >&2; exit 1; }
            # Kept now: with keep 2 the sequence may be gone by the end.
            cp "$(tail -n 1 "$run/handle")/$k/manifest.json" "$run/manifest.$k.json"
        done
        touch "$run/sync/stop"
        wait "$job" || { echo "incremental: $mode $pct%: the job failed" >&2; exit 1; }
        handle=$(tail -n 1 "$run/handle")
        # The restart from the last checkpoint waits for go.<ckpts+1> or stop: stop is there,
        # so it checks its memory (through the chain, for the incremental job) and ends.
        start=$(date +%s.%N)
        "$bin/ompi-restart" --mca snapc_base_global_snapshot_dir "$snapdir" "$handle" \
            >"$run/restart.log" 2>&1 || { echo "incremental: $mode $pct%: the restart failed" \
            "(see $run/restart.log)" >&2; exit 1; }
        restart_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        for k in $(seq 1 "$ckpts"); do
            step_ms=$(cat "$run/sync/done.$k".* | awk '{ s += $1 } END { printf "%.1f", s / NR * 1e3 }')
            /usr/bin/python3 - "$run/manifest.$k.json" "$mode" "$pct" "$k" "$step_ms" \
                "$([ "$k" = "$ckpts" ] && echo "$restart_s" || echo -)" <<'EOF' | tee -a "$table"
import json, sys
m = json.load(open(sys.argv[1]))
t = m["timings"]
mb = sum(r["bytes"] for r in m["ranks"]) / 1e6
restart = sys.argv[6] if sys.argv[6] == "-" else "%.2f" % float(sys.argv[6])
print("%-11s %4s %4s %10.1f %9.3f %8.3f %8.3f %8s %11s" % (sys.argv[2], sys.argv[3], sys.argv[4],
      mb, t["blocked"], t["dump"], t["background"], sys.argv[5], restart))
EOF
        done
        rm -rf "$snapdir"
    done
done

# Averages over the checkpoints after the first (the first is full in both modes).
/usr/bin/python3 - "$table" "$out" <<'EOF' | tee "$out/summary.txt"
import collections, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
avg = collections.defaultdict(lambda: collections.defaultdict(list))
for mode, pct, ckpt, mb, blocked, dump, copy, step, restart in rows:
    if int(ckpt) > 1:
        for key, value in (("mb", mb), ("blocked", blocked), ("step", step), ("copy", copy)):
            avg[(mode, int(pct))][key].append(float(value))
mean = lambda xs: sum(xs) / len(xs)
# Compacted: the checkpoints stored flattened are those whose stored size is a full one's.
print("compacted (keep 2): the checkpoints stored flattened (a delta dumped, a full image "
      "stored) against full ones")
print("%4s %8s %8s %10s %10s %10s %10s" % ("pct", "full-MB", "flat-MB", "full-blk-s",
      "flat-blk-s", "full-copy", "flat-copy"))
for pct in sorted({p for _, p in avg}):
    f = avg[("full", pct)]
    c = [r for r in rows if r[0] == "compacted" and int(r[1]) == pct and int(r[2]) > 1]
    flat = [r for r in c if f["mb"] and float(r[3]) > 0.5 * mean(f["mb"])]
    if f["mb"] and flat:
        print("%4d %8.1f %8.1f %10.3f %10.3f %9.3fs %9.3fs" % (
            pct, mean(f["mb"]), mean([float(r[3]) for r in flat]), mean(f["blocked"]),
            mean([float(r[4]) for r in flat]), mean(f["copy"]),
            mean([float(r[6]) for r in flat])))
print("full : incremental, checkpoints after the first (the paper's form)")
print("%4s %10s %10s %7s %10s %10s %7s %9s %9s" % ("pct", "full-MB", "incr-MB", "ratio",
      "full-blk-s", "incr-blk-s", "ratio", "full-step", "incr-step"))
plot = []
for pct in sorted({p for _, p in avg}):
    f, i = avg[("full", pct)], avg[("incremental", pct)]
    if not f or not i:
        continue
    row = (pct, mean(f["mb"]), mean(i["mb"]), mean(f["blocked"]), mean(i["blocked"]),
           mean(f["step"]), mean(i["step"]))
    plot.append(row)
    print("%4d %10.1f %10.1f %7.2f %10.3f %10.3f %7.2f %8.1fms %8.1fms" % (
        pct, row[1], row[2], row[1] / row[2], row[3], row[4], row[3] / row[4], row[5], row[6]))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(no plot: python3-matplotlib is not installed)")
    sys.exit(0)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
x = range(len(plot))
for ax, col, title in ((ax1, 1, "bytes per checkpoint (MB)"), (ax2, 3, "blocked time (s)")):
    ax.bar([i - 0.2 for i in x], [r[col] for r in plot], 0.4, label="full")
    ax.bar([i + 0.2 for i in x], [r[col + 1] for r in plot], 0.4, label="incremental")
    ax.set_xticks(list(x))
    ax.set_xticklabels(["%d%%" % r[0] for r in plot])
    ax.set_xlabel("pages rewritten between checkpoints")
    ax.set_title(title)
    ax.legend()
fig.tight_layout()
fig.savefig(sys.argv[2] + "/incremental.png")
print("plot: " + sys.argv[2] + "/incremental.png")
EOF
