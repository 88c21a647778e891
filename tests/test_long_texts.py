"""Long texts are cut to what the model reads before they are tokenized, in every entry
point; a QA context is windowed whole, in memory linear in its length.

Sixteen texts of 10^6 characters go through classify, tag, fill_mask, embed, choose and
`fit` on a tiny model (32 positions): the tokenizer sees a small prefix of each, the
results' offsets point into the caller's text, each truncation is warned about, and
the peak of Python's allocations stays far below what tokenizing them whole took
(86 s and 1.56 GB for `kbert classify --file` before).
"""

import json
import logging
import tracemalloc

import keras
import numpy as np
import pytest

from inference_helpers import VOCABULARY
from inference_helpers import make_tokenizer
from inference_helpers import plant_logits
from inference_helpers import random_text
from inference_helpers import shared_backbone
from inference_helpers import token_id_bonus
from model_helpers import TINY
from kbert.data.qa_windows import make_qa_windows
from kbert.data.question_windowing import QuestionWindowing
from kbert.models import BertBackbone
from kbert.models import BertClassifier
from kbert.models import BertMaskedLM
from kbert.models import BertMultipleChoice
from kbert.models import BertQuestionAnswerer
from kbert.models import BertTokenClassifier
from kbert.training import BertAdamW

LENGTH = 10**6
COUNT = 16
UNIT = "the cat sat on the mat of paris . "
LONG = (UNIT * (LENGTH // len(UNIT) + 1))[:LENGTH]
# What the tokenizer may see of COUNT such texts: a few percent (each is cut to a
# prefix of a few thousand characters; whole, they are 16 million).
CHARACTER_BOUND = COUNT * LENGTH // 50
# The peak of Python's allocations while a verb runs (tokenizing whole took gigabytes).
MEMORY_BOUND = 200 * 2**20
TRUNCATION_WARNING = "longer than the model's limit"
TAGS = ["O", "B-LOC", "I-LOC"]


class CharacterCounter:
    """Stands in for the tokenizer's Rust pipeline; counts the characters it is given."""

    def __init__(self, pipeline):
        self.pipeline = pipeline
        self.characters = 0

    def encode_batch(self, inputs, **settings):
        for item in inputs:
            self.characters += len(item) if isinstance(item, str) else sum(map(len, item))
        return self.pipeline.encode_batch(inputs, **settings)

    def encode(self, item, **settings):
        self.characters += len(item) if isinstance(item, str) else sum(map(len, item))
        return self.pipeline.encode(item, **settings)

    def __getattr__(self, name):
        return getattr(self.pipeline, name)


@pytest.fixture
def tokenizer(tmp_path):
    return make_tokenizer(tmp_path, max_length=32)


@pytest.fixture
def counter(tokenizer, monkeypatch):
    counting = CharacterCounter(tokenizer._tokenizer)
    monkeypatch.setattr(tokenizer, "_tokenizer", counting)
    return counting


def _task(task, tokenizer, backbone=None, **arguments):
    model = task(backbone or shared_backbone(), **arguments)
    model.tokenizer = tokenizer
    return model


def _peak_memory(function):
    """`(result, peak bytes)` of Python's allocations while `function()` runs."""
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _truncation_warnings(caplog):
    return [record for record in caplog.records if TRUNCATION_WARNING in record.getMessage()]


def test_classify_reads_a_prefix_of_each_long_text_and_warns(tokenizer, counter, caplog):
    classifier = _task(BertClassifier, tokenizer, label_names=["neg", "pos"])
    texts = [LONG] * COUNT
    with caplog.at_level(logging.WARNING, logger="kbert.preprocessing"):
        results, peak = _peak_memory(lambda: classifier.classify(texts))
    assert len(results) == COUNT
    assert counter.characters < CHARACTER_BOUND
    assert peak < MEMORY_BOUND
    assert len(_truncation_warnings(caplog)) == COUNT
    # Pairs too: a long text beside a short one, and two long ones.
    short = ["who sat ?"] * COUNT
    results = classifier.classify(texts, pairs=short) + classifier.classify(short, pairs=texts)
    results += classifier.classify(texts, pairs=texts)
    assert len(results) == 3 * COUNT
    assert counter.characters < 4 * CHARACTER_BOUND


def test_tag_fill_mask_and_embed_keep_offsets_into_the_long_text(
    tokenizer, counter, monkeypatch
):
    tagger = _task(BertTokenClassifier, tokenizer, label_names=TAGS)
    classes = {word: 0 for word in UNIT.split()} | {"paris": 1}  # "paris" is B-LOC
    plant_logits(monkeypatch, tagger, lambda inputs: token_id_bonus(
        tokenizer, inputs["token_ids"], classes, len(TAGS)
    ))
    texts = [LONG] * COUNT
    spans, peak = _peak_memory(lambda: tagger.tag(texts))
    assert peak < MEMORY_BOUND
    for text, found in zip(texts, spans):
        assert found and all(text[span.start : span.end] == "paris" for span in found)
        assert max(span.end for span in found) < 32 * len(UNIT)

    masked = ["the [MASK] sat . " + text for text in texts]
    filled, peak = _peak_memory(lambda: _task(BertMaskedLM, tokenizer).fill_mask(masked, top_k=1))
    assert peak < MEMORY_BOUND
    for text, result in zip(masked, filled):
        (mask,) = result.masks
        assert text[mask.start : mask.end] == "[MASK]"

    embeddings, peak = _peak_memory(lambda: _task(BertMaskedLM, tokenizer).embed(texts))
    assert peak < MEMORY_BOUND
    for text, result in zip(texts, embeddings):
        assert len(result.tokens) == 32
        for token, (start, end), sequence in zip(result.tokens, result.offsets, result.sequence_ids):
            if sequence == 0:
                assert text[start:end].lower() == token
    assert counter.characters < 3 * CHARACTER_BOUND


def test_a_mask_past_the_cut_is_an_error_without_tokenizing_the_rest(tokenizer, counter):
    text = "the [MASK] sat . " + LONG + " [MASK]"
    with pytest.raises(ValueError, match=r"would cut off 1 of its 2 \[MASK\] tokens"):
        _task(BertMaskedLM, tokenizer).fill_mask(text)
    assert counter.characters < LENGTH // 50


def test_choose_reads_a_prefix_of_each_long_context(tokenizer, counter):
    chooser = _task(BertMultipleChoice, tokenizer)
    endings = [["the cat sat .", "a dog ran ."]] * COUNT
    choices, peak = _peak_memory(lambda: chooser.choose([LONG] * COUNT, endings))
    assert len(choices) == COUNT and peak < MEMORY_BOUND
    assert counter.characters < CHARACTER_BOUND


def _fresh(task, tokenizer, **arguments):
    """A task on a backbone of its own (fit changes the weights), compiled."""
    keras.utils.set_random_seed(3)
    config = dict(TINY, vocabulary_size=len(VOCABULARY), max_positions=32)
    model = _task(task, tokenizer, BertBackbone(**config), **arguments)
    model.compile(optimizer=BertAdamW(learning_rate=1e-3))
    return model


def test_fit_on_long_records_reads_a_prefix_of_each(tokenizer, counter, caplog):
    classifier = _fresh(BertClassifier, tokenizer, label_names=["neg", "pos"])
    records = [{"text": LONG, "label": ("neg", "pos")[index % 2]} for index in range(COUNT)]
    with caplog.at_level(logging.WARNING, logger="kbert.preprocessing"):
        _, peak = _peak_memory(lambda: classifier.fit(records, batch_size=8, verbose=0))
    assert peak < MEMORY_BOUND
    assert len(_truncation_warnings(caplog)) == COUNT
    assert counter.characters < CHARACTER_BOUND

    # Given as words, a long example is cut too; its words past the cut are not labelled.
    words = LONG[: LENGTH // 10].split()
    tagger = _fresh(BertTokenClassifier, tokenizer, label_names=TAGS)
    features = tagger.preprocessor.features([words] * 2, [["O"] * len(words)] * 2)
    assert [len(row) for row in features.token_ids] == [32, 32]
    assert np.sum(features.word_positions[0] >= 0) < 32
    chooser = _fresh(BertMultipleChoice, tokenizer)
    chooser.fit({"context": [LONG] * 2, "endings": [["a cat", "a dog"]] * 2}, [0, 1], verbose=0)
    assert counter.characters < 2 * CHARACTER_BOUND


def _whole(tokenizer, texts, pairs, max_length):
    """The encodings of tokenizing every text whole, then truncating: the reference."""
    firsts = tokenizer.tokenize_texts(texts)
    seconds = [None] * len(texts) if pairs is None else tokenizer.tokenize_texts(pairs)
    return [
        tokenizer.pack_segments(first, second, max_length=max_length)
        for first, second in zip(firsts, seconds)
    ]


def test_a_cut_text_encodes_as_the_whole_text_truncated(tokenizer):
    # Cuts fall anywhere: inside words, long words, [MASK]s, accents, dropped characters.
    rng = np.random.default_rng(0)
    oddities = ["[MASK]", "[MA", "SK]", "a" * 150, "e\u0301\u0301", "\x00\x00", "   ", "北京"]
    compared = 0
    for max_length in (4, 7, 12):
        texts = []
        for _ in range(24):
            parts = [
                random_text(rng, 1) if rng.random() < 0.8 else oddities[rng.integers(8)]
                for _ in range(int(rng.integers(200, 700)))
            ]
            texts.append("".join(parts))
        shorts = [random_text(rng, 3) for _ in texts]
        for pairs in (None, shorts):
            cut = tokenizer.encode_batch(texts, pairs, max_length=max_length)
            assert cut == _whole(tokenizer, texts, pairs, max_length)
            compared += len(texts)
        assert tokenizer.encode_batch(shorts, texts, max_length=max_length) == _whole(
            tokenizer, shorts, texts, max_length
        )
        words = [text.split() for text in texts]
        for cut, whole in zip(tokenizer.tokenize_words(words, max_pieces=max_length), tokenizer.tokenize_words(words)):
            assert cut.tokens == whole.tokens[: len(cut)]
            assert np.array_equal(cut.offsets, whole.offsets[: len(cut)])
            assert np.array_equal(cut.word_ids, whole.word_ids[: len(cut)])
    assert compared == 144


def test_a_long_qa_context_is_windowed_whole_in_linear_memory(tokenizer, counter):
    context = LONG[: LENGTH // 10]
    windowing = QuestionWindowing(max_length=32, doc_stride=16)
    windows, peak = _peak_memory(lambda: make_qa_windows(tokenizer, "who sat ?", context, windowing))
    assert peak < MEMORY_BOUND
    assert windows[-1].context_token_end == windows[-1].num_context_tokens
    last = windows[-1].offsets[windows[-1].context_mask]
    assert len(context) - last[-1, 1] < len(UNIT)
    # Every token is "max context" in exactly one window.
    total = sum(int(window.max_context.sum()) for window in windows)
    assert total == windows[0].num_context_tokens
    answerer = _task(BertQuestionAnswerer, tokenizer)
    result, peak = _peak_memory(lambda: answerer.answer("who sat ?", context))
    assert peak < MEMORY_BOUND
    best = result.answers[0]
    assert context[best.start : best.end] == best.text


def test_a_long_question_is_tokenized_only_as_far_as_a_window_holds(tokenizer, counter):
    windowing = QuestionWindowing(max_length=32, max_question_length=None)
    with pytest.raises(ValueError, match=r"The question has at least 29 tokens.*max_length=32"):
        make_qa_windows(tokenizer, LONG, "the cat sat .", windowing)
    assert counter.characters < LENGTH // 50


def test_every_file_reader_names_the_file_and_line_of_a_line_too_long(tmp_path):
    from kbert.commands.inference_inputs import read_json_lines
    from kbert.commands.inference_inputs import read_lines
    from kbert.data import read_classification
    from kbert.data import read_conll
    from kbert.data import read_multiple_choice
    from kbert.data.text_file import MAX_LINE_BYTES

    long_text = "a " * (MAX_LINE_BYTES // 2 + 1)
    choice = {"context": "a", "endings": ["b", "c"], "label": 0}
    cases = {
        # `kbert classify --file` and the other inference commands' files.
        "lines.txt": (read_lines, "a short line", long_text),
        "records.jsonl": (
            lambda path: read_json_lines(path, ["text"]),
            json.dumps({"text": "short"}),
            json.dumps({"text": long_text}),
        ),
        # The fine-tuning readers.
        "train.jsonl": (
            read_classification,
            json.dumps({"text": "a", "label": "x"}),
            json.dumps({"text": long_text, "label": "x"}),
        ),
        "train.conll": (read_conll, "Ada B-PER", long_text + " O"),
        "swag.jsonl": (
            read_multiple_choice, json.dumps(choice), json.dumps(dict(choice, context=long_text))
        ),
    }
    for name, (read, first, second) in cases.items():
        path = tmp_path / name
        path.write_text(f"{first}\n{second}\n", encoding="utf-8")
        with pytest.raises(ValueError, match=rf"{name}:2: the line is longer than {MAX_LINE_BYTES}"):
            read(str(path))
