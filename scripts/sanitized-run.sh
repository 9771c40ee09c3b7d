#!/usr/bin/env bash
# Runs an end-to-end suite with the engine built under sanitizers:
#   bash scripts/sanitized-run.sh VENV ASAN_UBSAN_BUILD_DIR TSAN_BUILD_DIR
# The Python interpreter is not instrumented, so the sanitizer runtime is preloaded and the
# instrumented library is chosen with IOGATE_LIB. A sanitizer report aborts the engine's
# process, which makes its case `crashed` and the run exit non-zero.
set -euo pipefail
venv=$1
asan_build=$2
tsan_build=$3
suite=tests/e2e/suites/sanitize.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run_with() { # NAME RUNTIME_LIB BUILD_DIR [ENV...]
    local name=$1 runtime=$2 build=$3
    shift 3
    printf 'sanitized-run: %s\n' "$name" >&2
    env "$@" LD_PRELOAD="$runtime" IOGATE_LIB="$build/libiogate.so" \
        "$venv/bin/iogate" run "$suite" --json "$out/$name.json" >"$out/$name.log" 2>&1 || {
        cat "$out/$name.log" >&2
        return 1
    }
}

run_with asan-ubsan "$(gcc -print-file-name=libasan.so)" "$asan_build" \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_with tsan "$(gcc -print-file-name=libtsan.so)" "$tsan_build" \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
printf 'sanitized-run: no sanitizer report\n' >&2
