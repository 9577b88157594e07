# shellcheck shell=bash
# Debian source packages from the mirror this machine's apt already uses.
# Sourced (not run) by bootstrap.sh and bench/*/run.sh; it defines functions only and
# leaves the caller's shell options alone.
#
#   debian_mirror                          the mirror's base URI, without a trailing slash
#   debian_source_index MIRROR SUITE FILE  download SUITE's main/source/Sources.xz to FILE
#   debian_source_stanza FILE PACKAGE      print PACKAGE's stanza of the Sources.xz FILE
#   debian_source_field STANZA FIELD       print a one-line field (Version, Directory)
#   debian_source_orig STANZA              print "SHA256 NAME" of the orig tarball
#   debian_source_fetch URL FILE SHA256    download URL to FILE unless FILE already has
#                                          SHA256; fail unless it has it afterwards
#   debian_mpich_orig DIR                  bookworm's mpich 4.0.2 orig tarball, verified,
#                                          in DIR (kept there: a second call reads no
#                                          index); prints its path. MPICH's test suite
#                                          (test/mpich/run.sh) and ROMIO (bootstrap.sh)
#                                          both come from it.
#
# Errors go to stderr as "<tag>: error: ...", the tag being $debian_source_tag or the
# caller's name without ".sh"; the function then returns 1.

debian_source_error() {
    local tag=${debian_source_tag:-${0##*/}}
    printf '%s: error: %s\n' "${tag%.sh}" "$*" >&2
}

# The Debian mirror this machine's apt already uses (deb822 or one-line format).
debian_mirror() {
    local uri=""
    if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
        uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
            /etc/apt/sources.list.d/*.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++)
                   if ($i ~ /^(https?|ftp):/) { print $i; exit } }' /etc/apt/sources.list)
    fi
    [ -n "$uri" ] || {
        debian_source_error "cannot find a Debian mirror in the apt configuration"
        return 1
    }
    printf '%s\n' "${uri%/}"
}

debian_source_index() {
    local mirror=$1 suite=$2 file=$3
    curl -fsSL -o "$file.part" "$mirror/dists/$suite/main/source/Sources.xz" || {
        rm -f "$file.part"
        debian_source_error "cannot download $suite's source index from $mirror"
        return 1
    }
    mv "$file.part" "$file"
}

debian_source_stanza() {
    # No early exit: that would kill xz with SIGPIPE and fail a caller running pipefail.
    xz -dc "$1" | awk -v p="$2" 'BEGIN { RS = "" } !done {
        n = split($0, line, "\n")
        for (i = 1; i <= n; i++) if (line[i] == "Package: " p) { print; done = 1; break } }'
}

debian_source_field() {
    printf '%s\n' "$1" | awk -v f="$2" '!done && $1 == f ":" { print $2; done = 1 }'
}

debian_source_orig() {
    printf '%s\n' "$1" | awk '/^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 }
        s && !done && $3 ~ /\.orig\.tar\.[a-z0-9]+$/ { print $1, $3; done = 1 }'
}

debian_source_fetch() {
    local url=$1 file=$2 expected=$3 sha
    if [ ! -f "$file" ] || ! echo "$expected  $file" | sha256sum -c --quiet >/dev/null 2>&1; then
        curl -fsSL -o "$file" "$url" || { debian_source_error "cannot download $url"; return 1; }
    fi
    sha=$(sha256sum "$file" | cut -d' ' -f1)
    [ "$sha" = "$expected" ] || {
        debian_source_error "${file##*/}: sha256 $sha does not match the index ($expected)"
        return 1
    }
}

# bookworm's mpich source package: the one release both its test suite and ROMIO come from.
debian_mpich_version=4.0.2
debian_mpich_orig() {
    local dir=$1 tarball="mpich_${debian_mpich_version}.orig.tar.xz" mirror stanza orig
    if [ -f "$dir/$tarball.verified" ] && [ -f "$dir/$tarball" ]; then
        printf '%s\n' "$dir/$tarball"
        return
    fi
    mirror=$(debian_mirror) || return 1
    printf "%s: reading bookworm's source index from the configured Debian mirror\n" \
        "${debian_source_tag:-${0##*/}}" >&2
    debian_source_index "$mirror" bookworm "$dir/Sources-bookworm.xz" || return 1
    stanza=$(debian_source_stanza "$dir/Sources-bookworm.xz" mpich)
    orig=$(debian_source_orig "$stanza")
    [ "${orig#* }" = "$tarball" ] || {
        debian_source_error "bookworm's source index has no $tarball (it has: ${orig#* })"
        return 1
    }
    debian_source_fetch "$mirror/$(debian_source_field "$stanza" Directory)/$tarball" \
        "$dir/$tarball" "${orig%% *}" || return 1
    printf '%s: %s verified (sha256 %s)\n' "${debian_source_tag:-${0##*/}}" "$tarball" \
        "${orig%% *}" >&2
    touch "$dir/$tarball.verified"
    printf '%s\n' "$dir/$tarball"
}
