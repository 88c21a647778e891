"""Examples -> model features for every task: ids, labels, truncation, label checks."""

import logging

import numpy as np
import pytest
from fine_tuning_data import VOCABULARY
from fine_tuning_data import qa_examples

from kbert.data import ClassificationExample
from kbert.data import GoldAnswer
from kbert.data import QAExample
from kbert.data import QuestionWindowing
from kbert.data import TokenClassificationExample
from kbert.data.qa_windows import make_qa_windows
from kbert.finetuning import ClassificationRecipe
from kbert.finetuning import QuestionAnsweringRecipe
from kbert.finetuning import TokenClassificationRecipe
from kbert.finetuning import make_recipe
from kbert.preprocessing.bucketed_dataset import IGNORED_LABEL
from kbert.tokenizer import BertTokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return BertTokenizer(list(VOCABULARY), lowercase=True, max_length=64)


def _example(text, label, pair=None, line=2):
    return ClassificationExample(text, pair, label, line)


def test_classification_features_match_the_tokenizer(tokenizer):
    examples = [_example("the cat sat", "neg"), _example("a good dog", "pos")]
    task = ClassificationRecipe()
    label_names = task.label_names(examples)
    assert label_names == ["neg", "pos"]
    features = task.features(examples, tokenizer, label_names, max_length=16)
    for example, token_ids in zip(examples, features.token_ids):
        np.testing.assert_array_equal(token_ids, tokenizer.encode(example.text).token_ids)
    np.testing.assert_array_equal(features.labels, [0, 1])
    np.testing.assert_array_equal(features.example_indices, [0, 1])


def test_integer_labels_keep_numeric_order(tokenizer):
    examples = [_example("a", label) for label in ("10", "2", "1")]
    task = ClassificationRecipe()
    label_names = task.label_names(examples)
    assert label_names == ["1", "2", "10"]
    features = task.features(examples, tokenizer, label_names, max_length=8)
    np.testing.assert_array_equal(features.labels, [2, 1, 0])


def test_pair_features_have_two_segments(tokenizer):
    task = make_recipe("pair-classification", text_column="a", pair_column="b")
    assert task.name == "pair-classification"
    features = task.features([_example("the cat", "x", pair="a dog sat")], tokenizer, ["x"], 16)
    np.testing.assert_array_equal(features.segment_ids[0], [0, 0, 0, 0, 1, 1, 1, 1])


def test_long_texts_are_truncated_with_a_warning(tokenizer, caplog):
    long_text = " ".join(["cat"] * 40)
    with caplog.at_level(logging.WARNING, logger="kbert"):
        features = ClassificationRecipe().features([_example(long_text, "x")], tokenizer, ["x"], 16)
    assert len(features.token_ids[0]) == 16
    assert "truncated" in caplog.text


def test_training_examples_need_labels():
    with pytest.raises(ValueError, match="line 7: the example has no label"):
        ClassificationRecipe().label_names([_example("a", None, line=7)])


def test_training_data_needs_two_classes():
    examples = [_example("a", "x", line=2), _example("b", "x", line=3)]
    with pytest.raises(ValueError) as raised:
        ClassificationRecipe(label_column="comment").label_names(examples, "train.csv")
    assert str(raised.value) == (
        "train.csv has a single label, 'x', in column 'comment': a classifier needs at least "
        "two classes. Choose the column that holds the labels, or add examples of the other "
        "classes."
    )


def test_unseen_evaluation_label_is_named_with_its_line():
    task = ClassificationRecipe()
    with pytest.raises(ValueError, match=r"dev.csv, line 5: label 'maybe' does not occur"):
        task.check_labels(
            [_example("a", "pos", line=4), _example("b", "maybe", line=5)],
            ["neg", "pos"],
            "dev.csv",
        )


def test_token_labels_go_to_the_first_piece_of_each_word(tokenizer):
    # "cats" -> "cat ##s"; "Amsterdam" -> "amster ##dam"; "U.S" -> "u . s" is one word too.
    example = TokenClassificationExample(
        ["Alice", "cats", "Amsterdam", "sat"], ["B-PER", "O", "B-LOC", "O"], 1
    )
    task = TokenClassificationRecipe()
    label_names = task.label_names([example])
    assert label_names == ["O", "B-LOC", "B-PER"]
    features = task.features([example], tokenizer, label_names, max_length=32)
    tokens = [tokenizer.id_to_token(int(i)) for i in features.token_ids[0]]
    assert tokens == ["[CLS]", "alice", "cat", "##s", "amster", "##dam", "sat", "[SEP]"]
    ignored = IGNORED_LABEL
    np.testing.assert_array_equal(
        features.labels[0], [ignored, 2, 0, ignored, 1, ignored, 0, ignored]
    )
    np.testing.assert_array_equal(features.word_positions[0], [1, 2, 4, 6])


def test_punctuation_inside_a_word_stays_with_that_word(tokenizer):
    example = TokenClassificationExample(["cat.dog", "sat"], ["B-PER", "O"], 1)
    features = TokenClassificationRecipe().features([example], tokenizer, ["O", "B-PER"], 32)
    # "cat.dog" is three pieces (cat . dog), one word: only its first piece is labelled.
    np.testing.assert_array_equal(features.labels[0], [IGNORED_LABEL, 1, -100, -100, 0, -100])
    np.testing.assert_array_equal(features.word_positions[0], [1, 4])


def test_truncated_sentences_leave_the_cut_words_unlabelled(tokenizer, caplog):
    tokens = ["cat"] * 10
    example = TokenClassificationExample(tokens, ["O"] * 10, 3)
    with caplog.at_level(logging.WARNING, logger="kbert"):
        features = TokenClassificationRecipe().features([example], tokenizer, ["O"], max_length=6)
    np.testing.assert_array_equal(features.word_positions[0], [1, 2, 3, 4] + [-1] * 6)
    assert "line 3" in caplog.text and "6 of 10 words" in caplog.text


def test_unseen_evaluation_tag_is_named():
    task = TokenClassificationRecipe()
    example = TokenClassificationExample(["Rome"], ["B-GPE"], 9)
    with pytest.raises(ValueError, match=r"line 9: label 'B-GPE' does not occur"):
        task.check_labels([example], ["O", "B-LOC"], "dev.conll")


def test_qa_labels_point_at_the_answer_in_every_window_that_holds_it(tokenizer):
    examples = qa_examples(30, seed=5, min_sentences=8, max_sentences=10)
    windowing = QuestionWindowing(max_length=None, doc_stride=24)
    features = QuestionAnsweringRecipe(windowing).features(examples, tokenizer, None, 64)
    starts, ends = features.labels["start_logits"], features.labels["end_logits"]
    only_in_later_windows = 0
    for index, example in enumerate(examples):
        windows = make_qa_windows(
            tokenizer, example.question, example.context, QuestionWindowing(64, 24)
        )
        rows = np.flatnonzero(features.example_indices == index)
        assert len(rows) == len(windows)
        answer = example.answers[0]
        holding = []
        for window, row in zip(windows, rows):
            context_offsets = window.offsets[window.context_mask]
            if context_offsets[0, 0] <= answer.start and answer.end <= context_offsets[-1, 1]:
                holding.append(window.window_index)
                assert 0 < starts[row] <= ends[row]
                span = window.offsets[starts[row], 0], window.offsets[ends[row], 1]
                assert example.context[span[0] : span[1]] == answer.text
            else:
                assert (starts[row], ends[row]) == (0, 0)
        assert holding
        only_in_later_windows += 0 not in holding
    assert only_in_later_windows > 0


def test_unanswerable_questions_point_at_cls(tokenizer):
    example = QAExample("q", "", "who is the king ?", "Bob is the king of Rome .", (), True)
    answered = QAExample(
        "a", "", "who is the king ?", "Bob is the king of Rome .", (GoldAnswer("Bob", 0),), False
    )
    features = QuestionAnsweringRecipe().features([example, answered], tokenizer, None, 64)
    np.testing.assert_array_equal(features.labels["start_logits"], [0, 7])
    np.testing.assert_array_equal(features.labels["end_logits"], [0, 7])


def test_make_task_checks_names_and_options():
    assert make_recipe("classification", text_column="sentence").text_column == "sentence"
    assert make_recipe("pair-classification").pair_column == "pair"
    assert make_recipe("qa", windowing=None).windowing.doc_stride == 128
    with pytest.raises(ValueError, match="must be one of"):
        make_recipe("summarization")
    with pytest.raises(ValueError, match="doc_stride"):
        make_recipe("classification", doc_stride=3)
    with pytest.raises(ValueError, match="pair-classification"):
        make_recipe("classification", pair_column="b")
