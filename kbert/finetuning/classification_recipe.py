"""Text and text-pair classification: one label per text (or pair), from [CLS]."""

import copy

import numpy as np

from kbert.data.examples import ClassificationExample
from kbert.inference.model_io import softmax
from kbert.metrics import accuracy
from kbert.metrics import macro_f1
from kbert.metrics import matthews_corrcoef
from kbert.preprocessing.long_text_windows import check_long_texts
from kbert.preprocessing.long_text_windows import pooled_logits
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor
from kbert.finetuning.evaluation_predictions import EvaluationPredictions
from kbert.finetuning.fine_tuning_recipe import FineTuningRecipe
from kbert.finetuning.fine_tuning_recipe import model_limits
from kbert.finetuning.fine_tuning_recipe import table_label
from kbert.finetuning.fine_tuning_recipe import predict_features
from kbert.finetuning.label_checks import check_several_labels
from kbert.finetuning.task_specs import task_spec

CLASSIFICATION_METRICS = task_spec("classification").metrics


class ClassificationRecipe(FineTuningRecipe):
    """Classification of one text, or of a text pair when `pair_column` is given.

    Labels are strings; when every label reads as an integer ("0", "1", "10") the
    classes keep numeric order, otherwise they are sorted as strings.

    Args:
        text_column: column (CSV/TSV header or JSONL key) of the text.
        pair_column: column of the second text of a pair; None for single texts.
        label_column: column of the label.
        format: "csv", "tsv" or "jsonl"; None detects it from the file name.
        metric: the score that selects the best checkpoint, one of
            `CLASSIFICATION_METRICS` ("matthews_corrcoef" suits unbalanced labels).
        long_texts: "truncate" (a text longer than `max_length` is cut, with a
            warning) or "windows": it is read in overlapping windows
            (`kbert.preprocessing.long_text_windows`); in training each window is an
            example with its text's label, in evaluation a text's logits are the mean
            of its windows'. Text pairs are truncated either way.
    """

    def __init__(
        self,
        text_column="text",
        pair_column=None,
        label_column="label",
        format=None,
        metric="accuracy",
        long_texts="truncate",
    ):
        if metric not in CLASSIFICATION_METRICS:
            raise ValueError(
                f"`metric` must be one of {CLASSIFICATION_METRICS}. Received: metric={metric!r}"
            )
        self.text_column = text_column
        self.pair_column = pair_column
        self.label_column = label_column
        self.format = format
        self.metric = metric
        self.long_texts = check_long_texts(long_texts)
        self.name = "classification" if pair_column is None else "pair-classification"

    example_class = ClassificationExample

    @property
    def model_class(self):
        from kbert.models.bert_classifier import BertClassifier

        return BertClassifier

    def table_example(self, values, label, row):
        if self.pair_column is not None and "pair" not in values:
            raise ValueError(
                f"The data has no field 'pair': the task {self.name!r} reads records with "
                "'text', 'pair' and 'label'."
            )
        return ClassificationExample(
            text=values["text"],
            pair=values["pair"] if self.pair_column is not None else None,
            label=None if label is None else table_label(label, row),
            line=row + 1,
        )

    def read(self, path):
        from kbert.data import read_classification

        return read_classification(
            path,
            text_column=self.text_column,
            pair_column=self.pair_column,
            label_column=self.label_column,
            format=self.format,
        )

    def example_labels(self, example):
        return (example.label,)

    def label_names(self, examples, source="the training data"):
        from kbert.data import classification_label_names

        if not examples:
            raise ValueError(f"{source} has no examples.")
        for example in examples:
            if example.label is None:
                raise ValueError(
                    f"{source}, line {example.line}: the example has no label "
                    f"(column {self.label_column!r}); every training example needs one."
                )
        label_names = classification_label_names(examples)
        check_several_labels(label_names, source, self.label_column)
        return label_names

    def features(self, examples, tokenizer, label_names, max_length):
        preprocessor = TextClassifierPreprocessor(
            tokenizer, max_length, label_names, long_texts=self.long_texts
        )
        x = {
            "text": [example.text for example in examples],
            "pair": None if self.pair_column is None else [example.pair for example in examples],
        }
        y = None if label_names is None else [example.label for example in examples]
        return preprocessor.features(x, y)

    def evaluation_predictions(
        self, model, examples, max_length=None, batch_size=None
    ):
        """Each example's gold and predicted label; accuracy, macro F1 and Matthews
        correlation from them."""
        tokenizer, max_length = model_limits(model, max_length)
        label_names = model.label_names or [str(index) for index in range(model.num_classes)]
        self.check_labels(examples, label_names, "the evaluation data")
        features = self.features(examples, tokenizer, None, max_length)
        window_logits = predict_features(model, features, tokenizer, max_length, batch_size)
        logits = pooled_logits(np.stack(window_logits), features.example_indices, len(examples))
        probabilities = softmax(logits)  # (B, C)
        best = np.argmax(probabilities, axis=-1)
        columns = ("index", "line", "text") + (("pair",) if self.pair_column else ())
        columns += ("gold", "predicted", "probability", "correct")
        rows = []
        for index, (example, row_best) in enumerate(zip(examples, best.tolist())):
            row = {"index": index, "line": example.line, "text": example.text}
            if self.pair_column:
                row["pair"] = example.pair
            predicted = label_names[row_best]
            row.update(
                gold=example.label,
                predicted=predicted,
                probability=float(probabilities[index, row_best]),
                correct=predicted == example.label,
            )
            rows.append(row)
        gold = [row["gold"] for row in rows]
        predicted = [row["predicted"] for row in rows]
        scores = {
            "accuracy": accuracy(gold, predicted),
            "macro_f1": macro_f1(gold, predicted),
            "matthews_corrcoef": matthews_corrcoef(gold, predicted),
        }
        return EvaluationPredictions(
            self.name, columns, tuple(rows), scores, label_names=tuple(label_names)
        )

    def options(self):
        options = {
            "task": self.name,
            "text_column": self.text_column,
            "pair_column": self.pair_column,
            "label_column": self.label_column,
            "metric": self.metric,
        }
        if self.long_texts != "truncate":
            # Only when set, so that checkpoints written before the setting still resume.
            options["long_texts"] = self.long_texts
        return options


def with_long_texts(task, long_texts):
    """`task` reading long texts as `long_texts` says ("truncate" or "windows").

    A `ClassificationRecipe` comes back as a copy with that setting; another task
    comes back as it is for "truncate" and is refused for "windows".

    Example:

    >>> task = with_long_texts(make_recipe("classification"), config.long_texts)
    """
    long_texts = check_long_texts(long_texts)
    if isinstance(task, ClassificationRecipe):
        task = copy.copy(task)
        task.long_texts = long_texts
        return task
    if long_texts != "truncate":
        raise ValueError(
            "Windows over long texts are for (pair-)classification. Received: "
            f"long_texts={long_texts!r} for the task {getattr(task, 'name', task)!r}"
        )
    return task
