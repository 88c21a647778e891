#!/usr/bin/env bash
# Builds kbert's demo model: a small BERT pretrained on public-domain English from the
# Debian archive, by default (SOURCES) Jane Austen's six novels and the King James Bible.
#
# Reproducible and offline except for the Debian archive; no package is installed, only
# unpacked into WORK. The sources (all public domain; assets/README.md):
#   austen     Jane Austen's novels, r-cran-janeaustenr (R data, scripts/novels_corpus.py)
#   kjv        the King James Bible, bible-kjv-text through the bible-kjv program
#              (scripts/kjv_corpus.py)
#   moby-dick  Melville's Moby-Dick, r-cran-tokenizers (scripts/novels_corpus.py)
#   mhcc, tdavid, scofield: Matthew Henry's Concise Commentary, Spurgeon's Treasury of
#              David, the Scofield notes of 1917, SWORD modules sword-comm-*
#              (scripts/sword_corpus.py)
# The larger corpus: SOURCES="austen kjv moby-dick mhcc tdavid scofield". Every 10th
# chapter of each source is held out (a commentary's held-out chapters are the Bible's),
# and scripts/dedupe_corpus.py removes repeated paragraphs, and any held-out one, from
# the training text: the held-out scores (masked-LM top-1 and next-sentence accuracy)
# are on text never used in training; the published ones on Austen and the Bible
# together, whatever else was trained on. Each novel, book of the Bible and book's
# commentary is one document, and, as in google-research/bert, a next-sentence
# negative comes from a document drawn uniformly from all the others (DOCUMENT_BREAK=2: chapters instead).
# The held-out scores are also written per corpus: Austen's negatives come mostly from
# the Bible, so its own figure is measured on held-out shards of the novels alone too.
# The defaults are `demo-tiny`'s (BERT-tiny, about 40 minutes on a 2-core CPU); the shipped
# `demo`'s settings (BERT-mini, four stages, about 5.3 hours) are in the README's "The demo model".
#
# Usage: scripts/build_demo_model.sh            (writes kbert/presets/builtin/demo/)
# Settings through the environment (defaults in brackets):
#   SOURCES [austen kjv]   OUTPUT [kbert/presets/builtin/demo]
#   HELDOUT_OUTPUT [assets/demo-heldout]   WORK [build/demo]   SIZE [tiny]   VOCAB_SIZE [8000]
#   STEPS [7000]   BATCH_SIZE [64]   LEARNING_RATE [1e-3]   WARMUP_STEPS [500]
#   MAX_SEQ_LENGTH [64]   DUPE_FACTOR [5]   DOCUMENT_BREAK [3]   SEED [12345]
#   CHECKPOINT_EVERY [1000]   EXTRA_PRETRAIN_ARGS []   CORPORA_ONLY [] (1: stop after the corpora)
#   VOCAB [] (a folder with vocab.txt and tokenizer_config.json to use instead of building
#   one, e.g. kbert/presets/builtin/demo: the same
#   vocabulary as the current demo keeps its held-out shards comparable)
#   SOURCE_WEIGHTS [] (e.g. "austen=3 kjv=2": each source's training text goes that many
#   times into the training shards; the held-out shards are unchanged)
#   SHUFFLE_BUFFER [10000] (training instances shuffled together when the shards are
#   written; the number of instances or more mixes the sources in every shard)
#   DROPOUT [] (pretraining dropout, `kbert pretrain --dropout`; the preset then keeps
#   BERT's 0.1 for fine-tuning and records this one in metadata.json)
#   TRAIN_DATA_ARGS [] (more `kbert create-pretraining-data` flags for the training shards
#   only, e.g. "--whole-word-masking --dynamic-masking" with EXTRA_PRETRAIN_ARGS=--dynamic-masking;
#   the held-out shards keep static per-piece masks, so scores stay comparable)
#   CONTINUE_STEPS [] (more stages, e.g. "4500 3200": each that many more steps from the
#   previous stage's model, `kbert pretrain --init-from`, a fresh warm-up and linear decay,
#   the data in another order (seed + 1 per stage): a run whose learning rate decayed to
#   zero while it still improved goes on)
#   CONTINUE_LEARNING_RATE [LEARNING_RATE]   CONTINUE_WARMUP_STEPS [200] (each such stage)
#   CONTINUE_SOURCE_WEIGHTS [] (one SOURCE_WEIGHTS per stage of CONTINUE_STEPS, separated
#   by ";"; a stage with weights gets training shards of its own, weight 0 leaves a source
#   out: ";austen=4 kjv=2 tdavid=0" keeps the second stage on the first one's shards and
#   leans the third towards Austen)
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
SHUFFLE_BUFFER=${SHUFFLE_BUFFER:-10000}
SEED=${SEED:-12345}
ALL_SOURCES="austen kjv moby-dick mhcc tdavid scofield"
SOURCES=${SOURCES:-austen kjv}
if (( WARMUP_STEPS > STEPS )); then WARMUP_STEPS=$(( STEPS / 10 )); fi

mkdir -p "$WORK"
stage() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# 1. The corpora, from the Debian archive (apt-get download needs no root). The KJV
#    listing is always made: the commentaries' verse-keyed files are laid out by it.
root="$WORK/package/root"
packages_of() {  # SOURCE: the Debian packages it is read from
    case $1 in
        austen) echo r-cran-janeaustenr ;;
        kjv) echo bible-kjv bible-kjv-text ;;
        moby-dick) echo r-cran-tokenizers ;;
        mhcc | tdavid | scofield) echo "sword-comm-$1" ;;
        *) echo "unknown source '$1' (known: $ALL_SOURCES)" >&2; return 1 ;;
    esac
}
read -r -a corpora <<< "$SOURCES"
train_files=() heldout_files=()
for corpus in "${corpora[@]}"; do
    packages_of "$corpus" >/dev/null
    train_files+=("$WORK/$corpus-train.txt") heldout_files+=("$WORK/$corpus-heldout.txt")
done
weighted_train_files() {  # WEIGHTS: each source's training text, as many times as its weight
    local corpus pair weight copy
    for corpus in "${corpora[@]}"; do
        weight=1
        for pair in $1; do [[ ${pair%%=*} == "$corpus" ]] && weight=${pair#*=}; done
        for ((copy = 0; copy < weight; copy++)); do echo "$WORK/$corpus-train.txt"; done
    done
}
if [[ ! -f "$WORK/corpora-ready" || "$(cat "$WORK/corpora-ready")" != "$SOURCES" ]]; then
    packages=(bible-kjv bible-kjv-text)
    for corpus in "${corpora[@]}"; do read -r -a more <<< "$(packages_of "$corpus")"; packages+=("${more[@]}"); done
    stage "corpora: $SOURCES, from the Debian packages ${packages[*]}"
    rm -rf "$WORK/package" "$WORK/corpora-ready" && mkdir -p "$WORK/package"
    (cd "$WORK/package" && apt-get download $(printf '%s\n' "${packages[@]}" | sort -u) >/dev/null)
    for deb in "$WORK"/package/*.deb; do dpkg-deb -x "$deb" "$root"; done
    "$root/usr/bin/bible" -p "$root/usr/lib" -f "Gen1:1-Rev22:21" > "$WORK/kjv-verses.txt"
    for corpus in "${corpora[@]}"; do
        out=("$WORK/$corpus-train.txt" "$WORK/$corpus-heldout.txt" --heldout-every 10)
        case $corpus in
            austen) python scripts/novels_corpus.py "$root/usr/lib/R/site-library/janeaustenr/data/Rdata" "${out[@]}" ;;
            moby-dick) python scripts/novels_corpus.py "$root/usr/lib/R/site-library/tokenizers/data/Rdata" "${out[@]}" ;;
            kjv) python scripts/kjv_corpus.py "$WORK/kjv-verses.txt" "${out[@]}" ;;
            *) python scripts/sword_corpus.py "$root/usr/share/sword/modules/comments/zcom/$corpus" \
                "$WORK/kjv-verses.txt" "${out[@]}" ;;
        esac
    done
    # No paragraph twice, none of the held-out ones (a commentary quotes its verses).
    python scripts/dedupe_corpus.py --heldout "${heldout_files[@]}" -- "${train_files[@]}"
    wc -w "${train_files[@]}" "${heldout_files[@]}" >&2
    echo "$SOURCES" > "$WORK/corpora-ready"
fi

if [[ -n "${CORPORA_ONLY:-}" ]]; then stage "corpora written to $WORK (CORPORA_ONLY)"; exit 0; fi

# 2. The vocabulary, from the training text only.
if [[ ! -f "$WORK/vocab/vocab.txt" && -n "${VOCAB:-}" ]]; then
    stage "vocabulary: the one of $VOCAB"
    mkdir -p "$WORK/vocab"
    cp "$VOCAB/vocab.txt" "$VOCAB/tokenizer_config.json" "$WORK/vocab/"
elif [[ ! -f "$WORK/vocab/vocab.txt" ]]; then
    stage "vocabulary: $VOCAB_SIZE WordPiece tokens, lower-cased"
    kbert vocab --output "$WORK/vocab" --size "$VOCAB_SIZE" "${train_files[@]}"
fi

# 3. Pretraining instances: novels and books of the Bible (or, with DOCUMENT_BREAK=2,
#    chapters) are the documents. Held-out shards of both corpora together (the
#    published scores) and of each alone (the breakdown).
make_shards() {  # NAME DUPE SEED FILES...
    local name=$1 dupe=$2 seed=$3 more=(); shift 3
    if [[ $name == train* ]]; then
        read -r -a more <<< "${TRAIN_DATA_ARGS:-}"
        more+=(--shuffle-buffer "$SHUFFLE_BUFFER")
    fi
    if [[ ! -f "$WORK/shards-$name/manifest.json" ]]; then
        stage "pretraining data: $name"
        rm -rf "$WORK/shards-$name"
        kbert create-pretraining-data --input "$@" --vocab "$WORK/vocab" \
            --output "$WORK/shards-$name" --split-sentences --document-break "$DOCUMENT_BREAK" \
            --max-seq-length "$MAX_SEQ_LENGTH" --dupe-factor "$dupe" --seed "$seed" --no-progress \
            "${more[@]}"
    fi
}
mapfile -t shard_files < <(weighted_train_files "${SOURCE_WEIGHTS:-}")
make_shards train "$DUPE_FACTOR" "$SEED" "${shard_files[@]}"
make_shards heldout 1 "$SEED" "$WORK/austen-heldout.txt" "$WORK/kjv-heldout.txt"
for corpus in "${corpora[@]}"; do make_shards "heldout-$corpus" 1 "$SEED" "$WORK/$corpus-heldout.txt"; done

# 4. Pretraining (resumes when WORK holds an interrupted run).
stage "pretraining: BERT-$SIZE, $STEPS steps of $BATCH_SIZE"
resume=() dropout=()
[[ -f "$WORK/run/training_checkpoint.h5" ]] && resume=(--resume)
[[ -n "${DROPOUT:-}" ]] && dropout=(--dropout "$DROPOUT")
kbert pretrain --data "$WORK/shards-train" --eval-data "$WORK/shards-heldout" \
    --output "$WORK/run" --size "$SIZE" --vocab "$WORK/vocab" --steps "$STEPS" \
    --batch-size "$BATCH_SIZE" --learning-rate "$LEARNING_RATE" \
    --warmup-steps "$WARMUP_STEPS" --checkpoint-every "$CHECKPOINT_EVERY" --seed "$SEED" \
    "${dropout[@]}" "${resume[@]}" ${EXTRA_PRETRAIN_ARGS:-}
model="$WORK/run/model"
stages="$STEPS:$LEARNING_RATE:$WARMUP_STEPS"
read -r -a more_steps <<< "${CONTINUE_STEPS:-}"
IFS=";" read -r -a more_weights <<< "${CONTINUE_SOURCE_WEIGHTS:-}"
for index in "${!more_steps[@]}"; do
    number=$((index + 2)) steps=${more_steps[index]} data="$WORK/shards-train"
    if [[ -n "${more_weights[index]:-}" ]]; then
        data="$WORK/shards-train-stage$number"
        mapfile -t stage_files < <(weighted_train_files "${more_weights[index]}")
        make_shards "train-stage$number" "$DUPE_FACTOR" $((SEED + number - 1)) "${stage_files[@]}"
    fi
    stage "pretraining, stage $number: $steps more steps from $model"
    run="$WORK/run-stage$number" resume=()
    [[ -f "$run/training_checkpoint.h5" ]] && resume=(--resume)
    kbert pretrain --data "$data" --eval-data "$WORK/shards-heldout" \
        --output "$run" --init-from "$model" --steps "$steps" \
        --batch-size "$BATCH_SIZE" --learning-rate "${CONTINUE_LEARNING_RATE:-$LEARNING_RATE}" \
        --warmup-steps "${CONTINUE_WARMUP_STEPS:-200}" --checkpoint-every "$CHECKPOINT_EVERY" \
        --seed $((SEED + number - 1)) "${resume[@]}" ${EXTRA_PRETRAIN_ARGS:-}
    model="$run/model"
    stages+=" $steps:${CONTINUE_LEARNING_RATE:-$LEARNING_RATE}:${CONTINUE_WARMUP_STEPS:-200}"
done

# 5. Held-out scores, by the same command a user would run: both corpora (published),
#    then each alone.
stage "evaluation on the held-out chapters"
kbert evaluate-pretraining --model "$model" --data "$WORK/shards-heldout" --json \
    | tail -n 1 | tee "$WORK/heldout_scores.json"
for corpus in "${corpora[@]}"; do
    kbert evaluate-pretraining --model "$model" --data "$WORK/shards-heldout-$corpus" \
        --json | tail -n 1 | tee "$WORK/heldout_scores_$corpus.json"
done

# 6. The preset.
stage "writing $OUTPUT"
mkdir -p "$(dirname "$OUTPUT")" "$(dirname "$HELDOUT_OUTPUT")"
rm -rf "$OUTPUT.tmp" && cp -r "$model" "$OUTPUT.tmp"
# The metadata names the data by what it is, not by this machine's paths.
DROPOUT=${DROPOUT:-} SOURCE_WEIGHTS=${SOURCE_WEIGHTS:-} STAGES="$stages" \
CONTINUE_SOURCE_WEIGHTS=${CONTINUE_SOURCE_WEIGHTS:-} \
python - "$WORK" "$OUTPUT.tmp" "${corpora[@]}" <<'PYTHON'
import json, os, pathlib, sys
work, output, corpora = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3:]
scores = json.loads((work / "heldout_scores.json").read_text())
scores["by_corpus"] = {
    corpus: json.loads((work / f"heldout_scores_{corpus}.json").read_text()) for corpus in corpora
}
(output / "heldout_scores.json").write_text(json.dumps(scores, indent=2) + "\n")
metadata = json.loads((output / "metadata.json").read_text())
described = {
    "austen": "Jane Austen's novels (Debian r-cran-janeaustenr)",
    "kjv": "the King James Bible (Debian bible-kjv-text)",
    "moby-dick": "Herman Melville's Moby-Dick (Debian r-cran-tokenizers)",
    "mhcc": "Matthew Henry's Concise Commentary (Debian sword-comm-mhcc)",
    "tdavid": "C. H. Spurgeon's Treasury of David (Debian sword-comm-tdavid)",
    "scofield": "the Scofield Reference Notes, 1917 (Debian sword-comm-scofield)",
}
names = [described[corpus] for corpus in corpora]
metadata["pretraining"]["train_data"] = (
    (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0])
    + ", 9 of every 10 chapters, one document per novel, book or book's commentary, "
    "repeated paragraphs removed: scripts/build_demo_model.sh"
)
metadata["pretraining"]["eval_data"] = "assets/demo-heldout (every 10th chapter)"
stages = [
    dict(zip(("steps", "learning_rate", "warmup_steps"), map(float, stage.split(":"))))
    for stage in os.environ["STAGES"].split()
]
for stage in stages:
    stage["steps"], stage["warmup_steps"] = int(stage["steps"]), int(stage["warmup_steps"])
# A run in stages (CONTINUE_STEPS): the steps of all, and each stage's schedule and,
# where it had its own, its source weights.
for stage, weights in zip(stages[1:], os.environ["CONTINUE_SOURCE_WEIGHTS"].split(";")):
    if weights.strip():
        stage["source_weights"] = weights.strip()
metadata["pretraining"]["steps"] = sum(stage["steps"] for stage in stages)
metadata["pretraining"]["stages"] = stages
if os.environ["SOURCE_WEIGHTS"]:
    metadata["pretraining"]["source_weights"] = os.environ["SOURCE_WEIGHTS"]
if os.environ["DROPOUT"]:
    # Pretrained without dropout (or with another); fine-tuning starts from BERT's 0.1.
    metadata["pretraining"]["dropout"] = float(os.environ["DROPOUT"])
    config = json.loads((output / "config.json").read_text())
    config["backbone"]["hidden_dropout"] = config["backbone"]["attention_dropout"] = 0.1
    (output / "config.json").write_text(json.dumps(config, indent=2) + "\n")
(output / "metadata.json").write_text(json.dumps(metadata, indent=2) + "\n")
PYTHON
rm -rf "$OUTPUT" && mv "$OUTPUT.tmp" "$OUTPUT"
# The held-out shards ship too, so anyone can re-run the evaluation:
#   kbert evaluate-pretraining --model demo --data assets/demo-heldout
# and Austen's and the Bible's alone, the breakdown in heldout_scores.json.
rm -rf "$HELDOUT_OUTPUT" && cp -r "$WORK/shards-heldout" "$HELDOUT_OUTPUT"
for corpus in austen kjv; do
    rm -rf "$HELDOUT_OUTPUT-$corpus" && cp -r "$WORK/shards-heldout-$corpus" "$HELDOUT_OUTPUT-$corpus"
done
du -sh "$OUTPUT" "$HELDOUT_OUTPUT"* >&2
stage "done"
