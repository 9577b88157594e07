#!/usr/bin/env bash
# Simulated nodes for crmpi's multi-node tests, demos and benchmarks: network namespaces on
# a bridge, each with its own hostname, /dev/shm and /tmp, sharing the rest of the file
# system. test/nodes/README.md says how to use them.
#
#   nodes.sh up N [--prefix NAME] [--local DIR]  make nodes NAME1..NAMEN (NAME is n by default)
#   nodes.sh down [--prefix NAME | --all]        remove them, whatever state they are in
#   nodes.sh status [--prefix NAME]              what is up (exit 0 when every node is)
#   nodes.sh exec HOST CMD [ARG]...              run a command on node HOST
#   nodes.sh ompi-mca [--prefix NAME]            the --mca options Open MPI's mpirun needs
#
# How a node is made. Its network is a network namespace (ip netns, /run/netns/HOST) whose
# eth0 is a veth whose other end, crv-HOST, is a port of the bridge crbr-PREFIX in the root
# namespace. Its hostname and its mounts live in a UTS and a mount namespace held by one
# process per node, the holder: a `sleep infinity` renamed crmpi-node:PREFIX:HOST, which
# unshare(1) started in the node's network namespace and which set up the hostname and the
# tmpfs mounts before it went to sleep. Every command run on the node (exec, and the rsh
# stand-in beside this script) enters the holder's three namespaces with nsenter -t PID, so
# all of them see the same hostname, /dev/shm and /tmp.
#
# Why a holder process rather than namespace files bind-mounted by unshare --mount=FILE: the
# kernel lets a mount namespace file be bind-mounted only in an older mount namespace (a
# newer one could form a reference loop), so a node could never see the mount namespace
# files of the nodes made after it. An rsh run on one node to reach another, which Open
# MPI's tree spawn and an mpirun started on a node both do, would have nothing to enter.
# /proc/PID/ns/* of a holder is reachable from every node instead: the nodes share one pid
# namespace and one /proc. The price is that a node lives as long as its holder; status
# says when one is gone, and down removes the rest.
#
# Everything nodes.sh makes is named after the prefix (network namespaces PREFIXN, links
# crv-PREFIXN and crbr-PREFIX, /etc/hosts lines ending in "# crmpi-nodes PREFIX", holders
# crmpi-node:PREFIX:*), so that down finds it all even after an up that was killed half way.
set -euo pipefail

readonly STATE_ROOT=/run/crmpi-nodes     # one directory per prefix: subnet, holder pids, logs
readonly LOCAL_ROOT=/var/tmp/crmpi-nodes # PREFIX/HOST: node-local storage behind --local
readonly SUBNET_BASE=10.213              # a set of nodes takes the first unused 10.213.K.0/24
readonly BRIDGE_HOST=254                 # the root namespace's address on the bridge: .254
readonly DEADLINE=20                     # seconds to wait for a node or for processes to end
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE

usage() {
    sed -n '6,10s/^# *//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

die() {
    echo "nodes.sh: $*" >&2
    exit 1
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (it makes network, UTS and mount namespaces)"
}

check_prefix() {
    [[ $1 =~ ^[a-z][a-z-]{0,7}$ ]] ||
        die "--prefix $1: expected 1 to 8 lowercase letters or '-', starting with a letter"
}

# One up or down at a time: they edit /etc/hosts and pick subnets.
take_lock() {
    mkdir -p "$STATE_ROOT"
    exec 9>>"$STATE_ROOT/lock"
    flock -w 60 9 || die "another nodes.sh up or down holds $STATE_ROOT/lock"
}

# ---- what exists of a set of nodes, found by name -------------------------------------

netns_of() {
    ip netns list | awk '{ print $1 }' | grep -E "^$1[0-9]+\$" || true
}

links_of() {
    ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
        grep -E "^(crv-$1[0-9]+|crbr-$1)\$" || true
}

hosts_lines_of() {
    grep -E "[[:space:]]# crmpi-nodes $1\$" /etc/hosts || true
}

# The pids of the holders of a prefix, from their renamed argv[0].
holders_of() {
    local f arg0
    for f in /proc/[0-9]*/cmdline; do
        arg0=
        IFS= read -r -d '' arg0 2>/dev/null <"$f" || true
        case $arg0 in "crmpi-node:$1:"*)
            f=${f#/proc/}
            echo "${f%/cmdline}"
            ;;
        esac
    done
}

# The pid of HOST's holder, if it is alive.
holder_pid() {
    local host=$1 prefix=${1%%[0-9]*} pid arg0=
    [ -n "$prefix" ] && [[ ${host#"$prefix"} =~ ^[0-9]+$ ]] || return 1
    pid=$(cat "$STATE_ROOT/$prefix/$host.pid" 2>/dev/null) || return 1
    IFS= read -r -d '' arg0 2>/dev/null <"/proc/$pid/cmdline" || true
    [ "$arg0" = "crmpi-node:$prefix:$host" ] || return 1
    echo "$pid"
}

# The namespaces of a set of nodes, as /proc/PID/ns/* links read ("net:[4026532281]").
ns_ids_of() {
    local ns pid
    for ns in $(netns_of "$1"); do
        echo "net:[$(stat -L -c %i "/run/netns/$ns")]"
    done
    for pid in $(holders_of "$1"); do
        readlink "/proc/$pid/ns/uts" "/proc/$pid/ns/mnt" 2>/dev/null || true
    done
}

# The processes in any of the namespaces listed in $1 (zombies have no namespaces left).
procs_in() {
    [ -n "$1" ] || return 0
    find /proc/[0-9]*/ns/net /proc/[0-9]*/ns/uts /proc/[0-9]*/ns/mnt -maxdepth 0 \
        -printf '%p %l\n' 2>/dev/null |
        awk -v ids="$1" 'BEGIN { n = split(ids, list, "\n"); for (i = 1; i <= n; i++) want[list[i]] = 1 }
            want[$2] { split($1, path, "/"); print path[3] }' | sort -un || true
}

# What is left of a set of nodes, in one line; empty when nothing is.
leftovers_of() {
    local prefix=$1 ids=${2:-} what=() found
    found=$(netns_of "$prefix" | xargs)
    [ -z "$found" ] || what+=("network namespaces $found")
    found=$(links_of "$prefix" | xargs)
    [ -z "$found" ] || what+=("links $found")
    found=$(hosts_lines_of "$prefix" | wc -l)
    [ "$found" -eq 0 ] || what+=("$found lines of /etc/hosts")
    found=$({ holders_of "$prefix"; procs_in "$ids"; } | sort -un | xargs)
    [ -z "$found" ] || what+=("processes $found")
    [ ! -e "$STATE_ROOT/$prefix" ] || what+=("$STATE_ROOT/$prefix")
    [ ! -e "$LOCAL_ROOT/$prefix" ] || what+=("$LOCAL_ROOT/$prefix")
    local IFS=,
    echo "${what[*]}"
}

# A set of nodes in words: n1..n4, or n1 alone.
set_name() {
    if [ "$2" -gt 1 ]; then echo "${1}1..$1$2"; else echo "${1}1"; fi
}

# The prefixes of the sets of nodes that up has made and down not removed.
known_prefixes() {
    local dir
    for dir in "$STATE_ROOT"/*/; do
        [ -d "$dir" ] || continue
        dir=${dir%/}
        echo "${dir##*/}"
    done
}

# True when a set of nodes is up: its state and every holder it records are there.
set_is_up() {
    local count i
    count=$(cat "$STATE_ROOT/$1/count" 2>/dev/null) || return 1
    for ((i = 1; i <= count; i++)); do
        holder_pid "$1$i" >/dev/null || return 1
    done
}

# ---- removing a set of nodes --------------------------------------------------------------

hosts_remove() {
    local kept tmp=/etc/hosts.crmpi-nodes
    [ -n "$(hosts_lines_of "$1")" ] || return 0
    kept=$(grep -vE "[[:space:]]# crmpi-nodes $1\$" /etc/hosts || true)
    if mountpoint -q /etc/hosts; then
        # A bind mount (as in a container) cannot be replaced by a rename: rewrite it.
        printf '%s\n' "$kept" >/etc/hosts
    else
        # Replaced at once, so that a job of other nodes never reads a half-written file.
        cp -p /etc/hosts "$tmp"
        printf '%s\n' "$kept" >"$tmp"
        mv -f "$tmp" /etc/hosts
    fi
}

# Kill every process in the namespaces listed in $1 and wait until they are gone.
kill_procs_in() {
    local ids=$1 pids deadline=$((SECONDS + DEADLINE))
    while pids=$(procs_in "$ids") && [ -n "$pids" ]; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        # shellcheck disable=SC2086 # one word per pid
        kill -KILL $pids 2>/dev/null || true
        sleep 0.05
    done
}

# Remove everything of a set of nodes. On failure, REMAINS says what is left.
remove_set() {
    local prefix=$1 ids link ns dir
    ids=$(ns_ids_of "$prefix")
    if [ -n "$ids" ] && grep -qxF "$(readlink /proc/self/ns/net)" <<<"$ids"; then
        REMAINS="nodes.sh down was run on one of the nodes $prefix*; run it in the root namespace"
        return 1
    fi
    kill_procs_in "$ids" || true
    for link in $(links_of "$prefix"); do
        ip link del "$link" 2>/dev/null || true
    done
    for ns in $(netns_of "$prefix"); do
        ip netns del "$ns" 2>/dev/null || true
    done
    hosts_remove "$prefix" || true
    if [ -e "$STATE_ROOT/$prefix/local_created" ]; then
        dir=$(cat "$STATE_ROOT/$prefix/local")
        rmdir -- "$dir" 2>/dev/null || true
    fi
    rm -rf -- "${LOCAL_ROOT:?}/$prefix" "${STATE_ROOT:?}/$prefix"
    rmdir -- "$LOCAL_ROOT" 2>/dev/null || true
    REMAINS=$(leftovers_of "$prefix" "$ids")
    [ -z "$REMAINS" ]
}

# ---- making a set of nodes ----------------------------------------------------------------

ip_to_int() {
    local a b c d
    IFS=. read -r a b c d <<<"$1"
    echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

# The first 10.213.K of a /24 that no address or route of the root namespace overlaps.
pick_subnet() {
    local used k cand entry addr len mask
    used=$({
        ip -4 -o addr show | awk '{ print $4 }'
        ip -4 route show table all | awk '{ print ($1 ~ /^[a-z]+$/ && $1 != "default") ? $2 : $1 }'
    } | grep -E '^[0-9.]+(/[0-9]+)?$' || true)
    for ((k = 0; k < 256; k++)); do
        cand=$(ip_to_int "$SUBNET_BASE.$k.0")
        for entry in $used; do
            addr=$(ip_to_int "${entry%/*}")
            len=32
            [[ $entry != */* ]] || len=${entry#*/}
            [ "$len" -gt 0 ] || continue
            [ "$len" -le 24 ] || len=24
            mask=$(((0xffffffff << (32 - len)) & 0xffffffff))
            [ $((cand & mask)) -ne $((addr & mask)) ] || continue 2
        done
        echo "$SUBNET_BASE.$k"
        return 0
    done
    die "no unused /24 left in $SUBNET_BASE.0.0/16 (every one overlaps an address or a route)"
}

# Runs as the holder of a new node, in its network, UTS and mount namespaces: sets up what
# the node has of its own, writes its pid, and sleeps until down kills it.
node_holder() {
    local prefix=$1 host=$2 state=$STATE_ROOT/$1 dir
    trap 'echo failed >"$state/$host.failed"' EXIT
    # Fault points for the self-test: a node whose setup fails, or never ends.
    case ${CRMPI_NODES_FAULT:-} in
    "fail:$host") die "$host: failing on purpose (CRMPI_NODES_FAULT)" ;;
    "hang:$host") exec -a "crmpi-node:$prefix:$host" sleep infinity ;;
    esac
    hostname "$host"
    mount -t tmpfs -o mode=1777,nosuid,nodev "shm-$host" /dev/shm
    mount -t tmpfs -o mode=1777,nosuid,nodev "tmp-$host" /tmp
    # sysfs shows the network namespace of whoever mounts it: a new one lists the node's
    # eth0 and lo under /sys/class/net. The cgroup mounts below /sys are carried over.
    mkdir /tmp/.sys
    mount -t sysfs "sys-$host" /tmp/.sys
    if mountpoint -q /sys/fs/cgroup; then
        mount --rbind /sys/fs/cgroup /tmp/.sys/fs/cgroup
    fi
    mount --move /tmp/.sys /sys
    rmdir /tmp/.sys
    if [ -e "$state/local" ]; then
        dir=$(cat "$state/local")
        mkdir -p -- "$dir" "$LOCAL_ROOT/$prefix/$host"
        mount --bind -- "$LOCAL_ROOT/$prefix/$host" "$dir"
    fi
    echo "$$" >"$state/$host.pid"
    trap - EXIT
    exec >/dev/null 2>&1
    exec -a "crmpi-node:$prefix:$host" sleep infinity
}

# Make node HOST with address ADDR and start its holder.
node_make() {
    local prefix=$1 host=$2 addr=$3 state=$STATE_ROOT/$1
    ip netns add "$host"
    ip link add "crv-$host" type veth peer name eth0 netns "$host"
    ip link set "crv-$host" master "crbr-$prefix" up
    ip -n "$host" link set lo up
    ip -n "$host" addr add "$addr/24" dev eth0
    ip -n "$host" link set eth0 up
    # New session, no terminal, no inherited descriptors (not the lock on fd 9 either): the
    # holder outlives this script and must not keep a caller's pipe open.
    setsid -f nsenter --net="/run/netns/$host" unshare --uts --mount --propagation slave -- \
        "$HERE/nodes.sh" _holder "$prefix" "$host" </dev/null >"$state/$host.log" 2>&1 9>&-
    printf '%s\t%s\t# crmpi-nodes %s\n' "$addr" "$host" "$prefix" >>/etc/hosts
}

# Wait until HOST's holder is asleep and its eth0 is up.
node_wait() {
    local prefix=$1 host=$2 state=$STATE_ROOT/$1 deadline=$((SECONDS + DEADLINE))
    until holder_pid "$host" >/dev/null &&
        [[ $(ip -n "$host" -o link show eth0) == *"state UP"* ]]; do
        if [ -e "$state/$host.failed" ]; then
            die "$host could not be set up: $(grep -v '^$' "$state/$host.log" | tail -n 1)"
        fi
        [ "$SECONDS" -lt "$deadline" ] || die "$host was not up after $DEADLINE s"
        sleep 0.05
    done
}

on_up_exit() {
    local rc=$?
    [ "$rc" -ne 0 ] || return 0
    if remove_set "$UP_PREFIX"; then
        echo "nodes.sh: up failed; what it had made is removed" >&2
    else
        echo "nodes.sh: up failed, and this is left: $REMAINS" >&2
    fi
    exit "$rc"
}

cmd_up() {
    local count='' prefix=n local_dir='' subnet i host hosts=() listing=""
    while [ $# -gt 0 ]; do
        case $1 in
        --prefix) prefix=${2:?--prefix needs a name}; shift 2 ;;
        --local) local_dir=${2:?--local needs a directory}; shift 2 ;;
        [0-9]*) count=$1; shift ;;
        *) usage ;;
        esac
    done
    if ! [[ $count =~ ^[0-9]+$ ]] || [ "$count" -lt 1 ] || [ "$count" -gt 250 ]; then
        die "up: expected a node count from 1 to 250"
    fi
    check_prefix "$prefix"
    if [ -n "$local_dir" ]; then
        [[ $local_dir == /* ]] || die "--local $local_dir: expected an absolute path"
        [ ! -e "$local_dir" ] || [ -d "$local_dir" ] || die "--local $local_dir: not a directory"
    fi
    need_root
    # The rsh stand-in beside this script runs on the nodes, which have /tmp and /dev/shm of
    # their own: from a checkout there, Open MPI's mpirun would find no rsh on any node.
    case $HERE/ in
    /tmp/* | /dev/shm/*)
        die "up: this checkout ($HERE) is under /tmp or /dev/shm, which every node has" \
            "of its own, so the nodes cannot see it; use a checkout elsewhere (/var/tmp...)" ;;
    esac
    take_lock
    if set_is_up "$prefix"; then
        die "nodes $(set_name "$prefix" "$(cat "$STATE_ROOT/$prefix/count")") are already up" \
            "(nodes.sh down --prefix $prefix first)"
    fi
    if [ -n "$(leftovers_of "$prefix")" ] && ! remove_set "$prefix"; then
        die "the nodes $prefix* of an earlier run cannot be removed: $REMAINS"
    fi
    for ((i = 1; i <= count; i++)); do
        host=$prefix$i
        hosts+=("$host")
        if getent hosts "$host" >/dev/null; then
            die "host name $host is taken ($(getent hosts "$host" | xargs));" \
                "choose another --prefix"
        fi
    done
    subnet=$(pick_subnet)

    UP_PREFIX=$prefix
    trap on_up_exit EXIT
    trap 'exit 130' INT TERM HUP
    # The state directory first: it records the --local directory that down must remove.
    mkdir -p "$STATE_ROOT/$prefix"
    echo "$count" >"$STATE_ROOT/$prefix/count"
    echo "$subnet" >"$STATE_ROOT/$prefix/subnet"
    if [ -n "$local_dir" ]; then
        echo "$local_dir" >"$STATE_ROOT/$prefix/local"
        [ -e "$local_dir" ] || touch "$STATE_ROOT/$prefix/local_created"
    fi
    [ -z "$(tail -c 1 /etc/hosts)" ] || echo >>/etc/hosts
    ip link add "crbr-$prefix" type bridge
    ip addr add "$subnet.$BRIDGE_HOST/24" dev "crbr-$prefix"
    ip link set "crbr-$prefix" up
    for ((i = 1; i <= count; i++)); do
        node_make "$prefix" "$prefix$i" "$subnet.$i"
        listing+="${listing:+, }$prefix$i $subnet.$i"
    done
    for host in "${hosts[@]}"; do
        node_wait "$prefix" "$host"
    done
    trap - EXIT INT TERM HUP
    echo "nodes up on $subnet.0/24: $listing; this host is $subnet.$BRIDGE_HOST"
}

# ---- the other commands -------------------------------------------------------------------

cmd_down() {
    local prefixes=() prefix failed=0
    case ${1:-} in
    --prefix) check_prefix "${2:?--prefix needs a name}"; prefixes=("$2") ;;
    --all) mapfile -t prefixes < <(known_prefixes) ;;
    '') prefixes=(n) ;;
    *) usage ;;
    esac
    need_root
    take_lock
    for prefix in "${prefixes[@]}"; do
        if ! remove_set "$prefix"; then
            echo "nodes.sh: nodes $prefix* cannot be removed entirely; left: $REMAINS" >&2
            failed=1
        fi
    done
    return "$failed"
}

cmd_status() {
    local prefixes=() prefix count subnet i host pid left all_up=1
    case ${1:-} in
    --prefix) check_prefix "${2:?--prefix needs a name}"; prefixes=("$2") ;;
    '') mapfile -t prefixes < <(known_prefixes) ;;
    *) usage ;;
    esac
    if [ ${#prefixes[@]} -eq 0 ]; then
        echo "no nodes are up"
        return 1
    fi
    for prefix in "${prefixes[@]}"; do
        if ! count=$(cat "$STATE_ROOT/$prefix/count" 2>/dev/null); then
            left=$(leftovers_of "$prefix")
            echo "nodes $prefix*: not up${left:+; left: $left}"
            all_up=0
            continue
        fi
        subnet=$(cat "$STATE_ROOT/$prefix/subnet")
        echo "nodes $(set_name "$prefix" "$count"): subnet $subnet.0/24, this host $subnet.$BRIDGE_HOST" \
            "on crbr-$prefix"
        [ ! -e "$STATE_ROOT/$prefix/local" ] ||
            echo "  node-local storage $(cat "$STATE_ROOT/$prefix/local")" \
                "= $LOCAL_ROOT/$prefix/HOST seen from here"
        for ((i = 1; i <= count; i++)); do
            host=$prefix$i
            if pid=$(holder_pid "$host"); then
                echo "  $host $subnet.$i up (holder pid $pid)"
            else
                echo "  $host $subnet.$i DOWN (its holder is gone; nodes.sh down --prefix $prefix)"
                all_up=0
            fi
        done
    done
    [ "$all_up" -eq 1 ]
}

# Run a command on a node, in the current directory when the node has it (not one under the
# node's own /tmp), else in /. Exit status: the command's, or 255 when the node is not up
# (as ssh does when it cannot connect).
cmd_exec() {
    local host=${1:-} pid
    [ $# -ge 2 ] || usage
    shift
    pid=$(holder_pid "$host") || {
        echo "nodes.sh: $host: no such node is up (see nodes.sh status)" >&2
        exit 255
    }
    # shellcheck disable=SC2016 # expanded by the node's shell
    exec nsenter -t "$pid" --net --uts --mount -- \
        /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' nodes-exec "$PWD" "$@"
}

cmd_ompi_mca() {
    local prefix=n subnet
    case ${1:-} in
    --prefix) check_prefix "${2:?--prefix needs a name}"; prefix=$2 ;;
    '') ;;
    *) usage ;;
    esac
    subnet=$(cat "$STATE_ROOT/$prefix/subnet" 2>/dev/null) || die "nodes $prefix* are not up"
    echo "--mca plm_rsh_agent $HERE/rsh --mca oob_tcp_if_include $subnet.0/24" \
        "--mca btl_tcp_if_include $subnet.0/24"
}

case ${1:-} in
up) shift; cmd_up "$@" ;;
down) shift; cmd_down "$@" ;;
status) shift; cmd_status "$@" ;;
exec) shift; cmd_exec "$@" ;;
ompi-mca) shift; cmd_ompi_mca "$@" ;;
_holder) shift; node_holder "$@" ;;
*) usage ;;
esac
