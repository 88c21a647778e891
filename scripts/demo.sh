#!/usr/bin/env bash
# Sets up kbert's light install (Keras, JAX, kbert: what this needs) and runs the main job on the bundled default, the `demo` model (a BERT-mini
# kbert pretrained on Austen, the King James Bible, Moby-Dick and three commentaries): fill in masked words,
# then re-measure its published held-out scores. Usage: bash scripts/demo.sh ["text with [MASK]" ...]
# The desktop app on the same model: .venv/bin/kbert gui
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh light
. .venv/bin/activate
export TF_CPP_MIN_LOG_LEVEL=3
if (( $# == 0 )); then
    set -- "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a [MASK]." \
        "Mr. Darcy [MASK] into the room."
fi
kbert fill-mask --model demo --top-k 5 "$@"
for shards in demo-heldout demo-heldout-austen demo-heldout-kjv; do
    echo "held-out $shards:"
    kbert evaluate-pretraining --model demo --data "assets/$shards"
done
