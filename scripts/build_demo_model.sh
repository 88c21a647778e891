#!/usr/bin/env bash
# Builds kbert's demo model: a small BERT pretrained on Jane Austen's six novels.
#
# Reproducible and offline except for the Debian archive: the text comes from the
# Debian package r-cran-janeaustenr (public-domain novels as R data, read without R
# by scripts/austen_corpus.py). Every 10th chapter is held out: the held-out scores
# (masked-LM top-1 and next-sentence accuracy) are on text never used in training.
#
# Usage: scripts/build_demo_model.sh            (writes assets/demo/)
# Settings through the environment (defaults in brackets):
#   OUTPUT [assets/demo]   HELDOUT_OUTPUT [assets/demo-heldout]   WORK [build/demo]   SIZE [mini]   VOCAB_SIZE [8000]
#   STEPS [20000]   BATCH_SIZE [64]   LEARNING_RATE [5e-4]   WARMUP_STEPS [1000]
#   MAX_SEQ_LENGTH [128]   DUPE_FACTOR [5]   SEED [12345]   EXTRA_PRETRAIN_ARGS []
# A tiny trial run:  OUTPUT=/tmp/demo WORK=/tmp/demo-work STEPS=200 scripts/build_demo_model.sh
# Run it again with the same WORK to resume an interrupted pretraining.
set -euo pipefail

cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-assets/demo}
HELDOUT_OUTPUT=${HELDOUT_OUTPUT:-assets/demo-heldout}
WORK=${WORK:-build/demo}
SIZE=${SIZE:-mini}
VOCAB_SIZE=${VOCAB_SIZE:-8000}
STEPS=${STEPS:-20000}
BATCH_SIZE=${BATCH_SIZE:-64}
LEARNING_RATE=${LEARNING_RATE:-5e-4}
WARMUP_STEPS=${WARMUP_STEPS:-1000}
MAX_SEQ_LENGTH=${MAX_SEQ_LENGTH:-128}
DUPE_FACTOR=${DUPE_FACTOR:-5}
SEED=${SEED:-12345}
if (( WARMUP_STEPS > STEPS )); then WARMUP_STEPS=$(( STEPS / 10 )); fi

mkdir -p "$WORK"
stage() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# 1. The corpus, from the Debian archive (apt-get download needs no root).
if [[ ! -f "$WORK/train.txt" ]]; then
    stage "corpus: r-cran-janeaustenr"
    rm -rf "$WORK/package" && mkdir -p "$WORK/package"
    (cd "$WORK/package" && apt-get download r-cran-janeaustenr >/dev/null)
    dpkg-deb -x "$WORK"/package/r-cran-janeaustenr_*.deb "$WORK/package/root"
    python scripts/austen_corpus.py \
        "$WORK/package/root/usr/lib/R/site-library/janeaustenr/data/Rdata" \
        "$WORK/train.txt" "$WORK/heldout.txt" --heldout-every 10
fi

# 2. The vocabulary, from the training text only.
if [[ ! -f "$WORK/vocab/vocab.txt" ]]; then
    stage "vocabulary: $VOCAB_SIZE WordPiece tokens, lower-cased"
    kbert vocab --output "$WORK/vocab" --size "$VOCAB_SIZE" "$WORK/train.txt"
fi

# 3. Pretraining instances: chapters are the documents.
for part in train heldout; do
    if [[ ! -f "$WORK/shards-$part/manifest.json" ]]; then
        stage "pretraining data: $part"
        dupe=$DUPE_FACTOR; [[ $part == heldout ]] && dupe=1
        rm -rf "$WORK/shards-$part"
        kbert create-pretraining-data --input "$WORK/$part.txt" --vocab "$WORK/vocab" \
            --output "$WORK/shards-$part" --split-sentences --document-break 2 \
            --max-seq-length "$MAX_SEQ_LENGTH" --dupe-factor "$dupe" --seed "$SEED"
    fi
done

# 4. Pretraining (resumes when WORK holds an interrupted run).
stage "pretraining: BERT-$SIZE, $STEPS steps of $BATCH_SIZE"
resume=()
[[ -f "$WORK/run/training_checkpoint.h5" ]] && resume=(--resume)
kbert pretrain --data "$WORK/shards-train" --eval-data "$WORK/shards-heldout" \
    --output "$WORK/run" --size "$SIZE" --vocab "$WORK/vocab" --steps "$STEPS" \
    --batch-size "$BATCH_SIZE" --learning-rate "$LEARNING_RATE" \
    --warmup-steps "$WARMUP_STEPS" --seed "$SEED" "${resume[@]}" ${EXTRA_PRETRAIN_ARGS:-}

# 5. Held-out scores, by the same command a user would run.
stage "evaluation on the held-out chapters"
kbert evaluate-pretraining --model "$WORK/run/model" --data "$WORK/shards-heldout" --json \
    | tee "$WORK/heldout_scores.json"

# 6. The preset.
stage "writing $OUTPUT"
rm -rf "$OUTPUT.tmp" && cp -r "$WORK/run/model" "$OUTPUT.tmp"
cp "$WORK/heldout_scores.json" "$OUTPUT.tmp/heldout_scores.json"
# The metadata names the data by what it is, not by this machine's paths.
python - "$OUTPUT.tmp/metadata.json" <<'PYTHON'
import json, sys
path = sys.argv[1]
metadata = json.load(open(path))
metadata["pretraining"]["train_data"] = (
    "Jane Austen's novels (Debian r-cran-janeaustenr), 9 of every 10 chapters: "
    "scripts/build_demo_model.sh"
)
metadata["pretraining"]["eval_data"] = "assets/demo-heldout (every 10th chapter)"
with open(path, "w") as handle:
    json.dump(metadata, handle, indent=2)
    handle.write("\n")
PYTHON
rm -rf "$OUTPUT" && mv "$OUTPUT.tmp" "$OUTPUT"
# The held-out shards ship too, so anyone can re-run the evaluation:
#   kbert evaluate-pretraining --model demo --data assets/demo-heldout
rm -rf "$HELDOUT_OUTPUT" && cp -r "$WORK/shards-heldout" "$HELDOUT_OUTPUT"
du -sh "$OUTPUT" "$HELDOUT_OUTPUT" >&2
stage "done"
