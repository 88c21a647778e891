"""Task models take what users have, keras-hub style: raw strings in `fit`, `evaluate`
and `predict`; a `.keras` file keeps the tokenizer; `from_preset` comes compiled."""

import json
import logging

import keras
import numpy as np
import pytest

import kbert
from model_helpers import TINY
from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from kbert.cli import main
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertPretrainer
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTask
from kbert.models import BertTokenClassifier
from kbert.preprocessing import MaskedLMPreprocessor
from kbert.training import BertAdamW

TEXTS = ["the cat sat on the mat", "a dog ran", "who is the cat", "paris is a city of france"]
PAIRS = ["a dog", "the mat", "the cat sat", "north river"]
LABELS = ["pos", "neg", "pos", "neg"]
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def preset(tmp_path_factory):
    """A tiny pretrainer preset (BertPretrainer heads) with the test vocabulary."""
    folder = tmp_path_factory.mktemp("text_inputs")
    tokenizer = make_tokenizer(folder, max_length=32)
    backbone = BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32))
    BertPretrainer(backbone).save_to_preset(folder / "pretrainer", tokenizer=tokenizer)
    return folder / "pretrainer"


def _cross_entropy(logits, targets, weights=None):
    logits = np.asarray(logits, dtype=np.float64)
    logits = logits - logits.max(axis=-1, keepdims=True)
    log_probabilities = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    picked = -np.take_along_axis(log_probabilities, targets[..., None], axis=-1)[..., 0]
    if weights is None:
        return picked.mean()
    return (picked * weights).sum() / weights.sum()


def test_from_preset_is_compiled_with_bert_adamw_and_no_decay_on_layer_norm(preset):
    model = BertClassifier.from_preset(preset, num_classes=2)
    assert model.compiled
    assert isinstance(model.optimizer, BertAdamW)
    variables = {variable.path: variable for variable in model.trainable_variables}
    gamma = next(v for path, v in variables.items() if path.endswith("layer_norm/gamma"))
    kernel = next(v for path, v in variables.items() if path.endswith("classifier_head/kernel"))
    bias = next(v for path, v in variables.items() if path.endswith("classifier_head/bias"))
    assert not model.optimizer._use_weight_decay(gamma)
    assert not model.optimizer._use_weight_decay(bias)
    assert model.optimizer._use_weight_decay(kernel)


def test_classifier_fits_evaluates_and_predicts_raw_strings_and_label_names(preset):
    model = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    model.compile(optimizer=BertAdamW(learning_rate=1e-2))
    history = model.fit(TEXTS, LABELS, epochs=8, batch_size=2, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 8 and losses[-1] < losses[0]

    logits = model.predict(TEXTS, verbose=0)
    assert logits.shape == (4, 2)
    expected = model.predict_on_batch(model.tokenizer(TEXTS))
    np.testing.assert_allclose(logits, expected, atol=TOLERANCE)

    scores = model.evaluate(TEXTS, LABELS, verbose=0, return_dict=True)
    label_ids = np.array([["neg", "pos"].index(label) for label in LABELS])
    assert scores["loss"] == pytest.approx(_cross_entropy(logits, label_ids), abs=TOLERANCE)
    assert scores["accuracy"] == pytest.approx(np.mean(logits.argmax(-1) == label_ids))
    # Class ids work as well as label strings.
    assert model.evaluate(TEXTS, label_ids, verbose=0, return_dict=True)["loss"] == pytest.approx(
        scores["loss"], abs=TOLERANCE
    )


def test_classifier_takes_pairs_validation_and_class_weights(preset):
    model = BertClassifier.from_preset(preset, num_classes=2)
    logits = model.predict((TEXTS, PAIRS), verbose=0)
    np.testing.assert_allclose(
        logits, model.predict_on_batch(model.tokenizer(TEXTS, PAIRS)), atol=TOLERANCE
    )
    as_tuples = model.predict(list(zip(TEXTS, PAIRS)), verbose=0)
    np.testing.assert_allclose(as_tuples, logits, atol=TOLERANCE)
    as_dict = model.predict({"text": TEXTS, "pair": PAIRS}, verbose=0)
    np.testing.assert_allclose(as_dict, logits, atol=TOLERANCE)

    history = model.fit(
        (TEXTS, PAIRS), [0, 1, 0, 1], validation_split=0.25, class_weight={0: 1.0, 1: 3.0},
        epochs=1, verbose=0,
    )
    assert "val_loss" in history.history
    history = model.fit(
        (TEXTS, PAIRS), [0, 1, 0, 1], validation_data=((TEXTS[:2], PAIRS[:2]), [0, 1]),
        epochs=1, verbose=0,
    )
    assert "val_loss" in history.history


def test_bad_labels_are_named(preset):
    model = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    with pytest.raises(ValueError, match="'meh', which is not one of the model's label_names"):
        model.fit(TEXTS, ["pos", "neg", "meh", "pos"], verbose=0)
    unnamed = BertClassifier.from_preset(preset, num_classes=2)
    with pytest.raises(ValueError, match="no `label_names`"):
        unnamed.fit(TEXTS, LABELS, verbose=0)
    with pytest.raises(ValueError, match=r"class id in \[0, 2\)"):
        unnamed.fit(TEXTS, [0, 1, 2, 0], verbose=0)


WORDS = [["the", "cat", "sat"], ["paris", "is", "a", "city"], "who ran"]
TAGS = [["O", "B-X", "O"], ["B-Y", "O", "O", "O"], ["O", "O"]]


def test_token_classifier_fits_and_scores_words_with_tag_strings(preset):
    model = BertTokenClassifier.from_preset(preset, label_names=["O", "B-X", "B-Y"])
    history = model.fit(WORDS, TAGS, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    logits = model.predict(WORDS, verbose=0)
    features = model.preprocessor.features(WORDS, TAGS)
    # One length for all rows: the inference bucket of the longest.
    assert logits.shape[:2] == (3, 8) and max(len(ids) for ids in features.token_ids) <= 8
    targets, weights, rows = [], [], []
    for row, labels in enumerate(features.labels):
        for position, label in enumerate(labels):
            if label >= 0:
                rows.append(logits[row, position])
                targets.append(label)
    scores = model.evaluate(WORDS, TAGS, verbose=0, return_dict=True)
    expected = _cross_entropy(np.array(rows), np.array(targets))
    assert scores["loss"] == pytest.approx(expected, abs=TOLERANCE)
    with pytest.raises(ValueError, match="has 3 words but 2 tags"):
        model.fit(WORDS, [["O", "O"], TAGS[1], TAGS[2]], verbose=0)


QUESTIONS = {"question": ["who sat?", "what is paris?"], "context": ["the cat sat.", "paris is a city."]}
ANSWERS = [{"text": "the cat", "answer_start": 0}, (9, "a city")]


def test_question_answerer_fits_on_answers_and_predicts_one_row_per_question(preset):
    model = BertQuestionAnswerer.from_preset(preset)
    model.fit(QUESTIONS, ANSWERS, epochs=1, verbose=0)
    outputs = model.predict(QUESTIONS, verbose=0)
    assert outputs["start_logits"].shape[0] == 2
    features = model.preprocessor.features(QUESTIONS, ANSWERS)
    starts, ends = features.labels["start_logits"], features.labels["end_logits"]
    # "the cat" is tokens 4-5 of [CLS] who sat ? [SEP] the cat sat . [SEP].
    assert (starts[0], ends[0]) == (5, 6)
    scores = model.evaluate(QUESTIONS, ANSWERS, verbose=0, return_dict=True)
    expected = _cross_entropy(outputs["start_logits"], starts) + _cross_entropy(
        outputs["end_logits"], ends
    )
    assert scores["loss"] == pytest.approx(expected, abs=TOLERANCE)
    with pytest.raises(ValueError, match="not at character 3"):
        model.fit(QUESTIONS, [(3, "the cat"), None], verbose=0)


def test_masked_lm_fits_on_plain_texts_with_new_masks_each_epoch(preset):
    model = BertMaskedLM.from_preset(preset)
    history = model.fit(TEXTS, epochs=2, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    preprocessor = model.preprocessor
    dataset = preprocessor.dataset(TEXTS, batch_size=4, seed=3)
    inputs, targets, weights = dataset.batch(0, 0)
    again = preprocessor.dataset(TEXTS, batch_size=4, seed=3).batch(0, 0)
    np.testing.assert_array_equal(inputs["token_ids"], again[0]["token_ids"])
    later = dataset.batch(1, 0)
    assert not np.array_equal(inputs["mask_positions"], later[0]["mask_positions"])
    # The targets are the original tokens at the chosen positions.
    original = model.tokenizer(TEXTS, sequence_length=inputs["token_ids"].shape[1])
    chosen = np.take_along_axis(original["token_ids"], inputs["mask_positions"], axis=1)
    np.testing.assert_array_equal(np.where(weights > 0, chosen, 0), np.where(weights > 0, targets, 0))
    with pytest.raises(ValueError, match="Pass no `y`"):
        model.fit(TEXTS, [0, 1, 0, 1], verbose=0)


def test_masked_lm_predicts_the_masks_written_in_the_texts(preset):
    model = BertMaskedLM.from_preset(preset)
    texts = ["the [MASK] sat on the mat", "a [MASK] ran [MASK]"]
    logits = model.predict(texts, verbose=0)
    assert logits.shape == (2, 2, model.backbone.vocabulary_size)
    inputs = model.tokenizer(texts)
    positions = np.array([[2, 0], [2, 4]], dtype="int32")
    expected = model.predict_on_batch({**inputs, "mask_positions": positions})
    np.testing.assert_allclose(logits[0, 0], expected[0, 0], atol=TOLERANCE)
    np.testing.assert_allclose(logits[1], expected[1], atol=TOLERANCE)
    with pytest.raises(ValueError, match="has no \\[MASK\\]"):
        model.predict(["no mask here"], verbose=0)


def test_pretrainer_fits_on_segment_pairs_with_next_sentence_labels(preset):
    model = BertPretrainer.from_preset(preset)
    history = model.fit((TEXTS, PAIRS), ["is_next", "is_random", 0, 1], epochs=1, verbose=0)
    assert {"mlm_logits_loss", "nsp_logits_loss"} <= set(history.history)
    scores = model.evaluate((TEXTS, PAIRS), [0, 1, 0, 1], verbose=0, return_dict=True)
    assert np.isfinite(scores["loss"])
    with pytest.raises(ValueError, match="segment pairs"):
        model.fit(TEXTS, [0, 1, 0, 1], verbose=0)


def test_keras_files_keep_the_tokenizer_and_label_names(preset, tmp_path):
    classifier = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    tagger = BertTokenClassifier.from_preset(preset, label_names=["O", "B-X", "B-Y"])
    reader = BertQuestionAnswerer.from_preset(preset)
    masked_lm = BertMaskedLM.from_preset(preset)
    loaded = {}
    for name, model in [("c", classifier), ("t", tagger), ("q", reader), ("m", masked_lm)]:
        path = tmp_path / f"{name}.keras"
        model.save(path)
        loaded[name] = keras.saving.load_model(path)  # safe_mode on
        assert loaded[name].tokenizer.vocabulary == model.tokenizer.vocabulary
        assert loaded[name].compiled
    assert loaded["c"].label_names == ["neg", "pos"]
    assert loaded["c"].classify(TEXTS) == classifier.classify(TEXTS)
    assert loaded["t"].tag("the cat sat") == tagger.tag("the cat sat")
    question, context = "who sat?", "the cat sat on the mat."
    assert loaded["q"].answer(question, context, top_k=3) == reader.answer(question, context, top_k=3)
    assert loaded["m"].fill_mask("the [MASK] sat.") == masked_lm.fill_mask("the [MASK] sat.")
    # Raw strings train the loaded model too.
    loaded["c"].fit(TEXTS, LABELS, epochs=1, verbose=0)


def test_bert_task_from_preset_returns_the_task_a_preset_holds(preset, tmp_path):
    classifier = BertClassifier.from_preset(preset, label_names=["neg", "pos"])
    classifier.save_to_preset(tmp_path / "classifier")
    for loaded in (kbert.BertTask.from_preset(tmp_path / "classifier"), BertTask.from_preset(tmp_path / "classifier")):
        assert type(loaded) is BertClassifier and loaded.label_names == ["neg", "pos"]
    assert type(BertTask.from_preset(preset)) is BertPretrainer
    BertBackbone(**dict(TINY, vocabulary_size=len(VOCABULARY))).save_to_preset(tmp_path / "bare")
    with pytest.raises(ValueError, match="bare BertBackbone"):
        BertTask.from_preset(tmp_path / "bare")


def test_a_missing_head_is_named_with_the_command_that_adds_one(preset, capsys):
    for model_class, task in [(BertClassifier, "classification"), (BertTokenClassifier, "token-classification")]:
        with pytest.raises(ValueError) as error:
            model_class.from_preset(preset)
        message = str(error.value)
        assert f"has no {model_class.__name__} head" in message
        assert "BertPretrainer (masked-LM and next-sentence heads)" in message
        assert f"kbert finetune --task {task}" in message
    commands = [["classify", "x"], ["tag", "x"], ["qa", "--question", "who?", "--context", "a b"]]
    for command, *arguments in commands:
        assert main([command, "--model", "demo", *arguments]) == 1
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "Traceback" not in error
        assert "kbert finetune --task" in error and "has no Bert" in error


def test_a_missing_head_is_one_error_without_a_fresh_head_warning_first(caplog, capsys):
    # The loader warns that it drew a fresh head; a command that needs a trained one
    # says only its error (which tells what to do).
    with caplog.at_level(logging.WARNING, logger="kbert.presets"):
        assert main(["qa", "--model", "demo", "--question", "who?", "--context", "a b"]) == 1
    assert "kbert finetune --task qa" in capsys.readouterr().err
    assert not [r for r in caplog.records if "freshly initialised" in r.getMessage()]
    with caplog.at_level(logging.WARNING, logger="kbert.presets"):  # outside a command: kept
        BertQuestionAnswerer.from_preset("demo")
    assert [r for r in caplog.records if "freshly initialised" in r.getMessage()]


def test_commands_that_need_a_trained_head_refuse_a_fresh_one(preset, tmp_path, capsys):
    BertClassifier.from_preset(preset, num_classes=2).save_to_preset(tmp_path / "classifier")
    assert main(["fill-mask", "--model", str(tmp_path / "classifier"), "the [MASK]"]) == 1
    assert "has no BertMaskedLM head: it is a BertClassifier" in capsys.readouterr().err
    # The classifier's own head is there but untrained: said as such, not as a missing head.
    assert main(["classify", "--model", str(tmp_path / "classifier"), "the cat"]) == 1
    error = capsys.readouterr().err
    assert "is a BertClassifier whose head was saved untrained" in error
    assert "has no BertClassifier head" not in error and "kbert finetune --task classification" in error
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "v2.0", "data": []}))
    assert main(["evaluate", "--task", "qa", "--model", "demo", "--data", str(squad)]) == 1
    assert "kbert finetune --task qa" in capsys.readouterr().err


def test_untrained_heads_stay_flagged_in_presets_until_trained(preset, tmp_path):
    model = BertQuestionAnswerer.from_preset(preset)
    model.save_to_preset(tmp_path / "untrained")
    assert BertQuestionAnswerer.from_preset(tmp_path / "untrained").freshly_initialized_heads == [
        "span_head"
    ]
    model.fit(QUESTIONS, ANSWERS, epochs=1, verbose=0)
    assert model.freshly_initialized_heads == []
    model.save_to_preset(tmp_path / "trained")
    assert BertQuestionAnswerer.from_preset(tmp_path / "trained").freshly_initialized_heads == []


def test_masked_lm_preprocessor_refuses_settings_it_cannot_mask_with(tmp_path):
    with pytest.raises(ValueError, match="masked_lm_prob"):
        MaskedLMPreprocessor(make_tokenizer(tmp_path), masked_lm_prob=1.5)


def test_untrained_question_answering_heads_are_flagged(preset):
    model = BertQuestionAnswerer.from_preset(preset)
    assert model.answer("who sat?", "the cat sat.").head_trained is False
