#!/bin/bash
# paired.sh: TCP bandwidth of two crmpi builds and Open MPI, run back to back in rounds, with
# the median of the rounds at 64 KiB, 1 MiB, 4 MiB and 16 MiB. For a before/after comparison
# on a machine others use: each round runs the three jobs in a row (run.sh, --lower 32768,
# so each job takes seconds), and the median over rounds resists the noise that the best
# of rounds (run.sh --rounds) keeps.
#
#   bench/netpipe/paired.sh --before PREFIX --after PREFIX [--rounds N] [--out DIR]
#                           [--before-arg ARG]... [--after-arg ARG]...
#
# --before and --after are crmpi install prefixes (the same one twice with --after-arg
# compares parameters: --before-arg --mca --before-arg btl_tcp_recv_place --before-arg 0).
# Prints one table: size, then each side's median in GB/s (10^9 B/s), then after / Open MPI
# and before / Open MPI (medians of the per-round ratios, which pair the runs in time).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
before="" after="" rounds=5 out="" before_args=() after_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --before) before=${2:?}; shift 2 ;;
        --after) after=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        --out) out=${2:?}; shift 2 ;;
        --before-arg) before_args+=(--crmpi-arg "${2:?}"); shift 2 ;;
        --after-arg) after_args+=(--crmpi-arg "${2:?}"); shift 2 ;;
        *) echo "paired.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$before" ] && [ -n "$after" ] || { echo "paired.sh: --before and --after" >&2; exit 2; }
[ -n "$out" ] || out="$here/results-paired-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
common=(--transports tcp --lower 32768 --upper 16777216)
for r in $(seq 1 "$rounds"); do
    "$here/run.sh" "${common[@]}" --only crmpi --prefix "$before" \
        ${before_args[@]+"${before_args[@]}"} --out "$out/before.$r" \
        >"$out/before.$r.log" 2>&1 || echo "round $r: before failed (see $out/before.$r.log)"
    "$here/run.sh" "${common[@]}" --prefix "$after" ${after_args[@]+"${after_args[@]}"} \
        --out "$out/after.$r" >"$out/after.$r.log" 2>&1 ||
        echo "round $r: after failed (see $out/after.$r.log)"
    echo "round $r of $rounds done"
done
# One line per round and size: round size before after openmpi (Mbps, NetPIPE's column).
for r in $(seq 1 "$rounds"); do
    for size in 65536 1048576 4194304 16777216; do
        b=$(awk -v s=$size '$1 == s { print $2 }' "$out/before.$r/crmpi-tcp.np.out" 2>/dev/null)
        a=$(awk -v s=$size '$1 == s { print $2 }' "$out/after.$r/crmpi-tcp.np.out" 2>/dev/null)
        o=$(awk -v s=$size '$1 == s { print $2 }' "$out/after.$r/openmpi-tcp.np.out" 2>/dev/null)
        echo "$r $size ${b:-0} ${a:-0} ${o:-0}"
    done
done >"$out/rounds.txt"
python3 - "$out/rounds.txt" "$rounds" <<'PY' | tee "$out/summary.txt"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
gbs = lambda m: m * 1048576 / 8 / 1e9
print("TCP, %s rounds, medians; GB/s = 10^9 B/s" % sys.argv[2])
print("%-9s %10s %10s %10s %12s %12s" % ("size", "before", "after", "Open MPI", "after/OMPI",
                                         "before/OMPI"))
for size in ("65536", "1048576", "4194304", "16777216"):
    r = [[float(x) for x in row[2:]] for row in rows if row[1] == size]
    r = [x for x in r if min(x) > 0]
    if not r:
        print("%-9s no complete round" % size)
        continue
    med = [statistics.median(x[i] for x in r) for i in range(3)]
    ra = statistics.median(x[1] / x[2] for x in r)
    rb = statistics.median(x[0] / x[2] for x in r)
    print("%-9s %10.3f %10.3f %10.3f %12.2f %12.2f" % (size, gbs(med[0]), gbs(med[1]),
                                                       gbs(med[2]), ra, rb))
PY
