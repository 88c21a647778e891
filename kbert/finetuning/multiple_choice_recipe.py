"""Multiple choice (SWAG): the right ending of a context, scored per ending from [CLS]."""

import numbers

import numpy as np

from kbert.argument_checks import describe_kind
from kbert.data.examples import MultipleChoiceExample
from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.fine_tuning_recipe import predict_features
from kbert.inference.model_io import softmax
from kbert.metrics import accuracy
from kbert.preprocessing.multiple_choice_preprocessor import MultipleChoicePreprocessor

CHOICE_COLUMNS = (
    "index", "line", "context", "endings", "gold", "predicted", "probability", "correct",
    "gold_ending", "predicted_ending",
)


class MultipleChoiceRecipe(FineTuningRecipe):
    """Multiple choice on SWAG's CSV or JSON Lines (see `kbert.data.read_multiple_choice`).

    The label of an example is the index of its right ending; the model has no label
    names. Every example of one file has the same number of endings.

    Args:
        format: "csv" or "jsonl"; None detects it from the file name.
        metric: the score that selects the best checkpoint: "accuracy".
        context_column: the CSV column of the context (SWAG's `sent1`).
        start_column: the CSV column every ending continues (SWAG's `sent2`); "" when
            the `ending<i>` columns hold whole endings.
        label_column: the CSV column (or JSON Lines field) of the right ending's index.
    """

    name = "multiple-choice"

    def __init__(
        self,
        format=None,
        metric="accuracy",
        context_column="sent1",
        start_column="sent2",
        label_column="label",
    ):
        if metric != "accuracy":
            raise ValueError(f"`metric` must be 'accuracy'. Received: metric={metric!r}")
        for name, value in (("context_column", context_column), ("label_column", label_column)):
            if not isinstance(value, str) or not value:
                raise ValueError(f"`{name}` must be a column name. Received: {name}={value!r}")
        if not isinstance(start_column, str):
            raise ValueError(
                '`start_column` must be a column name or "". '
                f"Received: start_column={start_column!r}"
            )
        self.format = format
        self.metric = metric
        self.context_column = context_column
        self.start_column = start_column
        self.label_column = label_column

    example_class = MultipleChoiceExample

    @property
    def model_class(self):
        from kbert.models.bert_multiple_choice import BertMultipleChoice

        return BertMultipleChoice

    def table_example(self, values, label, row):
        endings = tuple(values["endings"])
        if label is not None:
            is_index = isinstance(label, numbers.Integral) and not isinstance(label, bool)
            if not is_index or not 0 <= label < len(endings):
                raise ValueError(
                    f"The label of row {row} must be the index of one of its {len(endings)} "
                    f"endings. Received: {describe_kind(label)}"
                )
            label = int(label)
        return MultipleChoiceExample(values["context"], endings, label, line=row + 1)

    def read(self, path):
        from kbert.data import read_multiple_choice

        return read_multiple_choice(
            path,
            format=self.format,
            context_column=self.context_column,
            start_column=self.start_column or None,
            label_column=self.label_column,
        )

    def label_names(self, examples, source="the training data"):
        """None (the labels are ending indices), after checking every example has one."""
        self.check_labelled(examples, source)
        return None

    def check_labelled(self, examples, source):
        """Raises ValueError naming the first example without a label."""
        if not examples:
            raise ValueError(f"{source} has no examples.")
        for example in examples:
            if example.label is None:
                raise ValueError(
                    f"{source}, line {example.line}: the example has no label; every "
                    "example needs the index of its right ending."
                )

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = MultipleChoicePreprocessor(tokenizer, max_length)
        x = {
            "context": [example.context for example in examples],
            "endings": [list(example.endings) for example in examples],
        }
        labelled = all(example.label is not None for example in examples)
        return preprocessor.features(x, [example.label for example in examples] if labelled else None)

    def evaluation_predictions(
        self, model, examples, max_length=None, batch_size=None
    ):
        """Each example's right and chosen ending; the accuracy from them."""
        self.check_labelled(examples, "the evaluation data")
        tokenizer, max_length = model_limits(model, max_length)
        features = self.features(examples, tokenizer, None, max_length)
        logits = predict_features(model, features, tokenizer, max_length, batch_size)
        rows = []
        for index, (example, row_logits) in enumerate(zip(examples, logits)):
            probabilities = softmax(row_logits)  # (C,)
            chosen = int(np.argmax(probabilities))
            rows.append(
                {
                    "index": index,
                    "line": example.line,
                    "context": example.context,
                    "endings": list(example.endings),
                    "gold": example.label,
                    "predicted": chosen,
                    "probability": float(probabilities[chosen]),
                    "correct": chosen == example.label,
                    "gold_ending": example.endings[example.label],
                    "predicted_ending": example.endings[chosen],
                }
            )
        gold, predicted = [row["gold"] for row in rows], [row["predicted"] for row in rows]
        scores = {"accuracy": accuracy(gold, predicted)}
        return EvaluationPredictions(self.name, CHOICE_COLUMNS, tuple(rows), scores)

    def options(self):
        return {
            "task": self.name,
            "metric": self.metric,
            "context_column": self.context_column,
            "start_column": self.start_column,
            "label_column": self.label_column,
        }
