"""Questions, contexts and answer spans, for `BertQuestionAnswerer`."""

import numpy as np

from kbert.argument_checks import describe_value
from kbert.data.qa_windows import char_span_to_token_span
from kbert.data.qa_windows import make_qa_windows
from kbert.data.question_windowing import QuestionWindowing
from kbert.preprocessing.bert_preprocessor import BertPreprocessor
from kbert.preprocessing.bert_preprocessor import as_string_list
from kbert.preprocessing.record_fields import RecordFields
from kbert.preprocessing.task_features import TaskFeatures


class QuestionAnswererPreprocessor(BertPreprocessor):
    """`[CLS] question [SEP] context window [SEP]` rows, labelled with the answer's tokens.

    Each example becomes one row per window of its context (`make_qa_windows`); for
    training, a window is labelled with the token span of the answer, or with `[CLS]`
    (position 0) when there is no answer or it is not entirely inside the window, as in
    BERT's `run_squad.py`. For `predict`, each example gives its first window only (one
    row per example); `model.answer` reads every window of a long context.

    Inputs (`x`): a dict with "question" and "context" lists, or a pair of lists
    `(questions, contexts)`. Answers (`y`): one per example, each None or "" (no
    answer), a dict `{"text": ..., "answer_start": ...}` (SQuAD's form), or a tuple
    `(answer_start, text)`; `answer_start` is the character offset in the context.
    A SQuAD row's `{"text": [...], "answer_start": [...]}` gives its first answer
    (none when the lists are empty). Records, DataFrames and `datasets.Dataset`s
    hold "question", "context" and optionally "answers" (`RecordFields`).

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest row; None: the tokenizer's `max_length`.
        windowing: how contexts are cut into windows, a `QuestionWindowing`; its
            `max_length` is capped at `sequence_length` (None, the default's, makes
            windows of `sequence_length` tokens).

    Example:

    >>> preprocessor = QuestionAnswererPreprocessor(tokenizer)
    >>> features = preprocessor.features(
    ...     {"question": ["Who sat?"], "context": ["The cat sat."]},
    ...     [{"text": "The cat", "answer_start": 0}],
    ... )
    >>> features.labels["start_logits"].tolist(), features.labels["end_logits"].tolist()
    ([5], [6])
    """

    input_fields = ("question", "context")
    record_fields = RecordFields(inputs=("question", "context"), labels=("answers", "answer"))

    def __init__(self, tokenizer, sequence_length=None, windowing=None):
        super().__init__(tokenizer, sequence_length)
        if windowing is None:
            windowing = QuestionWindowing(max_length=None)
        if not isinstance(windowing, QuestionWindowing):
            raise ValueError(
                f"`windowing` must be a QuestionWindowing. Received: windowing={windowing!r}"
            )
        self.windowing = windowing.capped(self.sequence_length)

    def parse_inputs(self, x):
        if isinstance(x, dict):
            if set(x) != {"question", "context"}:
                raise ValueError(
                    f"A dict of inputs has the keys 'question' and 'context'. Received: {sorted(x)}"
                )
            questions, contexts = x["question"], x["context"]
        elif isinstance(x, tuple) and len(x) == 2:
            questions, contexts = x
        else:
            raise ValueError(
                "Question answering takes {'question': [...], 'context': [...]} or "
                f"(questions, contexts). Received: {type(x).__name__}"
            )
        if isinstance(questions, str) and isinstance(contexts, str):
            questions, contexts = [questions], [contexts]
        return {
            "question": as_string_list(questions, "questions"),
            "context": as_string_list(contexts, "contexts"),
        }

    def features(self, x, y=None, first_window_only=False):
        fields = self.parse(x)
        answers = None if y is None else self._answers(y, fields["context"])
        token_ids, segment_ids, starts, ends, example_indices = [], [], [], [], []
        for index, (question, context) in enumerate(zip(fields["question"], fields["context"])):
            windows = make_qa_windows(self.tokenizer, question, context, self.windowing)
            if not windows:
                raise ValueError(f"Example {index} has an empty context: there is nothing to read.")
            if first_window_only:
                windows = windows[:1]
            for window in windows:
                start, end = 0, 0
                if answers is not None and answers[index] is not None:
                    start, end = char_span_to_token_span(window, *answers[index])
                token_ids.append(window.token_ids)
                segment_ids.append(window.segment_ids)
                starts.append(start)
                ends.append(end)
                example_indices.append(index)
        labels = None
        if answers is not None:
            labels = {
                "start_logits": np.array(starts, dtype=np.int32),
                "end_logits": np.array(ends, dtype=np.int32),
            }
        return TaskFeatures(
            token_ids=token_ids,
            segment_ids=segment_ids,
            labels=labels,
            example_indices=np.array(example_indices, dtype=np.int64),
        )

    def prediction_features(self, x):
        # One row per example (its first window), so outputs line up with inputs.
        return self.features(x, first_window_only=True)

    def _answers(self, y, contexts):
        """`(start_char, end_char)` or None per example."""
        if isinstance(y, (str, dict)) or not hasattr(y, "__iter__"):
            raise ValueError(
                f"`y` must hold one answer per question. Received: {describe_value(y)}"
            )
        y = list(y)
        if len(y) != len(contexts):
            raise ValueError(
                f"`y` must hold one answer per question ({len(contexts)}). Received: {len(y)}"
            )
        spans = []
        for index, (answer, context) in enumerate(zip(y, contexts)):
            if answer is None or answer == "":
                spans.append(None)
                continue
            if isinstance(answer, dict):
                start, text = _first_answer(answer)
                if text is None:
                    spans.append(None)  # SQuAD 2.0's unanswerable: empty answer lists
                    continue
            elif isinstance(answer, (tuple, list)) and len(answer) == 2:
                start, text = answer
            else:
                raise ValueError(
                    f"`y[{index}]` must be None, {{'text', 'answer_start'}} or "
                    f"(answer_start, text). Received: {describe_value(answer)}"
                )
            if (
                not isinstance(text, str)
                or isinstance(start, bool)
                or not isinstance(start, (int, np.integer))
                or not 0 <= start <= len(context) - len(text)
                or context[start : start + len(text)] != text
            ):
                raise ValueError(
                    f"`y[{index}]`: the answer {describe_value(text)} is not at character "
                    f"{describe_value(start)} of its context."
                )
            spans.append((int(start), int(start) + len(text)))
        return spans


def _first_answer(answer):
    """`(answer_start, text)` of a SQuAD answer dict; a SQuAD row's lists give their first
    answer, empty lists `(None, None)`."""
    start, text = answer.get("answer_start"), answer.get("text")
    if isinstance(text, (list, tuple)) and isinstance(start, (list, tuple)):
        if not text or not start:
            return None, None
        return start[0], text[0]
    return start, text
