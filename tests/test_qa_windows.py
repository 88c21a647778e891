"""QA windows: coverage of the context, offsets, max-context flags, span mapping."""

import logging

import numpy as np
import pytest

from inference_helpers import make_tokenizer
from inference_helpers import random_text
from kbert.data.qa_windows import char_span_to_token_span
from kbert.data.qa_windows import make_qa_windows
from kbert.data.qa_windows import token_span_to_char_span
from kbert.data.question_windowing import QuestionWindowing

QUESTION = "Who sat on the mat?"
CONTEXT = " ".join(
    f"The cat number {index} sat on the mat, and the dog ran to Paris." for index in range(6)
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return make_tokenizer(tmp_path_factory.mktemp("qa_windows"))


def _context_encoding(tokenizer, context):
    encoding = tokenizer.encode(context, max_length=10_000)
    return encoding.token_ids[1:-1], encoding.offsets[1:-1]


def test_windows_cover_the_context_in_order(tokenizer):
    # (clear_session after every test is slow: one test, several settings.)
    for max_length, doc_stride in [(24, 5), (32, 8), (40, 100), (512, 128)]:
        _check_windows(tokenizer, max_length, doc_stride)


def _check_windows(tokenizer, max_length, doc_stride):
    windowing = QuestionWindowing(max_length=max_length, doc_stride=doc_stride)
    windows = make_qa_windows(tokenizer, QUESTION, CONTEXT, windowing)
    context_ids, context_offsets = _context_encoding(tokenizer, CONTEXT)
    question_ids = tokenizer.encode(QUESTION).token_ids[1:-1]
    covered = np.zeros(len(context_ids), dtype=int)
    max_context_count = np.zeros(len(context_ids), dtype=int)
    room = max_length - 3 - len(question_ids)
    for index, window in enumerate(windows):
        assert window.window_index == index
        assert len(window) <= max_length
        prefix = len(question_ids) + 2
        np.testing.assert_array_equal(window.token_ids[1 : prefix - 1], question_ids)
        assert window.token_ids[0] == tokenizer.cls_token_id
        assert window.token_ids[prefix - 1] == window.token_ids[-1] == tokenizer.sep_token_id
        np.testing.assert_array_equal(window.segment_ids, np.arange(len(window)) >= prefix)
        start, end = window.context_token_start, window.context_token_end
        assert start == index * min(doc_stride, room)
        np.testing.assert_array_equal(
            np.flatnonzero(window.context_mask), np.arange(prefix, prefix + end - start)
        )
        np.testing.assert_array_equal(window.token_ids[window.context_mask], context_ids[start:end])
        np.testing.assert_array_equal(
            window.offsets[window.context_mask], context_offsets[start:end]
        )
        assert not window.offsets[~window.context_mask].any()
        assert not (window.max_context & ~window.context_mask).any()
        assert window.num_context_tokens == len(context_ids)
        covered[start:end] += 1
        max_context_count[start:end] += window.max_context[window.context_mask]
    assert (covered >= 1).all(), "every context token is in some window"
    assert windows[-1].context_token_end == len(context_ids)
    assert (max_context_count == 1).all(), "every token is max-context in exactly one window"
    if max_length == 512:
        assert len(windows) == 1


def test_max_context_prefers_the_window_centre(tokenizer):
    windows = make_qa_windows(
        tokenizer, "Who?", CONTEXT, QuestionWindowing(max_length=20, doc_stride=4)
    )
    # A token deep inside window 1 but at the right edge of window 0 belongs to window 1.
    first, second = windows[0], windows[1]
    overlap_token = second.context_token_start + 6  # 6 tokens into window 1
    assert first.context_token_start <= overlap_token < first.context_token_end
    position = np.flatnonzero(second.context_mask)[6]
    assert second.max_context[position]


def test_the_context_is_tokenized_once(tokenizer, monkeypatch):
    calls = []
    real_tokenize_texts = tokenizer.tokenize_texts

    def counting_tokenize_texts(texts, *args, **kwargs):
        calls.append(list(texts))
        return real_tokenize_texts(texts, *args, **kwargs)

    monkeypatch.setattr(tokenizer, "tokenize_texts", counting_tokenize_texts)
    windows = make_qa_windows(
        tokenizer, QUESTION, CONTEXT, QuestionWindowing(max_length=24, doc_stride=5)
    )
    assert len(windows) > 5
    # The question separately: only as far as a window holds it.
    assert calls == [[QUESTION], [CONTEXT]]


def test_an_empty_context_has_no_windows(tokenizer):
    for context in ["", "   ", "\n\t \u200b"]:
        assert make_qa_windows(tokenizer, QUESTION, context) == []


def test_a_question_too_long_for_any_window_is_an_error(tokenizer):
    question = "who sat on the mat " * 5  # 25 tokens
    with pytest.raises(ValueError, match=r"The question has 25 tokens.*max_length=24"):
        make_qa_windows(
            tokenizer, question, CONTEXT, QuestionWindowing(max_length=24, max_question_length=None)
        )
    with pytest.raises(ValueError, match="The question has 25 tokens"):
        make_qa_windows(
            tokenizer, question, CONTEXT, QuestionWindowing(max_length=24, max_question_length=64)
        )


def test_a_long_question_is_truncated_with_a_warning(tokenizer, caplog):
    question = "who sat on the mat " * 5
    with caplog.at_level(logging.WARNING, logger="kbert.data"):
        windows = make_qa_windows(
            tokenizer, question, CONTEXT, QuestionWindowing(max_length=64, max_question_length=8)
        )
    assert "truncated to max_question_length=8" in caplog.text
    assert np.flatnonzero(windows[0].context_mask)[0] == 8 + 2


def test_bad_arguments(tokenizer):
    for arguments, message in [
        (dict(question=""), "at least one token"),
        (dict(question=3), "`question` must be a string"),
        (dict(context=None), "`context` must be a string"),
        (dict(max_length=4), "`max_length` must be an integer >= 5"),
        (dict(doc_stride=0), "`doc_stride` must be an integer >= 1"),
    ]:
        call = dict(question=QUESTION, context=CONTEXT) | arguments
        question, context = call.pop("question"), call.pop("context")
        with pytest.raises(ValueError, match=message):
            make_qa_windows(tokenizer, question, context, QuestionWindowing(**call))


def test_windows_pad_like_encodings(tokenizer):
    windows = make_qa_windows(
        tokenizer, QUESTION, CONTEXT, QuestionWindowing(max_length=24, doc_stride=8)
    )
    batch = tokenizer.pad(windows, sequence_length=32)
    assert batch["token_ids"].shape == (len(windows), 32)
    np.testing.assert_array_equal(batch["padding_mask"].sum(axis=1), [len(w) for w in windows])


def test_char_and_token_spans_round_trip(tokenizer):
    rng = np.random.default_rng(0)
    context = random_text(rng, 80)
    windows = make_qa_windows(
        tokenizer, "Who?", context, QuestionWindowing(max_length=24, doc_stride=6)
    )
    context_ids, context_offsets = _context_encoding(tokenizer, context)
    assert len(windows) > 3
    for _ in range(200):
        first = int(rng.integers(len(context_ids)))
        last = min(first + int(rng.integers(4)), len(context_ids) - 1)
        start_char, end_char = int(context_offsets[first, 0]), int(context_offsets[last, 1])
        found = 0
        for window in windows:
            start, end = char_span_to_token_span(window, start_char, end_char)
            inside = window.context_token_start <= first and last < window.context_token_end
            if not inside:
                assert (start, end) == (0, 0)
                continue
            found += 1
            assert window.context_mask[start] and window.context_mask[end]
            assert token_span_to_char_span(window, start, end) == (start_char, end_char)
        assert found >= 1, "a span of at most 4 tokens fits in some window"


def test_char_span_inside_a_token_maps_to_the_whole_token(tokenizer):
    context = "The cats sat."
    (window,) = make_qa_windows(tokenizer, "Who?", context)
    # "ats" inside "cats" -> the tokens "cat" and "##s" it overlaps.
    start, end = char_span_to_token_span(window, 5, 8)
    assert [window.token_ids[start], window.token_ids[end]] == [
        tokenizer.token_to_id("cat"),
        tokenizer.token_to_id("##s"),
    ]
    assert token_span_to_char_span(window, start, end) == (4, 8)
    # Only whitespace: no token.
    assert char_span_to_token_span(window, 3, 4) == (0, 0)


def test_span_mapping_errors(tokenizer):
    (window,) = make_qa_windows(tokenizer, "Who?", "The cat sat.")
    with pytest.raises(ValueError, match="greater than `start_char`"):
        char_span_to_token_span(window, 5, 5)
    with pytest.raises(ValueError, match="must both be context tokens"):
        token_span_to_char_span(window, 0, 4)
    with pytest.raises(ValueError, match="0 <= start <= end"):
        token_span_to_char_span(window, 5, 4)
