#!/usr/bin/env bash
# Sets up everything on a fresh machine and runs the whole test suite on JAX,
# TensorFlow and PyTorch. Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

# System libraries: Qt's offscreen platform needs EGL/xkb/fontconfig/dbus; xvfb
# renders the app's screenshots.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    for package in xvfb xauth libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 \
        libdbus-1-3 libglib2.0-0 libxcb-cursor0 fonts-dejavu-core; do
        dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
    done
    if [ -n "$missing" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
fi

python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# The CPU build of PyTorch first, so that the test extras' `torch` range is already met
# (an unpinned torch would pull a multi-GB CUDA build).
python -m pip install -q torch==2.13.0
python -m pip install -q -e ".[test]"

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
