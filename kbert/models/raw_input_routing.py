"""Raw inputs in `fit`, `evaluate` and `predict`: the task's preprocessor turns strings,
records, DataFrames and Hugging Face datasets into batches before Keras sees them."""

import warnings

import keras
import numpy as np

from kbert.inference.model_io import predict_dataset
from kbert.models.input_validation import validate_inputs
from kbert.preprocessing.data_forms import table_kind
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE


class RawInputRouting:
    """`fit`, `evaluate` and `predict` of a `BertTask` that also take raw inputs.

    Raw inputs (strings, per-example records, pandas DataFrames, Hugging Face
    datasets) go through `self._preprocessor`, the labels inside a table or beside it
    as `y`; tokenized dicts, `BucketedDataset`s and other datasets go to Keras as they
    are, host arrays checked against the backbone's limits first. Every Keras argument
    reaches `keras.Model` by keyword, in Keras' own signature.

    A mixin of `BertTask`, before `keras.Model` among its bases: it reads the task's
    `_preprocessor`, `backbone` and `extra_inputs`.
    """

    def _takes_raw(self, x):
        if self._preprocessor is None:
            return False
        # A plain list is never model tensors (those come as dicts): the preprocessor
        # refuses it in a sentence rather than Keras printing it whole.
        host_list = isinstance(x, list) and not any(isinstance(i, np.ndarray) for i in x)
        return host_list or self._preprocessor.accepts(x)

    def _adopt_label_names(self, x, y):
        """Takes the label names that raw training or evaluation data declares, for a
        task with label names (a `LabelTask`); nothing here."""

    def _raw_dataset(self, x, y=None, sample_weight=None, batch_size=None, **settings):
        return self._preprocessor.dataset(
            x, y, sample_weight, batch_size or DEFAULT_BATCH_SIZE, **settings
        )

    def _raw_validation(self, validation_data, batch_size):
        if self._preprocessor is not None and table_kind(validation_data) is not None:
            # Records, a DataFrame or a dataset with the labels inside.
            return self._raw_dataset(validation_data, batch_size=batch_size, inference=True)
        if not isinstance(validation_data, (tuple, list)) or not validation_data:
            return validation_data
        if not self._takes_raw(validation_data[0]):
            return validation_data
        x, y, weights = (list(validation_data) + [None, None])[:3]
        # Scored like `evaluate`: sorted by length, each batch at its own fine bucket.
        return self._raw_dataset(x, y, weights, batch_size, inference=True)

    def _validate_data(self, x):
        # Host data is checked up front; datasets and generators are the caller's business.
        if isinstance(x, (dict, np.ndarray)):
            validate_inputs(x, self.backbone.bert_config, self.extra_inputs)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """`keras.Model.predict`; raw inputs: `kbert.inference.model_io.predict_dataset`."""
        if not self._takes_raw(x):
            self._validate_data(x)
            return super().predict(
                x, batch_size=batch_size, verbose=verbose, steps=steps, callbacks=callbacks
            )
        if steps is not None or callbacks is not None:
            raise ValueError(
                "`steps` and `callbacks` need tensors or a dataset, not raw inputs. "
                f"Received: steps={steps!r}, callbacks={callbacks!r}"
            )
        return self._predict_raw(x, batch_size)

    def _predict_raw(self, x, batch_size):
        """The outputs of `predict` for raw inputs `x`, one row per example."""
        dataset = self._raw_dataset(x, batch_size=batch_size, predict=True)
        return predict_dataset(self, dataset)

    def _evaluate_raw(self, x, y, sample_weight, batch_size, return_dict):
        """What `evaluate` returns for raw inputs when the task scores them its own way
        (a compiled model, no Keras-only arguments); None lets Keras score the
        preprocessed batches."""
        return None

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
        **kwargs,
    ):
        """`keras.Model.evaluate`; raw strings (and label strings) are preprocessed."""
        if self._takes_raw(x):
            keras_only = steps is not None or callbacks is not None or kwargs
            if not keras_only and self.compiled:
                scores = self._evaluate_raw(x, y, sample_weight, batch_size, return_dict)
                if scores is not None:
                    return scores
            self._adopt_label_names(x, y)
            x = self._raw_dataset(x, y, sample_weight, batch_size, inference=True)
            y = sample_weight = batch_size = None
        self._validate_data(x)
        return super().evaluate(
            x=x,
            y=y,
            batch_size=batch_size,
            verbose=verbose,
            sample_weight=sample_weight,
            steps=steps,
            callbacks=callbacks,
            return_dict=return_dict,
            **kwargs,
        )

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
        **kwargs,
    ):
        """`keras.Model.fit`; raw strings (and label strings) are preprocessed.

        With raw inputs, batches are padded to length buckets and shuffled within them
        (with NumPy's global generator, seeded by `keras.utils.set_random_seed`);
        `validation_split` holds out the last examples as Keras does, `validation_data`
        may be raw too, and `class_weight` becomes per-example weights.

        Example:

        >>> model = BertClassifier.from_preset("demo", label_names=["neg", "pos"])
        >>> model.fit(["a dull film", "a good film"], ["neg", "pos"], epochs=2)
        """
        if self._takes_raw(x):
            self._adopt_label_names(x, y)
            x, validation_data = self._raw_training_data(
                x, y, sample_weight, batch_size, shuffle, class_weight,
                validation_split, validation_data, validation_batch_size or batch_size,
            )
            y = sample_weight = batch_size = class_weight = None
            validation_split = 0.0
            shuffle = False  # the dataset shuffles, reproducibly
        self._validate_data(x)
        with warnings.catch_warnings():
            # Heads that read `sequence_output` leave the pooler without gradients, as
            # Hugging Face's models without a pooler would; that is expected, not a bug.
            warnings.filterwarnings(
                "ignore", message=r"Gradients do not exist for variables \['pooler/"
            )
            history = super().fit(
                x=x,
                y=y,
                batch_size=batch_size,
                epochs=epochs,
                verbose=verbose,
                callbacks=callbacks,
                validation_split=validation_split,
                validation_data=validation_data,
                shuffle=shuffle,
                class_weight=class_weight,
                sample_weight=sample_weight,
                initial_epoch=initial_epoch,
                steps_per_epoch=steps_per_epoch,
                validation_steps=validation_steps,
                validation_batch_size=validation_batch_size,
                validation_freq=validation_freq,
                **kwargs,
            )
        if self.optimizer is not None and int(keras.ops.convert_to_numpy(self.optimizer.iterations)):
            self.freshly_initialized_heads = []  # trained now
        return history

    def _raw_training_data(
        self, x, y, sample_weight, batch_size, shuffle, class_weight, validation_split,
        validation_data, validation_batch_size,
    ):
        """`(training dataset, validation data)` of raw `fit` arguments."""
        if validation_split:
            (x, y), validation_data = self._preprocessor.split(x, y, validation_split)
        if class_weight is not None:
            sample_weight = self._class_weights(x, y, class_weight, sample_weight)
        dataset = self._raw_dataset(
            x,
            y,
            sample_weight,
            batch_size,
            shuffle=shuffle,
            seed=int(np.random.randint(0, 2**31 - 1)),
        )
        return dataset, self._raw_validation(validation_data, validation_batch_size)

    def _class_weights(self, x, y, class_weight, sample_weight):
        labels = self._preprocessor.task_features(x, y).labels
        if not isinstance(labels, np.ndarray) or labels.ndim != 1:
            raise ValueError(
                f"`class_weight` needs one class per example; {type(self).__name__} has "
                "other targets. Pass `sample_weight` instead."
            )
        weights = np.array([float(class_weight.get(int(label), 1.0)) for label in labels])
        if sample_weight is not None:
            weights = weights * np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        return weights
