#!/usr/bin/env bash
# Sets up a fresh machine for kbert: system libraries (when root), then a virtual
# environment in .venv with kbert and its test extras. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# Qt's offscreen platform needs EGL/xkb/fontconfig/dbus; its xcb platform (a desktop, or
# xvfb for the app's screenshots) needs the xcb utility libraries too.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    missing=""
    for package in xvfb xauth libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 \
        libdbus-1-3 libglib2.0-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \
        libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-randr0 \
        fonts-dejavu-core; do
        dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
    done
    if [ -n "$missing" ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# The CPU build of PyTorch first, so that the test extras' `torch` range is already met
# (an unpinned torch would pull a multi-GB CUDA build).
.venv/bin/python -m pip install -q torch==2.13.0
# The test extras include the app's (`gui`: PySide6), which tests/gui needs.
.venv/bin/python -m pip install -q -e ".[test]"
