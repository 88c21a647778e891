"""SQuAD v1.1 for benchmarks/published_tasks.py: fixed slices, Trainer's QA side, EM and F1.

The slices (question-level, from seeded permutations; each written as a SQuAD JSON file
that keeps every chosen question's article and whole paragraph, in the file's order):

| size | train (train-v1.1) | dev: best epoch (dev-v1.1) | test: scored (dev-v1.1) |
| --- | --- | --- | --- |
| full | 4,000 | 300 | 1,000 |
| small | 1,000 | 100 | 150 |
| tiny | 200 | 50 | 100 |

train: the first N questions of a permutation of train-v1.1's 87,599 questions. test: the
first N of a permutation of dev-v1.1's 10,570 questions; dev: the 300, 100 or 50
questions after the first 1,000 of that permutation, so the epoch is never chosen on a
scored question. The smaller sizes are prefixes of the larger ones.

Trainer's side follows transformers' examples/pytorch/question-answering/run_qa.py: the
question (left-stripped) and the context tokenized with `truncation="only_second"`,
`max_length`, `stride`, `return_overflowing_tokens` and `return_offsets_mapping`; a
window is labelled with the tokens of the first gold answer, or with [CLS] when the answer
is not wholly inside it; a question's answer is the best `start + end` logit over its
windows' 20 best starts and ends, both context tokens, at most 30 tokens long, mapped back
to the context's characters. Two choices make its windows kbert's: run_qa's `stride` is
the overlap of consecutive windows, kbert's `--doc-stride` (128, kbert's default) the step
between their starts, so each question gets the overlap that makes the step 128 tokens;
and batches are padded to their longest window (DataCollatorWithPadding, as the
classification rows), not to `max_length`.

Both engines' test scores are the official SQuAD v1.1 exact match and F1 in percent
(evaluate-v1.1.py's definitions, written again in `squad_v1_scores`).
"""

import collections
import json
import pathlib
import re
import string

import numpy as np

SLICES = {"full": (4000, 300, 1000), "small": (1000, 100, 150), "tiny": (200, 50, 100)}
# dev-v1.1 questions set aside for the largest test slice; the dev slice follows them.
TEST_POOL = 1000
DOC_STRIDE = 128  # kbert's QuestionWindowing default: context tokens between window starts
N_BEST = 20
MAX_ANSWER_LENGTH = 30
METRIC = "exact_match"  # what kbert's qa task keeps the best epoch by (its first metric)


# --- The slices --------------------------------------------------------------------------


def question_ids(document):
    """The ids of a SQuAD document's questions, in the file's order."""
    return [
        question["id"]
        for article in document["data"]
        for paragraph in article["paragraphs"]
        for question in paragraph["qas"]
    ]


def keep_questions(document, chosen):
    """The SQuAD document with only the questions in `chosen` (a set of ids).

    Articles and paragraphs without a chosen question are left out; the others are kept
    whole (title, full context), in the file's order.
    """
    articles = []
    for article in document["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            questions = [question for question in paragraph["qas"] if question["id"] in chosen]
            if questions:
                paragraphs.append({"context": paragraph["context"], "qas": questions})
        if paragraphs:
            articles.append({"title": article["title"], "paragraphs": paragraphs})
    return {"version": document.get("version", "1.1"), "data": articles}


def write_splits(data, work, size, seed):
    """Writes train/dev/test SQuAD JSON files of `size`; returns their paths."""
    train_size, dev_size, test_size = SLICES[size]
    squad = data / "squad"
    train = json.loads((squad / "train-v1.1.json").read_text(encoding="utf-8"))
    dev = json.loads((squad / "dev-v1.1.json").read_text(encoding="utf-8"))
    train_ids, dev_ids = question_ids(train), question_ids(dev)
    train_order = np.random.default_rng(seed).permutation(len(train_ids))
    dev_order = np.random.default_rng(seed).permutation(len(dev_ids))
    chosen = {
        "train": (train, train_order[:train_size], train_ids),
        "dev": (dev, dev_order[TEST_POOL:TEST_POOL + dev_size], dev_ids),
        "test": (dev, dev_order[:test_size], dev_ids),
    }
    folder = work / "squad" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, (document, indices, ids) in chosen.items():
        paths[name] = folder / f"{name}.json"
        kept = keep_questions(document, {ids[i] for i in indices})
        paths[name].write_text(json.dumps(kept), encoding="utf-8")
    return paths


def count_questions(path):
    document = json.loads(path.read_text(encoding="utf-8"))
    return len(question_ids(document))


def read_questions(path):
    """The questions of a SQuAD file as dicts: id, question, context, answers, start."""
    document = json.loads(path.read_text(encoding="utf-8"))
    return [
        {
            "id": question["id"],
            "question": question["question"],
            "context": paragraph["context"],
            "answers": [answer["text"] for answer in question["answers"]],
            "start": question["answers"][0]["answer_start"],
        }
        for article in document["data"]
        for paragraph in article["paragraphs"]
        for question in paragraph["qas"]
    ]


# --- The official SQuAD v1.1 exact match and F1 -----------------------------------------

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text):
    """Lower-cased, without punctuation and the articles a/an/the, whitespace folded."""
    text = "".join(character for character in text.lower() if character not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction, gold):
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction, gold):
    """Token F1 of the normalised words; 0 when no word is shared (or either has none)."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    same = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def squad_v1_scores(predictions, answers):
    """Exact match and F1 in percent, each the best over a question's gold answers.

    Args:
        predictions: dict from question id to the predicted text; a question without
            one scores 0, as in evaluate-v1.1.py.
        answers: dict from question id to its list of gold texts.

    Returns:
        `{"exact_match": ..., "f1": ...}`.

    Example:

    >>> squad_v1_scores({"q": "the Denver Broncos"}, {"q": ["Denver Broncos"]})
    {'exact_match': 100.0, 'f1': 100.0}
    """
    total_exact = total_f1 = 0.0
    for question, golds in answers.items():
        if question not in predictions:
            continue
        total_exact += max(exact_match(predictions[question], gold) for gold in golds)
        total_f1 += max(f1(predictions[question], gold) for gold in golds)
    return {"exact_match": 100 * total_exact / len(answers), "f1": 100 * total_f1 / len(answers)}


# --- Trainer's side: windows in, answers out --------------------------------------------


def answer_tokens(sequence_ids, offsets, start_char, end_char):
    """The first and last tokens of an answer inside a window, or (0, 0) ([CLS]).

    As run_qa.py's `prepare_train_features`: the answer must lie wholly within the
    window's context tokens (`sequence_ids` 1); then the start is the last context token
    starting at or before `start_char` and the end the first ending at or after `end_char`.
    """
    context = [index for index, sequence in enumerate(sequence_ids) if sequence == 1]
    if offsets[context[0]][0] > start_char or offsets[context[-1]][1] < end_char:
        return 0, 0
    start = max(index for index in context if offsets[index][0] <= start_char)
    end = min(index for index in context if offsets[index][1] >= end_char)
    return start, end


def encode(tokenizer, questions, max_length, doc_stride=DOC_STRIDE):
    """The windows of `questions` as Trainer features, and what maps them back.

    Returns:
        `(features, owners, offsets)`: one dict per window (input_ids, token_type_ids,
        attention_mask, start_positions, end_positions), the index of its question, and
        its offsets with None on every token that is not context.
    """
    features, owners, offsets = [], [], []
    for index, item in enumerate(questions):
        question = item["question"].lstrip()
        question_tokens = len(tokenizer(question, add_special_tokens=False)["input_ids"])
        room = max_length - 3 - question_tokens  # context tokens per window
        encoding = tokenizer(
            question, item["context"], truncation="only_second", max_length=max_length,
            stride=max(room - doc_stride, 0), return_overflowing_tokens=True,
            return_offsets_mapping=True,
        )
        end_char = item["start"] + len(item["answers"][0])
        for window, window_offsets in enumerate(encoding["offset_mapping"]):
            sequence_ids = encoding.sequence_ids(window)
            start, end = answer_tokens(sequence_ids, window_offsets, item["start"], end_char)
            features.append({
                "input_ids": encoding["input_ids"][window],
                "token_type_ids": encoding["token_type_ids"][window],
                "attention_mask": encoding["attention_mask"][window],
                "start_positions": start, "end_positions": end,
            })
            owners.append(index)
            offsets.append([
                tuple(offset) if sequence == 1 else None
                for offset, sequence in zip(window_offsets, sequence_ids)
            ])
    return features, owners, offsets


def best_answers(questions, owners, offsets, start_logits, end_logits,
                 n_best=N_BEST, max_answer_length=MAX_ANSWER_LENGTH):
    """Each question's answer text: run_qa.py's `postprocess_qa_predictions` for v1.1.

    Over all windows of a question, the spans from the `n_best` highest start and end
    logits whose tokens are both context, end not before start and at most
    `max_answer_length` tokens long; the best by start + end logit, as context characters.
    A question with no such span gets "". Logit rows may be longer than their windows
    (Trainer pads them); positions past a window's offsets are never chosen.
    """
    candidates = collections.defaultdict(list)
    for window, owner in enumerate(owners):
        window_offsets = offsets[window]
        starts = np.argsort(start_logits[window])[::-1][:n_best]
        ends = np.argsort(end_logits[window])[::-1][:n_best]
        for start in starts.tolist():
            for end in ends.tolist():
                if max(start, end) >= len(window_offsets):
                    continue
                if window_offsets[start] is None or window_offsets[end] is None:
                    continue
                if end < start or end - start + 1 > max_answer_length:
                    continue
                score = float(start_logits[window][start] + end_logits[window][end])
                candidates[owner].append((score, window_offsets[start][0], window_offsets[end][1]))
    answers = {}
    for index, item in enumerate(questions):
        if candidates[index]:
            _, first, last = max(candidates[index], key=lambda candidate: candidate[0])
            answers[item["id"]] = item["context"][first:last]
        else:
            answers[item["id"]] = ""
    return answers


def trainer_parts(transformers, tokenizer, request):
    """QA's share of Trainer's run: the model and, per split, its features and scorer."""
    model = transformers.AutoModelForQuestionAnswering.from_pretrained(request["model"])
    max_length = request["recipe"]["max_length"]

    def encoded(name):
        questions = read_questions(pathlib.Path(request["paths"][name]))
        features, owners, offsets = encode(tokenizer, questions, max_length)
        golds = {item["id"]: item["answers"] for item in questions}

        def scores(prediction):
            start_logits, end_logits = prediction.predictions[:2]
            answers = best_answers(questions, owners, offsets, start_logits, end_logits)
            return squad_v1_scores(answers, golds)

        return features, scores

    return model, encoded


def rescore_predictions(path):
    """`squad_v1_scores` of a `kbert evaluate --task qa --predictions` JSON Lines file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return squad_v1_scores(
        {row["id"]: row["predicted"] for row in rows}, {row["id"]: row["gold"] for row in rows}
    )
