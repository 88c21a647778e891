"""The part of a task model that turns what users have (strings, labels) into model inputs."""

import numpy as np

from kbert.argument_checks import check_positive_int
from kbert.argument_checks import describe_value
from kbert.argument_checks import text_problem
from kbert.preprocessing import data_forms
from kbert.preprocessing.bucketed_dataset import BucketedDataset
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.length_buckets import INFERENCE_LENGTH_BUCKETS
from kbert.preprocessing.length_buckets import length_buckets
from kbert.preprocessing.task_features import TaskFeatures
from kbert.preprocessing.task_features import concatenated_features


class BertPreprocessor:
    """Base of the task preprocessors: raw inputs -> `TaskFeatures` -> batches.

    Every task model carries one (`model.preprocessor`, made from `model.tokenizer`), so
    that `fit`, `evaluate` and `predict` take strings as keras-hub's tasks do. A
    preprocessor reads inputs in the forms its task accepts (`parse`), encodes them into
    variable-length rows with their labels (`features`), and batches those into a
    `BucketedDataset` padded to a few length buckets (`dataset`), so a compiled step is
    traced for a handful of shapes only.

    Besides the task's own forms, every preprocessor takes "tables" (per-example
    records, a pandas DataFrame, a Hugging Face `datasets.Dataset`) whose fields are
    named by `record_fields`, read in chunks by `kbert.preprocessing.data_forms`
    (`task_features`, `dataset`, `split`).

    Subclasses define `input_fields` (the keys of the parsed inputs), `record_fields`
    (a `RecordFields`), `parse_inputs` and `features`.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: the longest packed row; None: the tokenizer's `max_length`.
            Longer inputs are truncated with a warning (QA contexts are windowed).
    """

    input_fields = ()
    record_fields = None

    def __init__(self, tokenizer, sequence_length=None):
        if tokenizer is None:
            raise ValueError("A preprocessor needs a tokenizer. Received: tokenizer=None")
        self.tokenizer = tokenizer
        if sequence_length is None:
            sequence_length = tokenizer.max_length
        self.sequence_length = check_positive_int("sequence_length", sequence_length)

    @property
    def buckets(self):
        return length_buckets(self.sequence_length)

    # --- Inputs ------------------------------------------------------------------------

    def accepts(self, x):
        """Whether `x` is raw input of this task (strings, records, a DataFrame, a
        dataset), rather than model tensors."""
        if self.record_fields is not None and data_forms.table_kind(x) is not None:
            return True
        try:
            self.parse_inputs(x)
        except (ValueError, TypeError):
            return False
        return True

    def parse_inputs(self, x):
        """`x` in its canonical form: a dict `field -> list`, one entry per example."""
        raise NotImplementedError

    def parse(self, x):
        """`parse_inputs(x)` with a check that every field has the same length."""
        fields = self.parse_inputs(x)
        sizes = {name: len(values) for name, values in fields.items() if values is not None}
        if len(set(sizes.values())) > 1:
            raise ValueError(
                f"Every input field needs one entry per example. Received: {sizes}"
            )
        if not sizes or not max(sizes.values()):
            raise ValueError("The inputs hold no examples. Received: an empty input")
        return fields

    def features(self, x, y=None):
        """`TaskFeatures` for the raw inputs `x` and (for training) their labels `y`."""
        raise NotImplementedError

    def prediction_features(self, x):
        """The features `predict` runs on: one row per example, no labels."""
        return self.features(x)

    def task_features(self, x, y=None, predict=False):
        """`features(x, y)` (or `prediction_features(x)`) for `x` in any accepted form.

        A table (records, DataFrame, `datasets.Dataset`) is read in chunks, its labels
        taken from `y` (labels or the label field's name) or from its label field.
        """
        if data_forms.table_kind(x) is None:
            return self.prediction_features(x) if predict else self.features(x, y)
        parts, counts = [], []
        chunks = data_forms.example_chunks(x, y, self.record_fields, with_labels=not predict)
        for inputs, labels, count in chunks:
            if predict:
                parts.append(self.prediction_features(inputs))
            else:
                parts.append(self.features(inputs, labels))
            counts.append(count)
        return concatenated_features(parts, counts)

    def __call__(self, x, y=None, sample_weight=None):
        """The model's inputs for raw `x`, as keras-hub's preprocessor layers return them.

        Every row is padded to `sequence_length` and kept in order (a text read in
        windows, or a QA context, gives one row per window). A masked-LM preprocessor
        masks the rows as for training, as keras-hub's does.

        Args:
            x: raw inputs in any accepted form.
            y: labels, or None.
            sample_weight: one weight per example, or None.

        Returns:
            The inputs dict (`token_ids`, `segment_ids`, `padding_mask`, and any the task
            adds), or `(inputs, labels)`, or `(inputs, labels, sample_weight)`: the shape
            of `keras.utils.pack_x_y_sample_weight`.

        Example:

        >>> model = BertClassifier.from_preset("demo-spam")
        >>> inputs = model.preprocessor(["Win a prize now!"])
        >>> tuple(model(inputs).shape)
        (1, 2)
        """
        features = self.task_features(x, y)
        weights = None
        if sample_weight is not None:
            weights = self._example_weights(sample_weight, features)
        dataset = self._make_dataset(
            features,
            batch_size=len(features.token_ids),
            buckets=(self.sequence_length,),
            shuffle=False,
            seed=0,
            sample_weights=weights,
            length_sorted=False,
        )
        batch = dataset.batch(0, 0, replicas=1)
        return batch[0] if len(batch) == 1 else batch

    # --- Batches -----------------------------------------------------------------------

    def dataset(
        self,
        x,
        y=None,
        sample_weight=None,
        batch_size=DEFAULT_BATCH_SIZE,
        shuffle=False,
        seed=0,
        predict=False,
        inference=False,
    ):
        """A `BucketedDataset` of `x` (and `y`) for `fit`, `evaluate` or `predict`.

        Args:
            x: raw inputs, in a form `parse_inputs` accepts.
            y: labels, or None.
            sample_weight: one weight per example, or None.
            batch_size: examples per batch.
            shuffle: shuffle examples within buckets and batches, each epoch anew.
            seed: seed of the shuffling (and of any masking).
            predict: the rows of `prediction_features` (`y` is ignored), batched
                as `inference` says.
            inference: batches for `evaluate` and `predict`: rows sorted by length,
                each batch padded to its own `INFERENCE_LENGTH_BUCKETS` bucket (see
                `BucketedDataset(length_sorted=True)`); never shuffled.
        """
        features = self.task_features(x, y, predict=predict)
        inference = inference or predict
        buckets = self.buckets
        if inference:
            buckets = length_buckets(self.sequence_length, INFERENCE_LENGTH_BUCKETS)
        weights = None
        if sample_weight is not None:
            weights = self._example_weights(sample_weight, features)
        return self._make_dataset(
            features,
            batch_size=check_positive_int("batch_size", batch_size),
            buckets=buckets,
            shuffle=shuffle,
            seed=seed,
            sample_weights=weights,
            length_sorted=inference,
        )

    def _make_dataset(self, features, **settings):
        return BucketedDataset(
            features.token_ids,
            features.segment_ids,
            features.labels,
            pad_token_id=self.tokenizer.pad_token_id,
            **settings,
        )

    def _example_weights(self, sample_weight, features):
        """Per-row weights (a row is an example, or a window of one)."""
        weights = np.asarray(sample_weight, dtype=np.float32).reshape(-1)
        examples = int(np.max(features.example_indices)) + 1
        if len(weights) != examples:
            raise ValueError(
                f"`sample_weight` must have one weight per example ({examples}). "
                f"Received: {len(weights)} weights"
            )
        if features.labels is None:
            raise ValueError("`sample_weight` needs labels `y`. Received: y=None")
        row_weights = weights[features.example_indices]
        if isinstance(features.labels, dict):
            return {name: row_weights for name in features.labels}
        return row_weights

    def split(self, x, y, fraction):
        """`((x_train, y_train), (x_validation, y_validation))`: the last `fraction` of
        the examples held out, as Keras' `validation_split` does."""
        if not 0 < fraction < 1:
            raise ValueError(
                f"`validation_split` must be in (0, 1). Received: validation_split={fraction}"
            )
        table = data_forms.table_kind(x) is not None
        if table:
            count = data_forms.table_size(x)
        else:
            fields = self.parse(x)
            count = len(next(values for values in fields.values() if values is not None))
        cut = int(count * (1 - fraction))
        if cut in (0, count):
            raise ValueError(
                f"validation_split={fraction} of {count} examples leaves one side empty."
            )
        if table:
            return data_forms.split_table(x, y, cut)

        def part(values, selection):
            return None if values is None else list(values)[selection]

        train = {name: part(values, slice(None, cut)) for name, values in fields.items()}
        held_out = {name: part(values, slice(cut, None)) for name, values in fields.items()}
        y_train = None if y is None else part(y, slice(None, cut))
        y_held_out = None if y is None else part(y, slice(cut, None))
        return (train, y_train), (held_out, y_held_out)

    def get_config(self):
        """The settings besides the tokenizer (which a `.keras` file keeps as assets)."""
        return {"sequence_length": self.sequence_length}


def encoded_features(encodings, labels=None):
    """`TaskFeatures` with one row per `Encoding`, in order."""
    return TaskFeatures(
        token_ids=[encoding.token_ids for encoding in encodings],
        segment_ids=[encoding.segment_ids for encoding in encodings],
        labels=labels,
        example_indices=np.arange(len(encodings)),
    )


def checked_labels(label_names, num_classes):
    """`(label_names, num_classes)`: names as a list (or None), the count they imply."""
    label_names = None if label_names is None else [str(name) for name in label_names]
    if num_classes is None and label_names is not None:
        num_classes = len(label_names)
    return label_names, num_classes


def as_string_list(value, name):
    """A list of strings from a string sequence (list, tuple, NumPy string array)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or isinstance(value, dict):
        raise ValueError(
            f"`{name}` must be a list of strings. Received: {type(value).__name__}"
        )
    values = [item.item() if isinstance(item, np.generic) else item for item in value]
    for index, item in enumerate(values):
        if not isinstance(item, str):
            raise ValueError(
                f"`{name}` must be a list of strings. Received: {name}[{index}]="
                f"{describe_value(item)}"
            )
        problem = text_problem(item)
        if problem is not None:
            raise ValueError(
                f"`{name}` must be a list of texts. Received: {name}[{index}]: {problem}."
            )
    return values


def label_ids(labels, label_names, num_classes, name="y"):
    """Class ids (int32) of `labels`: strings are looked up in `label_names`."""
    values = [item.item() if isinstance(item, np.generic) else item for item in labels]
    index = {label: position for position, label in enumerate(label_names or ())}
    ids = []
    for position, value in enumerate(values):
        if isinstance(value, str):
            if not label_names:
                raise ValueError(
                    f"`{name}` holds strings, but the model has no `label_names` to look "
                    "them up in: build it with label_names=[...] (or pass class ids). "
                    f"Received: {name}[{position}]={describe_value(value)}"
                )
            if value not in index:
                raise ValueError(
                    f"`{name}[{position}]` is the label {describe_value(value)}, which is not "
                    f"one of the model's label_names {list(label_names)}."
                )
            ids.append(index[value])
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if value < 0 or (num_classes is not None and value >= num_classes):
                raise ValueError(
                    f"`{name}[{position}]` must be a class id in [0, {num_classes}). "
                    f"Received: {value}"
                )
            ids.append(int(value))
        else:
            raise ValueError(
                f"`{name}` must hold class ids or label strings. "
                f"Received: {name}[{position}]={describe_value(value)}"
            )
    return np.asarray(ids, dtype=np.int32)
