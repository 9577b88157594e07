#!/usr/bin/env bash
# The failure-free cost of checkpoint/restart support (the paper's Table 1): NetPIPE
# between two crmpi ranks over sm and over tcp, without and with mpirun --with-ft cr,
# in alternating rounds, best of the rounds per size; prints the 1-byte latency and the
# bandwidth at 64 KiB, 1 MiB and the peak, with the difference.
#
# Usage: bench/cr-overhead/run.sh [--rounds N] [--out DIR] [--prefix DIR]
#
# It runs bench/netpipe/run.sh --only crmpi (which builds NetPIPE with crmpi's mpicc; see
# its README) twice per round. Run as root on a quiet machine: about 2 minutes a round.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
netpipe="$here/../netpipe/run.sh"
rounds=3
out="$here/results-$(date +%Y%m%d-%H%M%S)"
prefix_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --prefix) prefix_args=(--prefix "$2"); shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "cr-overhead: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
for round in $(seq 1 "$rounds"); do
    "$netpipe" ${prefix_args[@]+"${prefix_args[@]}"} --only crmpi --upper 4194304 \
        --out "$out/plain.r$round" >"$out/plain.r$round.log" 2>&1
    "$netpipe" ${prefix_args[@]+"${prefix_args[@]}"} --only crmpi --upper 4194304 \
        --crmpi-arg --with-ft --crmpi-arg cr --out "$out/cr.r$round" >"$out/cr.r$round.log" 2>&1
done

# NetPIPE's output: bytes, Mbps (2^20 bits/s), seconds. Best Mbps per size over the rounds.
best() { cat "$out"/$1.r*/crmpi-$2.np.out | awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (b in m) print b, m[b] }' | sort -n; }
stat() { # stat FILE: latency-us bw64k-GB/s bw1m-GB/s peak-GB/s
    awk 'function gbs(mbps) { return mbps * 1048576 / 8 / 1e9 }
         NR == 1 { lat = $1 * 8 / ($2 * 1048576) * 1e6 }
         { if ($1 <= 65536) b64 = $2; if ($1 <= 1048576) b1m = $2; if ($2 > peak) peak = $2 }
         END { printf "%.3f %.2f %.2f %.2f\n", lat, gbs(b64), gbs(b1m), gbs(peak) }' "$1"; }
{
    printf '%-4s %-10s %12s %12s %12s %12s\n' btl run latency-us 64KiB-GB/s 1MiB-GB/s peak-GB/s
    for btl in sm tcp; do
        best plain "$btl" >"$out/plain-$btl.best"
        best cr "$btl" >"$out/cr-$btl.best"
        read -r pl p64 p1m ppk < <(stat "$out/plain-$btl.best")
        read -r cl c64 c1m cpk < <(stat "$out/cr-$btl.best")
        printf '%-4s %-10s %12s %12s %12s %12s\n' "$btl" plain "$pl" "$p64" "$p1m" "$ppk"
        printf '%-4s %-10s %12s %12s %12s %12s\n' "$btl" "--with-ft" "$cl" "$c64" "$c1m" "$cpk"
        awk -v a="$pl" -v b="$cl" -v x="$p1m" -v y="$c1m" -v btl="$btl" 'BEGIN {
            printf "%-4s %-10s %+11.0fns %23s %+11.1f%%\n", btl, "difference", (b - a) * 1000, "", (y - x) / x * 100 }'
    done
} | tee "$out/summary.txt"
