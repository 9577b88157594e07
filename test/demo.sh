#!/usr/bin/env bash
# The main job, on the embedded defaults (local launcher, this node): a 4-rank MPI program
# started by mpirun, each rank in its own pid namespace under its crmpi-agent.
#
#   test/demo.sh INSTALL_DIR
set -euo pipefail
install=${1:?usage: demo.sh INSTALL_DIR}
mpirun="$install/bin/mpirun"

echo "== crmpi_info (components built into this install)"
"$install/bin/crmpi_info" | sed 's/^/   /'
echo
echo "== mpirun -np 4 --tag-output --report-pid + hello"
"$mpirun" -np 4 --tag-output --report-pid + "$install/libexec/crmpi/hello"
echo
for btls in self,sm self,tcp; do
    echo "== mpirun -np 4 --mca btl $btls ring (a token passed around the ranks, with data)"
    "$mpirun" -np 4 --mca btl "$btls" "$install/libexec/crmpi/ring"
    echo
done
echo "demo: done (checkpoint/restart of this job arrives with the C/R stack)"
