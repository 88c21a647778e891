import keras

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
    label, `predict` and `classify` give each text the mean of its windows' logits,
    and Keras' `evaluate` scores each window (`kbert evaluate` pools).

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

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """`keras.Model.predict`; raw texts read in windows give each text the mean of
        its windows' logits (see `TextClassifierPreprocessor`'s `long_texts`)."""
        windows = getattr(self.preprocessor, "long_texts", "truncate") == "windows"
        if not windows or not self._takes_raw(x) or steps is not None or callbacks is not None:
            return super().predict(
                x, batch_size=batch_size, verbose=verbose, steps=steps, callbacks=callbacks
            )
        dataset, example_indices = self.preprocessor.prediction_windows(
            x, batch_size or DEFAULT_BATCH_SIZE
        )
        return pooled_logits(predict_dataset(self, dataset), example_indices)
