"""Hostile tables through the Python API: every case is a `ValueError` that names the
field (column, row) and the kind of value, never a TypeError, RecursionError or
AttributeError from deep inside; and `FineTuner.run` takes what the task models' `fit`
takes (files, records, DataFrames, datasets)."""

import pytest

from fine_tuning_data import classification_examples
from fine_tuning_data import make_tiny_preset
from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.data import ClassificationExample
from kbert.data import GoldAnswer
from kbert.data import MultipleChoiceExample
from kbert.data import QAExample
from kbert.data import TokenClassificationExample
from kbert.finetuning import FineTuner
from kbert.finetuning import FineTuningConfig
from kbert.finetuning.recipe_registry import make_recipe
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier

pd = pytest.importorskip("pandas")
datasets = pytest.importorskip("datasets")

SURROGATE = "the cat \ud800 sat"
SURROGATE_PROBLEM = r"a lone surrogate U\+D800 at character 8 is not text"


def _deep(depth=10_000):
    """A list nested `depth` deep: repr() of it raises RecursionError."""
    value = "the cat"
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("hostile_tables"), max_length=32)


def _task(task, tokenizer, **arguments):
    model = task(shared_backbone(), **arguments)
    model.tokenizer = tokenizer
    return model


@pytest.fixture(scope="module")
def classifier(tokenizer):
    return _task(BertClassifier, tokenizer, label_names=["neg", "pos"])


def _records(text):
    return [{"text": "the cat sat", "label": "pos"}, {"text": text, "label": "neg"}]


def _raw_calls(model, table):
    """Every way a task model reads a table: fit, evaluate, predict and its verb."""
    return {
        "fit": lambda: model.fit(table, verbose=0),
        "evaluate": lambda: model.evaluate(table, verbose=0),
        "predict": lambda: model.predict(table),
        "classify": lambda: model.classify(table),
    }


def test_a_lone_surrogate_is_named_by_field_and_row(classifier, tokenizer):
    # pandas' Arrow strings refuse such a string; object columns hold it.
    for table in (_records(SURROGATE), pd.DataFrame(_records(SURROGATE), dtype=object)):
        for name, call in _raw_calls(classifier, table).items():
            with pytest.raises(ValueError, match=rf"field 'text', row 1: {SURROGATE_PROBLEM}"):
                call()
    texts = ["the cat sat", SURROGATE]
    tagger = _task(BertTokenClassifier, tokenizer, label_names=["O"])
    calls = [
        (r"text_or_texts\[1\]", lambda: classifier.classify(texts)),
        (r"x\[1\]", lambda: classifier.fit(texts, ["pos", "neg"], verbose=0)),
        (r"texts\[1\]", lambda: tokenizer.encode_batch(texts)),
        (r"text_or_texts\[1\]", lambda: tagger.tag(texts)),
        (r"texts\[1\]", lambda: _task(BertMaskedLM, tokenizer).embed(texts)),
        (
            r"x\['context'\]\[1\]",
            lambda: _task(BertMultipleChoice, tokenizer).choose(texts, [["a", "b"], ["c", "d"]]),
        ),
    ]
    for name, call in calls:
        with pytest.raises(ValueError, match=rf"{name}: {SURROGATE_PROBLEM}"):
            call()
    answerer = _task(BertQuestionAnswerer, tokenizer)
    questions = [{"question": "who sat ?", "context": "the cat sat ."}] * 2
    questions[1] = {"question": "who sat ?", "context": SURROGATE}
    with pytest.raises(ValueError, match=rf"field 'context', row 1: {SURROGATE_PROBLEM}"):
        answerer.answer(questions)
    words = [{"tokens": ["the", "cat"], "tags": ["O", "O"]}] * 2
    words[1] = {"tokens": ["the", SURROGATE], "tags": ["O", "O"]}
    with pytest.raises(ValueError, match=rf"field 'tokens', row 1: item 1: {SURROGATE_PROBLEM}"):
        tagger.fit(words, verbose=0)


def test_a_deeply_nested_text_is_named_not_printed(classifier, tokenizer):
    deep = _deep()
    for table in (_records(deep), pd.DataFrame(_records(deep))):
        for name, call in _raw_calls(classifier, table).items():
            with pytest.raises(ValueError, match=r"field 'text', row 1: .*a list of 1 item"):
                call()
    with pytest.raises(ValueError, match=r"text_or_texts\[1\].*a list of 1 item"):
        classifier.classify(["the cat", deep])
    with pytest.raises(ValueError, match=r"x\[1\]=a list of 1 item"):
        classifier.fit(["the cat", deep], ["pos", "neg"], verbose=0)
    with pytest.raises(ValueError, match=r"text=a list of 1 item"):
        tokenizer.encode(deep)
    # Where a label belongs, too.
    records = [{"text": "the cat", "label": "pos"}, {"text": "a dog", "label": deep}]
    with pytest.raises(ValueError, match=r"y\[1\]=a list of 1 item"):
        classifier.fit(records, verbose=0)


def test_duplicate_dataframe_columns_are_named(classifier):
    rows = [["the cat", "a dog", "pos"], ["a dog", "the cat", "neg"]]
    for columns, repeated in ((["text", "text", "label"], "text"), (["text", "label", "label"], "label")):
        frame = pd.DataFrame(rows if columns[1] == "text" else [[r[0], r[2], r[2]] for r in rows],
                             columns=columns)
        calls = _raw_calls(classifier, frame)
        if repeated == "label":
            calls = {"fit": calls["fit"], "evaluate": calls["evaluate"]}
        for name, call in calls.items():
            with pytest.raises(ValueError, match=rf"2 columns named '{repeated}'"):
                call()


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    return make_tiny_preset(tmp_path_factory.mktemp("hostile_tables_preset") / "preset")


def test_fine_tuner_runs_on_records_and_dataframes(preset, tmp_path):
    examples = classification_examples(16, 0)
    records = [{"text": example.text, "label": example.label} for example in examples]
    config = FineTuningConfig(epochs=1, batch_size=8)
    tuner = FineTuner("classification", preset, tmp_path / "run", config)
    result = tuner.run(records, pd.DataFrame(records[:8]))
    assert result.status == "completed" and result.best_metric is not None
    assert (tmp_path / "run" / "model").is_dir()


def test_fine_tuner_reads_every_table_as_fit_does():
    records = [{"text": "the cat", "label": "pos"}, {"text": "a dog", "label": 1}]
    expected = [
        ClassificationExample("the cat", None, "pos", 1),
        ClassificationExample("a dog", None, "1", 2),
    ]
    recipe = make_recipe("classification")
    for table in (records, pd.DataFrame(records[:1]), datasets.Dataset.from_list(records[:1])):
        assert recipe.examples(table) == expected[: len(table)]
    pairs = [{"text": "the cat", "pair": "sat", "label": "pos"}]
    assert make_recipe("pair-classification").examples(pairs) == [
        ClassificationExample("the cat", "sat", "pos", 1)
    ]
    tagged = [{"tokens": ["Ada", "sat"], "ner_tags": ["B-PER", "O"]}]
    assert make_recipe("token-classification").examples(tagged) == [
        TokenClassificationExample(["Ada", "sat"], ["B-PER", "O"], 1)
    ]
    squad = [
        {"question": "who sat ?", "context": "the cat sat .", "answers": {"text": ["the cat"], "answer_start": [0]}},
        {"question": "who ran ?", "context": "the cat sat .", "answers": {"text": [], "answer_start": []}},
    ]
    assert make_recipe("qa").examples(squad) == [
        QAExample("0", "", "who sat ?", "the cat sat .", (GoldAnswer("the cat", 0),), False),
        QAExample("1", "", "who ran ?", "the cat sat .", (), True),
    ]
    choices = [{"context": "the cat", "endings": ["sat", "flew"], "label": 0}]
    assert make_recipe("multiple-choice").examples(choices) == [
        MultipleChoiceExample("the cat", ("sat", "flew"), 0, 1)
    ]


def test_fine_tuner_refuses_hostile_tables_in_a_sentence(preset, tmp_path):
    tuner = FineTuner("classification", preset, tmp_path / "out", FineTuningConfig(epochs=1))
    frame = pd.DataFrame([["the cat", "a dog", "pos"]], columns=["text", "text", "label"])
    cases = {
        rf"field 'text', row 1: {SURROGATE_PROBLEM}": _records(SURROGATE),
        r"field 'text', row 1: .*a list of 1 item": _records(_deep()),
        "2 columns named 'text'": frame,
        r"item 1: expected a ClassificationExample .* Received: 'a dog' of type str": [
            ClassificationExample("the cat", None, "pos", 1),
            "a dog",
        ],
        r"data\['train'\]": datasets.DatasetDict(train=datasets.Dataset.from_list(_records("a"))),
        r"label of row 1 must be a string or an integer: .*a list of 1 item": [
            {"text": "the cat", "label": "pos"},
            {"text": "a dog", "label": _deep()},
        ],
    }
    for message, data in cases.items():
        with pytest.raises(ValueError, match=message):
            tuner.run(data)
    answers = [{"question": "who ?", "context": "the cat sat .", "answers": (5, "the cat")}]
    with pytest.raises(ValueError, match=r"answer of row 0 is not at character 5"):
        make_recipe("qa").examples(answers)
