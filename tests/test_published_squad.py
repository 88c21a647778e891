"""benchmarks/published_squad.py and SQuAD in published_tasks.py, without the fetched data.

The slices come from a small SQuAD document each test writes; the official exact match
and F1 and Trainer's post-processing are checked on hand-made answers, logits and offsets.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def squad(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import published_squad

    yield published_squad
    sys.modules.pop("published_squad", None)


@pytest.fixture
def tasks(squad):
    import published_tasks

    yield published_tasks
    sys.modules.pop("published_tasks", None)


def _document(prefix, articles, paragraphs, questions):
    """A SQuAD document of articles x paragraphs x questions; ids `prefix-a-p-q`."""
    return {"version": "1.1", "data": [
        {"title": f"{prefix} {a}", "paragraphs": [
            {"context": f"Paragraph {a}.{p} says yes and no.", "qas": [
                {"id": f"{prefix}-{a}-{p}-{q}", "question": f"Does {a}.{p} say {q}?",
                 "answers": [{"text": "yes", "answer_start": 19 + len(f"{a}.{p}") - 3}]}
                for q in range(questions)
            ]}
            for p in range(paragraphs)
        ]}
        for a in range(articles)
    ]}


def _write_published(root):
    folder = root / "squad"
    folder.mkdir(parents=True)
    (folder / "train-v1.1.json").write_text(json.dumps(_document("t", 4, 3, 3)))
    (folder / "dev-v1.1.json").write_text(json.dumps(_document("d", 3, 2, 3)))


def test_the_slices_are_fixed_nested_disjoint_and_keep_whole_paragraphs(
    squad, tmp_path, monkeypatch
):
    _write_published(tmp_path / "data")
    monkeypatch.setattr(squad, "SLICES", {"full": (20, 4, 10), "tiny": (6, 2, 5)})
    monkeypatch.setattr(squad, "TEST_POOL", 10)
    full = squad.write_splits(tmp_path / "data", tmp_path / "full", "full", seed=7)
    tiny = squad.write_splits(tmp_path / "data", tmp_path / "tiny", "tiny", seed=7)
    again = squad.write_splits(tmp_path / "data", tmp_path / "again", "full", seed=7)
    read = {name: json.loads(path.read_text()) for name, path in full.items()}
    ids = {name: squad.question_ids(document) for name, document in read.items()}
    assert {name: len(found) for name, found in ids.items()} == {"train": 20, "dev": 4, "test": 10}
    assert all(path.read_text() == again[name].read_text() for name, path in full.items())
    tiny_ids = {name: squad.question_ids(json.loads(path.read_text())) for name, path in tiny.items()}
    assert set(tiny_ids["train"]) < set(ids["train"]) and set(tiny_ids["test"]) < set(ids["test"])
    assert set(tiny_ids["dev"]) < set(ids["dev"])
    assert not set(ids["dev"]) & set(ids["test"])  # the epoch is never chosen on test
    assert all(question.startswith("t-") for question in ids["train"])
    assert all(question.startswith("d-") for question in ids["dev"] + ids["test"])
    # Not simply the file's first questions: a permutation, kept in the file's order.
    assert ids["train"] != squad.question_ids(_document("t", 4, 3, 3))[:20]
    assert ids["train"] == sorted(ids["train"])
    paragraph = read["train"]["data"][0]["paragraphs"][0]
    assert paragraph["context"].startswith("Paragraph ") and paragraph["context"].endswith("no.")
    assert squad.count_questions(full["train"]) == 20


def test_keep_questions_drops_empty_articles_and_paragraphs(squad):
    document = _document("t", 2, 2, 2)
    kept = squad.keep_questions(document, {"t-1-0-1"})
    assert kept["data"] == [{"title": "t 1", "paragraphs": [{
        "context": "Paragraph 1.0 says yes and no.",
        "qas": [document["data"][1]["paragraphs"][0]["qas"][1]],
    }]}]


def test_the_official_exact_match_and_f1(squad):
    assert squad.normalize_answer("  The  Denver-Broncos, in PARIS!") == "denverbroncos in paris"
    assert squad.exact_match("the Denver Broncos", "Denver Broncos") == 1.0
    assert squad.exact_match("Denver Broncos team", "Denver Broncos") == 0.0
    # 2 shared words: precision 2/3, recall 2/2, F1 = 2 * (2/3) / (2/3 + 1) = 0.8.
    assert squad.f1("Denver Broncos team", "the Denver Broncos") == pytest.approx(0.8)
    assert squad.f1("Carolina Panthers", "Denver Broncos") == 0.0
    assert squad.f1("the", "Denver") == 0.0  # nothing left after normalising
    scores = squad.squad_v1_scores(
        {"q1": "the Denver Broncos", "q2": "Denver Broncos team", "q3": "Panthers"},
        # Each question scores its best gold answer; q4 has no prediction and scores 0.
        {"q1": ["Broncos", "Denver Broncos"], "q2": ["Denver", "the Denver Broncos"],
         "q3": ["Carolina"], "q4": ["Santa Clara"]},
    )
    assert scores["exact_match"] == pytest.approx(100 * 1 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 0.8 + 0 + 0) / 4)


def test_kbert_predictions_are_rescored_by_the_official_rules(squad, tmp_path):
    path = tmp_path / "predictions.jsonl"
    rows = [{"id": "a", "gold": ["Denver Broncos"], "predicted": "the Denver Broncos"},
            {"id": "b", "gold": ["Santa Clara"], "predicted": "Levi's Stadium"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert squad.rescore_predictions(path) == {"exact_match": 50.0, "f1": 50.0}


def test_answer_tokens_label_the_window_or_cls(squad):
    # [CLS] q [SEP] "ab" "cd" "ef" [SEP]: the context covers characters 0 to 8.
    sequence_ids = [None, 0, None, 1, 1, 1, None]
    offsets = [(0, 0), (0, 3), (0, 0), (0, 2), (3, 5), (6, 8), (0, 0)]
    assert squad.answer_tokens(sequence_ids, offsets, 3, 8) == (4, 5)
    assert squad.answer_tokens(sequence_ids, offsets, 4, 5) == (4, 4)  # inside one token
    assert squad.answer_tokens(sequence_ids, offsets, 6, 12) == (0, 0)  # runs past the window
    window = [None, 0, None, 1, 1, None]  # a later window: starts at character 3
    assert squad.answer_tokens(window, [(0, 0), (0, 3), (0, 0), (3, 5), (6, 8), (0, 0)], 0, 2) == (0, 0)


def test_best_answers_search_every_window_within_the_rules(squad):
    questions = [{"id": "q1", "context": "alpha beta gamma delta"},
                 {"id": "q2", "context": "nothing here"}]
    # Two windows [CLS] question [SEP] two words [SEP]; the logit rows one longer (padded).
    first = [None, None, None, (0, 5), (6, 10), None]  # alpha beta
    second = [None, None, None, (11, 16), (17, 22), None]  # gamma delta
    offsets = [first, second, [None, None, None]]
    start = np.array([[9.0, 9.0, 0.0, 1.0, 2.0, 0.0, 50.0],
                      [0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0],
                      [9.0, 9.0, 9.0, -100, -100, -100, -100]])
    end = np.array([[9.0, 9.0, 0.0, 0.0, 1.0, 0.0, 50.0],
                    [0.0, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0],
                    [9.0, 9.0, 9.0, -100, -100, -100, -100]])
    # Non-context tokens and the padded position 6 never win; the second window's
    # "gamma delta" (3 + 2.5) beats the first's "beta" (2 + 1); q2 has no context token.
    answers = squad.best_answers(questions, [0, 0, 1], offsets, start, end)
    assert answers == {"q1": "gamma delta", "q2": ""}
    # At most one token long: "gamma delta" is out, "beta" (2 + 1) beats "delta" (0 + 2.5).
    short = squad.best_answers(questions, [0, 0, 1], offsets, start, end, max_answer_length=1)
    assert short == {"q1": "beta", "q2": ""}
    # An end before its start is never taken: "beta" to "alpha" (5 + 5) loses to
    # "alpha" (1 + 5).
    backwards = squad.best_answers(
        questions[:1], [0], [first], np.array([[0, 0, 0, 1.0, 5.0, 0]]),
        np.array([[0, 0, 0, 5.0, 0, 0]]),
    )
    assert backwards == {"q1": "alpha"}


def test_trainer_windows_are_kberts_windows(squad, tmp_path):
    transformers = pytest.importorskip("transformers")
    from kbert.data.qa_windows import make_qa_windows
    from kbert.data.question_windowing import QuestionWindowing
    from kbert.tokenizer import BertTokenizer

    words = [f"w{index}" for index in range(60)]
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "?", *words]
    path = tmp_path / "vocab.txt"
    path.write_text("".join(token + "\n" for token in vocabulary))
    hf = transformers.BertTokenizerFast(vocab=str(path))
    if len(hf.get_vocab()) != len(vocabulary):
        hf = transformers.BertTokenizerFast(vocab_file=str(path))
    context = " ".join(words)
    start = context.index("w45")
    question = {"id": "q", "question": " who?", "context": context,
                "answers": ["w45 w46"], "start": start}
    features, owners, offsets = squad.encode(hf, [question], max_length=24, doc_stride=8)
    # [CLS] who ? [SEP] and 19 context tokens a window, a new one every 8 tokens:
    # 1 + ceil((60 - 19) / 8) windows.
    assert owners == [0] * 7
    firsts = [question["context"][window[4][0]:window[4][1]] for window in offsets]
    assert firsts == ["w0", "w8", "w16", "w24", "w32", "w40", "w48"]
    kbert = BertTokenizer.from_vocabulary_file(path)
    windows = make_qa_windows(kbert, "who?", context, QuestionWindowing(24, 8))
    assert [feature["input_ids"] for feature in features] == [
        window.token_ids.tolist() for window in windows
    ]
    labels = [(feature["start_positions"], feature["end_positions"]) for feature in features]
    # w45 and w46 lie wholly only in the windows of tokens 32-50 and 40-58.
    assert labels == [(0, 0)] * 4 + [(4 + 13, 4 + 14), (4 + 5, 4 + 6), (0, 0)]


def _result(scores, seconds):
    return {"scores": scores, "train_seconds": seconds, "first_step_seconds": 1.0,
            "examples_per_second": 10.0, "peak_memory_mb": 100.0}


def test_the_table_names_the_scores_of_each_row(tasks):
    results = {
        "sms": {"kbert": _result({"accuracy": 0.984, "macro_f1": 0.958}, 90),
                "trainer": _result({"accuracy": 0.98, "macro_f1": 0.949}, 60)},
        "squad": {"kbert": _result({"exact_match": 55.25, "f1": 66.75}, 200)},
    }
    lines = tasks.table(results).splitlines()
    assert lines[0].startswith("| task | engine | test score 1 | test score 2 |")
    assert lines[2].startswith("| sms | kbert | accuracy 98.4 | macro-F1 95.8 | 90 s (1.50x) |")
    assert lines[3].startswith("| sms | trainer | accuracy 98.0 | macro-F1 94.9 | 60 s |")
    assert lines[4].startswith("| squad | kbert | EM 55.2 | F1 66.8 | 200 s |")


def test_kbert_runs_squad_as_qa_with_the_shared_recipe(tasks):
    from kbert import cli

    recipe = {**tasks.COMMON_RECIPE, **tasks.RECIPES["squad"]}
    paths = {name: f"{name}.json" for name in ("train", "dev", "test")}
    request = {"task": "squad", "recipe": recipe, "paths": paths, "model": "m", "output": "o"}
    finetune, evaluate = tasks._kbert_flags(request)
    parsed = cli.build_parser().parse_args(finetune)
    assert (parsed.task, parsed.doc_stride, parsed.metric) == ("qa", 128, None)
    assert (parsed.max_length, parsed.epochs, parsed.batch_size) == (256, 2, 32)
    assert (parsed.learning_rate, parsed.warmup_ratio, parsed.clip_norm) == (1e-4, 0.1, 1.0)
    assert (parsed.train, parsed.eval) == ("train.json", "dev.json")
    scored = cli.build_parser().parse_args(evaluate)
    assert (scored.task, scored.doc_stride, scored.data, scored.model) == (
        "qa", 128, "test.json", "o/model"
    )
    classification = dict(request, task="sms", recipe={**recipe, "max_length": 128})
    parsed = cli.build_parser().parse_args(tasks._kbert_flags(classification)[0])
    assert (parsed.task, parsed.metric, parsed.max_length) == ("classification", "accuracy", 128)
