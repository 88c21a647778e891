"""Inference batching: texts sorted by length, each batch padded to its own bucket,
results in the caller's order, at every entry that takes several texts."""

import keras
import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import shared_backbone
from kbert import inference
from kbert.data.question_windowing import QuestionWindowing
from kbert.inference import model_io
from kbert.commands.inference_inputs import BATCHES_PER_CHUNK
from kbert.commands.inference_inputs import map_in_batches
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.preprocessing.length_buckets import CPU_BATCH_SIZE
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import bucket_length
from kbert.preprocessing.length_buckets import inference_padding_bound
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.length_buckets import length_sorted_batches
from kbert.preprocessing.length_buckets import row_bucket

# Word counts chosen so that sorting by length reorders them across batches of 3.
WORD_COUNTS = (3, 20, 8, 27, 1, 14, 25, 5, 11)
WORDS = "the cat sat on mat dog ran a is paris france city of who".split()
TOLERANCE = dict(rtol=1e-4, atol=1e-5)


def mixed_texts(with_mask=False):
    texts = []
    for index, count in enumerate(WORD_COUNTS):
        words = [WORDS[(index + step) % len(WORDS)] for step in range(count)]
        if with_mask:
            words[count // 2] = "[MASK]"
        texts.append(" ".join(words))
    return texts


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("sorted_batching"))


def reversed_in_one_batch(function, texts, *rest):
    """`function` on the texts (and `rest`) reversed, in one batch, then reversed back:
    the same results, from other batches and another order."""
    reversed_rest = [list(values)[::-1] for values in rest]
    return function(texts[::-1], *reversed_rest, batch_size=len(texts))[::-1]


def _task(model_class, tokenizer, **arguments):
    model = model_class(shared_backbone(), **arguments)
    model.tokenizer = tokenizer
    return model


@pytest.fixture
def shapes(monkeypatch):
    """Records `(rows, length)` and the real lengths of every batch a model runs."""
    recorded = []

    def watch(model):
        real_predict = model.predict_on_batch

        def recording_predict(inputs):
            mask = np.asarray(inputs["padding_mask"])
            recorded.append((mask.shape, mask.reshape(-1, mask.shape[-1]).sum(axis=-1)))
            return real_predict(inputs)

        monkeypatch.setattr(model, "predict_on_batch", recording_predict)
        return recorded

    return watch


def test_every_length_pads_within_the_bound():
    buckets = length_buckets(512, INFERENCE_LENGTH_BUCKETS)
    for length in range(1, 513):
        padding = bucket_length(length, buckets) - length
        assert padding <= inference_padding_bound(length), length
    # Mixed sentences of 12 to 60 tokens, sorted and batched as inference does: the
    # padding adds at most an eighth of the real tokens (the coarse training buckets
    # added a third here).
    lengths = np.random.default_rng(0).integers(12, 61, size=1000)
    padded = sum(
        bucket_length(int(lengths[batch].max()), buckets) * len(batch)
        for batch in length_sorted_batches(lengths, 32)
    )
    assert padded <= 1.125 * lengths.sum()
    assert [row_bucket(count) for count in (1, 2, 3, 5, 8, 9, 17, 32)] == [1, 2, 4, 8, 8, 16, 24, 32]


def test_sorted_batches_take_each_row_once_longest_first():
    lengths = [4, 9, 1, 9, 7, 2, 8]
    batches = length_sorted_batches(lengths, 3)
    assert [len(batch) for batch in batches] == [3, 3, 1]
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))
    assert [lengths[row] for row in flat] == sorted(lengths, reverse=True)


def test_classify_keeps_the_callers_order_and_pads_each_batch_tightly(tokenizer, shapes):
    model = _task(BertClassifier, tokenizer, label_names=["a", "b", "c"])
    texts = mixed_texts()
    alone = [result.probabilities for result in reversed_in_one_batch(model.classify, texts)]
    recorded = shapes(model)
    batched = model.classify(texts, batch_size=3)
    for result, expected in zip(batched, alone):
        np.testing.assert_allclose(list(result.probabilities.values()), list(expected.values()), **TOLERANCE)
    assert len(recorded) == 3
    for (rows, length), real_lengths in recorded:
        assert rows == row_bucket(3)
        assert length - real_lengths.max() <= inference_padding_bound(real_lengths.max())
    # Longest first: the batches' padded lengths never grow.
    assert [shape[1] for shape, _ in recorded] == sorted((s[1] for s, _ in recorded), reverse=True)


def test_on_a_cpu_texts_run_by_8_unless_told(tokenizer, shapes):
    # A CPU computes a token as fast in 8 rows as in 32; 8 sorted rows pad less.
    model = _task(BertClassifier, tokenizer, num_classes=2)
    recorded = shapes(model)
    model.classify(mixed_texts())  # 9 texts
    assert [shape[0] for shape, _ in recorded] == [CPU_BATCH_SIZE, 1]
    recorded.clear()
    model.classify(mixed_texts(), batch_size=len(WORD_COUNTS))
    assert [shape[0] for shape, _ in recorded] == [row_bucket(len(WORD_COUNTS))]


def test_tag_embed_and_fill_mask_keep_the_callers_order(tokenizer):
    texts = mixed_texts()
    tagger = _task(BertTokenClassifier, tokenizer, label_names=["O", "B-LOC", "I-LOC"])
    for spans, alone in zip(tagger.tag(texts, batch_size=2), reversed_in_one_batch(tagger.tag, texts)):
        assert [(s.label, s.start, s.end) for s in spans] == [(s.label, s.start, s.end) for s in alone]
        np.testing.assert_allclose([s.score for s in spans], [s.score for s in alone], **TOLERANCE)

    backbone = shared_backbone()
    pooled = inference.embed(backbone, tokenizer, texts, pooling="mean", batch_size=2)
    def mean_pooled(chunk, batch_size):
        return inference.embed(backbone, tokenizer, chunk, pooling="mean", batch_size=batch_size)

    np.testing.assert_allclose(pooled, reversed_in_one_batch(mean_pooled, texts), **TOLERANCE)
    tokens = inference.embed(backbone, tokenizer, texts, batch_size=4)
    assert [result.text for result in tokens] == texts
    assert [len(result.vectors) for result in tokens] == [len(result.tokens) for result in tokens]

    masked_lm = _task(BertMaskedLM, tokenizer)
    masked = mixed_texts(with_mask=True)
    filled = masked_lm.fill_mask(masked, batch_size=2)
    for result, text, alone in zip(filled, masked, reversed_in_one_batch(masked_lm.fill_mask, masked)):
        assert result.text == text
        assert (result.masks[0].start, result.masks[0].end) == (alone.masks[0].start, alone.masks[0].end)
        np.testing.assert_allclose(
            [c.probability for c in result.masks[0].candidates],
            [c.probability for c in alone.masks[0].candidates],
            **TOLERANCE,
        )


def test_choose_and_answer_keep_the_callers_order(tokenizer):
    chooser = _task(BertMultipleChoice, tokenizer)
    contexts = mixed_texts()[:5]
    endings = [["a cat", "the dog ran on the mat"], ["who", "a"], ["paris", "a city of france"],
               ["on a mat", "is"], ["the cat sat on the mat near paris", "ran"]]
    batched = chooser.choose(contexts, endings, batch_size=2)
    together = reversed_in_one_batch(chooser.choose, contexts, endings)
    for result, example, alone in zip(batched, endings, together):
        assert result.endings == tuple(example)
        np.testing.assert_allclose(result.probabilities, alone.probabilities, **TOLERANCE)

    reader = _task(BertQuestionAnswerer, tokenizer)
    context = " ".join(mixed_texts())
    windows = QuestionWindowing(max_length=24, doc_stride=8)
    one_by_one = reader.answer("who sat ?", context, top_k=3, windowing=windows, batch_size=1)
    together = reader.answer("who sat ?", context, top_k=3, windowing=windows)
    assert [(a.start, a.end) for a in one_by_one.answers] == [
        (a.start, a.end) for a in together.answers
    ]


def test_predict_and_evaluate_on_strings_run_sorted_batches_in_input_order(tokenizer, shapes):
    texts = mixed_texts()
    classifier = _task(BertClassifier, tokenizer, label_names=["a", "b"])
    classifier.compile()
    recorded = shapes(classifier)
    logits = classifier.predict(texts, batch_size=4)
    assert logits.shape == (len(texts), 2)
    assert len(recorded) == 3  # the compiled step per batch, no Keras predict loop
    for (_, length), real_lengths in recorded:
        assert length - real_lengths.max() <= inference_padding_bound(real_lengths.max())
    np.testing.assert_allclose(logits, reversed_in_one_batch(classifier.predict, texts), **TOLERANCE)

    labels = ["a", "b"] * 4 + ["a"]
    predicted = [["a", "b"][int(index)] for index in np.argmax(logits, axis=-1)]
    accuracy = np.mean([p == gold for p, gold in zip(predicted, labels)])
    metrics = classifier.evaluate(texts, labels, batch_size=4, verbose=0, return_dict=True)
    assert metrics["accuracy"] == pytest.approx(accuracy)

    tagger = _task(BertTokenClassifier, tokenizer, label_names=["O", "B-LOC", "I-LOC"])
    per_token = tagger.predict(texts, batch_size=4)
    longest = max(len(tokenizer.encode(text).token_ids) for text in texts)
    assert per_token.shape[:2] == (len(texts), bucket_length(longest, length_buckets(32, INFERENCE_LENGTH_BUCKETS)))
    together = reversed_in_one_batch(tagger.predict, texts)
    for row, expected, text in zip(per_token, together, texts):
        length = len(tokenizer.encode(text).token_ids)
        np.testing.assert_allclose(row[:length], expected[:length], **TOLERANCE)
    with pytest.raises(ValueError, match="`steps` and `callbacks` need tensors"):
        classifier.predict(texts, steps=1)


def test_validation_inside_fit_is_batched_as_evaluate(tokenizer, monkeypatch):
    texts, labels = mixed_texts(), ["a", "b"] * 4 + ["a"]
    classifier = _task(BertClassifier, tokenizer, label_names=["a", "b"])
    classifier.compile(run_eagerly=True)  # every step sees its batch's real shape
    lengths = [len(tokenizer.encode(text).token_ids) for text in texts]
    buckets = length_buckets(32, INFERENCE_LENGTH_BUCKETS)
    expected = {
        bucket_length(max(lengths[row] for row in rows), buckets)
        for rows in length_sorted_batches(lengths, 4)
    }
    seen = set()
    real_test_step = classifier.test_step

    def recording_test_step(*arguments):  # JAX passes (state, data), the others (data,)
        seen.add(int(arguments[-1][0]["token_ids"].shape[-1]))  # every batch
        return real_test_step(*arguments)

    monkeypatch.setattr(classifier, "test_step", recording_test_step)
    classifier.fit(texts, labels, batch_size=4, epochs=1, verbose=0,
                   validation_data=(texts, labels))
    assert seen == expected and len(expected) > 1


def test_the_command_line_hands_whole_chunks_to_the_sorting_call():
    chunks = []

    def upper_case(chunk):
        chunks.append(len(chunk))
        return [text.upper() for text in chunk]

    inputs = [f"text {index}" for index in range(2 * BATCHES_PER_CHUNK * 2 + 3)]
    results = map_in_batches(upper_case, inputs, 2, "test")
    assert results == [text.upper() for text in inputs]
    assert chunks == [2 * BATCHES_PER_CHUNK, 2 * BATCHES_PER_CHUNK, 3]
    chunks.clear()
    map_in_batches(upper_case, inputs * CPU_BATCH_SIZE, None, "test")  # the CPU's default
    assert chunks[0] == CPU_BATCH_SIZE * BATCHES_PER_CHUNK


@pytest.mark.skipif(
    keras.backend.backend() != "jax", reason="the jitted stateless forward is JAX's short path"
)
def test_jax_runs_one_jitted_forward_equal_to_predict_on_batch(tokenizer, monkeypatch):
    model = _task(BertClassifier, tokenizer, label_names=["a", "b"])
    inputs = {
        key: np.asarray(value, "int32")
        for key, value in tokenizer(mixed_texts()[:3], sequence_length=32).items()
    }
    expected = model.predict_on_batch(inputs)
    calls = []
    keras_predict = BertClassifier.predict_on_batch
    monkeypatch.setattr(
        BertClassifier, "predict_on_batch", lambda self, x: calls.append(1) or keras_predict(self, x)
    )
    np.testing.assert_allclose(model_io.predict(model, inputs), expected, **TOLERANCE)
    model.classify(mixed_texts())
    assert calls == []  # no Keras predict step (and its variable sync) on the short path
    # Weights changed after the first call are used by the next one.
    head = model.get_layer(model.head_layer_names[0])
    head.bias.assign(head.bias.numpy() + np.array([5.0, 0.0], "float32"))
    assert model.classify("the cat").label == "a"
