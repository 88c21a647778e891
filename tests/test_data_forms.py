"""Data as users hold it: per-example records, pandas DataFrames and Hugging Face
`datasets.Dataset`s train, evaluate and predict every task as today's forms do (dict of
lists, lists of strings), to the same weights; a table of the wrong shape gets one
sentence naming the fields, never the data."""

import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from model_helpers import TINY
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.preprocessing import data_forms
from kbert.training import BertAdamW

pd = pytest.importorskip("pandas")
datasets = pytest.importorskip("datasets")

TEXTS = ["the cat sat on the mat", "a dog ran", "who is the cat", "paris is a city of france"]
PAIRS = ["a dog", "the mat", "the cat sat", "north river"]
LABELS = ["pos", "neg", "pos", "neg"]
WORDS = [["the", "cat", "sat"], ["paris", "is", "a", "city"], ["who", "ran"], ["a", "dog"]]
TAGS = [["O", "B-X", "O"], ["B-Y", "O", "O", "O"], ["O", "O"], ["O", "B-X"]]
TAG_NAMES = ["O", "B-X", "B-Y"]
QUESTIONS = ["who sat ?", "where is paris ?", "what ran ?", "who is the cat ?"]
CONTEXTS = ["the cat sat .", "paris is in france .", "a dog ran .", "the cat is a cat ."]
ANSWERS = [
    {"text": "the cat", "answer_start": 0},
    {"text": "france", "answer_start": 12},
    {"text": "a dog", "answer_start": 0},
    None,
]
# SQuAD's rows (and Hugging Face's squad sets) hold lists of answers; empty: no answer.
SQUAD_ANSWERS = [
    {"text": [answer["text"]], "answer_start": [answer["answer_start"]]}
    if answer
    else {"text": [], "answer_start": []}
    for answer in ANSWERS
]
ENDINGS = [["on a mat", "in paris"], ["in france", "of a dog"], ["ran off", "is a city"],
           ["the mat", "who sat"]]
CHOICE_LABELS = [0, 0, 0, 1]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("data_forms"), max_length=32)


def _model(task, tokenizer, **arguments):
    keras.utils.set_random_seed(7)
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    model = task(backbone, **arguments)
    model.tokenizer = tokenizer
    # Eager steps: the data path is under test here, and tracing a tiny model per case
    # would cost more than the whole test.
    model.compile(optimizer=BertAdamW(learning_rate=1e-2), run_eagerly=True)
    return model


def _weights(model):
    return [np.array(keras.ops.convert_to_numpy(variable)) for variable in model.weights]


def _trained(task, tokenizer, x, y=None, arguments=None):
    """`(weights, evaluate loss)` after one unshuffled epoch on `x` (and `y`) from seed 7."""
    model = _model(task, tokenizer, **(arguments or {}))
    before = _weights(model)
    model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)
    after = _weights(model)
    assert any(not np.array_equal(a, b) for a, b in zip(before, after)), "nothing trained"
    return after, model.evaluate(x, y, batch_size=2, verbose=0, return_dict=True)["loss"]


def _assert_same_training(reference, other):
    weights, loss = reference
    other_weights, other_loss = other
    for expected, actual in zip(weights, other_weights):
        np.testing.assert_allclose(actual, expected, atol=1e-6)
    assert other_loss == pytest.approx(loss, abs=1e-6)


def _records(**columns):
    names = list(columns)
    return [dict(zip(names, values)) for values in zip(*columns.values())]


# Each task: its class and arguments, today's form (x, y), and the same examples as
# columns (the labels under the task's label field).
TASKS = {
    "classification": (
        BertClassifier,
        {"label_names": ["neg", "pos"]},
        (TEXTS, LABELS),
        {"text": TEXTS, "label": LABELS},
    ),
    "pairs": (
        BertClassifier,
        {"label_names": ["neg", "pos"]},
        ({"text": TEXTS, "pair": PAIRS}, LABELS),
        {"text": TEXTS, "pair": PAIRS, "label": LABELS},
    ),
    "token-classification": (
        BertTokenClassifier,
        {"label_names": TAG_NAMES},
        (WORDS, TAGS),
        # Hugging Face's CoNLL names: "tokens", and "ner_tags" as tag ids.
        {"tokens": WORDS, "ner_tags": [[TAG_NAMES.index(t) for t in tags] for tags in TAGS]},
    ),
    "qa": (
        BertQuestionAnswerer,
        {},
        ({"question": QUESTIONS, "context": CONTEXTS}, ANSWERS),
        {"question": QUESTIONS, "context": CONTEXTS, "answers": SQUAD_ANSWERS},
    ),
    "multiple-choice": (
        BertMultipleChoice,
        {},
        ({"context": TEXTS, "endings": ENDINGS}, CHOICE_LABELS),
        {"context": TEXTS, "endings": ENDINGS, "label": CHOICE_LABELS},
    ),
    "masked-lm": (BertMaskedLM, {}, (TEXTS, None), {"text": TEXTS, "title": PAIRS}),
}


def _table(form, columns):
    if form == "records":
        return _records(**columns)
    if form == "DataFrame":
        return pd.DataFrame(columns)
    return datasets.Dataset.from_dict(columns)


@pytest.fixture(scope="module")
def references(tokenizer):
    """Each task's training on today's form, made once: `{task name: (weights, loss)}`."""
    made = {}

    def reference(task_name):
        if task_name not in made:
            task, arguments, (x, y), _ = TASKS[task_name]
            made[task_name] = _trained(task, tokenizer, x, y, arguments)
        return made[task_name]

    return reference


@pytest.mark.skipif(
    keras.config.backend() != "torch",
    reason="a table becomes today's form before Keras sees it, whatever the backend: the "
    "PyTorch pass (the shortest) trains on both; fit on today's forms is tested on every "
    "backend (test_task_text_inputs, test_models)",
)
@pytest.mark.parametrize("form", ["records", "DataFrame", "Dataset"])
@pytest.mark.parametrize("task_name", list(TASKS))
def test_a_table_trains_and_evaluates_to_the_weights_of_todays_form(
    tokenizer, references, task_name, form, monkeypatch
):
    task, arguments, _, columns = TASKS[task_name]
    reference = references(task_name)
    # Chunks of 3 examples: a 4-example dataset is read in two parts and put together.
    monkeypatch.setattr(data_forms, "CHUNK_SIZE", 3)
    table = _table(form, columns)
    _assert_same_training(reference, _trained(task, tokenizer, table, None, arguments))


def test_labels_beside_a_table_or_named_by_y_train_as_inside_it(tokenizer, references):
    arguments = TASKS["classification"][1]
    reference = references("classification")
    records = _records(text=TEXTS)
    beside = _trained(BertClassifier, tokenizer, records, LABELS, arguments)
    _assert_same_training(reference, beside)
    frame = pd.DataFrame({"sentence": TEXTS, "text": TEXTS, "sentiment": LABELS})
    _assert_same_training(
        reference, _trained(BertClassifier, tokenizer, frame, "sentiment", arguments)
    )
    dataset = datasets.Dataset.from_dict({"text": TEXTS})
    beside = _trained(BertClassifier, tokenizer, dataset, LABELS, arguments)
    _assert_same_training(reference, beside)


def test_predict_and_validation_take_tables(tokenizer):
    model = _model(BertQuestionAnswerer, tokenizer)
    records = _records(question=QUESTIONS, context=CONTEXTS, answers=SQUAD_ANSWERS)
    expected = model.predict({"question": QUESTIONS, "context": CONTEXTS}, verbose=0)
    outputs = model.predict(records, verbose=0)
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(outputs[name], expected[name], atol=1e-6)

    arguments = {"label_names": ["neg", "pos"]}
    model = _model(BertClassifier, tokenizer, **arguments)
    history = model.fit(TEXTS, LABELS, validation_split=0.5, shuffle=False, verbose=0)
    frame = pd.DataFrame({"text": TEXTS, "label": LABELS})
    model = _model(BertClassifier, tokenizer, **arguments)
    from_frame = model.fit(frame, validation_split=0.5, shuffle=False, verbose=0)
    assert from_frame.history["val_loss"] == pytest.approx(history.history["val_loss"], abs=1e-6)
    model = _model(BertClassifier, tokenizer, **arguments)
    held_out = datasets.Dataset.from_dict({"text": TEXTS[2:], "label": LABELS[2:]})
    from_dataset = model.fit(frame.iloc[:2], validation_data=held_out, shuffle=False, verbose=0)
    assert from_dataset.history["val_loss"] == pytest.approx(history.history["val_loss"], abs=1e-6)


def test_a_dataset_is_read_in_chunks_never_as_a_whole(tokenizer, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the whole dataset was converted")

    for method in ("to_list", "to_dict", "to_pandas", "__iter__"):
        monkeypatch.setattr(datasets.Dataset, method, refuse)
    monkeypatch.setattr(data_forms, "CHUNK_SIZE", 2)
    model = _model(BertClassifier, tokenizer, label_names=["neg", "pos"])
    chunks = []
    features = model.preprocessor.features

    def counted(x, y=None):
        chunks.append(len(x["text"]))
        return features(x, y)

    monkeypatch.setattr(model.preprocessor, "features", counted)
    columns = {"text": TEXTS * 2, "label": LABELS * 2, "id": list(range(8))}
    dataset = datasets.Dataset.from_dict(columns)
    model.fit(dataset, batch_size=2, verbose=0)
    assert chunks == [2, 2, 2, 2]


def _refusal(call, one_sentence=True):
    with pytest.raises(ValueError) as caught:
        call()
    message = str(caught.value)
    assert len(message) < 250 and "\n" not in message
    if one_sentence:
        assert message.endswith(".") and ". " not in message.rstrip(".")
    for text in TEXTS + PAIRS:
        assert text not in message
    return message


def test_a_table_of_the_wrong_shape_gets_one_sentence_naming_the_fields(tokenizer):
    model = _model(BertClassifier, tokenizer, label_names=["neg", "pos"])
    wrong = _records(sentence=TEXTS, label=LABELS)
    frame, dataset = pd.DataFrame({"sentence": TEXTS}), datasets.Dataset.from_dict({"body": TEXTS})
    for table in (wrong, frame, dataset):
        assert "'text'" in _refusal(lambda: model.fit(table, verbose=0))
    records = _records(text=TEXTS, label=LABELS)
    del records[2]["label"]
    assert "Record 2 lacks the field 'label'" in _refusal(lambda: model.fit(records, verbose=0))
    assert "Record 1 is a str" in _refusal(lambda: model.fit([records[0], TEXTS[1]], verbose=0))
    frame = pd.DataFrame({"text": TEXTS, "label": LABELS})
    assert "'stars'" in _refusal(lambda: model.fit(frame, "stars", verbose=0))
    short = _refusal(lambda: model.fit(frame, LABELS[:3], verbose=0), one_sentence=False)
    assert short.endswith("(4). Received: 3 labels")
    empty = _refusal(lambda: model.fit(frame.iloc[:0], verbose=0), one_sentence=False)
    assert empty.endswith("an empty table")
    splits = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"text": TEXTS})})
    assert "data['train']" in _refusal(lambda: model.evaluate(splits, verbose=0))
    # A plain list of the wrong things is refused by the task, not printed by Keras
    # (in the house's "... Received: ..." form, showing the first wrong item only).
    message = _refusal(lambda: model.fit(list(range(101, 401)), verbose=0), one_sentence=False)
    assert message.endswith("Received: x[0]=101")
    qa = _model(BertQuestionAnswerer, tokenizer)
    message = _refusal(lambda: qa.fit(_records(question=QUESTIONS, text=CONTEXTS), verbose=0))
    assert "'question' and 'context'" in message


def test_kbert_imports_neither_pandas_nor_datasets():
    code = (
        "import sys, kbert, kbert.preprocessing.data_forms; "
        "print(sorted({'pandas', 'datasets'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=pathlib.Path(__file__).parent,
        check=True,
    )
    assert result.stdout.strip() == "[]"


def test_the_inference_functions_take_tables(tokenizer):
    model = _model(BertClassifier, tokenizer, label_names=["neg", "pos"])
    expected = model.classify(TEXTS, pairs=PAIRS)
    for table in (
        _records(text=TEXTS, pair=PAIRS),
        pd.DataFrame({"text": TEXTS, "pair": PAIRS, "label": LABELS}),
        datasets.Dataset.from_dict({"text": TEXTS, "pair": PAIRS}),
    ):
        for result, reference in zip(model.classify(table), expected, strict=True):
            assert result.probabilities == pytest.approx(reference.probabilities, abs=1e-6)
    np.testing.assert_allclose(
        model.embed(pd.DataFrame({"text": TEXTS}), pooling="mean"),
        model.embed(TEXTS, pooling="mean"),
        atol=1e-6,
    )
    tagger = _model(BertTokenClassifier, tokenizer, label_names=TAG_NAMES)
    assert tagger.tag(_records(text=TEXTS)) == tagger.tag(TEXTS)
    masked_lm = _model(BertMaskedLM, tokenizer)
    masked = ["the [MASK] sat on the mat", "a [MASK] ran"]
    from_dataset = masked_lm.fill_mask(datasets.Dataset.from_dict({"text": masked}))
    assert from_dataset == masked_lm.fill_mask(masked)
    assert "'text'" in _refusal(lambda: model.classify(_records(sentence=TEXTS)))
