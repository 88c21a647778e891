import keras
import numpy as np

from kbert.inference.classification import classify
from kbert.inference.model_io import predict_dataset
from kbert.models.inference_method import InferenceMethod
from kbert.models.label_task import LabelTask
from kbert.preprocessing.long_text_windows import pooled_logits
from kbert.preprocessing.length_buckets import DEFAULT_BATCH_SIZE
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertClassifier(LabelTask):
    """Classifies one text or a text pair from the pooled [CLS] representation.

    Inputs: the backbone's dict (a pair is segment-packed by the tokenizer),
    or, in `fit`/`evaluate`/`predict`, raw texts: a list of strings, `(texts, pairs)`,
    or a dict with "text" and "pair" (see `TextClassifierPreprocessor`); labels may be
    class ids or, with `label_names`, label strings.
    Outputs: float32 logits (B, num_classes).

    Texts longer than the model: its preprocessor's `long_texts` ("truncate", the
    default, or "windows") says whether they are cut (with a warning) or read in
    overlapping windows. With windows, `fit` trains on every window with its text's
    label, and `predict`, `evaluate` and `classify` give each text the mean of its
    windows' logits (`validation_data` in `fit` is scored window by window).

    Args:
        backbone: a `BertBackbone`.
        num_classes: number of labels. May be omitted when `label_names` is given.
        label_names: optional list of label strings, index = class id.
        dropout: dropout before the classification layer; defaults to the backbone's
            `hidden_dropout`, as in BERT.
    """

    head_input = "pooled_output"
    head_name = "classifier"
    head_layer_names = ("classifier_head",)
    preprocessor_class = TextClassifierPreprocessor
    fine_tuning_task = "classification"
    # `model.classify(...)` is `kbert.inference.classify(model, model.tokenizer, ...)`.
    classify = InferenceMethod(classify)

    def _reads_windows(self):
        return getattr(self.preprocessor, "long_texts", "truncate") == "windows"

    def _predict_raw(self, x, batch_size):
        """Raw texts read in windows give each text the mean of its windows' logits
        (see `TextClassifierPreprocessor`'s `long_texts`)."""
        if not self._reads_windows():
            return super()._predict_raw(x, batch_size)
        batch_size = batch_size or DEFAULT_BATCH_SIZE
        dataset, features = self.preprocessor.window_rows(x, batch_size=batch_size)
        return pooled_logits(predict_dataset(self, dataset), features.example_indices)

    def _evaluate_raw(self, x, y, sample_weight, batch_size, return_dict):
        """Raw texts read in windows are scored on each text's pooled logits (the
        compiled loss and metrics, one row per text)."""
        if not self._reads_windows():
            return None
        dataset, features = self.preprocessor.window_rows(
            x, y, batch_size or DEFAULT_BATCH_SIZE, labelled=True
        )
        if features.labels is None:
            raise ValueError("`evaluate` needs labels: pass `y`. Received: y=None")
        # Every row of a text carries its label: the first row's is the text's.
        _, first_rows = np.unique(features.example_indices, return_index=True)
        labels = keras.ops.convert_to_tensor(features.labels[first_rows])
        logits = pooled_logits(predict_dataset(self, dataset), features.example_indices)
        logits = keras.ops.convert_to_tensor(logits)
        weights = None
        if sample_weight is not None:
            weights = np.asarray(sample_weight, dtype="float32").reshape(-1)
            if len(weights) != len(first_rows):
                raise ValueError(
                    f"`sample_weight` must have one weight per text ({len(first_rows)}). "
                    f"Received: {len(weights)} weights"
                )
            weights = keras.ops.convert_to_tensor(weights)
        self.reset_metrics()
        loss = self.compute_loss(y=labels, y_pred=logits, sample_weight=weights, training=False)
        logs = dict(self.compute_metrics(None, labels, logits, weights))
        logs["loss"] = loss
        logs = {name: float(keras.ops.convert_to_numpy(value)) for name, value in logs.items()}
        if return_dict:
            return logs
        values = [logs.pop("loss")] + list(logs.values())
        return values[0] if len(values) == 1 else values
