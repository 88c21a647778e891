#!/usr/bin/env bash
# Sets up kbert in a virtual environment, .venv. Usage: bash scripts/setup.sh [light|test]
#   light  kbert and its core (Keras, JAX, ...): what scripts/demo.sh needs, about 0.8 GB.
#   test   (the default) everything: every backend, the app, the test tools; as root, the
#          system libraries Qt needs too. scripts/test.sh and CI run this.
# A rerun with pyproject.toml and this script unchanged installs nothing and says nothing
# (a stamp in .venv holds their checksum). PyTorch: see install_torch below.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-test}
case "$what" in
    light | test) ;;
    *) echo "usage: bash scripts/setup.sh [light|test]" >&2; exit 2 ;;
esac
say() { echo "kbert setup: $*"; }

# The checksum of what decides the install; a `test` install holds a `light` one.
fingerprint=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
installed() { [ "$(cat ".venv/.kbert-setup-$1" 2>/dev/null)" = "$fingerprint" ]; }
if installed test || { [ "$what" = light ] && installed light; }; then
    exit 0
fi

install_system_libraries() {
    # Qt's offscreen platform needs EGL/xkb/fontconfig/dbus; its xcb platform (a desktop, or
    # xvfb for the app's screenshots) needs the xcb utility libraries too.
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 0
    local missing="" package
    for package in xvfb xauth libegl1 libgl1 libxkbcommon0 libxkbcommon-x11-0 libfontconfig1 \
        libdbus-1-3 libglib2.0-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \
        libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-randr0 \
        fonts-dejavu-core; do
        dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
    done
    if [ -n "$missing" ]; then
        say "installing the system libraries Qt needs:$missing"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
}

install_torch() {
    # pip's default index has PyTorch's CUDA build for Linux (several GB of nvidia
    # packages); its CPU build lives on PyTorch's own index, used only when named.
    local pin=torch==2.13.0 index=${KBERT_TORCH_INDEX_URL:-}
    if [ -z "$index" ]; then
        say "installing $pin from pip's configured index; on Linux that is the CUDA build" \
            "(several GB) unless pip finds a CPU wheel. For the CPU build, set KBERT_TORCH_INDEX_URL" \
            "to PyTorch's CPU wheel index (see pytorch.org's install selector)."
        .venv/bin/python -m pip install "$pin"
    elif ! .venv/bin/python -m pip install "$pin" --extra-index-url "$index"; then
        say "KBERT_TORCH_INDEX_URL ($index) could not be used; installing $pin from pip's" \
            "configured index instead (on Linux the CUDA build, several GB)"
        .venv/bin/python -m pip install "$pin"
    fi
}

install_editable() {  # the pip argument: kbert from this checkout, editable
    # setuptools boxes a note about editable installs into every such install ("folders
    # ... with the same name as your package may take precedence"); it is about setuptools'
    # import hook, not something to act on here, so it is left out of the output.
    PYTHONWARNINGS="ignore:Editable installation" .venv/bin/python -m pip install -e "$1"
}

[ "$what" = test ] && install_system_libraries
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    python3 -m venv .venv || {
        say "python3 could not create a virtual environment; on Debian/Ubuntu install" \
            "python3-venv first (sudo apt-get install python3-venv)" >&2
        rm -rf .venv
        exit 1
    }
fi
.venv/bin/python -m pip install -q --upgrade pip
if [ "$what" = light ]; then
    say "installing kbert with Keras and JAX into .venv (pip install -e .)"
    install_editable .
else
    # PyTorch first, so that the test extras' `torch` range is already met.
    install_torch
    # The test extras include the app's (`gui`: PySide6), which tests/gui needs.
    say "installing kbert with every backend, the app and the test tools (pip install -e \".[test]\")"
    install_editable ".[test]"
fi
echo "$fingerprint" >".venv/.kbert-setup-$what"
say "done"
