#!/usr/bin/env bash
# crmpi's one entry point on a fresh machine.
#
#   ./bootstrap.sh deps    Debian packages + CRIU 4.1.1 and ROMIO (from Debian's source packages)
#                          in deps/
#   ./bootstrap.sh build   deps, then autogen/configure/make/make install into ./install
#   ./bootstrap.sh demo    build, then the main job
#   ./bootstrap.sh test [--full]
#                          build, then every test; last line "N passed, N failed[, N skipped]";
#                          --full adds the wider matrices CI leaves out (pytest's "full" mark)
#   ./bootstrap.sh mpich [ARG]...
#                          build, then all of MPICH's test suite (test/mpich/run.sh --all ARG...;
#                          --impl both adds Open MPI's run)
#   ./bootstrap.sh sanitize [PYTEST_ARG]...
#                          deps, then an ASan+UBSan build in build-asan/ and install-asan/, its
#                          unit tests and some integration tests (test/sanitize/run.sh)
#
# Idempotent: every step is skipped when its result is already there.
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
deps_prefix="$top/deps"
install_prefix="$top/install"
criu_version=4.1.1
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf 'bootstrap: %s\n' "$*"; }
die() { printf 'bootstrap: error: %s\n' "$*" >&2; exit 1; }

debian_packages=(
    build-essential autoconf automake libtool pkg-config clang-format
    libpmix-dev libhwloc-dev libfabric-dev libucx-dev
    libcmocka-dev python3 python3-pytest cmake autoconf-archive g++
    libjansson-dev nettle-dev libzstd-dev
    clang libclang-rt-dev   # libFuzzer (clang only recommends it): test/fuzz's regression runs
    openmpi-bin libopenmpi-dev
    # CRIU's build dependencies (docs/design.md, "Platform facts the code relies on")
    libprotobuf-c-dev protobuf-c-compiler libprotobuf-dev protobuf-compiler
    libnl-3-dev libnet1-dev libcap-dev libgnutls28-dev libnftables-dev libbsd-dev uuid-dev
    iproute2 procps curl ca-certificates xz-utils patch
)

install_debian_packages() {
    local missing=()
    for pkg in "${debian_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$pkg")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "Debian packages: all present"
        return
    fi
    [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root or install them"
    say "installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null
}

# debian_mirror: the Debian mirror this machine's apt already uses (shared with bench/).
debian_source_tag=bootstrap
. "$top/scripts/debian-source.sh"

# CRIU 4.1.1 from the orig tarball of Debian trixie's source package, checksum-verified
# against trixie's source index (bookworm's CRIU 3.17 fails on this kernel: docs/design.md,
# "Platform facts the code relies on").
# crmpi's one change to CRIU (scripts/criu-dirty-map.patch says what and why): the
# incremental checkpoints' dirty pages from userfaultfd write-protect.
criu_patch="$top/scripts/criu-dirty-map.patch"
criu_patch_sum=$(sha256sum "$criu_patch" | cut -d' ' -f1)
install_criu() {
    if [ -x "$deps_prefix/sbin/criu" ] && [ -f "$deps_prefix/lib/libcriu.so" ] &&
        [ -f "$deps_prefix/include/criu/rpc.pb-c.h" ] &&
        [ "$(cat "$deps_prefix/sbin/criu.patch" 2>/dev/null)" = "$criu_patch_sum" ]; then
        say "CRIU: present in deps/ ($("$deps_prefix/sbin/criu" --version | head -n 1))"
        return
    fi
    local mirror work stanza tarball orig expected
    mirror=$(debian_mirror) || exit 1
    work="$deps_prefix/src"
    mkdir -p "$work"
    say "CRIU $criu_version: reading trixie's source index from the configured Debian mirror"
    debian_source_index "$mirror" trixie "$work/Sources.xz" || exit 1
    stanza=$(debian_source_stanza "$work/Sources.xz" criu)
    tarball="criu_${criu_version}.orig.tar.xz"
    orig=$(debian_source_orig "$stanza")
    [ "${orig#* }" = "$tarball" ] || die "trixie's source index has no $tarball (it has: ${orig#* })"
    expected=${orig%% *}
    debian_source_fetch "$mirror/$(debian_source_field "$stanza" Directory)/$tarball" \
        "$work/$tarball" "$expected" || exit 1
    say "CRIU $criu_version: tarball verified (sha256 $expected); patching and building"
    rm -rf "$work/criu-$criu_version"
    tar -C "$work" -xJf "$work/$tarball"
    (
        cd "$work/criu-$criu_version"
        patch -s -p1 <"$criu_patch" || exit 1
        make -j"$jobs" criu lib >"$work/criu-build.log" 2>&1 ||
            { tail -n 30 "$work/criu-build.log" >&2; exit 1; }
    ) || die "CRIU build failed (log: deps/src/criu-build.log)"
    local src="$work/criu-$criu_version"
    install -D -m 755 "$src/criu/criu" "$deps_prefix/sbin/criu"
    install -D -m 644 "$src/lib/c/criu.h" "$deps_prefix/include/criu/criu.h"
    install -D -m 644 "$src/images/rpc.proto" "$deps_prefix/include/criu/rpc.proto"
    install -D -m 644 "$src/criu/include/version.h" "$deps_prefix/include/criu/version.h"
    install -D -m 644 "$src/images/rpc.pb-c.h" "$deps_prefix/include/criu/rpc.pb-c.h"
    install -D -m 755 "$src/lib/c/libcriu.so" "$deps_prefix/lib/libcriu.so.2"
    ln -sf libcriu.so.2 "$deps_prefix/lib/libcriu.so"
    mkdir -p "$deps_prefix/lib/pkgconfig"
    cat >"$deps_prefix/lib/pkgconfig/criu.pc" <<EOF
prefix=$deps_prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include/criu

Name: CRIU
Description: checkpoint/restore in userspace (libcriu)
Version: $criu_version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lcriu
Cflags: -I\${includedir}
EOF
    echo "$criu_patch_sum" >"$deps_prefix/sbin/criu.patch"
    rm -rf "$src"
}

# dlmalloc 2.8.6, the persistent heap's allocator (pheap/README.md says why this one): its
# malloc.c, byte for byte, from the orig tarball of Debian bookworm's wasi-libc source
# package (checksum-verified against the source index), where upstream's file is kept as
# dlmalloc/src/malloc.c. It is fetched, never committed.
dlmalloc_sha256=22c1995baed5659a0002cb396d6d83e678c92199e893a02d916cadc142d3ada2
install_dlmalloc() {
    local dest="$deps_prefix/dlmalloc/malloc.c"
    if [ -f "$dest" ] && [ "$(sha256sum "$dest" | cut -d' ' -f1)" = "$dlmalloc_sha256" ]; then
        say "dlmalloc: present in deps/"
        return
    fi
    local mirror work stanza orig tarball
    mirror=$(debian_mirror) || exit 1
    work="$deps_prefix/src"
    mkdir -p "$work" "$deps_prefix/dlmalloc"
    say "dlmalloc: reading bookworm's source index from the configured Debian mirror"
    debian_source_index "$mirror" bookworm "$work/Sources-bookworm.xz" || exit 1
    stanza=$(debian_source_stanza "$work/Sources-bookworm.xz" wasi-libc)
    orig=$(debian_source_orig "$stanza")
    tarball=${orig#* }
    debian_source_fetch "$mirror/$(debian_source_field "$stanza" Directory)/$tarball" \
        "$work/$tarball" "${orig%% *}" || exit 1
    tar -xOJf "$work/$tarball" --wildcards '*/dlmalloc/src/malloc.c' >"$dest.tmp" ||
        die "dlmalloc: $tarball has no dlmalloc/src/malloc.c"
    [ "$(sha256sum "$dest.tmp" | cut -d' ' -f1)" = "$dlmalloc_sha256" ] ||
        die "dlmalloc: the malloc.c in $tarball is not the one pheap/README.md names"
    mv "$dest.tmp" "$dest"
    say "dlmalloc: malloc.c verified (sha256 $dlmalloc_sha256)"
}

# ROMIO, MPI-IO's implementation (docs/design.md, "MPI-IO"): src/mpi/romio of the orig
# tarball of Debian bookworm's mpich 4.0.2 (checksum-verified against the source index, the
# tarball MPICH's test suite comes from too), extracted into deps/romio. configure finds it
# there; make configures and builds it against the libmpi it built.
install_romio() {
    local dest="$deps_prefix/romio" tarball patch
    # Extracted again when a patch of crmpi's (mpi/io/romio-*.patch) is not in it yet.
    if [ -x "$dest/configure" ] && [ -f "$dest/.crmpi-source" ]; then
        local missing=""
        for patch in mpi/io/romio-*.patch; do
            grep -qx "patched: ${patch##*/}" "$dest/.crmpi-source" || missing=1
        done
        if [ -z "$missing" ]; then
            say "ROMIO: present in deps/ ($(head -n 1 "$dest/.crmpi-source"))"
            return
        fi
    fi
    mkdir -p "$deps_prefix/src"
    tarball=$(debian_mpich_orig "$deps_prefix/src") || exit 1
    rm -rf "$dest" "$deps_prefix/src/mpich-$debian_mpich_version"
    tar -C "$deps_prefix/src" -xJf "$tarball" "mpich-$debian_mpich_version/src/mpi/romio" ||
        die "ROMIO: ${tarball##*/} has no src/mpi/romio"
    mv "$deps_prefix/src/mpich-$debian_mpich_version/src/mpi/romio" "$dest"
    rm -rf "$deps_prefix/src/mpich-$debian_mpich_version"
    echo "src/mpi/romio of ${tarball##*/}" >"$dest/.crmpi-source"
    for patch in mpi/io/romio-*.patch; do
        patch -s -d "$dest" -p1 <"$patch" || die "ROMIO: $patch does not apply"
        echo "patched: ${patch##*/}" >>"$dest/.crmpi-source"
    done
    say "ROMIO: extracted into deps/romio, with crmpi's patches (mpi/io/romio-*.patch)"
}

criu_verdict() {
    local out
    if out=$("$deps_prefix/sbin/criu" check 2>&1); then
        say "criu check: $(printf '%s\n' "$out" | tail -n 1)"
    else
        say "criu check failed (checkpoint/restart will not work here):"
        printf '%s\n' "$out" | tail -n 5 >&2
    fi
}

do_deps() {
    install_debian_packages
    install_criu
    criu_verdict
    install_dlmalloc
    install_romio
}

# Rebuild only what changed; configure again only when the build system changed.
do_build() {
    do_deps
    export PKG_CONFIG_PATH="$deps_prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
        say "autogen"
        ./autogen.sh >/dev/null
    fi
    mkdir -p build
    if [ ! -f build/Makefile ] || [ configure -nt build/Makefile ]; then
        say "configure"
        (cd build && ../configure --prefix="$install_prefix" --with-criu="$deps_prefix" \
            --with-dlmalloc="$deps_prefix/dlmalloc" --with-romio="$deps_prefix/romio" \
            --enable-silent-rules >configure.out) || { cat build/config.log | tail -n 30; exit 1; }
        sed -n '/^crmpi configuration/,$p' build/configure.out
    fi
    say "make"
    make -C build -j"$jobs" -s >/dev/null
    make -C build -s install >/dev/null
    say "installed into install/ (bin: $(ls "$install_prefix/bin" | tr '\n' ' '))"
}

do_demo() {
    do_build
    "$top/test/demo.sh" "$install_prefix"
}

do_test() {
    if [ "${1:-}" = "--full" ]; then
        export CRMPI_TEST_FULL=1
    elif [ -n "${1:-}" ]; then
        die "test: unknown option '$1' (--full is the one option)"
    fi
    do_build
    "$top/test/run-all.sh" "$top/build" "$install_prefix"
}

do_mpich() {
    do_build
    "$top/test/mpich/run.sh" --all --prefix "$install_prefix" --work "$top/build-mpich" "$@"
}

case "${1:-}" in
    deps) do_deps ;;
    mpich) shift; do_mpich "$@" ;;
    build) do_build ;;
    demo) do_demo ;;
    test) shift; do_test "$@" ;;
    sanitize) shift; do_deps; "$top/test/sanitize/run.sh" "$@" ;;
    *)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || exit 2
        ;;
esac
