#!/usr/bin/env bash
# Builds kbert's demo model: a small BERT pretrained on Jane Austen's six novels and the
# King James Bible.
#
# Reproducible and offline except for the Debian archive: the novels come from the
# Debian package r-cran-janeaustenr (public-domain novels as R data, read without R by
# scripts/austen_corpus.py), the Bible from bible-kjv-text through the bible-kjv
# program (scripts/kjv_corpus.py); neither is installed, only unpacked into WORK. Every
# 10th chapter is held out: the held-out scores (masked-LM top-1 and next-sentence
# accuracy) are on text never used in training. Each novel and each book of the Bible
# is one document, and, as in google-research/bert, a next-sentence negative comes from
# a document drawn uniformly from all the others (DOCUMENT_BREAK=2: chapters instead).
# The held-out scores are also written per corpus: Austen's negatives come mostly from
# the Bible, so its own figure is measured on held-out shards of the novels alone too.
# The defaults are the shipped model's: BERT-tiny, about 40 minutes on a 2-core CPU.
#
# Usage: scripts/build_demo_model.sh            (writes kbert/presets/builtin/demo/)
# Settings through the environment (defaults in brackets):
#   OUTPUT [kbert/presets/builtin/demo]   HELDOUT_OUTPUT [assets/demo-heldout]   WORK [build/demo]   SIZE [tiny]   VOCAB_SIZE [8000]
#   STEPS [7000]   BATCH_SIZE [64]   LEARNING_RATE [1e-3]   WARMUP_STEPS [500]
#   MAX_SEQ_LENGTH [64]   DUPE_FACTOR [5]   DOCUMENT_BREAK [3]   SEED [12345]
#   CHECKPOINT_EVERY [1000]   EXTRA_PRETRAIN_ARGS []
# With a GPU, try SIZE=mini MAX_SEQ_LENGTH=128 STEPS=20000 LEARNING_RATE=5e-4.
# A tiny trial run:  OUTPUT=/tmp/demo WORK=/tmp/demo-work STEPS=200 scripts/build_demo_model.sh
# Run it again with the same WORK to resume an interrupted pretraining.
set -euo pipefail

cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-kbert/presets/builtin/demo}
HELDOUT_OUTPUT=${HELDOUT_OUTPUT:-assets/demo-heldout}
WORK=${WORK:-build/demo}
SIZE=${SIZE:-tiny}
VOCAB_SIZE=${VOCAB_SIZE:-8000}
STEPS=${STEPS:-7000}
BATCH_SIZE=${BATCH_SIZE:-64}
LEARNING_RATE=${LEARNING_RATE:-1e-3}
WARMUP_STEPS=${WARMUP_STEPS:-500}
MAX_SEQ_LENGTH=${MAX_SEQ_LENGTH:-64}
DUPE_FACTOR=${DUPE_FACTOR:-5}
DOCUMENT_BREAK=${DOCUMENT_BREAK:-3}
CHECKPOINT_EVERY=${CHECKPOINT_EVERY:-1000}
SEED=${SEED:-12345}
if (( WARMUP_STEPS > STEPS )); then WARMUP_STEPS=$(( STEPS / 10 )); fi

mkdir -p "$WORK"
stage() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# 1. The corpora, from the Debian archive (apt-get download needs no root).
root="$WORK/package/root"
if [[ ! -f "$WORK/austen-train.txt" || ! -f "$WORK/kjv-train.txt" ]]; then
    stage "corpora: r-cran-janeaustenr, bible-kjv, bible-kjv-text"
    rm -rf "$WORK/package" && mkdir -p "$WORK/package"
    (cd "$WORK/package" && apt-get download r-cran-janeaustenr bible-kjv bible-kjv-text >/dev/null)
    for deb in "$WORK"/package/*.deb; do dpkg-deb -x "$deb" "$root"; done
    python scripts/austen_corpus.py "$root/usr/lib/R/site-library/janeaustenr/data/Rdata" \
        "$WORK/austen-train.txt" "$WORK/austen-heldout.txt" --heldout-every 10
    "$root/usr/bin/bible" -p "$root/usr/lib" -f "Gen1:1-Rev22:21" > "$WORK/kjv-verses.txt"
    python scripts/kjv_corpus.py "$WORK/kjv-verses.txt" \
        "$WORK/kjv-train.txt" "$WORK/kjv-heldout.txt" --heldout-every 10
fi
corpora=(austen kjv)
train_files=("$WORK/austen-train.txt" "$WORK/kjv-train.txt")

# 2. The vocabulary, from the training text only.
if [[ ! -f "$WORK/vocab/vocab.txt" ]]; then
    stage "vocabulary: $VOCAB_SIZE WordPiece tokens, lower-cased"
    kbert vocab --output "$WORK/vocab" --size "$VOCAB_SIZE" "${train_files[@]}"
fi

# 3. Pretraining instances: novels and books of the Bible (or, with DOCUMENT_BREAK=2,
#    chapters) are the documents. Held-out shards of both corpora together (the
#    published scores) and of each alone (the breakdown).
make_shards() {  # NAME DUPE FILES...
    local name=$1 dupe=$2; shift 2
    if [[ ! -f "$WORK/shards-$name/manifest.json" ]]; then
        stage "pretraining data: $name"
        rm -rf "$WORK/shards-$name"
        kbert create-pretraining-data --input "$@" --vocab "$WORK/vocab" \
            --output "$WORK/shards-$name" --split-sentences --document-break "$DOCUMENT_BREAK" \
            --max-seq-length "$MAX_SEQ_LENGTH" --dupe-factor "$dupe" --seed "$SEED" --no-progress
    fi
}
make_shards train "$DUPE_FACTOR" "${train_files[@]}"
make_shards heldout 1 "$WORK/austen-heldout.txt" "$WORK/kjv-heldout.txt"
for corpus in "${corpora[@]}"; do make_shards "heldout-$corpus" 1 "$WORK/$corpus-heldout.txt"; done

# 4. Pretraining (resumes when WORK holds an interrupted run).
stage "pretraining: BERT-$SIZE, $STEPS steps of $BATCH_SIZE"
resume=()
[[ -f "$WORK/run/training_checkpoint.h5" ]] && resume=(--resume)
kbert pretrain --data "$WORK/shards-train" --eval-data "$WORK/shards-heldout" \
    --output "$WORK/run" --size "$SIZE" --vocab "$WORK/vocab" --steps "$STEPS" \
    --batch-size "$BATCH_SIZE" --learning-rate "$LEARNING_RATE" \
    --warmup-steps "$WARMUP_STEPS" --checkpoint-every "$CHECKPOINT_EVERY" --seed "$SEED" \
    "${resume[@]}" ${EXTRA_PRETRAIN_ARGS:-}

# 5. Held-out scores, by the same command a user would run: both corpora (published),
#    then each alone.
stage "evaluation on the held-out chapters"
kbert evaluate-pretraining --model "$WORK/run/model" --data "$WORK/shards-heldout" --json \
    | tail -n 1 | tee "$WORK/heldout_scores.json"
for corpus in "${corpora[@]}"; do
    kbert evaluate-pretraining --model "$WORK/run/model" --data "$WORK/shards-heldout-$corpus" \
        --json | tail -n 1 | tee "$WORK/heldout_scores_$corpus.json"
done

# 6. The preset.
stage "writing $OUTPUT"
mkdir -p "$(dirname "$OUTPUT")" "$(dirname "$HELDOUT_OUTPUT")"
rm -rf "$OUTPUT.tmp" && cp -r "$WORK/run/model" "$OUTPUT.tmp"
# The metadata names the data by what it is, not by this machine's paths.
python - "$WORK" "$OUTPUT.tmp" "${corpora[@]}" <<'PYTHON'
import json, pathlib, sys
work, output, corpora = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
scores = json.loads((work / "heldout_scores.json").read_text())
scores["by_corpus"] = {
    corpus: json.loads((work / f"heldout_scores_{corpus}.json").read_text()) for corpus in corpora
}
(output / "heldout_scores.json").write_text(json.dumps(scores, indent=2) + "\n")
metadata = json.loads((output / "metadata.json").read_text())
metadata["pretraining"]["train_data"] = (
    "Jane Austen's novels (Debian r-cran-janeaustenr) and the King James Bible "
    "(Debian bible-kjv-text), 9 of every 10 chapters, one document per novel or book: "
    "scripts/build_demo_model.sh"
)
metadata["pretraining"]["eval_data"] = "assets/demo-heldout (every 10th chapter)"
(output / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
PYTHON
rm -rf "$OUTPUT" && mv "$OUTPUT.tmp" "$OUTPUT"
# The held-out shards ship too, so anyone can re-run the evaluation:
#   kbert evaluate-pretraining --model demo --data assets/demo-heldout
rm -rf "$HELDOUT_OUTPUT" && cp -r "$WORK/shards-heldout" "$HELDOUT_OUTPUT"
du -sh "$OUTPUT" "$HELDOUT_OUTPUT" >&2
stage "done"
