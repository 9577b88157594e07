#!/usr/bin/env bash
# Run every test of crmpi: the unit tests (cmocka, through `make check`), the fuzz
# targets over their regression inputs (test/fuzz, when clang is there), the
# integration tests (pytest, real jobs under the installed mpirun, and the self-test of the
# simulated nodes in test/nodes) and the quick subset of MPICH's test suite
# (test/mpich/run.sh --quick; expected failures count as skipped). The last line is
# "N passed, N failed, N skipped" over every test case; the exit status is non-zero
# when any test failed.
#
#   test/run-all.sh BUILD_DIR INSTALL_DIR [PYTEST_ARGS...]
set -uo pipefail

build=${1:?usage: run-all.sh BUILD_DIR INSTALL_DIR}
install=${2:?usage: run-all.sh BUILD_DIR INSTALL_DIR}
shift 2
# Absolute: tests run programs from other working directories.
build=$(cd "$build" && pwd) install=$(cd "$install" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0 failed=0 skipped=0

echo "== unit tests (make check)"
# In a TMPDIR of their own, which they must leave empty: nothing of a test outlives it.
unit_tmp=$(mktemp -d "${TMPDIR:-/tmp}/crmpi-unit.XXXXXX")
TMPDIR=$unit_tmp make -C "$build" -s -j"$(nproc)" check >"$build/check.out" 2>&1
check_rc=$?
# cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:".
# Every test's log, wherever its directory is (unit tests sit beside the code they test).
mapfile -t unit_logs < <(find "$build" -path '*/test/*.log' ! -name test-suite.log | sort)
for log in "${unit_logs[@]}"; do
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    if [ -z "$p$f" ]; then
        # A test program that crashed or printed no cmocka summary counts as one failure.
        echo "   $(basename "$log" .log): no cmocka summary (crashed?)"
        f=1
    fi
    passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
    echo "   $(basename "$log" .log): ${p:-0} passed, ${f:-0} failed"
done
if [ "$check_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    echo "   make check failed before running its tests:"
    tail -n 20 "$build/check.out"
    failed=$((failed + 1))
fi
mapfile -t unit_left < <(find "$unit_tmp" -mindepth 1 -maxdepth 1 | sort)
if [ ${#unit_left[@]} -gt 0 ]; then
    echo "   the unit tests left ${#unit_left[@]} entries in their TMPDIR: ${unit_left[*]:0:5}"
    failed=$((failed + 1))
else
    echo "   nothing left in the unit tests' TMPDIR"
    passed=$((passed + 1))
fi
rm -rf "$unit_tmp"

echo "== symbols (test/check-symbols.py: names across folders, libmpi.so's exports)"
# Reads the objects that make check built. It fails only on violations of the naming rule;
# a build it cannot read (make check failed, counted above) is skipped.
/usr/bin/python3 "$top/test/check-symbols.py" "$build" >"$build/check-symbols.out" 2>&1
case $? in
0)
    echo "   every symbol follows the naming rule"
    passed=$((passed + 1))
    ;;
1)
    sed 's/^/   /' "$build/check-symbols.out"
    failed=$((failed + 1))
    ;;
*)
    echo "   skipped: $(tail -n 1 "$build/check-symbols.out")"
    skipped=$((skipped + 1))
    ;;
esac

echo "== style (clang-format, .clang-format at the top)"
unformatted=$(cd "$top" && git ls-files '*.c' '*.h' 2>/dev/null | while read -r f; do
    clang-format --style=file "$f" | cmp -s - "$f" || echo "$f"; done)
if [ -z "$unformatted" ]; then
    echo "   every C file is formatted"
    passed=$((passed + 1))
else
    echo "   not formatted (run clang-format -i on them):" $unformatted
    failed=$((failed + 1))
fi

echo "== layers (the include rule of docs/design.md)"
if /usr/bin/python3 "$top/test/check-layers.py" "$top" >"$build/check-layers.out" 2>&1; then
    echo "   $(tail -n 1 "$build/check-layers.out")"
    passed=$((passed + 1))
else
    sed 's/^/   /' "$build/check-layers.out"
    failed=$((failed + 1))
fi

echo "== fuzz targets over their corpus and regression inputs (test/fuzz/run.sh --regress)"
# Each target reads every input once, under ASan and UBSan; one test per target. They need
# clang and its libFuzzer, which nothing else here does: without them this is skipped.
"$top/test/fuzz/run.sh" --regress --config "$build" >"$build/fuzz-regress.out" 2>&1
fuzz_rc=$?
fuzz_line=$(sed -n 's/^fuzz: \([0-9]* passed, [0-9]* failed\)$/\1/p' "$build/fuzz-regress.out" | tail -n 1)
if [ "$fuzz_rc" -eq 77 ]; then
    echo "   skipped: $(tail -n 1 "$build/fuzz-regress.out")"
    skipped=$((skipped + 1))
elif [ -n "$fuzz_line" ]; then
    grep -v '^fuzz: [0-9]* passed' "$build/fuzz-regress.out"
    read -r p _ f _ <<<"$fuzz_line"
    passed=$((passed + p)) failed=$((failed + f))
else
    echo "   the fuzz targets did not run (exit status $fuzz_rc):"
    tail -n 5 "$build/fuzz-regress.out" | sed 's/^/   /'
    failed=$((failed + 1))
fi

echo "== integration tests (pytest)"
junit="$build/integration-junit.xml"
rm -f "$junit"
# Debian's interpreter: python3-pytest is installed for it, whatever python3 is first in PATH.
CRMPI_INSTALL="$install" /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml="$junit" \
    "$top/test/integration" "$top/test/nodes" "$@"
if [ -f "$junit" ]; then
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
else
    echo "   pytest produced no report"
    failed=$((failed + 1))
fi

echo "== MPICH's test suite, quick subset (test/mpich/run.sh --quick)"
# The first run fetches the suite and configures it (minutes); later runs build and run.
"$top/test/mpich/run.sh" --quick --prefix "$install" --work "$top/build-mpich" \
    >"$build/mpich-quick.out" 2>&1
mpich_rc=$?
mpich_line=$(sed -n 's/^mpich: \([0-9]* passed, [0-9]* failed, [0-9]* skipped\)$/\1/p' \
    "$build/mpich-quick.out" | tail -n 1)
if [ -n "$mpich_line" ]; then
    sed -n '/^crmpi: MPICH test suite/,/^results:/p' "$build/mpich-quick.out" | sed 's/^/   /'
    read -r p _ f _ s _ <<<"$mpich_line"
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
else
    echo "   the suite did not run (exit status $mpich_rc):"
    tail -n 5 "$build/mpich-quick.out" | sed 's/^/   /'
    failed=$((failed + 1))
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
