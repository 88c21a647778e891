"""Extractive question answering on SQuAD-style data, long contexts in windows."""

import numbers

from kbert.argument_checks import describe_kind
from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.data.examples import GoldAnswer
from kbert.data.examples import QAExample
from kbert.data.question_windowing import QuestionWindowing
from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert.metrics import squad_question_scores
from kbert.metrics import squad_scores
from kbert.preprocessing.question_answerer_preprocessor import QuestionAnswererPreprocessor
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.task_specs import task_spec

# SQuAD scores in percent, as the official script reports them.
QA_METRICS = task_spec("qa").metrics
QA_COLUMNS = (
    "index", "id", "question", "context", "gold", "predicted", "probability", "correct",
    "exact_match", "f1",
)


class QuestionAnsweringRecipe(FineTuningRecipe):
    """SQuAD v1.1 / v2.0 question answering.

    Each example becomes one training row per window of its context (see
    `kbert.data.make_qa_windows`); a window is labelled with the token span of the
    example's first answer, or with `[CLS]` (position 0) when the question has no
    answer or the answer is not entirely inside the window, as in BERT's
    `run_squad.py`. Evaluation asks the model's `answer` and scores the best span
    with the official SQuAD exact match and F1 (percent).

    Args:
        windowing: how contexts are cut into windows, a `QuestionWindowing` whose
            `max_length` is None: windows are as long as the run's `max_length`
            (`FineTuningConfig.max_length`, capped at the model's limit), in
            training and in evaluation alike.
        max_answer_length: the longest answer `answer` may give, in tokens.
    """

    name = "qa"
    metric = task_spec("qa").metric

    def __init__(self, windowing=None, max_answer_length=30):
        if windowing is None:
            windowing = QuestionWindowing(max_length=None)
        if not isinstance(windowing, QuestionWindowing) or windowing.max_length is not None:
            raise ValueError(
                "`windowing` must be a QuestionWindowing with max_length=None: fine-tuning "
                "windows are the run's `max_length` tokens long (FineTuningConfig.max_length). "
                f"Received: windowing={windowing!r}"
            )
        self.windowing = windowing
        self.max_answer_length = max_answer_length

    example_class = QAExample

    @property
    def model_class(self):
        from kbert.models.bert_question_answerer import BertQuestionAnswerer

        return BertQuestionAnswerer

    def table_example(self, values, label, row):
        answers = _table_answers(label, values["context"], row)
        return QAExample(
            id=str(row),
            title="",
            question=values["question"],
            context=values["context"],
            answers=answers,
            is_impossible=not answers,
        )

    def read(self, path):
        from kbert.data import read_squad

        return read_squad(path)

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = QuestionAnswererPreprocessor(tokenizer, max_length, self.windowing)
        x = {
            "question": [example.question for example in examples],
            "context": [example.context for example in examples],
        }
        answers = [
            (example.answers[0].start, example.answers[0].text)
            if example.answers and not example.is_impossible
            else None
            for example in examples
        ]
        return preprocessor.features(x, answers)

    def predict_answers(self, model, examples, max_length=None, batch_size=None):
        """The best answer text (or "" for none) of every example, by example id."""
        return {
            example.id: text
            for example, (text, _) in zip(
                examples, self._best_answers(model, examples, max_length, batch_size)
            )
        }

    def _best_answers(self, model, examples, max_length, batch_size):
        """`(text, probability)` of every example's best answer ("" and None for none)."""
        _, max_length = model_limits(model, max_length)
        windowing = self.windowing.capped(max_length)
        answers = []
        for example in examples:
            result = model.answer(
                example.question,
                example.context,
                top_k=1,
                max_answer_length=self.max_answer_length,
                windowing=windowing,
                batch_size=batch_size,
            )
            best = None if result.is_impossible or not result.answers else result.answers[0]
            answers.append(("", None) if best is None else (best.text, float(best.probability)))
        return answers

    def evaluation_predictions(
        self, model, examples, max_length=None, batch_size=None
    ):
        """Each question's gold answers, best answer, exact match and F1; the SQuAD scores
        (percent) from those answers."""
        best = self._best_answers(model, examples, max_length, batch_size)
        predictions = {example.id: text for example, (text, _) in zip(examples, best)}
        answers = {example.id: [answer.text for answer in example.answers] for example in examples}
        per_question = squad_question_scores(predictions, answers)
        rows = []
        for index, (example, (text, probability)) in enumerate(zip(examples, best)):
            question_scores = per_question[example.id]
            rows.append(
                {
                    "index": index,
                    "id": example.id,
                    "question": example.question,
                    "context": example.context,
                    "gold": answers[example.id],
                    "predicted": text,
                    "probability": probability,
                    "correct": question_scores["exact_match"] == 100.0,
                    "exact_match": question_scores["exact_match"],
                    "f1": question_scores["f1"],
                }
            )
        scores = squad_scores(predictions, answers)
        return EvaluationPredictions(
            self.name, QA_COLUMNS, tuple(rows), {name: scores[name] for name in QA_METRICS}
        )

    def options(self):
        return {
            "task": self.name,
            "doc_stride": self.windowing.doc_stride,
            "max_question_length": self.windowing.max_question_length,
            "max_answer_length": self.max_answer_length,
        }


def _table_answers(label, context, row):
    """The `GoldAnswer`s of a table row's answer field, as the QA model's `fit` takes it:
    None or "" (no answer), `{"text", "answer_start"}` (each a value, or SQuAD's lists),
    or `(answer_start, text)`."""
    if label is None or label == "":
        return ()
    if isinstance(label, dict):
        texts, starts = label.get("text"), label.get("answer_start")
        if not isinstance(texts, (list, tuple)):
            texts, starts = [texts], [starts]
        elif not isinstance(starts, (list, tuple)) or len(starts) != len(texts):
            raise ValueError(
                f"The answers of row {row} must hold as many 'answer_start' as 'text' values."
            )
        pairs = list(zip(starts, texts))
    elif isinstance(label, (tuple, list)) and len(label) == 2:
        pairs = [tuple(label)]
    else:
        raise ValueError(
            f"The answer of row {row} must be None, {{'text', 'answer_start'}} or "
            f"(answer_start, text). Received: {describe_kind(label)}"
        )
    answers = []
    for start, text in pairs:
        problem = text_problem(text) or ("the text is empty" if text == "" else None)
        if problem is not None:
            raise ValueError(f"The answer text of row {row}: {problem}.")
        is_offset = isinstance(start, numbers.Integral) and not isinstance(start, bool)
        if not is_offset or start < 0 or context[int(start) : int(start) + len(text)] != text:
            raise ValueError(
                f"The answer of row {row} is not at character {describe_value(start)} of its "
                "context."
            )
        answers.append(GoldAnswer(text=text, start=int(start)))
    return tuple(answers)
