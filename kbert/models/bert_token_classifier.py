import keras

from kbert.inference.token_tagging import tag
from kbert.models.inference_method import InferenceMethod
from kbert.models.label_task import LabelTask
from kbert.preprocessing.token_classifier_preprocessor import TokenClassifierPreprocessor
from kbert.training.ignore_class_accuracy import IgnoreClassAccuracy
from kbert.training.token_cross_entropy import TokenCrossEntropy


@keras.saving.register_keras_serializable(package="kbert")
class BertTokenClassifier(LabelTask):
    """Labels every token (named entities, part of speech, ...).

    Inputs: the backbone's dict, or, in `fit`/`evaluate`/`predict`, raw examples: lists
    of words (or strings split on white space), with one tag per word as labels (tag
    strings with `label_names`, or ids; see `TokenClassifierPreprocessor`).
    Outputs: float32 logits (B, L, num_classes).
    For `fit` on tensors, label ids of -100 (sub-word continuations, padding) are
    ignored by the default loss.

    Args:
        backbone: a `BertBackbone`.
        num_classes: number of tags. May be omitted when `label_names` is given.
        label_names: optional list of tag strings (e.g. "O", "B-PER", "I-PER").
        dropout: dropout before the tagging layer; defaults to the backbone's.
    """

    head_input = "sequence_output"
    head_name = "token_classifier"
    head_layer_names = ("token_classifier_head",)
    preprocessor_class = TokenClassifierPreprocessor
    fine_tuning_task = "token-classification"
    # `model.tag(...)` is `kbert.inference.tag(model, model.tokenizer, ...)`.
    tag = InferenceMethod(tag)

    def default_loss(self):
        return TokenCrossEntropy(ignore_class=-100)

    def default_metrics(self):
        return [IgnoreClassAccuracy(ignore_class=-100, name="accuracy")]
