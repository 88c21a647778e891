#!/usr/bin/env bash
# Sets up everything on a fresh machine and runs the whole test suite on JAX,
# TensorFlow and PyTorch. Usage: bash scripts/test.sh [extra pytest args]
#
# The three backends' passes run side by side (much of a pass waits on compilers and
# child processes, so two cores serve three passes), each with its own temporary folder
# and kbert cache; each pass's output is printed when it ends. The tests that assert UI
# timings (`-m timing`) then run alone, on the passes that run the app's tests, so that
# the other passes' load cannot fail them. KBERT_TEST_SEQUENTIAL=1 runs the passes one
# after the other instead. Each pass ends with its 25 slowest tests, for balancing them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate

export TF_CPP_MIN_LOG_LEVEL=3 QT_QPA_PLATFORM=offscreen PYTHONHASHSEED=0
backends="jax tensorflow torch"
timing_backends="jax"  # tests/gui runs there (tests/conftest.py)
work=$(mktemp -d "${TMPDIR:-/tmp}/kbert-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT

run_pass() {  # backend, marker expression, then pytest args
    local backend=$1 markers=$2
    shift 2
    KERAS_BACKEND=$backend KBERT_CACHE="$work/cache-$backend" \
        python -m pytest -q -p no:cacheprovider --basetemp="$work/tmp-$backend" \
        --durations=25 -m "$markers" "$@"
}

failed=""
record() {  # name, exit status; pytest's 5 means it collected nothing: a failure too.
    [ "$2" = 0 ] || failed="$failed $1(exit $2)"
}

run_and_record() {  # name, backend, marker expression, then pytest args
    local name=$1 code=0
    shift
    echo "=== $name ==="
    run_pass "$@" || code=$?
    record "$name" "$code"
}

without() {  # word, then a list: the list without that word (never a failing status)
    local word=$1 kept=() item
    shift
    for item in "$@"; do [ "$item" = "$word" ] || kept+=("$item"); done
    echo "${kept[*]}"
}

started=$SECONDS
if [ "${KBERT_TEST_SEQUENTIAL:-0}" = 1 ]; then
    for backend in $backends; do
        run_and_record "KERAS_BACKEND=$backend" "$backend" "not timing" "$@"
    done
else
    declare -A pids
    for backend in $backends; do
        run_pass "$backend" "not timing" "$@" >"$work/$backend.log" 2>&1 &
        pids[$backend]=$!
    done
    echo "=== the passes on $backends run side by side; each prints when it ends ==="
    remaining=$backends
    while [ -n "$remaining" ]; do
        running=()
        for backend in $remaining; do running+=("${pids[$backend]}"); done
        wait -n "${running[@]}" || true
        for backend in $remaining; do
            if ! kill -0 "${pids[$backend]}" 2>/dev/null; then
                code=0
                wait "${pids[$backend]}" || code=$?
                echo "=== KERAS_BACKEND=$backend (ended after $((SECONDS - started)) s) ==="
                cat "$work/$backend.log"
                record "$backend" "$code"
                remaining=$(without "$backend" $remaining)
            fi
        done
    done
fi

for backend in $timing_backends; do
    run_and_record "KERAS_BACKEND=$backend, the timing tests alone" "$backend" "timing" "$@"
done

echo "=== all of it took $((SECONDS - started)) s ==="
if [ -n "$failed" ]; then
    echo "FAILED on:$failed" >&2
    exit 1
fi
echo "all backends passed"
