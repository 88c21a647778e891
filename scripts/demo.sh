#!/usr/bin/env bash
# Sets up kbert and runs the main job on the bundled default: build a small Hugging Face
# BERT checkpoint, convert it with `kbert convert`, and query it with kbert, checking
# every number against transformers. Usage: bash scripts/demo.sh [output folder]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
export TF_CPP_MIN_LOG_LEVEL=3 KERAS_BACKEND="${KERAS_BACKEND:-jax}"
out="${1:-out/demo}"
python scripts/make_small_hf_checkpoint.py "$out/huggingface"
kbert convert "$out/huggingface" "$out/kbert" --overwrite
python scripts/query_preset.py "$out/kbert" "$out/huggingface" "The capital of France is [MASK]."
