#!/usr/bin/env bash
# Collective latency, crmpi against Open MPI 4.1 in the same run: MPI_Allreduce, MPI_Bcast
# and MPI_Alltoall from 8 B to 1 MiB on 2, 4 and 8 ranks (8 is oversubscribed on a small
# machine: both implementations then yield the core when idle, and the numbers show
# scheduling as much as algorithms).
#
# Usage: bench/coll/run.sh [OPTION]...
#
#   --prefix DIR      crmpi's install prefix (default: <repo>/install)
#   --out DIR         where the raw outputs and the table go
#                     (default: bench/coll/results-<date>-<time>/)
#   --ranks "N ..."   rank counts (default "2 4 8")
#   --max BYTES       largest size (default 1048576)
#   --btl LIST        crmpi's BTL list, mapped to Open MPI's names (default self,sm)
#   --timeout SECONDS limit for each run (default 600)
#   -h, --help        print this help
#
# coll_lat.c is compiled with each mpicc; each (implementation, rank count) is one run.
# The table gives, per collective, size and rank count, the microseconds of both and the
# ratio crmpi / Open MPI (below 1: crmpi is faster). Not a test: run it on purpose, on a
# quiet machine (other builds make the numbers noise).
#
# Exit status: 0 when every run succeeded, 1 when one failed (the rest still printed),
# 2 for usage errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prefix="$top/install"
out=""
ranks="2 4 8"
max=1048576
btl="self,sm"
run_timeout=600

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --btl) btl=$2; shift 2 ;;
    --timeout) run_timeout=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out="$here/results-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
ompi_btl=$(echo "$btl" | sed 's/\bsm\b/vader/g')
[ -x "$prefix/bin/mpicc" ] || { echo "run.sh: no crmpi at $prefix (--prefix)" >&2; exit 2; }
[ -x /usr/bin/mpicc ] || { echo "run.sh: Open MPI's /usr/bin/mpicc is missing" >&2; exit 2; }

"$prefix/bin/mpicc" -O2 "$here/coll_lat.c" -o "$out/coll_lat-crmpi"
/usr/bin/mpicc -O2 "$here/coll_lat.c" -o "$out/coll_lat-openmpi"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
for np in $ranks; do
    echo "== $np ranks: crmpi" >&2
    timeout "$run_timeout" "$prefix/bin/mpirun" -np "$np" --mca btl "$btl" \
        "$out/coll_lat-crmpi" "$max" >"$out/crmpi-np$np.txt" || { echo "crmpi np $np failed" >&2; status=1; }
    echo "== $np ranks: Open MPI" >&2
    timeout "$run_timeout" /usr/bin/mpirun --oversubscribe -np "$np" --mca pml ob1 \
        --mca btl "$ompi_btl" "$out/coll_lat-openmpi" "$max" >"$out/openmpi-np$np.txt" ||
        { echo "Open MPI np $np failed" >&2; status=1; }
done

# The table: collective, bytes, then per rank count: crmpi us, Open MPI us, ratio.
python3 - "$out" $ranks <<'PY' | tee "$out/table.txt"
import os, sys
out, ranks = sys.argv[1], sys.argv[2:]
data = {}
for impl in ("crmpi", "openmpi"):
    for np in ranks:
        path = os.path.join(out, "%s-np%s.txt" % (impl, np))
        if not os.path.exists(path):
            continue
        for line in open(path):
            coll, size, usec = line.split()
            data[(impl, np, coll, int(size))] = float(usec)
keys = sorted({(c, s) for (_, _, c, s) in data}, key=lambda k: (["allreduce", "bcast", "alltoall"].index(k[0]), k[1]))
head = "%-10s %8s" % ("coll", "bytes") + "".join(
    " | np%-2s %9s %9s %6s" % (np, "crmpi us", "ompi us", "ratio") for np in ranks)
print(head)
print("-" * len(head))
for coll, size in keys:
    row = "%-10s %8d" % (coll, size)
    for np in ranks:
        c = data.get(("crmpi", np, coll, size))
        o = data.get(("openmpi", np, coll, size))
        ratio = "%6.2f" % (c / o) if c and o else "%6s" % "-"
        row += " | %4s %9s %9s %s" % ("", "%.2f" % c if c else "-", "%.2f" % o if o else "-", ratio)
    print(row)
PY
exit $status
