#!/usr/bin/env bash
# The GPU benchmark on a machine with an NVIDIA GPU and no package index, as one command:
#     bash benchmarks/device_run.sh              (device tool: carry [".whl"])
# It installs the wheels carried in .whl/ where Keras or keras-hub is missing (fetch
# them here first: bash benchmarks/fetch_device_wheels.sh), puts this checkout on
# PYTHONPATH (the benchmark's worker processes inherit it), runs every engine and
# workload of gpu_benchmark.py within its time budget (420 s of cells: under 8 minutes
# in all), prints one table and leaves in $OUT the table, the JSON results and every
# worker's stderr. Other arguments go to gpu_benchmark.py: `--smoke` runs the same on a
# CPU in a few minutes (tests/test_benchmarks.py does).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
if ! "$python" -c "import keras, keras_hub" 2>/dev/null && compgen -G ".whl/*.whl" >/dev/null; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/kbert-site .whl/*.whl
    export PYTHONPATH="/tmp/kbert-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:-${TMPDIR:-/tmp}/kbert-device-run}"
mkdir -p "$out"
"$python" benchmarks/gpu_benchmark.py --output "$out/gpu_results.json" \
    --log "$out/workers.log" "$@" | tee "$out/table.txt"
