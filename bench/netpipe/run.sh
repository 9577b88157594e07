#!/usr/bin/env bash
# NetPIPE ping-pong, crmpi against Open MPI, over shared memory and over TCP.
#
# Usage: bench/netpipe/run.sh [OPTION]...
#
#   --prefix DIR        crmpi's install prefix (default: <repo>/install)
#   --out DIR           where raw outputs and the summary go
#                       (default: bench/netpipe/results-<date>-<time>/)
#   --upper BYTES       largest message size, NetPIPE's -u (default 8388608 = 8 MiB)
#   --lower BYTES       smallest message size, NetPIPE's -l (default 1; above 1 the
#                       latency row is n/a, and a run takes seconds instead of a minute)
#   --timeout SECONDS   limit for each run (default 300)
#   --rounds N          do the runs N times (default 1) and keep, for every size, the
#                       best of the N rounds; about 90 s a pair and round
#   --only crmpi|openmpi
#                       run one implementation only
#   --openmpi-binary debian|source
#                       debian (default): Debian's NPopenmpi (package netpipe-openmpi,
#                       installed with apt-get when missing and root; built from the same
#                       source as crmpi's when it cannot be installed);
#                       source: NPmpi built from the same source with Open MPI's mpicc
#   --crmpi-arg ARG     one more argument for crmpi's mpirun (repeatable; bench/cr-overhead
#                       passes --with-ft cr this way)
#   --transports LIST   the pairs to run, comma-separated, in this order: sm, tcp, ofi,
#                       ofi-place, ucx, ucx-place (default sm,tcp); ofi is crmpi's btl ofi
#                       against Open MPI's ofi MTL, both over libfabric's tcp;ofi_rxm; ucx is
#                       crmpi's btl ucx against Open MPI's ucx PML, both with UCX's own choice
#                       of transports; ofi-place and ucx-place are the same with crmpi's
#                       payloads placed into the receive buffer (btl_ofi_recv_place,
#                       btl_ucx_recv_place), against the same Open MPI run
#   --invalidate        NetPIPE's -I: every message from a buffer out of the cache (a copy
#                       through shared memory looks best when the buffer stays in cache)
#   --report DIR        print the tables of an earlier run's results directory (and draw
#                       its plot again), run nothing
#   -h, --help          print this help
#
# NetPIPE's source is the orig tarball of Debian's netpipe source package (bookworm, or
# trixie when bookworm has none), from the mirror in this machine's apt configuration,
# checked against the sha256 in the suite's Sources index, cached in bench/netpipe/.cache/.
#
# Runs, in this order, each with 2 ranks bound to cores:
#   crmpi     mpirun --mca btl self,sm      NPmpi
#   Open MPI  mpirun --mca btl self,vader   NPopenmpi   (pml ob1)
#   crmpi     mpirun --mca btl self,tcp     NPmpi
#   Open MPI  mpirun --mca btl self,tcp     NPopenmpi   (pml ob1)
# and with --transports ...,ofi:
#   crmpi     mpirun --mca btl self,ofi     NPmpi       (provider tcp;ofi_rxm, interface lo)
#   Open MPI  mpirun --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm
#                                           NPopenmpi   (-x FI_TCP_IFACE=lo)
# and with --transports ...,ofi-place: crmpi as for ofi, with --mca btl_ofi_recv_place 1
# and with --transports ...,ucx:
#   crmpi     mpirun --mca btl self,ucx     NPmpi
#   Open MPI  mpirun --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
#                                           NPopenmpi   (its best on-node path)
# and with --transports ...,ucx-place: crmpi as for ucx, with --mca btl_ucx_recv_place 1
# (Open MPI runs once per round for ofi and ofi-place, and once for ucx and ucx-place)
# then prints, per transport pair, the 1-byte one-way latency, the bandwidth at the sizes
# nearest 64 KiB, 1 MiB and 4 MiB, and the peak, with the ratio crmpi / Open MPI, and draws
# bandwidth.png in the results directory: bandwidth against size and the ratio, one panel per
# pair (bench/netpipe/plot.py; needs python3-matplotlib).
#
# Exit status: 0 when every run that was asked for succeeded; 1 when a run (or crmpi's
# NetPIPE build) failed, the other side's numbers still printed; 2 for usage or setup
# errors (no mirror in the apt configuration, download or checksum failure).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache="$here/.cache"

prefix="$top/install"
out=""
upper=8388608
lower=1
run_timeout=300
rounds=1
only=""
ompi_binary=debian
report=""
crmpi_args=()
transports=sm,tcp
invalidate=

say() { printf 'netpipe: %s\n' "$*"; }
die() { printf 'netpipe: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --upper) upper=${2:?--upper needs a size in bytes}; shift 2 ;;
        --lower) lower=${2:?--lower needs a size in bytes}; shift 2 ;;
        --timeout) run_timeout=${2:?--timeout needs seconds}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a count}; shift 2 ;;
        --only) only=${2:?--only needs crmpi or openmpi}; shift 2 ;;
        --openmpi-binary) ompi_binary=${2:?--openmpi-binary needs debian or source}; shift 2 ;;
        --report) report=${2:?--report needs a results directory}; shift 2 ;;
        --crmpi-arg) crmpi_args+=("${2:?--crmpi-arg needs an argument}"); shift 2 ;;
        --transports) transports=${2:?--transports needs a list}; shift 2 ;;
        --invalidate) invalidate=-I; shift ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done
case "$only" in "" | crmpi | openmpi) ;; *) die "--only takes crmpi or openmpi, not $only" ;; esac
case "$ompi_binary" in debian | source) ;; *) die "--openmpi-binary takes debian or source" ;; esac
[[ "$upper" =~ ^[0-9]+$ ]] && [ "$upper" -ge 4194304 ] ||
    die "--upper must be a byte count of at least 4194304 (the table reports 4 MiB)"
[[ "$lower" =~ ^[0-9]+$ ]] && [ "$lower" -ge 1 ] && [ "$lower" -le 65536 ] ||
    die "--lower must be a byte count from 1 to 65536 (the table reports 64 KiB)"
[[ "$run_timeout" =~ ^[0-9]+$ ]] && [ "$run_timeout" -gt 0 ] || die "--timeout must be seconds"
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -gt 0 ] || die "--rounds must be a count"
for t in ${transports//,/ }; do
    case "$t" in
        sm | tcp | ofi | ofi-place | ucx | ucx-place) ;;
        *) die "--transports takes sm, tcp, ofi, ofi-place, ucx and ucx-place, not $t" ;;
    esac
done
[ ! -d "$prefix" ] || prefix=$(cd "$prefix" && pwd)
if [ -n "$report" ]; then
    [ -d "$report" ] || die "--report: no such directory: $report"
else
    [ -n "$out" ] || out="$here/results-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$out" "$cache"
    out=$(cd "$out" && pwd)
fi

want_crmpi=1 want_ompi=1
[ "$only" = openmpi ] && want_crmpi=0
[ "$only" = crmpi ] && want_ompi=0

ompi_mpicc=/usr/bin/mpicc.openmpi
ompi_mpirun=/usr/bin/mpirun.openmpi
[ -x "$ompi_mpicc" ] || ompi_mpicc=/usr/bin/mpicc
[ -x "$ompi_mpirun" ] || ompi_mpirun=/usr/bin/mpirun

# --- NetPIPE's source: Debian's netpipe source package -------------------------------------

debian_source_tag=netpipe
# shellcheck source-path=SCRIPTDIR source=../../scripts/debian-source.sh
. "$top/scripts/debian-source.sh"

# The suite this machine runs (bookworm on Debian 12), else the first suite apt names.
debian_suite() {
    local suite=""
    [ -r /etc/os-release ] && suite=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
    if [ -z "$suite" ]; then
        local f files=()
        for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
            [ -f "$f" ] && files+=("$f")
        done
        [ ${#files[@]} -eq 0 ] ||
            suite=$(awk '/^Suites:/ { print $2; exit } $1 == "deb" { for (i = 3; i <= NF; i++)
                if ($i !~ /^(\[|https?:|ftp:)/ && $(i-1) ~ /^(https?|ftp):/) { print $i; exit } }' \
                "${files[@]}")
    fi
    [ -n "$suite" ] || die "cannot tell which Debian release this machine runs"
    printf '%s\n' "$suite"
}

# Sets np_src (unpacked tree), np_version (Debian version), np_suite, np_tarball, np_sha.
fetch_netpipe() {
    local mirror this_suite suite index stanza="" dir orig
    mirror=$(debian_mirror) || exit 2
    this_suite=$(debian_suite) || exit 2
    for suite in "$this_suite" trixie; do
        index="$cache/Sources-$suite.xz"
        # The index changes rarely; read it again once a day.
        if [ -z "$(find "$index" -mmin -1440 2>/dev/null)" ]; then
            say "reading $suite's source index from the configured Debian mirror"
            debian_source_index "$mirror" "$suite" "$index" || exit 2
        fi
        stanza=$(debian_source_stanza "$index" netpipe) || die "cannot read $index"
        [ -n "$stanza" ] && break
        say "$suite has no netpipe source package"
    done
    [ -n "$stanza" ] || die "neither $this_suite nor trixie has a netpipe source package"
    np_suite=$suite
    np_version=$(debian_source_field "$stanza" Version)
    dir=$(debian_source_field "$stanza" Directory)
    orig=$(debian_source_orig "$stanza")
    np_sha=${orig%% *}
    np_tarball=${orig#* }
    [ -n "$np_version" ] && [ -n "$dir" ] && [ -n "$orig" ] ||
        die "$np_suite's index entry for netpipe lacks Version, Directory or an orig tarball"
    debian_source_fetch "$mirror/$dir/$np_tarball" "$cache/$np_tarball" "$np_sha" || exit 2
    np_src="$cache/${np_tarball%.orig.tar.*}"
    if [ "$(cat "$np_src/.sha256" 2>/dev/null)" != "$np_sha" ]; then
        rm -rf "$np_src"
        mkdir -p "$np_src"
        tar -C "$np_src" --strip-components=1 -xf "$cache/$np_tarball"
        printf '%s\n' "$np_sha" >"$np_src/.sha256"
    fi
    [ -f "$np_src/makefile" ] && [ -f "$np_src/src/mpi.c" ] ||
        die "$np_tarball does not hold NetPIPE's makefile and src/mpi.c"
    say "NetPIPE: $np_tarball from $np_suite (Debian $np_version), sha256 $np_sha verified"
}

# NetPIPE's own rule ("make mpi": MPICC -DMPI netpipe.c mpi.c -o NPmpi), run in a build
# directory of its own, with the compiler flags Debian builds its NPopenmpi with.
# build_npmpi MPICC DIR LOG: 0 when DIR/NPmpi was built.
build_npmpi() {
    local mpicc=$1 dir=$2 log=$3 cflags
    cflags="$(dpkg-buildflags --get CFLAGS 2>/dev/null)"
    cflags+=" $(dpkg-buildflags --get CPPFLAGS 2>/dev/null)"
    [ -n "${cflags// /}" ] || cflags="-O2 -g"
    rm -rf "$dir"
    mkdir -p "$dir"
    # -ffile-prefix-map names this checkout; it only matters for debug info, drop it.
    cflags=$(printf '%s\n' "$cflags" | sed 's/-ffile-prefix-map=[^ ]*//g')
    make -C "$dir" -f "$np_src/makefile" SRC="$np_src/src" MPICC="$mpicc" CFLAGS="$cflags" mpi \
        >"$log" 2>&1 && [ -x "$dir/NPmpi" ]
}

# The MPI functions NetPIPE calls that the build could not find (link errors, or implicit
# declarations when mpi.h lacks them).
missing_mpi_calls() {
    grep -oE "(undefined reference to .|implicit declaration of function .)[MP]?MPI_[A-Za-z_]+" \
        "$1" |
        grep -oE '[MP]?MPI_[A-Za-z_]+$' | sort -u | paste -sd ' ' - || true
}

# --- Runs ----------------------------------------------------------------------------------

# How busy the CPUs are, in percent, over one second (from /proc/stat: all but idle+iowait).
cpu_busy_percent() {
    local a b
    a=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2+$3+$4+$7+$8+$9, $5+$6 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
        busy = y[1] - x[1]; idle = y[2] - x[2]
        printf "%d\n", (busy + idle > 0) ? 100 * busy / (busy + idle) + 0.5 : 0 }'
}

# The Open MPI label of a transport (its shared-memory BTL is vader; crmpi's placement
# variants are measured against the same Open MPI run).
ompi_label() {
    case "$1" in sm) echo openmpi-vader ;; *) echo "openmpi-${1%-place}" ;; esac
}

# run_netpipe LABEL STEM MPIRUN BINARY [ENV...]: NetPIPE's output goes to STEM.np.out,
# what the job printed to STEM.log. 0 when NetPIPE reached the upper size.
run_netpipe() {
    local label=$1 stem=$2 mpirun=$3 binary=$4
    shift 4
    local -a cmd=("$mpirun" -np 2 --bind-to core)
    # Open MPI's ob1 runs are forced onto pml ob1 so that the btl list means what it says;
    # its libfabric path is the cm PML with the ofi MTL.
    case "$label" in
        crmpi-sm) cmd+=(--mca btl self,sm) ;;
        crmpi-tcp) cmd+=(--mca btl self,tcp) ;;
        # Both over the loopback interface: libfabric's first may be any bridge of the host.
        crmpi-ofi | crmpi-ofi-place)
            cmd+=(--mca btl self,ofi --mca btl_ofi_provider "tcp;ofi_rxm" --mca btl_ofi_domain lo)
            [ "$label" = crmpi-ofi ] || cmd+=(--mca btl_ofi_recv_place 1)
            ;;
        openmpi-vader) cmd+=(--mca btl self,vader --mca pml ob1) ;;
        openmpi-tcp) cmd+=(--mca btl self,tcp --mca pml ob1) ;;
        openmpi-ofi)
            cmd+=(--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "tcp;ofi_rxm"
                -x FI_TCP_IFACE=lo)
            ;;
        crmpi-ucx) cmd+=(--mca btl self,ucx) ;;
        crmpi-ucx-place) cmd+=(--mca btl self,ucx --mca btl_ucx_recv_place 1) ;;
        openmpi-ucx) cmd+=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any) ;;
    esac
    case "$label" in
        crmpi-*) cmd+=(${crmpi_args[@]+"${crmpi_args[@]}"}) ;;
    esac
    cmd+=(--timeout "$run_timeout" "$binary" -l "$lower" -u "$upper" $invalidate
        -o "$out/$stem.np.out")
    rm -f "$out/$stem.np.out"
    printf '%s%s\n' "${*:+$* }" "${cmd[*]}" >>"$out/commands.txt"
    # Both ranks spin on their cores: anything else running makes the numbers noisy.
    local busy
    busy=$(cpu_busy_percent)
    echo "cpu busy before $stem: $busy%" >>"$out/env.txt"
    say "$stem: ${cmd[*]}"
    if [ "$busy" -gt 10 ]; then
        say "$stem: note: the CPUs were $busy% busy with other work just before this run"
        busy_runs="${busy_runs:+$busy_runs, }$stem ($busy%)"
    fi
    local rc=0 start=$SECONDS
    (cd "$out" && env "$@" timeout -k 10 $((run_timeout + 30)) "${cmd[@]}") \
        >"$out/$stem.log" 2>&1 || rc=$?
    local last
    last=$(awk 'END { print $1 + 0 }' "$out/$stem.np.out" 2>/dev/null || echo 0)
    if [ "$rc" -ne 0 ] || [ "${last:-0}" -lt "$upper" ]; then
        say "$stem: FAILED (exit status $rc, largest size measured ${last:-0} B," \
            "log $out/$stem.log):"
        tail -n 5 "$out/$stem.log" | sed 's/^/    /'
        return 1
    fi
    say "$stem: done in $((SECONDS - start)) s"
}

# merge_rounds LABEL: LABEL.np.out from LABEL.r*.np.out, keeping for every size the best
# bandwidth of all rounds (as NetPIPE keeps the best of its trials within a run).
merge_rounds() {
    local label=$1 files=()
    local f
    for f in "$out/$label".r*.np.out; do [ -s "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 0 ] || return 0
    awk '!($1 in best) { order[++n] = $1 }
        !($1 in best) || $2 > best[$1] { best[$1] = $2; t[$1] = $3 }
        END { for (i = 1; i <= n; i++)
                  printf "%8d %f %12.8f\n", order[i], best[order[i]], t[order[i]] }' \
        "${files[@]}" >"$out/$label.np.out"
}

# --- Summary -------------------------------------------------------------------------------

# summarize TITLE CRMPI_FILE OMPI_FILE: one table. A missing file gives n/a.
# NetPIPE's np.out has: bytes, Mbps (2^20 bit/s), one-way time in s (8 decimals only, so
# the time is recomputed from the Mbps column, which has 6).
summarize() {
    awk -v title="$1" -v fc="$2" -v fo="$3" '
    function load(file, side,   line, f, n) {
        n = 0
        while ((getline line < file) > 0) {
            split(line, f, " ")
            if (f[2] + 0 <= 0) continue
            n++; size[side, n] = f[1] + 0; mbps[side, n] = f[2] + 0
        }
        close(file)
        count[side] = n
    }
    function nearest(side, target,   i, best, d, bd) {
        best = 0
        for (i = 1; i <= count[side]; i++) {
            d = size[side, i] - target; if (d < 0) d = -d
            if (best == 0 || d < bd) { best = i; bd = d }
        }
        return best
    }
    function peak(side,   i, best) {
        best = 0
        for (i = 1; i <= count[side]; i++)
            if (best == 0 || mbps[side, i] > mbps[side, best]) best = i
        return best
    }
    function lat_us(side, i) { return size[side, i] * 8 / (mbps[side, i] * 1048576) * 1e6 }
    function gbs(m) { return m * 1048576 / 8 / 1e9 }
    function bw(side, i) {
        return i ? sprintf("%.2f Mbps  %.3f GB/s", mbps[side, i], gbs(mbps[side, i])) : "n/a"
    }
    function sz(side, i) { return i ? "at " size[side, i] " B" : "" }
    function row(name, vc, vo, r,   line) {
        line = sprintf("  %-20s %-30s %-30s %s", name, vc, vo, r)
        sub(/ +$/, "", line)
        print line
    }
    function ratio(a, b, worse) {
        return (a > 0 && b > 0) ? sprintf("%.2f  (%s is worse)", a / b, worse) : "-"
    }
    function bwrow(name, i, j) {
        row(name, bw("c", i), bw("o", j), ratio(i ? mbps["c", i] : 0, j ? mbps["o", j] : 0, "<1"))
        if (i || j) row("", sz("c", i), sz("o", j), "")
    }
    BEGIN {
        load(fc, "c"); load(fo, "o")
        print title
        row("", "crmpi", "Open MPI", "crmpi/Open MPI")
        i = nearest("c", 1); j = nearest("o", 1)
        if (i && size["c", i] != 1) i = 0
        if (j && size["o", j] != 1) j = 0
        row("latency 1 B", i ? sprintf("%.3f us", lat_us("c", i)) : "n/a",
            j ? sprintf("%.3f us", lat_us("o", j)) : "n/a",
            ratio(i ? lat_us("c", i) : 0, j ? lat_us("o", j) : 0, ">1"))
        split("65536 1048576 4194304 16777216", target, " ")
        split("64 KiB,1 MiB,4 MiB,16 MiB", tname, ",")
        for (t = 1; t <= 4; t++)
            bwrow("bandwidth " tname[t], nearest("c", target[t]), nearest("o", target[t]))
        bwrow("peak bandwidth", peak("c"), peak("o"))
        print ""
    }'
}

# print_tables DIR: both tables from the np.out files of a results directory.
print_tables() {
    local dir=$1
    local version size
    version=$(sed -n 's/^netpipe version: //p' "$dir/env.txt" 2>/dev/null)
    size=$(sed -n 's/^netpipe options: .*-u \([0-9]*\).*/\1/p' "$dir/env.txt" 2>/dev/null)
    echo "NetPIPE $version ping-pong, 2 ranks bound to cores, up to $size B."
    echo "Latency: one-way time (half the round trip) of 1 B. Mbps as NetPIPE prints it"
    echo "(2^20 bit/s); GB/s = 10^9 B/s. Under each bandwidth: the size it was measured at"
    echo "(NetPIPE's size nearest the target; for the peak, where it was reached)."
    echo
    [ ! -e "$dir/crmpi-sm.np.out" ] && [ ! -e "$dir/openmpi-vader.np.out" ] ||
        summarize "shared memory: crmpi btl sm vs Open MPI btl vader" \
            "$dir/crmpi-sm.np.out" "$dir/openmpi-vader.np.out"
    [ ! -e "$dir/crmpi-tcp.np.out" ] && [ ! -e "$dir/openmpi-tcp.np.out" ] ||
        summarize "TCP: crmpi btl tcp vs Open MPI btl tcp" \
            "$dir/crmpi-tcp.np.out" "$dir/openmpi-tcp.np.out"
    [ ! -e "$dir/crmpi-ofi.np.out" ] && [ ! -e "$dir/openmpi-ofi.np.out" ] ||
        summarize "libfabric tcp;ofi_rxm: crmpi btl ofi vs Open MPI mtl ofi (pml cm)" \
            "$dir/crmpi-ofi.np.out" "$dir/openmpi-ofi.np.out"
    [ ! -e "$dir/crmpi-ofi-place.np.out" ] ||
        summarize "libfabric tcp;ofi_rxm: crmpi btl ofi, payloads placed, vs Open MPI mtl ofi" \
            "$dir/crmpi-ofi-place.np.out" "$dir/openmpi-ofi.np.out"
    [ ! -e "$dir/crmpi-ucx.np.out" ] && [ ! -e "$dir/openmpi-ucx.np.out" ] ||
        summarize "UCX: crmpi btl ucx vs Open MPI pml ucx" \
            "$dir/crmpi-ucx.np.out" "$dir/openmpi-ucx.np.out"
    [ ! -e "$dir/crmpi-ucx-place.np.out" ] ||
        summarize "UCX: crmpi btl ucx, payloads placed, vs Open MPI pml ucx" \
            "$dir/crmpi-ucx-place.np.out" "$dir/openmpi-ucx.np.out"
}

# --- Main ----------------------------------------------------------------------------------

# bandwidth.png beside the tables (bench/netpipe/plot.py); its absence changes no exit status.
plot() {
    /usr/bin/python3 "$here/plot.py" "$1" || true
}

if [ -n "$report" ]; then
    print_tables "$report"
    plot "$report"
    exit 0
fi

fetch_netpipe

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm), $(nproc) cores," \
        "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "netpipe version: ${np_version%-*} (Debian $np_version, $np_suite)"
    echo "netpipe source: $np_tarball, sha256 $np_sha"
    echo "netpipe options: -l $lower -u $upper ${invalidate:+$invalidate }-o LABEL.np.out" \
        "(ping-pong, perturbation 3, default repeats)"
} >"$out/env.txt"
busy_runs=""
: >"$out/commands.txt"

crmpi_failed="" ompi_failed="" crmpi_np="" ompi_np=""

if [ "$want_crmpi" = 1 ]; then
    if [ ! -x "$prefix/bin/mpicc" ] || [ ! -x "$prefix/bin/mpirun" ]; then
        crmpi_failed="no mpicc or mpirun in the --prefix (run ./bootstrap.sh build)"
    elif ! build_npmpi "$prefix/bin/mpicc" "$cache/build-crmpi" "$out/build-crmpi.log"; then
        missing=$(missing_mpi_calls "$out/build-crmpi.log")
        crmpi_failed="NetPIPE does not build with crmpi's mpicc${missing:+; crmpi lacks: $missing}"
        crmpi_failed+=" (log: $out/build-crmpi.log)"
    else
        crmpi_np="$cache/build-crmpi/NPmpi"
        echo "crmpi: $("$prefix/bin/mpirun" --version 2>&1 | head -n 1)," \
            "NPmpi built by its mpicc" >>"$out/env.txt"
        say "crmpi: NPmpi built with crmpi's mpicc"
    fi
    [ -z "$crmpi_failed" ] || say "crmpi: FAILED: $crmpi_failed"
fi

if [ "$want_ompi" = 1 ]; then
    if [ ! -x "$ompi_mpirun" ] || [ ! -x "$ompi_mpicc" ]; then
        ompi_failed="Open MPI's mpicc or mpirun is missing"
        ompi_failed+=" (Debian packages openmpi-bin libopenmpi-dev)"
    elif [ "$ompi_binary" = debian ] && [ ! -x /usr/bin/NPopenmpi ]; then
        if [ "$(id -u)" -eq 0 ]; then
            say "installing Debian's netpipe-openmpi (NPopenmpi)"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                netpipe-openmpi >"$out/apt.log" 2>&1 ||
                { apt-get update -qq >>"$out/apt.log" 2>&1 &&
                    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                        netpipe-openmpi >>"$out/apt.log" 2>&1; } || true
        fi
        [ -x /usr/bin/NPopenmpi ] ||
            say "Debian's NPopenmpi cannot be installed here;" \
                "building NetPIPE with Open MPI's mpicc instead"
    fi
    if [ -n "$ompi_failed" ]; then
        :
    elif [ "$ompi_binary" = debian ] && [ -x /usr/bin/NPopenmpi ]; then
        ompi_np=/usr/bin/NPopenmpi
        echo "open mpi: $("$ompi_mpirun" --version 2>&1 | head -n 1), Debian's NPopenmpi" \
            "($(dpkg-query -W -f='netpipe-openmpi ${Version}' netpipe-openmpi 2>/dev/null))" \
            >>"$out/env.txt"
    elif build_npmpi "$ompi_mpicc" "$cache/build-openmpi" "$out/build-openmpi.log"; then
        ompi_np="$cache/build-openmpi/NPmpi"
        echo "open mpi: $("$ompi_mpirun" --version 2>&1 | head -n 1)," \
            "NPmpi built by its mpicc" >>"$out/env.txt"
    else
        ompi_failed="NetPIPE does not build with Open MPI's mpicc (log: $out/build-openmpi.log)"
    fi
    [ -z "$ompi_np" ] || say "Open MPI: using $ompi_np"
    [ -z "$ompi_failed" ] || say "Open MPI: FAILED: $ompi_failed"
fi

# The runs alternate between the implementations, so that each compared pair runs close
# together in time: this VM's speed changes from one minute to the next.
ompi_env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
failed_labels=" " suffix="" ran_ompi=""
for round in $(seq 1 "$rounds"); do
    [ "$rounds" = 1 ] || suffix=".r$round"
    [ "$rounds" = 1 ] || say "round $round of $rounds"
    for t in ${transports//,/ }; do
        label=crmpi-$t
        if [ -n "$crmpi_np" ] && [[ "$failed_labels" != *" $label "* ]]; then
            run_netpipe "$label" "$label$suffix" "$prefix/bin/mpirun" "$crmpi_np" || {
                failed_labels+="$label "
                crmpi_failed="${crmpi_failed:+$crmpi_failed; }the $t run failed"
                crmpi_failed+=" (log: $out/$label$suffix.log)"
            }
        fi
        label=$(ompi_label "$t")
        # Once per round for a transport and its placement variant.
        [[ " $ran_ompi " != *" $label$suffix "* ]] || continue
        ran_ompi+=" $label$suffix"
        if [ -n "$ompi_np" ] && [[ "$failed_labels" != *" $label "* ]]; then
            run_netpipe "$label" "$label$suffix" "$ompi_mpirun" "$ompi_np" \
                "${ompi_env[@]}" || {
                failed_labels+="$label "
                ompi_failed="${ompi_failed:+$ompi_failed; }the ${label#openmpi-} run failed"
                ompi_failed+=" (log: $out/$label$suffix.log)"
            }
        fi
    done
done
if [ "$rounds" != 1 ]; then
    for t in ${transports//,/ }; do
        merge_rounds "crmpi-$t"
        merge_rounds "$(ompi_label "$t")"
    done
fi
[ -z "$crmpi_failed" ] || [ -z "$crmpi_np" ] || say "crmpi: FAILED: $crmpi_failed"
[ -z "$ompi_failed" ] || [ -z "$ompi_np" ] || say "Open MPI: FAILED: $ompi_failed"

{
    echo
    print_tables "$out"
    [ -z "$crmpi_failed" ] || echo "crmpi FAILED: $crmpi_failed; its columns are n/a or partial."
    [ -z "$ompi_failed" ] || echo "Open MPI FAILED: $ompi_failed; its columns are n/a or partial."
    [ -z "$busy_runs" ] ||
        echo "Note: other work was using the CPUs before $busy_runs; those numbers may be noisy."
    [ "$want_crmpi" = 1 ] || echo "crmpi not run (--only openmpi)."
    [ "$want_ompi" = 1 ] || echo "Open MPI not run (--only crmpi)."
} | tee "$out/summary.txt"
plot "$out"
say "raw outputs: $out"

[ -z "$crmpi_failed" ] && [ -z "$ompi_failed" ]
