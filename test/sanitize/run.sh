#!/usr/bin/env bash
# crmpi built with AddressSanitizer and UndefinedBehaviorSanitizer (configure
# --enable-sanitizers) into build-asan/ and install-asan/, then its unit tests (make check)
# and a subset of the integration tests: jobs over each BTL, a few checkpoint/restart
# scenarios. ./bootstrap.sh sanitize runs this once the dependencies are installed;
# README.md, "Sanitizers and fuzzing", says what runs and why.
#
#   test/sanitize/run.sh [PYTEST_ARGS...]
#
# Any sanitizer report fails the test it happens in: the programs exit with status 86
# (ASAN_OPTIONS, UBSAN_OPTIONS; UBSan's checks are fatal by -fno-sanitize-recover).
# LeakSanitizer runs too, with lsan.supp beside this script, except in jobs over the ofi BTL
# and with checkpoints (see ofi_select and cr_select below). The last line is "N passed,
# N failed, N skipped": a unit test program counts as one test, each pytest case as one.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/test/sanitize"
build="$top/build-asan"
install="$top/install-asan"
deps_prefix="$top/deps"
jobs=$(nproc 2>/dev/null || echo 2)
passed=0 failed=0 skipped=0

say() { printf 'sanitize: %s\n' "$*"; }

# ---- build --------------------------------------------------------------------------------
cd "$top" || exit 1
export PKG_CONFIG_PATH="$deps_prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    say "autogen"
    ./autogen.sh >/dev/null || exit 1
fi
mkdir -p "$build"
if [ ! -f "$build/Makefile" ] || [ configure -nt "$build/Makefile" ]; then
    say "configure --enable-sanitizers (build-asan/)"
    (cd "$build" && ../configure --prefix="$install" --with-criu="$deps_prefix" \
        --with-dlmalloc="$deps_prefix/dlmalloc" --enable-sanitizers --enable-silent-rules \
        >configure.out 2>&1) || { tail -n 30 "$build/config.log"; exit 1; }
fi
say "make (build-asan/), install (install-asan/)"
if ! make -C "$build" -j"$jobs" -s >"$build/make.out" 2>&1 ||
    ! make -C "$build" -s install >>"$build/make.out" 2>&1; then
    tail -n 30 "$build/make.out"
    exit 1
fi

# ---- what a sanitizer report does ---------------------------------------------------------
# allocator_may_return_null: an allocation too large for ASan returns NULL as malloc's does
# (MPI_Alloc_mem of an absurd size must fail with MPI_ERR_NO_MEM, not end the program).
export ASAN_OPTIONS="halt_on_error=1:exitcode=86:detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=86"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"

# ---- unit tests ---------------------------------------------------------------------------
# Every unit test program. test_crs_criu dumps and restores a sanitized process: CRIU is
# slower with ASan's shadow mappings, hence a longer alarm than its own 300 s.
export CRMPI_TEST_ALARM_S=1800
echo "== unit tests under ASan and UBSan (make check in build-asan/)"
mapfile -t unit_tests < <(make -C "$build" -s -f Makefile -f - sanitize-list-tests \
    <<<'sanitize-list-tests: ; @printf "%s\n" $(TESTS)')
make -C "$build" -s -j"$jobs" check TESTS="${unit_tests[*]}" >"$build/check.out" 2>&1
check_rc=$?
# The cmocka tests of program $1 that failed.
unit_failed_tests() {
    sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\)$/\1/p' "$build/$1.log" 2>/dev/null | sort -u
}
# Did program $1 fail only by tests expected-failures lists, with no sanitizer error?
unit_failures_expected() {
    local test_name listed=0
    grep -qE 'ERROR: AddressSanitizer|runtime error' "$build/$1.log" 2>/dev/null && return 1
    for test_name in $(unit_failed_tests "$1"); do
        grep -q "^$1 $test_name " "$here/expected-failures" || return 1
        listed=1
    done
    [ "$listed" -eq 1 ]
}
# automake's result of each test program (a leak report at exit fails a program whose
# cmocka tests all passed, so the program's status is what counts here).
unit_passed=$passed
for name in "${unit_tests[@]}"; do
    case $(sed -n 's/^:test-result: //p' "$build/$name.trs" 2>/dev/null) in
    PASS) passed=$((passed + 1)) ;;
    SKIP) skipped=$((skipped + 1)); echo "   $name: skipped" ;;
    *)
        if unit_failures_expected "$name"; then
            skipped=$((skipped + 1))
            echo "   $name: only expected failures (test/sanitize/expected-failures):" \
                $(unit_failed_tests "$name")
            continue
        fi
        failed=$((failed + 1))
        echo "   $name: FAILED (build-asan/$name.log):"
        grep -m 3 -E 'ERROR: (Address|Leak)Sanitizer|runtime error|\[  FAILED  \]' \
            "$build/$name.log" 2>/dev/null | sed 's/^/      /'
        ;;
    esac
done
echo "   $((passed - unit_passed)) of ${#unit_tests[@]} test programs passed"
# make check fails when a program fails, expected failures included: only a make that
# failed with every program passed failed before running them.
if [ "$check_rc" -ne 0 ] && [ "$((passed - unit_passed))" -eq "${#unit_tests[@]}" ]; then
    echo "   make check failed before running its tests:"
    tail -n 20 "$build/check.out"
    failed=$((failed + 1))
fi

# ---- integration tests --------------------------------------------------------------------
# Jobs under mpirun, over the BTLs self, sm, tcp and ucx (pytest -k selections).
p2p_select="(test_conformance and np2 and not ofi) or test_examples_ring"
coll_select="(test_collectives or test_neighbor_collectives or test_persistent_collectives)"
coll_select="$coll_select and not large and not ofi and not np7 and not np8"
# Over ofi, without LeakSanitizer: libfabric is unloaded at finalize (btl_ofi_lib.c), which
# takes away the globals that point to its memory, so LeakSanitizer reports all that
# libfabric still held, in a module it can no longer name (no suppression can match it).
ofi_select="test_conformance and np2 and ofi and (requests or sizes or probe)"
# Checkpoint/restart (CRIU dumps and restores the sanitized ranks like any others), without
# LeakSanitizer: it cannot stop a restored rank's threads (it fails to read /proc/<pid>/task
# there), and the scenario programs keep their buffers until exit.
cr_select="test_scenario and np2 and (inflight or wildcard or collective or rma_fence or threads)"
cr_select="$cr_select and (continue or restart)"

# One pytest run; its cases are added to the counts.
run_pytest() {
    local junit=$1 p f s
    shift
    rm -f "$junit"
    CRMPI_INSTALL="$install" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
        --junitxml="$junit" "$@"
    if [ ! -f "$junit" ]; then
        echo "   pytest produced no report"
        failed=$((failed + 1))
        return
    fi
    read -r p f s < <(/usr/bin/python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tests = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skip = sum(int(s.get("skipped", 0)) for s in suites)
print(tests - bad - skip, bad, skip)
PY
)
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

echo "== integration tests under ASan, UBSan and LeakSanitizer (install-asan/)"
run_pytest "$build/p2p-junit.xml" "$top/test/integration/test_p2p.py" -k "$p2p_select" "$@"
run_pytest "$build/coll-junit.xml" "$top/test/integration/test_coll.py" -k "$coll_select" "$@"
echo "== integration tests over ofi, and checkpoint/restart, under ASan and UBSan"
ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
run_pytest "$build/ofi-junit.xml" "$top/test/integration/test_p2p.py" -k "$ofi_select" "$@"
run_pytest "$build/cr-junit.xml" "$top/test/integration/test_cr.py" -k "$cr_select" "$@"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
