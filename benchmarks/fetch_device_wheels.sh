#!/usr/bin/env bash
# Downloads into .whl/ (git-ignored) the wheels benchmarks/device_run.sh installs on a
# GPU machine that has no package index and lacks keras, keras-hub, namex and
# optree (its other packages, numpy, h5py, rich, absl-py, ml-dtypes, regex, tokenizers,
# sentencepiece, are there). The versions are this environment's; the wheels are built
# for that machine's CPython 3.12 on x86-64. keras-hub's optional kagglehub and
# tensorflow-text are left out: the benchmark needs neither.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
pins=$("$python" -c 'import importlib.metadata as m; print(" ".join(f"{p}=={m.version(p)}" for p in ("keras", "keras-hub", "namex", "optree")))')
mkdir -p .whl
"$python" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl $pins
ls -l .whl
