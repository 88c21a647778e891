"""Tiny models, a small vocabulary and random texts for the inference tests."""

import functools

import numpy as np

from model_helpers import TINY
from kbert.models import BertBackbone
from kbert.tokenizer import BertTokenizer

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the cat sat on mat dog ran a is paris france city of who where what did "
    "cafe naive north capital river un 北 京 中 文"
).split()
PIECES = ["##s", "##ing", "##aff", "##able", "##ed"]
PUNCTUATION = [".", ",", "?", "!", "'", "(", ")", "-"]
VOCABULARY = SPECIAL_TOKENS + WORDS + PIECES + PUNCTUATION

# Pieces of random text: known words (any case, accents), unknown words, CJK,
# punctuation, odd whitespace and characters the tokenizer drops or splits.
_FRAGMENTS = (
    [word for word in WORDS]
    + ["Café", "naïve", "PARIS", "Cats", "unaffable", "Ångström", "xyzzy", "Straße"]
    + ["北京", "中文字", "日本語", "한국어", "😀", "e\u0301", "ﬁ"]
    + PUNCTUATION
    + ["...", "$100.00", "[UNK]", "\x00", "\u200b", "\ufffd"]
)
_SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u3000", "\u00a0", ""]


def make_tokenizer(tmp_path, max_length=512):
    """A lower-casing `BertTokenizer` over `VOCABULARY`, read from a vocab.txt."""
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    return BertTokenizer(str(path), max_length=max_length)


@functools.cache
def shared_backbone():
    """A 2-layer, 32-wide backbone for `VOCABULARY` with 32 positions.

    Built once per test session and shared by the task models of every inference
    test (building one costs seconds on JAX); no test changes its weights.
    """
    config = dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32)
    return BertBackbone(**config)


def save_tiny_preset(folder, max_length=16, task_class=None, **task_arguments):
    """A tiny model with `VOCABULARY` saved as a preset in `folder`; returns `folder`.

    The model is a backbone alone, or `task_class(backbone, **task_arguments)`; task
    models start new heads on it with `from_preset(folder, num_classes=...)`.
    """
    config = dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=max_length)
    model = BertBackbone(**config)
    if task_class is not None:
        model = task_class(model, **task_arguments)
    tokenizer = BertTokenizer(list(VOCABULARY), max_length=max_length)
    model.save_to_preset(folder, tokenizer=tokenizer)
    return folder


def random_text(rng, num_fragments):
    """A random string mixing words, unicode, punctuation and whitespace."""
    parts = []
    for _ in range(num_fragments):
        parts.append(_FRAGMENTS[rng.integers(len(_FRAGMENTS))])
        parts.append(_SPACES[rng.integers(len(_SPACES))])
    if rng.random() < 0.5:
        parts.insert(0, " " * int(rng.integers(1, 4)))
    return "".join(parts)


def count_predictions(monkeypatch, model):
    """The input shapes of every `model.predict_on_batch` call from now on, as a list."""
    calls = []
    real_predict = model.predict_on_batch

    def counting_predict(inputs):
        calls.append(inputs["token_ids"].shape)
        return real_predict(inputs)

    monkeypatch.setattr(model, "predict_on_batch", counting_predict)
    return calls


def plant_logits(monkeypatch, model, bonus):
    """Makes `model.predict_on_batch` add `bonus(inputs)` to the real model's output.

    The real compiled forward pass still runs; the bonus steers which tokens win, so
    tests can check windowing and offset mapping against a known answer. Undone at
    the end of the test by `monkeypatch`.
    """
    real_predict = model.predict_on_batch

    def predict_on_batch(inputs):
        outputs = real_predict(inputs)
        extra = bonus(inputs)
        if isinstance(outputs, dict):
            return {key: outputs[key] + extra[key] for key in outputs}
        return outputs + extra

    monkeypatch.setattr(model, "predict_on_batch", predict_on_batch)
    return model


def token_id_bonus(tokenizer, token_ids, token_to_class, num_classes, size=50.0):
    """(B, L, C) logits bonus: `size` at class `token_to_class[token]` for each token."""
    bonus = np.zeros(token_ids.shape + (num_classes,), dtype=np.float32)
    for token, label in token_to_class.items():
        rows, columns = np.nonzero(token_ids == tokenizer.token_to_id(token))
        bonus[rows, columns, label] = size
    return bonus
