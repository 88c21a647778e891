import keras

from kbert.inference.classification import classify
from kbert.models.inference_method import InferenceMethod
from kbert.models.label_task import LabelTask
from kbert.preprocessing.text_classifier_preprocessor import TextClassifierPreprocessor


@keras.saving.register_keras_serializable(package="kbert")
class BertClassifier(LabelTask):
    """Classifies one text or a text pair from the pooled [CLS] representation.

    Inputs: the backbone's dict (a pair is segment-packed by the tokenizer),
    or, in `fit`/`evaluate`/`predict`, raw texts: a list of strings, `(texts, pairs)`,
    or a dict with "text" and "pair" (see `TextClassifierPreprocessor`); labels may be
    class ids or, with `label_names`, label strings.
    Outputs: float32 logits (B, num_classes).

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
