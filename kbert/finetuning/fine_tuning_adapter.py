"""The part of fine-tuning that differs between tasks: data, model head, features, metric."""

import functools

from kbert.inference.model_io import inference_batch_size
from kbert.inference.model_io import predict
from kbert.inference.model_io import resolve_tokenizer
from kbert.inference.model_io import sequence_limit
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import length_buckets


class FineTuningAdapter:
    """Base of the task adapters `FineTuner` drives.

    A subclass knows how to read its examples from a file, which labels they use,
    which task model to build, how to turn examples into `TaskFeatures`, and how to
    score a model on examples. `metric` names the score (higher is better) that
    selects the best checkpoint and drives early stopping.
    """

    name = None
    metric = None

    @property
    def model_class(self):
        raise NotImplementedError

    def read(self, path):
        """The examples in the file `path`."""
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
