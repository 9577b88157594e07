#!/usr/bin/env bash
# The main job, on the embedded defaults (local launcher, this node, node-local snapshot
# directory, shared memory and TCP): a 4-rank ring under mpirun --with-ft cr, checkpointed
# while it runs, checkpointed again with --term, restarted over another BTL set, and its
# result compared with an uninterrupted run.
#
#   test/demo.sh INSTALL_DIR
set -euo pipefail
install=${1:?usage: demo.sh INSTALL_DIR}
bin="$install/bin"
ring="$install/libexec/crmpi/ring"
laps=50000
work=$(mktemp -d)
# The job's snapshots go here rather than to $HOME/crmpi_snapshots (the default).
export CRMPI_MCA_snapc_base_global_snapshot_dir="$work/snapshots"
trap 'kill "$(cat "$work/jobid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT

say() { printf '\n== %s\n' "$*"; }

say "crmpi_info (components built into this install)"
"$bin/crmpi_info" | sed 's/^/   /'

say "mpirun -np 4 ring $laps: the uninterrupted run, over self,sm"
"$bin/mpirun" -np 4 --mca btl self,sm "$ring" "$laps" | tee "$work/expected"

say "mpirun --with-ft cr -np 4 --report-pid FILE ring $laps, in the background"
"$bin/mpirun" --with-ft cr -np 4 --mca btl self,sm --report-pid "$work/jobid" "$ring" "$laps" \
    >"$work/first.out" 2>&1 &
mpirun_pid=$!
for _ in $(seq 100); do [ -s "$work/jobid" ] && break; sleep 0.1; done
jobid=$(cat "$work/jobid")
echo "   jobid $jobid"

# The ranks accept a checkpoint once every agent has connected to mpirun and every rank has
# finished MPI_Init: while ompi-checkpoint says the job is still starting, and mpirun runs,
# ask again (on a loaded machine that can take a while; two minutes at most).
checkpoint() {
    local out
    for _ in $(seq 1200); do
        if out=$("$bin/ompi-checkpoint" "$@" 2>"$work/ckpt.err"); then
            printf '%s\n' "$out"
            return 0
        fi
        grep -q 'MPI_Init\|still starting' "$work/ckpt.err" && kill -0 "$mpirun_pid" 2>/dev/null ||
            { cat "$work/ckpt.err" >&2; return 1; }
        sleep 0.1
    done
    cat "$work/ckpt.err" >&2
    return 1
}

say "ompi-checkpoint $jobid: a snapshot while the job runs"
handle=$(checkpoint -v "$jobid")
echo "   handle: $handle"
sleep 0.5
say "ompi-checkpoint --term $jobid: a second snapshot, then the job ends"
checkpoint --term "$jobid" >/dev/null
wait "$mpirun_pid"
sed 's/^/   /' "$work/first.out"

say "crmpi_info --snapshot $handle --verify"
"$bin/crmpi_info" --snapshot "$handle" --verify | sed -n '1,/^ *Rank 0/p' | sed 's/^/   /'

say "ompi-restart --mca btl self,tcp $handle: the job goes on over TCP, from the newest sequence"
"$bin/ompi-restart" -i --mca btl self,tcp "$handle" | tee "$work/restarted"

say "result"
if cmp -s "$work/expected" "$work/restarted"; then
    echo "   the restarted job's result equals the uninterrupted run's:"
    sed 's/^/   /' "$work/restarted"
    echo "demo: done"
else
    echo "   uninterrupted: $(cat "$work/expected")"
    echo "   restarted:     $(cat "$work/restarted")"
    echo "demo: FAILED: the results differ" >&2
    exit 1
fi
