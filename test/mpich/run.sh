#!/usr/bin/env bash
# MPICH's test suite (test/mpi of Debian bookworm's mpich source package) under crmpi or
# Open MPI 4.1: the conformance check of crmpi against an independent suite.
#
# Usage: test/mpich/run.sh [OPTION]... [TEST-ID-PATTERN]...
#
#   --quick             the quick subset (test/mpich/quick), as ./bootstrap.sh test runs it
#   --all               every directory below (the default when no test is named)
#   --dirs LIST         these top directories of test/mpi, comma-separated
#                       (default: attr,coll,comm,datatype,errhan,group,info,init,pt2pt,
#                       topo,threads,rma,io)
#   --impl crmpi|openmpi|both
#                       which implementation (default crmpi); both runs crmpi, then Open MPI
#                       (Debian's openmpi-bin: mpicc.openmpi, mpirun.openmpi)
#   --prefix DIR        crmpi's install prefix (default: <repo>/install)
#   --work DIR          the tarball, the configured trees, logs and results
#                       (default: <repo>/build-mpich: outside the build directory, whose
#                       objects test/check-symbols.py reads)
#   --timeout-factor F  multiply every test's time limit (MPICH's: 180 s unless the
#                       testlist says otherwise) by F (default 1); the limit only turns a
#                       hang into a failure
#   --report            print the tables of the last results in --work again, run nothing
#   -h, --help          this help
#
# A test id is DIR/PROGRAM (pt2pt/sendrecv2), DIR/PROGRAM#K for the K-th entry of one
# program in a directory; patterns are shell patterns (coll/allred*).
#
# The tarball is fetched from the Debian mirror of this machine's apt configuration and
# checked against the sha256 of bookworm's source index, then cached in --work; the suite is
# configured once per implementation (several minutes: it is a large configure script) with
# the implementation's mpicc, without Fortran, C++, spawn, partitioned communication,
# MPICH's performance and collective-algorithm tests, in strict-MPI mode (MPICH's mode for
# any other MPI). For crmpi, one-sided and MPI-IO are configured off when its mpi.h
# declares no MPI_Win_create / MPI_File_open (the suite's helper library would otherwise
# not build); their directories still run, to record their state.
#
# Expected failures: test/mpich/expected-failures (id pattern, implementations, reason).
# Results: --work/results-<impl>.txt, logs under --work/logs-<impl>/. The last line is
# "mpich: N passed, N failed, N skipped" (expected failures count as skipped).
# Exit status: 0 when every test gave its expected verdict; 1 on an unexpected failure or
# an unexpected pass; 2 when the suite could not be fetched, configured or built.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
prefix="$top/install"
work="$top/build-mpich"
dirs=attr,coll,comm,datatype,errhan,group,info,init,pt2pt,topo,threads,rma,io
impls=crmpi
quick=""
report=""
timeout_factor=1
patterns=()

# bookworm's mpich source package; its orig tarball holds test/mpi
mpich_version=4.0.2
mpich_tarball="mpich_${mpich_version}.orig.tar.xz"

say() { printf 'mpich: %s\n' "$*"; }
die() { printf 'mpich: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
        --all) quick=""; shift ;;
        --dirs) dirs=${2:?--dirs needs a list}; shift 2 ;;
        --impl) impls=${2:?--impl needs crmpi, openmpi or both}; shift 2 ;;
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --work) work=${2:?--work needs a directory}; shift 2 ;;
        --timeout-factor) timeout_factor=${2:?--timeout-factor needs a number}; shift 2 ;;
        --report) report=1; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) usage >&2; exit 2 ;;
        *) patterns+=("$1"); shift ;;
    esac
done
case "$impls" in
    crmpi | openmpi) ;;
    both) impls="crmpi openmpi" ;;
    *) die "--impl: crmpi, openmpi or both, not $impls" ;;
esac
mkdir -p "$work"
work=$(cd "$work" && pwd)

if [ -n "$report" ]; then
    for impl in $impls; do
        [ -f "$work/table-$impl.txt" ] || die "no results of $impl in $work"
        cat "$work/table-$impl.txt"
    done
    exit 0
fi

# The suite's source: the orig tarball, checksum-verified, its test/mpi extracted once.
fetch_suite() {
    local src="$work/mpich-$mpich_version/test/mpi" tarball
    if [ -f "$src/configure" ] && [ -f "$work/$mpich_tarball.verified" ]; then
        return
    fi
    local debian_source_tag=mpich
    # shellcheck source=../../scripts/debian-source.sh
    . "$top/scripts/debian-source.sh"
    [ "$debian_mpich_version" = "$mpich_version" ] ||
        die "scripts/debian-source.sh fetches mpich $debian_mpich_version, not $mpich_version"
    tarball=$(debian_mpich_orig "$work") || exit 2
    say "extracting test/mpi of ${tarball##*/}"
    rm -rf "$work/mpich-$mpich_version"
    tar -C "$work" -xJf "$tarball" "mpich-$mpich_version/test/mpi"
}

# "yes" when the implementation's mpi.h declares the call (a C compile of a reference).
declares() {
    local cc=$1 call=$2 probe
    probe=$(mktemp -d)
    printf '#include <mpi.h>\nvoid *probe(void) { return (void *)%s; }\n' "$call" \
        >"$probe/probe.c"
    if "$cc" -c -Werror=implicit-function-declaration -o "$probe/probe.o" "$probe/probe.c" \
        >/dev/null 2>&1; then
        echo yes
    else
        echo no
    fi
    rm -rf "$probe"
}

configure_suite() {
    local impl=$1 tree="$work/$impl" cc
    if [ "$impl" = crmpi ]; then
        cc="$prefix/bin/mpicc"
        [ -x "$cc" ] || die "no crmpi in $prefix (./bootstrap.sh build)"
    else
        cc=/usr/bin/mpicc.openmpi
        [ -x "$cc" ] || die "no Open MPI (Debian's openmpi-bin and libopenmpi-dev)"
    fi
    local options=(--disable-fortran --disable-cxx --disable-spawn --disable-part
        --disable-perftest --disable-collalgo-tests --disable-ft-tests --enable-strictmpi
        --enable-threads=multiple --disable-dependency-tracking)
    [ "$(declares "$cc" MPI_Win_create)" = yes ] || options+=(--disable-rma)
    [ "$(declares "$cc" MPI_File_open)" = yes ] || options+=(--disable-romio)
    # Open MPI 4.1's mpi.h hides the MPI-1 calls MPI-3.0 removed (its libmpi still has
    # them), which the suite's dtpools library calls.
    [ "$impl" = crmpi ] || options+=(CPPFLAGS=-DOMPI_OMIT_MPI1_COMPAT_DECLS=0)
    # Configured again only when the options change (one-sided or MPI-IO arrived).
    if [ -f "$tree/Makefile" ] && [ "$(cat "$tree/options" 2>/dev/null)" = "${options[*]}" ]; then
        return
    fi
    say "configuring the suite for $impl (${options[*]})"
    rm -rf "$tree"
    mkdir -p "$tree"
    (cd "$tree" && "$work/mpich-$mpich_version/test/mpi/configure" CC="$cc" \
        MPICC="$cc" F77=false FC=false CXX=false "${options[@]}" >configure.out 2>&1) ||
        { tail -n 20 "$tree/configure.out" >&2; die "configure failed ($tree/config.log)"; }
    echo "${options[*]}" >"$tree/options"
}

fetch_suite
status=0
for impl in $impls; do
    configure_suite "$impl"
    select=()
    [ -z "$quick" ] || select=(--only "$here/quick")
    [ ${#patterns[@]} -eq 0 ] || select+=(--tests "${patterns[@]}")
    rm -rf "$work/logs-$impl"
    set +e
    /usr/bin/python3 "$here/mpich_tests.py" --tree "$work/$impl" --impl "$impl" \
        --srcdir "$work/mpich-$mpich_version/test/mpi" \
        --prefix "$prefix" --dirs "$dirs" --expected "$here/expected-failures" \
        --results "$work/results-$impl.txt" --logs "$work/logs-$impl" \
        --timeout-factor "$timeout_factor" "${select[@]}" | tee "$work/out-$impl.txt"
    rc=${PIPESTATUS[0]}
    set -e
    sed -n '/^[a-z]*: MPICH test suite/,/^results:/p' "$work/out-$impl.txt" \
        >"$work/table-$impl.txt"
    [ "$rc" -le "$status" ] || status=$rc
done
exit "$status"
