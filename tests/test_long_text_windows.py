"""Texts longer than the model read in overlapping windows whose logits are pooled."""

import logging

import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert.data.examples import ClassificationExample
from kbert.finetuning import FineTuningConfig
from kbert.finetuning import make_recipe
from kbert.finetuning.classification_recipe import ClassificationRecipe
from kbert.finetuning.classification_recipe import with_long_texts
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from model_helpers import TINY
from kbert.preprocessing.long_text_windows import encode_long_texts
from kbert.preprocessing.long_text_windows import window_spans
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor

LABELS = ["negative", "positive", "neutral"]
# One word piece each, so a text of N words has N pieces.
_WORDS = "the cat sat on mat dog ran a is paris france city of who where".split()
# The shared backbone takes 32 positions: windows of 30 pieces overlapping by 15.
LIMIT = 32


def _text(num_words, seed):
    rng = np.random.default_rng(seed)
    return " ".join(_WORDS[index] for index in rng.integers(len(_WORDS), size=num_words))


LONG = _text(60, seed=0)  # three windows: pieces 0-30, 15-45, 30-60
OTHER_LONG = _text(50, seed=1)  # three windows: 0-30, 15-45, 30-50
SHORT = _text(8, seed=2)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("long_texts"))


def _steep(model):
    """`model` with its head's kernel scaled up: a fresh head on the shared backbone gives
    nearly the same logits for every window, too alike to tell pooling apart."""
    (head,) = model.head_layers()
    kernel, bias = head.get_weights()
    head.set_weights([kernel * 100, bias])
    return model


@pytest.fixture(scope="module")
def classifier(tokenizer):
    model = _steep(BertClassifier(shared_backbone(), label_names=LABELS))
    model.tokenizer = tokenizer
    return model


def _pieces(tokenizer, text):
    (part,) = tokenizer.tokenize_texts([text])
    return part.token_ids.tolist()


def _hand_logits(model, tokenizer, text, spans):
    """The model's logits on `[CLS] pieces [SEP]` of each span, one window at a time."""
    pieces = _pieces(tokenizer, text)
    rows = []
    for start, end in spans:
        token_ids = [tokenizer.cls_token_id] + pieces[start:end] + [tokenizer.sep_token_id]
        inputs = {
            "token_ids": np.array([token_ids], dtype="int32"),
            "segment_ids": np.zeros((1, len(token_ids)), dtype="int32"),
            "padding_mask": np.ones((1, len(token_ids)), dtype="int32"),
        }
        rows.append(np.asarray(model.predict_on_batch(inputs), dtype="float64")[0])
    return np.stack(rows)


def _softmax(logits):
    exponentials = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def test_window_spans_overlap_and_reach_the_end():
    assert window_spans(1000, 510) == [(0, 510), (382, 892), (764, 1000)]
    assert window_spans(60, 30) == [(0, 30), (15, 45), (30, 60)]
    assert window_spans(20, 30) == [(0, 20)]
    assert window_spans(13, 6, overlap=2) == [(0, 6), (4, 10), (8, 13)]


def test_windows_are_the_word_piece_slices(tokenizer):
    assert len(_pieces(tokenizer, LONG)) == 60
    encodings, example_indices = encode_long_texts(
        tokenizer, [LONG, SHORT, OTHER_LONG], None, LIMIT, "windows"
    )
    assert example_indices.tolist() == [0, 0, 0, 1, 2, 2, 2]
    pieces = _pieces(tokenizer, LONG)
    for encoding, (start, end) in zip(encodings[:3], [(0, 30), (15, 45), (30, 60)]):
        expected = [tokenizer.cls_token_id] + pieces[start:end] + [tokenizer.sep_token_id]
        assert encoding.token_ids.tolist() == expected
        assert encoding.segment_ids.tolist() == [0] * len(expected)
    # The first window is what truncation keeps; a short text is encoded as ever.
    truncated = tokenizer.encode(LONG, max_length=LIMIT)
    assert encodings[0].token_ids.tolist() == truncated.token_ids.tolist()
    assert encodings[3].token_ids.tolist() == tokenizer.encode(SHORT).token_ids.tolist()


def test_classify_pools_the_windows_as_by_hand(classifier, tokenizer, caplog):
    texts = [LONG, SHORT, OTHER_LONG]
    spans = {
        LONG: [(0, 30), (15, 45), (30, 60)],
        SHORT: [(0, 8)],
        OTHER_LONG: [(0, 30), (15, 45), (30, 50)],
    }
    with caplog.at_level(logging.WARNING, logger="kbert"):
        results = classifier.classify(texts, long_texts="windows", batch_size=2)
    assert "truncated" not in caplog.text
    for text, result in zip(texts, results):
        logits = _hand_logits(classifier, tokenizer, text, spans[text])
        expected = _softmax(logits.mean(axis=0))
        np.testing.assert_allclose(list(result.probabilities.values()), expected, atol=1e-6)
        assert result.label == LABELS[int(expected.argmax())]
    # The windows matter: truncation reads the first window only.
    truncated = _softmax(_hand_logits(classifier, tokenizer, LONG, [(0, 30)])[0])
    assert not np.allclose(list(results[0].probabilities.values()), truncated, atol=1e-6)


def test_truncate_is_unchanged_and_warns(classifier, tokenizer, caplog):
    with caplog.at_level(logging.WARNING, logger="kbert"):
        result = classifier.classify(LONG)
    assert "Text 0 is longer than the model's limit of 32 tokens and was truncated" in caplog.text
    expected = _softmax(_hand_logits(classifier, tokenizer, LONG, [(0, 30)])[0])
    np.testing.assert_allclose(list(result.probabilities.values()), expected, atol=1e-6)


def test_pairs_keep_truncation_with_its_warning(classifier, caplog):
    with caplog.at_level(logging.WARNING, logger="kbert"):
        pair_result = classifier.classify(LONG, pairs=SHORT, long_texts="windows")
    assert "was truncated" in caplog.text
    assert pair_result == classifier.classify(LONG, pairs=SHORT, long_texts="truncate")


def test_predict_and_classify_follow_the_preprocessor(classifier, tokenizer):
    model = _steep(BertClassifier(classifier.backbone, label_names=LABELS))
    model.preprocessor = model.make_preprocessor(tokenizer, long_texts="windows")
    assert model.preprocessor.get_config()["long_texts"] == "windows"
    logits = model.predict([SHORT, LONG])
    assert logits.shape == (2, 3)
    hand = _hand_logits(model, tokenizer, LONG, [(0, 30), (15, 45), (30, 60)]).mean(axis=0)
    np.testing.assert_allclose(logits[1], hand, atol=1e-5)
    np.testing.assert_allclose(
        list(model.classify(LONG).probabilities.values()), _softmax(hand), atol=1e-6
    )
    model.compile()  # the defaults: cross-entropy on the logits, accuracy
    scores = model.evaluate([SHORT, LONG], ["negative", "neutral"], return_dict=True)
    short = _hand_logits(model, tokenizer, SHORT, [(0, 8)])[0]
    probabilities = _softmax(np.stack([short, hand]))
    expected_loss = -np.mean(np.log(probabilities[[0, 1], [0, 2]]))
    assert scores["loss"] == pytest.approx(expected_loss, abs=1e-5)
    expected_accuracy = np.mean(probabilities.argmax(axis=-1) == np.array([0, 2]))
    assert scores["accuracy"] == pytest.approx(expected_accuracy)
    assert model.evaluate([SHORT, LONG], ["negative", "neutral"]) == pytest.approx(
        [scores["loss"], scores["accuracy"]]
    )
    # The setting travels with the model's config (a `.keras` file), back into its preprocessor.
    saved = model.get_config()["preprocessor"]
    assert TextClassifierPreprocessor(tokenizer, **saved).long_texts == "windows"


def test_fit_trains_on_every_window(classifier, tokenizer, monkeypatch):
    preprocessor = TextClassifierPreprocessor(tokenizer, LIMIT, LABELS, long_texts="windows")
    features = preprocessor.features([LONG, SHORT], ["positive", "negative"])
    assert features.labels.tolist() == [1, 1, 1, 0]
    assert features.example_indices.tolist() == [0, 0, 0, 1]
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=LIMIT))
    model = BertClassifier(backbone, label_names=LABELS)  # trained here: not the shared one
    model.preprocessor = model.make_preprocessor(tokenizer, long_texts="windows")
    datasets = []
    real_dataset = model.preprocessor.dataset

    def recording_dataset(*args, **kwargs):
        datasets.append(real_dataset(*args, **kwargs))
        return datasets[-1]

    monkeypatch.setattr(model.preprocessor, "dataset", recording_dataset)
    model.compile(optimizer="adam")
    model.fit(
        [LONG, SHORT, OTHER_LONG], ["positive", "negative", "neutral"], batch_size=2, verbose=0
    )
    (dataset,) = datasets
    rows = sum(len(dataset.example_indices(index, epoch=0)) for index in range(len(dataset)))
    assert rows == 7  # 3 + 1 + 3 windows


def test_fine_tuning_trains_on_windows_and_evaluation_pools(classifier, tokenizer):
    recipe = with_long_texts(make_recipe("classification"), "windows")
    assert recipe.long_texts == "windows" and recipe.options()["long_texts"] == "windows"
    examples = [
        ClassificationExample(text=LONG, pair=None, label="positive", line=1),
        ClassificationExample(text=SHORT, pair=None, label="negative", line=2),
    ]
    features = recipe.features(examples, tokenizer, LABELS, LIMIT)
    assert len(features) == 4 and features.labels.tolist() == [1, 1, 1, 0]
    truncating = make_recipe("classification")
    assert len(truncating.features(examples, tokenizer, LABELS, LIMIT)) == 2
    assert "long_texts" not in truncating.options()
    predictions = recipe.evaluation_predictions(classifier, examples, batch_size=2)
    assert len(predictions.rows) == 2
    expected = _softmax(
        _hand_logits(classifier, tokenizer, LONG, [(0, 30), (15, 45), (30, 60)]).mean(axis=0)
    )
    row = predictions.rows[0]
    assert row["predicted"] == LABELS[int(expected.argmax())]
    assert row["probability"] == pytest.approx(float(expected.max()), abs=1e-6)


def test_the_command_line_reaches_the_config_and_the_task(monkeypatch):
    import kbert.finetuning
    from kbert.cli import build_parser
    from kbert.commands import finetune
    from kbert.commands.config_arguments import config_from_arguments

    parser = build_parser()
    args = parser.parse_args(
        ["finetune", "--task", "classification", "--model", "demo", "--train", "t.csv",
         "--output", "out", "--long-texts", "windows"]
    )
    config = config_from_arguments(FineTuningConfig, args)
    assert config.long_texts == "windows"
    tuners = []
    monkeypatch.setattr(kbert.finetuning, "FineTuner", lambda task, *rest: tuners.append(task))
    finetune._runner(args, config, None, None)
    assert tuners[0].long_texts == "windows"
    masked = parser.parse_args(
        ["finetune", "--task", "masked-lm", "--model", "demo", "--train", "t.txt",
         "--output", "out", "--long-texts", "windows"]
    )
    with pytest.raises(ValueError, match="--long-texts is for"):
        finetune._runner(masked, config_from_arguments(FineTuningConfig, masked), None, None)
    evaluate = parser.parse_args(
        ["evaluate", "--task", "classification", "--model", "demo", "--data", "d.csv",
         "--long-texts", "windows"]
    )
    assert evaluate.long_texts == "windows"
    classify = parser.parse_args(["classify", "--model", "demo", "--long-texts", "windows", "a"])
    assert classify.long_texts == "windows"
    assert parser.parse_args(["classify", "--model", "demo", "a"]).long_texts is None


def test_a_bad_value_is_named_with_the_choices(classifier, tokenizer):
    message = r"`long_texts` must be one of \('truncate', 'windows'\). Received: long_texts='slide'"
    with pytest.raises(ValueError, match=message):
        TextClassifierPreprocessor(tokenizer, long_texts="slide")
    with pytest.raises(ValueError, match=message):
        FineTuningConfig(long_texts="slide")
    with pytest.raises(ValueError, match=message):
        ClassificationRecipe(long_texts="slide")
    with pytest.raises(ValueError, match=message):
        classifier.classify(LONG, long_texts="slide")
    with pytest.raises(ValueError, match="Windows over long texts are for"):
        with_long_texts(make_recipe("token-classification"), "windows")


def test_a_fine_tuner_hands_windows_from_its_config_to_the_task(tmp_path):
    from kbert.finetuning import FineTuner
    from kbert.pretraining import ContinuedPretraining

    windows = FineTuningConfig(long_texts="windows")
    tuner = FineTuner("classification", "demo", tmp_path / "run", windows)
    assert tuner.task.long_texts == "windows"
    # "truncate" (the default) keeps what the task was made with.
    own = with_long_texts(make_recipe("classification"), "windows")
    assert FineTuner(own, "demo", tmp_path / "run2").task.long_texts == "windows"
    with pytest.raises(ValueError, match="long_texts='windows'"):
        FineTuner("qa", "demo", tmp_path / "run3", windows)
    # The app hands continued pretraining the same form: the setting means nothing there.
    ContinuedPretraining("demo", tmp_path / "run4", {"long_texts": "truncate"})
