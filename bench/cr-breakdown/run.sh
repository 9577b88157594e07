#!/usr/bin/env bash
# Where a checkpoint's time goes (the paper's Tables 2-7): for each rank count and memory
# size per rank, a job of cr_mem.c is checkpointed once (the job goes on), and the phases
# mpirun reports are tabulated: bookmark exchange and drain, suspend (transports
# released), CRIU dump, continue (transports rebuilt), FileM copy to the snapshot
# directory, image size and the dump's throughput, also as a fraction of this machine's
# sequential write bandwidth to the directory the images go to (dd, measured in the run:
# once through the page cache, as CRIU writes, and once with fdatasync, the disk itself).
#
# Usage: bench/cr-breakdown/run.sh [--prefix DIR] [--out DIR] [--np "2 4 8"] [--mib "16 128 512"]
#                                   [--mca NAME VALUE]...
#
# --mca passes a parameter to the job (repeatable): `--mca btl self,ofi --mca btl_ofi_domain
# lo` measures the release and rebuild of the ofi BTL in suspend and continue.
#
# crmpi comes from --prefix (default <repo>/install, ./bootstrap.sh build). Snapshots go to
# a directory under --out (default bench/cr-breakdown/results-<date>-<time>/, git-ignored),
# removed after each run; node-local images and the snapshot directory share one disk here,
# so the copy measures that disk (and its page cache). Run as root on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix="$(cd "$here/../.." && pwd)/install"
out="$here/results-$(date +%Y%m%d-%H%M%S)"
nps="2 4 8"
mibs="16 128 512"
mca=()
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --np) nps=$2; shift 2 ;;
        --mib) mibs=$2; shift 2 ;;
        --mca) mca+=(--mca "$2" "$3"); shift 3 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "cr-breakdown: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
bin="$prefix/bin"
[ -x "$bin/mpirun" ] || { echo "cr-breakdown: no crmpi in $prefix (./bootstrap.sh build)" >&2; exit 2; }
mkdir -p "$out"
"$bin/mpicc" -O2 "$here/cr_mem.c" -o "$out/cr_mem"

# The agents write images into the session directory ($TMPDIR or /tmp): measure there.
ddfile="${TMPDIR:-/tmp}/cr-breakdown.$$.dd"
ddrate() { dd if=/dev/zero of="$ddfile" bs=1M count=1024 "$@" 2>&1 | awk '/copied/ {
    for (i = 1; i <= NF; i++) if ($i == "copied,") { print int(1073741824 / $(i+1) / 1e6); exit } }'; rm -f "$ddfile"; }
dd_cache=$(ddrate)
dd_disk=$(ddrate conv=fdatasync)
echo "sequential write to ${TMPDIR:-/tmp}: $dd_cache MB/s through the page cache, $dd_disk MB/s to disk (dd, 1 GiB)" |
    tee "$out/summary.txt"
printf '%-4s %-9s %10s %9s %9s %9s %10s %9s %10s %9s\n' np MiB/rank image-MB drain-ms \
    suspend-ms dump-s continue-ms copy-s dump-MB/s of-cache | tee -a "$out/summary.txt"
for np in $nps; do
    for mib in $mibs; do
        run="$out/np$np-$mib"
        rm -rf "$run"
        mkdir -p "$run/ready"
        "$bin/mpirun" --with-ft cr -np "$np" --oversubscribe --report-pid "$run/jobid" \
            ${mca[@]+"${mca[@]}"} \
            --mca snapc_base_global_snapshot_dir "$run/snapshots" \
            "$out/cr_mem" "$mib" "$run/ready" >"$run/job.log" 2>&1 &
        job=$!
        while [ "$(ls "$run/ready" | grep -c '^ready')" -lt "$np" ]; do
            kill -0 "$job" 2>/dev/null || { echo "cr-breakdown: np $np $mib MiB: job ended" >&2; exit 1; }
            sleep 0.2
        done
        "$bin/ompi-checkpoint" --mca snapc_base_global_snapshot_dir "$run/snapshots" \
            "$(cat "$run/jobid")" >"$run/handle" 2>"$run/ckpt.err" ||
            { cat "$run/ckpt.err" >&2; touch "$run/ready/stop"; wait "$job" || true; continue; }
        touch "$run/ready/stop"
        wait "$job" || { echo "cr-breakdown: np $np $mib MiB: the job failed after the checkpoint" >&2; }
        # mpirun: checkpoint 1 of job J committed in T s: drain D ms, suspend S ms, dump U s,
        #         continue C ms, copy F s, B bytes
        line=$(grep 'committed in' "$run/job.log" | head -n 1)
        echo "$line" | awk -v np="$np" -v mib="$mib" -v cache="$dd_cache" '{
            for (i = 1; i <= NF; i++) {
                if ($i == "drain") d = $(i+1); if ($i == "suspend") s = $(i+1)
                if ($i == "dump") u = $(i+1); if ($i == "continue") c = $(i+1)
                if ($i == "copy") f = $(i+1); if ($i == "bytes") b = $(i-1)
            }
            rate = u > 0 ? b / 1e6 / u : 0
            printf "%-4s %-9s %10.1f %9s %9s %9s %10s %9s %10.0f %8.0f%%\n", np, mib, b / 1e6, d, s, u,
                   c, f, rate, (cache > 0 ? rate / cache * 100 : 0) }' | tee -a "$out/summary.txt"
        rm -rf "$run/snapshots"
    done
done
echo "cr-breakdown: raw logs and summary.txt in $out"
