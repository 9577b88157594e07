#!/usr/bin/env bash
# The kill matrix (test/integration/test_kill_matrix.py) run on its own, printed as a table:
# each kind of process of a checkpointing job killed with SIGKILL in each phase of a
# checkpoint, with what became of the job, of the checkpoint in progress, and of a restart
# from the newest committed one. The test command runs the same cases; this prints them.
#
#   test/kill-matrix.sh [INSTALL_DIR]     (default: install)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
install=${1:-$top/install}
report=$(mktemp "${TMPDIR:-/tmp}/crmpi-kill-matrix.XXXXXX")
trap 'rm -f "$report"' EXIT

CRMPI_INSTALL="$install" KILL_MATRIX_REPORT="$report" /usr/bin/python3 -m pytest -q \
    -p no:cacheprovider "$top/test/integration/test_kill_matrix.py"
status=$?
/usr/bin/python3 - "$report" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print()
print("| phase | process killed | job | checkpoint in progress | restart |")
print("|---|---|---|---|---|")
for r in rows:
    print("| %(phase)s | %(victim)s | %(job)s | %(checkpoint)s | %(restart)s |" % r)
print("\n%d cases passed (a failed case is not in the table)" % len(rows))
PY
exit $status
