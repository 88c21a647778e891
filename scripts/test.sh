#!/usr/bin/env bash
# Sets up everything on a fresh machine and runs the whole test suite on JAX,
# TensorFlow and PyTorch. Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate

export TF_CPP_MIN_LOG_LEVEL=3 QT_QPA_PLATFORM=offscreen PYTHONHASHSEED=0
failed=""
for backend in jax tensorflow torch; do
    echo "=== KERAS_BACKEND=$backend ==="
    code=0
    KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider "$@" || code=$?
    # pytest's 5 means it collected nothing: a failure too.
    [ "$code" = 0 ] || failed="$failed $backend(exit $code)"
done
if [ -n "$failed" ]; then
    echo "FAILED on:$failed" >&2
    exit 1
fi
echo "all backends passed"
