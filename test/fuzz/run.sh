#!/usr/bin/env bash
# Fuzz crmpi's readers of untrusted input with libFuzzer (clang), under ASan and UBSan.
#
#   test/fuzz/run.sh [SECONDS]   build the targets, then fuzz each for SECONDS (default 60),
#                                one after the other, from its seeds in test/fuzz/corpus/
#   test/fuzz/run.sh --regress   run each target once over every input of its corpus and of
#                                test/fuzz/regress/<target>/ (no fuzzing; ./bootstrap.sh test)
#   test/fuzz/run.sh --merge     add to test/fuzz/corpus/<target>/ the inputs fuzzing found
#                                that reach code the committed ones do not (libFuzzer -merge=1)
#   options: --target NAME (only this target; repeatable), --config DIR (a configured build
#            directory, whose config.h the sources need; default build/)
#
# Everything is built and kept in build-fuzz/: the targets, the corpus fuzzing grows
# (build-fuzz/corpus/<target>/) and the inputs that crash a target
# (build-fuzz/crashes/<target>/). A crash is fixed in crmpi, and its input committed under
# test/fuzz/regress/<target>/ so that --regress runs it from then on.
#
# The last line says "fuzz: N passed, N failed" (one per target). Exit status: 0, 1 when a
# target failed, 77 when the targets cannot be built here (no clang or no libFuzzer).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/test/fuzz"
work="$top/build-fuzz"
config="$top/build"
mode=fuzz
seconds=60
targets=()
all_targets=(ctl param_file snapshot_commit snapshot_manifest rank_info rank_entry crs_meta pagemap)

while [ $# -gt 0 ]; do
    case $1 in
    --regress) mode=regress ;;
    --merge) mode=merge ;;
    --target) targets+=("${2:?--target needs a name}"); shift ;;
    --config) config=${2:?--config needs a directory}; shift ;;
    [0-9]*) seconds=$1 ;;
    *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
    shift
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

if ! command -v clang >/dev/null; then
    echo "fuzz: clang is not installed (Debian: apt-get install clang); the targets need it"
    exit 77
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1; then
    echo "fuzz: clang cannot link libFuzzer with the sanitizers (Debian: libclang-rt-dev)"
    exit 77
fi
if [ ! -f "$config/config.h" ]; then
    echo "fuzz: no config.h in $config: configure crmpi first (./bootstrap.sh build), or --config"
    exit 77
fi
config=$(cd "$config" && pwd)
mkdir -p "$work"
if ! make -s -C "$work" -f "$here/fuzz.mk" -j"$(nproc)" TOP="$top" CONFIG_DIR="$config" \
    $(printf 'fuzz_%s ' "${targets[@]}") >"$work/build.out" 2>&1; then
    tail -n 20 "$work/build.out"
    echo "fuzz: the targets do not build (log: build-fuzz/build.out)"
    echo "fuzz: 0 passed, ${#targets[@]} failed"
    exit 1
fi

# Sanitizer reports end the run with a non-zero status, whatever kind they are.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# The readers log what they refuse; fuzzing would print it for every input.
quiet_stderr=-close_fd_mask=2
# The targets' scratch directories (fuzz_common.h), removed here: libFuzzer ends a run
# without the exit handlers that would remove them.
export TMPDIR="$work/tmp"

passed=0 failed=0
for target in "${targets[@]}"; do
    fuzzer="$work/fuzz_$target"
    seeds="$here/corpus/$target"
    regress="$here/regress/$target"
    grown="$work/corpus/$target"
    crashes="$work/crashes/$target"
    dict=()
    [ -f "$here/dict/$target.dict" ] && dict=(-dict="$here/dict/$target.dict")
    log="$work/$target.$mode.log"
    rm -rf "$TMPDIR"
    mkdir -p "$grown" "$crashes" "$TMPDIR"
    case $mode in
    regress)
        mapfile -t inputs < <(find "$seeds" "$regress" -type f 2>/dev/null | sort)
        if [ ${#inputs[@]} -eq 0 ]; then
            # Without files libFuzzer would start fuzzing.
            echo "   $target: no input in test/fuzz/corpus/$target or test/fuzz/regress/$target"
            failed=$((failed + 1))
        elif "$fuzzer" "${inputs[@]}" >"$log" 2>&1; then
            echo "   $target: ${#inputs[@]} inputs, every one read cleanly"
            passed=$((passed + 1))
        else
            echo "   $target: FAILED on one of ${#inputs[@]} inputs (build-fuzz/$target.regress.log):"
            grep -E '^(fuzz: .*check failed|==[0-9]+==ERROR|SUMMARY|Running: )' "$log" |
                tail -n 4 | sed 's/^/      /'
            failed=$((failed + 1))
        fi
        ;;
    merge)
        before=$(ls "$seeds" | wc -l)
        "$fuzzer" -merge=1 $quiet_stderr "${dict[@]}" "$seeds" "$grown" >"$log" 2>&1 ||
            { echo "   $target: the merge failed (build-fuzz/$target.merge.log)"; failed=$((failed + 1)); continue; }
        echo "   $target: $((($(ls "$seeds" | wc -l)) - before)) inputs added to test/fuzz/corpus/$target" \
            "($(cat "$seeds"/* | wc -c) bytes in all)"
        passed=$((passed + 1))
        ;;
    fuzz)
        rm -f "$crashes"/*
        "$fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 $quiet_stderr \
            -artifact_prefix="$crashes/" "${dict[@]}" "$grown" "$seeds" >"$log" 2>&1
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        found=$(ls "$crashes" | wc -l)
        if [ "$found" -eq 0 ] && grep -q '^Done [0-9]* runs' "$log"; then
            echo "   $target: ${execs:-?} inputs in $seconds s, no crash"
            passed=$((passed + 1))
        else
            echo "   $target: ${execs:-?} inputs, CRASHED (build-fuzz/$target.fuzz.log):"
            grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" |
                tail -n 3 | sed 's/^/      /'
            for crash in "$crashes"/*; do
                [ -e "$crash" ] && echo "      again: build-fuzz/fuzz_$target ${crash#"$top"/}"
            done
            failed=$((failed + 1))
        fi
        ;;
    esac
done
rm -rf "$TMPDIR"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
