"""The part of fine-tuning that differs between tasks: data, model head, features, metric."""

import functools
import numbers

from kbert.argument_checks import describe_kind
from kbert.argument_checks import text_problem
from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.data_forms import example_chunks
from kbert.preprocessing.data_forms import table_kind
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import length_buckets


class FineTuningRecipe:
    """Base of the task recipes `FineTuner` drives.

    A subclass knows how to read its examples from a file, which labels they use,
    which task model to build, how to turn examples into `TaskFeatures`, and how to
    score a model on examples. `metric` names the score (higher is better) that
    selects the best checkpoint and drives early stopping.
    """

    name = None
    metric = None
    # The `kbert.data` record of one example of this task.
    example_class = None

    @property
    def model_class(self):
        raise NotImplementedError

    def read(self, path):
        """The examples in the file `path`."""
        raise NotImplementedError

    def examples(self, data, source="the training data"):
        """The examples of `data`: a list of `example_class` records, or a table.

        A table (per-example records, a pandas DataFrame, a Hugging Face
        `datasets.Dataset`) is read as the task model's `fit` reads it (the fields of its
        preprocessor's `RecordFields`, through `kbert.preprocessing.data_forms`); each
        row becomes one example whose `line` is the row counted from 1.
        """
        if table_kind(data) is not None:
            fields = self.model_class.preprocessor_class.record_fields
            examples = []
            for inputs, labels, count in example_chunks(data, None, fields):
                for offset in range(count):
                    values = {field: column[offset] for field, column in inputs.items()}
                    label = None if labels is None else labels[offset]
                    examples.append(self.table_example(values, label, len(examples)))
            return examples
        kind = getattr(self.example_class, "__name__", "examples")
        if isinstance(data, (str, bytes)) or not hasattr(data, "__iter__"):
            raise ValueError(
                f"{source} must be a file, a list of {kind}, records, a DataFrame or a "
                f"datasets.Dataset. Received: {describe_kind(data)}"
            )
        examples = list(data)
        for index, example in enumerate(examples):
            if self.example_class is not None and not isinstance(example, self.example_class):
                raise ValueError(
                    f"{source}, item {index}: expected a {kind} (or a table of records). "
                    f"Received: {describe_kind(example)}"
                )
        return examples

    def table_example(self, values, label, row):
        """One example from a table's row: `values` by field name, its `label` or None."""
        raise NotImplementedError

    def example_labels(self, example):
        """The labels one example uses (none for tasks without label names)."""
        return ()

    def example_label_lines(self, example):
        """`(label, line)` for each label of `example`: the file line that holds it."""
        return [(label, example.line) for label in self.example_labels(example)]

    def label_names(self, examples, source="the training data"):
        """The label names of a model trained on `examples`; None for tasks without."""
        return None

    def check_labels(self, examples, label_names, source):
        """Raises ValueError naming the first label of `examples` not in `label_names`.

        Args:
            examples: examples to check, e.g. the evaluation data.
            label_names: the labels the model knows (from the training data).
            source: where the examples come from, for the message (a file name).
        """
        if label_names is None:
            return
        known = set(label_names)
        for example in examples:
            for label, line in self.example_label_lines(example):
                if label not in known:
                    raise ValueError(
                        f"{source}, line {line}: label {label!r} does not occur in "
                        f"the training data, so the model cannot predict it. Known labels: "
                        f"{list(label_names)}"
                    )

    def model_arguments(self, label_names):
        """Keyword arguments for `model_class.from_preset` besides the preset."""
        return {} if label_names is None else {"label_names": list(label_names)}

    def features(self, examples, tokenizer, label_names, max_length):
        """`TaskFeatures` for `examples`, truncated (with a warning) to `max_length`."""
        raise NotImplementedError

    def evaluate(self, model, examples, max_length=None, batch_size=None):
        """The task's scores of `model` on labelled `examples`, as a dict of floats."""
        return self.evaluation_predictions(model, examples, max_length, batch_size).scores

    def evaluation_predictions(
        self, model, examples, max_length=None, batch_size=None
    ):
        """`EvaluationPredictions`: every example with gold, prediction and probability,
        and the task's scores computed from those rows."""
        raise NotImplementedError

    def options(self):
        """The settings of this task, as plain data (stored with training checkpoints)."""
        return {"task": self.name}


def table_label(label, row, integers=True):
    """A table's label as the readers give it: a string, or an integer's decimal text.

    Raises `ValueError` naming the row for anything else (a list, a float, a string
    that is not text).
    """
    if integers and isinstance(label, numbers.Integral) and not isinstance(label, bool):
        return str(int(label))
    problem = text_problem(label)
    if problem is not None:
        kinds = "a string or an integer" if integers else "a string"
        raise ValueError(f"The label of row {row} must be {kinds}: {problem}.")
    return label


def model_limits(model, max_length):
    """`(tokenizer, max_length)` for `model`: its tokenizer and the usable sequence length."""
    tokenizer = resolve_tokenizer(model, None)
    limit = sequence_limit(model, tokenizer)
    return tokenizer, limit if max_length is None else min(int(max_length), limit)


def predict_features(model, features, tokenizer, max_length, batch_size, sequence_outputs=False):
    """The model's outputs for each row of `features`, in row order.

    See `BucketedDataset.predict`; rows sorted by length, each batch padded to its own
    inference bucket of `max_length`; `batch_size` None: `inference_batch_size()`.
    """
    dataset = BucketedDataset(
        features.token_ids,
        features.segment_ids,
        batch_size=inference_batch_size(batch_size),
        buckets=length_buckets(max_length, INFERENCE_LENGTH_BUCKETS),
        length_sorted=True,
        pad_token_id=tokenizer.pad_token_id,
    )
    return dataset.predict(
        model, sequence_outputs=sequence_outputs, forward=functools.partial(predict, model)
    )
