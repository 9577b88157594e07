#!/usr/bin/env bash
# Run the whole suite (test/run-all.sh) N times in a row on one build, as the proof that
# no test depends on the machine's speed: it stops at the first failing run and keeps that
# run's log. The last line is "N of N runs green" or "run K of N failed (log: FILE)".
#
#   test/repeat.sh [N] [BUILD_DIR] [INSTALL_DIR]     (defaults: 10, build, install)
set -uo pipefail

runs=${1:-10}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$top/build}
install=${3:-$top/install}
logdir=$(mktemp -d "${TMPDIR:-/tmp}/crmpi-repeat.XXXXXX")

for ((i = 1; i <= runs; i++)); do
    log="$logdir/run-$i.log"
    start=$SECONDS
    if ! "$top/test/run-all.sh" "$build" "$install" >"$log" 2>&1; then
        echo "run $i: $(tail -n 1 "$log")"
        echo "run $i of $runs failed (log: $log)"
        exit 1
    fi
    echo "run $i: $(tail -n 1 "$log") ($((SECONDS - start)) s)"
    rm -f "$log"
done
rmdir "$logdir"
echo "$runs of $runs runs green"
